#!/usr/bin/env bash
# Create .venv and install citegraph into it. Idempotent; safe to re-run.
# torch is installed first and pinned (torch==2.13.0): PyPI's wheel is the CUDA build,
# about 3 GB of downloads the first time (pip's cache keeps it), and runs on the CPU
# here. Pinning it first stops sentence-transformers from pulling in another torch.
set -euo pipefail
cd "$(dirname "$0")/.."
EXTRAS="${1:-}"
PY="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
LOG=.venv/setup.log
echo "Setting up .venv (citegraph${EXTRAS:+ with $EXTRAS extras}; pip log: $LOG) ..."
if ! .venv/bin/python -c 'import torch' >/dev/null 2>&1; then
  echo "Installing torch==2.13.0 first: the first install downloads about 3 GB (several" \
       "minutes; pip's cache keeps it for the next time) ..."
fi
{
  .venv/bin/python -m pip install --upgrade pip
  .venv/bin/python -m pip install "torch==2.13.0"
  if [ -n "$EXTRAS" ]; then
    .venv/bin/python -m pip install -e ".[$EXTRAS]"
  else
    .venv/bin/python -m pip install -e .
  fi
} >"$LOG" 2>&1 || { tail -n 30 "$LOG"; echo "setup failed: see $LOG" >&2; exit 1; }
echo "Ready: .venv/bin/citegraph"
