#!/bin/bash
# Readers and a second writer while a build is stopped (SIGSTOP) after EACH of its parts
# (tests/hardening/_killpoint.py stop-part stalls after every part: SIGCONT once per part).
# usage: bash probe/readers_stop.sh   (needs /tmp/p12/tpl, see PROBE12.md)
set -u
cd "$(dirname "$0")/.."
. /work/main/.venv/bin/activate
export PYTHONPATH=$PWD HF_HUB_OFFLINE=1
D=/tmp/p12/rs; rm -rf $D; cp -r /tmp/p12/tpl $D
PORT=8712
cg() { timeout 120 python -m citegraph --data-dir $D "$@"; }
gql() { curl -s -m 10 -H 'content-type: application/json' -d "{\"query\":\"$1\"}" http://127.0.0.1:$PORT/graphql; }
python -m citegraph --data-dir $D serve --port $PORT > /tmp/p12/rs_serve.log 2>&1 &
SERVE=$!
for i in $(seq 1 120); do curl -s -m 2 http://127.0.0.1:$PORT/healthz -o /dev/null && break; sleep 1; done
Q='{ stats { totalNodes totalEdges } search(query: \"reinforcement\", first: 2) { node { id } } }'
echo "serve before: $(gql "$Q")"
echo "stats before: $(cg stats --json | tr -d ' \n' | cut -c1-200)"
python tests/hardening/_killpoint.py stop-part --data-dir $D build /tmp/p12/c/B.jsonl --json > /tmp/p12/rs_w1.out 2> /tmp/p12/rs_w1.err &
W1=$!
W2=
for part in 1 2 3 4 5 6; do
  st=
  for i in $(seq 1 400); do st=$(awk '{print $3}' /proc/$W1/stat 2>/dev/null); [ "$st" = T ] && break; [ -z "$st" ] && break; sleep 0.25; done
  [ "$st" = T ] || { echo "writer 1 no longer stopped (state '$st') at stop $part"; break; }
  echo "--- writer 1 stopped after part $part"
  echo "  sqlite3: $(sqlite3 $D/graph.db 'select type,count(*) from edges group by type' | tr '\n' ' ') nodes=$(sqlite3 $D/graph.db 'select count(*) from nodes') seq=$(sqlite3 $D/graph.db 'select max(seq) from commits')"
  echo "  stats:   $(cg stats --json | tr -d ' \n' | cut -c1-200)"
  echo "  search:  $(cg search reinforcement --json 2>&1 | tr -d ' \n' | cut -c1-120)"
  echo "  neighbors 1Fqg133qRaI: $(cg neighbors 1Fqg133qRaI --json 2>&1 | python3 -c 'import json,sys; d=json.load(sys.stdin); print(len(d.get("nodes",[])), len(d.get("edges",[])))' 2>&1)"
  echo "  serve:   $(gql "$Q")"
  if [ -z "$W2" ]; then
    python -m citegraph --data-dir $D add /tmp/p12/c/C.jsonl --json > /tmp/p12/rs_w2.out 2> /tmp/p12/rs_w2.err &
    W2=$!
    sleep 6
    echo "  writer 2 after 6 s: alive=$(kill -0 $W2 2>/dev/null && echo yes || echo no); stderr: $(tr '\n' ' ' < /tmp/p12/rs_w2.err | cut -c1-300)"
  fi
  kill -CONT $W1
done
wait $W1; echo "writer 1 rc=$?"
T1=$(date +%s.%N)
for i in $(seq 1 100); do
  out=$(gql '{ stats { totalNodes totalEdges } }')
  echo "$out" | grep -q '"totalNodes":1941' || break
  sleep 0.05
done
T2=$(date +%s.%N)
echo "serve after writer 1: $out (first seen $(python3 -c "print(round($T2-$T1,2))") s after writer 1 exited)"
wait $W2; echo "writer 2 rc=$?"; tail -c 300 /tmp/p12/rs_w2.err
sleep 1.5
echo "serve end: $(gql '{ stats { totalNodes totalEdges } }')"
echo "stats end: $(cg stats --json | tr -d ' \n' | cut -c1-300)"
python3 probe/dbdump.py $D/graph.db
sqlite3 $D/graph.db 'select seq, pid, summary from commits'
kill $SERVE; wait $SERVE 2>/dev/null
ls -la $D
