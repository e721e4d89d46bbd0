#!/usr/bin/env bash
# Create .venv and install citegraph into it. Idempotent; safe to re-run.
# The CPU build of torch is installed first and pinned: an unpinned torch (or a
# package that pulls it in) would download a several-GB CUDA build.
set -euo pipefail
cd "$(dirname "$0")/.."
EXTRAS="${1:-}"
PY="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q "torch==2.13.0"
if [ -n "$EXTRAS" ]; then
  .venv/bin/python -m pip install -q -e ".[$EXTRAS]"
else
  .venv/bin/python -m pip install -q -e .
fi
