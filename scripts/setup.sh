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
LOG=.venv/setup.log
echo "Setting up .venv (citegraph${EXTRAS:+ with $EXTRAS extras}; pip log: $LOG) ..."
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
