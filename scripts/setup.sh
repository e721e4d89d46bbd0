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
# A download cut off mid-way (torch's CUDA wheels are up to ~400 MB each) is resumed by
# pip up to --resume-retries times, and the whole install tried again twice after that;
# what pip already installed or cached is not fetched again. (A full disk also shows as
# pip's "incomplete-download": check `df` before blaming the network.)
pip_install() {
  local attempt
  for attempt in 1 2 3; do
    if .venv/bin/python -m pip install --resume-retries 20 "$@"; then
      return 0
    fi
    echo "pip install $* failed (attempt $attempt of 3)" >&2
    [ "$attempt" -lt 3 ] && sleep 15
  done
  return 1
}
{
  # (the venv's own pip may predate --resume-retries)
  .venv/bin/python -m pip install --upgrade pip
  pip_install "torch==2.13.0"
  if [ -n "$EXTRAS" ]; then
    pip_install -e ".[$EXTRAS]"
  else
    pip_install -e .
  fi
} >"$LOG" 2>&1 || { tail -n 30 "$LOG"; echo "setup failed: see $LOG" >&2; exit 1; }
echo "Ready: .venv/bin/citegraph"
