#!/usr/bin/env bash
# The main job: set up, build the graph from seeds/ (embedded store), show it, serve it.
#   bash scripts/run.sh            -> http://127.0.0.1:8000/ (explorer) and /graphql
#   PORT=9000 bash scripts/run.sh
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export HF_HUB_OFFLINE=1
echo; echo "== Building the graph from seeds/ (embedded store) =="
.venv/bin/citegraph build seeds/ || [ $? -eq 3 ]
echo; echo "== Papers related to the first paper about diffusion =="
.venv/bin/citegraph related "$(.venv/bin/citegraph search diffusion --kind paper --first 1 --json \
  | .venv/bin/python -c 'import json,sys; print(json.load(sys.stdin)[0]["id"])')" --first 5
echo; echo "== Serving it =="
exec .venv/bin/citegraph serve --host "${HOST:-127.0.0.1}" --port "${PORT:-8000}"
