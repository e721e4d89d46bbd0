#!/usr/bin/env bash
# A real local Neo4j 5.26 Community for development and tests, without Docker.
#
#   eval "$(bash scripts/neo4j.sh start)"     # prints export NEO4J_URI=… NEO4J_USER=… NEO4J_PASSWORD=…
#   citegraph --store neo4j build seeds/
#   bash scripts/neo4j.sh status              # exit 0 when running, 3 when not
#   bash scripts/neo4j.sh stop                # stops the server this script started (by its pid)
#
# start options:  --port N (default: a free port)   --password PW (default: $NEO4J_PASSWORD,
#   else generated; at least 8 characters)   --data DIR (default: a temporary folder, removed
#   by stop)   --heap SIZE (default 512m)   --conf key=value (a neo4j.conf line; repeatable)
# every command: --state DIR (pid file, log and the printed lines; default .citegraph/neo4j)
#
# The jars (org.neo4j:neo4j and org.neo4j:neo4j-bolt from Maven Central, scripts/neo4j/pom.xml)
# are fetched once with mvn into ~/.cache/citegraph/neo4j-<version>/lib; `jars` does only that.
# The server listens on 127.0.0.1 only, with auth on. Progress goes to stderr, the lines to
# eval to stdout. CITEGRAPH_NEO4J_VERSION / JAVA pick another version / java binary.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
HERE="$ROOT/scripts/neo4j"
VERSION="${CITEGRAPH_NEO4J_VERSION:-$(sed -n 's:.*<neo4j.version>\(.*\)</neo4j.version>.*:\1:p' "$HERE/pom.xml")}"
CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/citegraph/neo4j-$VERSION"
JAVA="${JAVA:-java}"
START_TIMEOUT="${CITEGRAPH_NEO4J_START_TIMEOUT:-180}"

say() { echo "neo4j.sh: $*" >&2; }
die() { say "$*"; exit 1; }

cmd="${1:-}"
[ $# -gt 0 ] && shift
DEFAULT_STATE="$ROOT/.citegraph/neo4j"
STATE="$DEFAULT_STATE" PORT=0 PASSWORD="${NEO4J_PASSWORD:-}" DATA="" HEAP=512m WATCH=""
CONF=()
while [ $# -gt 0 ]; do
  case "$1" in
    --state) STATE="$2"; shift 2 ;;
    --port) PORT="$2"; shift 2 ;;
    --password) PASSWORD="$2"; shift 2 ;;
    --data) DATA="$2"; shift 2 ;;
    --heap) HEAP="$2"; shift 2 ;;
    --conf) CONF+=(--conf "$2"); shift 2 ;;
    --watch-pid) WATCH="$2"; shift 2 ;;  # stop by itself when that process is gone (tests)
    *) die "unknown option $1 (see the top of scripts/neo4j.sh)" ;;
  esac
done
PIDFILE="$STATE/neo4j.pid" LOG="$STATE/neo4j.log" ENVFILE="$STATE/neo4j.env"

jars() {
  if [ -f "$CACHE/lib/.complete" ]; then
    echo "$CACHE/lib"; return
  fi
  command -v mvn >/dev/null || die "mvn not found: apt-get install maven (fetches the Neo4j jars)"
  say "fetching Neo4j $VERSION jars from Maven Central into $CACHE/lib (once; ~125 MB) ..."
  mkdir -p "$CACHE"
  local tmp="$CACHE/lib.tmp.$$"
  rm -rf "$tmp"
  if ! mvn -q -B -f "$HERE/pom.xml" -Dneo4j.version="$VERSION" dependency:copy-dependencies \
      -DincludeScope=runtime -DoutputDirectory="$tmp" >"$CACHE/mvn.log" 2>&1; then
    tail -n 20 "$CACHE/mvn.log" >&2
    rm -rf "$tmp"
    die "mvn could not fetch the Neo4j jars (log: $CACHE/mvn.log)"
  fi
  touch "$tmp/.complete"
  rm -rf "$CACHE/lib"
  mv "$tmp" "$CACHE/lib"
  echo "$CACHE/lib"
}

# pid of the running server of this state folder, or nothing (a stale pid file is ignored)
running_pid() {
  [ -f "$PIDFILE" ] || return 0
  local pid
  pid="$(cat "$PIDFILE")"
  case "$pid" in ''|*[!0-9]*) return 0 ;; esac
  if [ -r "/proc/$pid/cmdline" ] && tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q "Launcher.java"; then
    echo "$pid"
  fi
  return 0
}

# Bolt answers: the handshake (magic 0x6060B017, then four versions) gets a 4-byte reply.
bolt_answers() {
  local port="$1" reply
  reply="$(timeout 5 bash -c "exec 3<>/dev/tcp/127.0.0.1/$port
    printf '\x60\x60\xb0\x17\x00\x00\x08\x05\x00\x00\x00\x04\x00\x00\x00\x00\x00\x00\x00\x00' >&3
    head -c 4 <&3 | od -An -tx1" 2>/dev/null || true)"
  [ -n "${reply// /}" ] && [ "${reply// /}" != "00000000" ]
}

