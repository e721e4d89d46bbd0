#!/usr/bin/env bash
# Set up (with test extras) and run the whole test suite: unit, contract (embedded +
# a real Bolt server: ArcadeDB started by the suite, or NEO4J_URI), API, browser.
# Extra arguments go to pytest, e.g.  bash scripts/test.sh -k related -x
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh test
export HF_HUB_OFFLINE=1
exec .venv/bin/python -m pytest "$@"
