#!/usr/bin/env bash
# Set up and run the whole test suite: unit, contract (embedded + a real Neo4j 5.26 that
# the suite starts with scripts/neo4j.sh, or the server in NEO4J_URI), API, hardening,
# browser. Everything it needs is set up here, on a fresh machine too:
#   * .venv with the test extras (scripts/setup.sh);
#   * the Neo4j jars from Maven Central (once, cached in ~/.cache/citegraph);
#   * Debian's chromium for the browser tests, installed with apt-get when running as
#     root; otherwise one line says so and the browser tests are deselected (-m "not browser").
# Extra arguments go to pytest, e.g.  bash scripts/test.sh -k related -x
# CITEGRAPH_TEST_PROFILE=long: ten times the fuzz examples, every soak run repeated
# (the default, short profile is CI's; tests/support/profile.py).
# The tests run in CITEGRAPH_TEST_WORKERS pytest-xdist workers (default 3: on 2 cores
# much of a test's time is spent waiting for a server, a CLI process or Neo4j; 0 runs
# them in this one process). Each worker starts its own Neo4j. A module runs whole on
# one worker (--dist loadfile), in the folder order of tests/conftest.py.
set -euo pipefail
cd "$(dirname "$0")/.."
say() { echo "test.sh: $*"; }
can_apt() { [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; }
apt_install() {
  export DEBIAN_FRONTEND=noninteractive
  { apt-get update -qq && apt-get install -y -qq "$@"; } >/dev/null 2>&1
}

bash scripts/setup.sh test
export HF_HUB_OFFLINE=1

if ! command -v mvn >/dev/null 2>&1 || ! command -v java >/dev/null 2>&1; then
  if can_apt; then
    say "installing Java 17 and Maven with apt-get (for the Neo4j test server) ..."
    apt_install openjdk-17-jre-headless maven || say "apt-get could not install Java/Maven"
  fi
fi
if command -v mvn >/dev/null 2>&1 && command -v java >/dev/null 2>&1; then
  bash scripts/neo4j.sh jars >/dev/null
else
  say "no java/mvn: the Neo4j tests will fail with the reason (apt-get install maven)"
fi

CHROMIUM="${CITEGRAPH_CHROMIUM:-/usr/bin/chromium}"
why="not root, or no apt-get"
if [ ! -x "$CHROMIUM" ] && can_apt; then
  say "installing Debian's chromium with apt-get (for the browser tests) ..."
  apt_install chromium chromium-driver || true
  why="apt-get install chromium did not provide it"
fi
ARGS=()
WORKERS="${CITEGRAPH_TEST_WORKERS:-3}"
if [[ " $* " != *" -n "* && "$WORKERS" != 0 ]]; then
  ARGS+=(-n "$WORKERS" --dist loadfile --no-loadscope-reorder)
fi
ARGS+=("$@")
if [ ! -x "$CHROMIUM" ]; then
  say "SKIPPING the browser tests (-m \"not browser\"): no $CHROMIUM ($why;" \
      "as root: apt-get install chromium chromium-driver)"
  if [[ " $* " != *" -m "* ]]; then
    ARGS+=(-m "not browser")
  fi
fi
exec .venv/bin/python -m pytest ${ARGS[@]+"${ARGS[@]}"}
