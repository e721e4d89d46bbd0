#!/bin/bash
# SIGKILL / SIGINT / SIGTERM a plain `citegraph build B.jsonl` (A graph, warm caches) at a
# random wall-clock moment; check old-or-new + counts, then rerun.   usage: bash probe/random_kill.sh N
set -u
cd "$(dirname "$0")/.."
. /work/main/.venv/bin/activate
export PYTHONPATH=$PWD HF_HUB_OFFLINE=1
OLD=a7fdb90eadd3ee06; NEW=93d3d6952ed75cb7
for i in $(seq 1 ${1:-10}); do
  D=/tmp/p12/rk; rm -rf $D; cp -r /tmp/p12/tpl $D
  sig=$(shuf -n1 -e KILL INT TERM); delay=$(python3 -c "import random; print(round(random.uniform(1.5, 4.5), 2))")
  python -m citegraph --data-dir $D build /tmp/p12/c/B.jsonl --json > /dev/null 2> /tmp/p12/rk.err &
  P=$!; sleep $delay; kill -$sig $P 2>/dev/null; wait $P; rc=$?
  s=$(python3 probe/dbdump.py $D/graph.db); dg=$(echo "$s" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["digest"], d["counts_ok"])')
  timeout 120 python -m citegraph --data-dir $D build /tmp/p12/c/B.jsonl --json > /dev/null 2>&1; rc2=$?
  dg2=$(python3 probe/dbdump.py $D/graph.db | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["digest"], d["counts_ok"])')
  st=$(echo $dg | awk -v o=$OLD -v n=$NEW '{print ($1==o?"OLD":($1==n?"NEW":"OTHER"))}')
  echo "$i SIG$sig at ${delay}s rc=$rc state=$st counts_ok=$(echo $dg | cut -d' ' -f2) rerun rc=$rc2 -> $(echo $dg2 | awk -v n=$NEW '{print ($1==n?"NEW":"OTHER"), $2}') | $(grep -v '^embedding\|^$' /tmp/p12/rk.err | tail -1 | cut -c1-120)"
done