start() {
  local pid
  pid="$(running_pid)"
  if [ -n "$pid" ]; then
    [ -f "$ENVFILE" ] || die "pid $pid is running but never became ready (log: $LOG); stop it first"
    say "already running (pid $pid); the same lines again:"
    cat "$ENVFILE"; return
  fi
  local lib
  lib="$(jars)"
  if [ -z "$PASSWORD" ]; then
    PASSWORD="cg-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')"
  fi
  [ "${#PASSWORD}" -ge 8 ] || die "the password needs at least 8 characters"
  case "$PORT" in ''|*[!0-9]*) die "--port needs a number" ;; esac
  mkdir -p "$STATE"
  local temp=0
  if [ -z "$DATA" ]; then
    DATA="$(mktemp -d "${TMPDIR:-/tmp}/citegraph-neo4j.XXXXXX")"; temp=1
  fi
  mkdir -p "$DATA"
  DATA="$(cd "$DATA" && pwd)"
  echo "$DATA" >"$STATE/data_dir"
  echo "$temp" >"$STATE/data_is_temp"
  # the log too: the wait below must not read the READY line of an earlier (killed) run
  rm -f "$ENVFILE" "$PIDFILE" "$LOG"
  local watch=()
  [ -n "$WATCH" ] && watch=(--watch-pid "$WATCH")
  say "starting Neo4j $VERSION (data: $DATA, log: $LOG) ..."
  # setsid: its own session, so a Ctrl-C in the terminal that started it does not reach it
  # shellcheck disable=SC2086 # CITEGRAPH_NEO4J_JAVA_OPTS: extra JVM options, split on spaces
  NEO4J_PASSWORD="$PASSWORD" nohup setsid "$JAVA" -Xms128m "-Xmx$HEAP" -XX:+UseSerialGC ${CITEGRAPH_NEO4J_JAVA_OPTS:-} \
    -cp "$lib/*" "$HERE/Launcher.java" --home "$DATA" --port "$PORT" \
    --pid-file "$PIDFILE" ${CONF[@]+"${CONF[@]}"} ${watch[@]+"${watch[@]}"} \
    </dev/null >"$LOG" 2>&1 &
  local launched=$! deadline=$((SECONDS + START_TIMEOUT)) uri=""
  while [ $SECONDS -lt $deadline ]; do
    uri="$(sed -n 's/^READY //p' "$LOG" 2>/dev/null | head -n 1 || true)"
    [ -n "$uri" ] && break
    if ! kill -0 "$launched" 2>/dev/null && [ -z "$(running_pid)" ]; then
      tail -n 30 "$LOG" >&2
      die "Neo4j exited during start (log: $LOG)"
    fi
    sleep 0.3
  done
  if [ -z "$uri" ]; then
    tail -n 30 "$LOG" >&2
    stop_pid "$(running_pid)"
    die "Neo4j not ready after ${START_TIMEOUT}s (log: $LOG)"
  fi
  pid="$(running_pid)"
  [ -n "$pid" ] || die "Neo4j reported ready but its pid file $PIDFILE is missing"
  local port="${uri##*:}"
  until bolt_answers "$port"; do
    [ $SECONDS -lt $deadline ] || { stop_pid "$pid"; die "Bolt on port $port does not answer"; }
    sleep 0.3
  done
  umask 077
  {
    echo "export NEO4J_URI=$uri"
    echo "export NEO4J_USER=neo4j"
    echo "export NEO4J_PASSWORD=$(printf '%q' "$PASSWORD")"
  } >"$ENVFILE"
  say "Neo4j $(sed -n 's/^NEO4J_VERSION //p' "$LOG") ready on $uri (pid $pid; stop: bash scripts/neo4j.sh stop$([ "$STATE" = "$DEFAULT_STATE" ] || echo " --state $STATE"))"
  cat "$ENVFILE"
}

stop_pid() {
  local pid="$1"
  [ -n "$pid" ] || return 0
  kill -TERM "$pid" 2>/dev/null || true
  local deadline=$((SECONDS + 60))
  while kill -0 "$pid" 2>/dev/null && [ $SECONDS -lt $deadline ]; do sleep 0.2; done
  if kill -0 "$pid" 2>/dev/null; then
    say "pid $pid did not stop in 60 s; killing it"
    kill -KILL "$pid" 2>/dev/null || true
  fi
}

stop() {
  local pid
  pid="$(running_pid)"
  if [ -z "$pid" ]; then
    say "not running"
  else
    say "stopping pid $pid ..."
    stop_pid "$pid"
    say "stopped"
  fi
  rm -f "$PIDFILE" "$ENVFILE"
  if [ -f "$STATE/data_is_temp" ] && [ "$(cat "$STATE/data_is_temp")" = 1 ]; then
    rm -rf "$(cat "$STATE/data_dir")"
    rm -f "$STATE/data_is_temp" "$STATE/data_dir"
  fi
}

status() {
  local pid
  pid="$(running_pid)"
  if [ -n "$pid" ]; then
    echo "running (pid $pid, $(sed -n 's/^export NEO4J_URI=//p' "$ENVFILE" 2>/dev/null))"
  else
    echo "not running"; exit 3
  fi
}

case "$cmd" in
  start) start ;;
  stop) stop ;;
  status) status ;;
  env) [ -n "$(running_pid)" ] || die "not running"; cat "$ENVFILE" ;;
  jars) jars ;;
  *) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
esac
