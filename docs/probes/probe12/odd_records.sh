#!/bin/bash
# Each odd record (probe/mkodd.py -> /tmp/p12/odd/*.jsonl) added to the seed graph, one add each;
# then all of them in one build over seeds + all.jsonl. Prints rc, the message, what was written.
set -u
cd "$(dirname "$0")/.."
. /work/main/.venv/bin/activate
export PYTHONPATH=$PWD HF_HUB_OFFLINE=1
S=/tmp/p12/d1   # the seed graph (built by `citegraph build seeds/`)
for f in /tmp/p12/odd/*.jsonl; do
  n=$(basename $f .jsonl)
  D=/tmp/p12/odd_$n; rm -rf $D; cp -r $S $D
  before=$(python3 probe/dbdump.py $D/graph.db | python3 -c 'import json,sys; print(json.load(sys.stdin)["digest"])')
  /usr/bin/time -f "%e s %M KB" -o /tmp/p12/odd_time timeout 300 python -m citegraph --data-dir $D add $f --json > /tmp/p12/odd_out 2> /tmp/p12/odd_err
  rc=$?
  s=$(python3 probe/dbdump.py $D/graph.db)
  after=$(echo "$s" | python3 -c 'import json,sys; print(json.load(sys.stdin)["digest"])')
  ok=$(echo "$s" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["counts_ok"], d["dangling"], d["orphan_emb"])')
  rep=$(python3 -c 'import json,sys
try:
  d=json.load(open("/tmp/p12/odd_out")); print("added", d["added"], "problems", [str(p)[:150] for p in d["problems"]], "nw", d["nodes_written"], "ew", d["edges_written"], "edges", d["stats"]["edges"].get("CITES"))
except Exception as e: print("no json")' 2>&1)
  echo "== $n rc=$rc changed=$([ "$before" = "$after" ] && echo no || echo yes) counts_ok/dangling/orphan=$ok time/mem=$(cat /tmp/p12/odd_time | tail -1)"
  echo "   report: ${rep:0:400}"
  echo "   stderr: $(grep -v '^embedding\|^$' /tmp/p12/odd_err | tail -3 | tr '\n' ' ' | cut -c1-400)"
  rm -rf $D
done
