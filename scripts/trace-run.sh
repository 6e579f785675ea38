#!/usr/bin/env bash
# Records an LTTng-UST trace of the hilsim:* events while a command runs.
#
#   scripts/trace-run.sh [-o TRACE_DIR] [-s SUBBUF_SIZE] [-n NUM_SUBBUF] -- COMMAND [ARGS...]
#
# Starts its own lttng-sessiond (--no-kernel --daemonize, LTTNG_HOME in a temp dir) unless one
# already serves this user, in which case it reuses it and leaves it running. Creates a
# uniquely named session, enables 'hilsim:*', starts, runs COMMAND, stops, destroys, stops the
# sessiond it started (by PID) and prints the trace directory as the last line of stdout.
# COMMAND's stdout goes to this script's stdout, its stderr to stderr. Exit code: COMMAND's,
# or 125 when the tracing set-up failed. Runs are serialized with a lock (the root sessiond is
# one per machine).
set -euo pipefail

out=""
subbuf=8M
nsubbuf=4
usage() { echo "usage: $0 [-o TRACE_DIR] [-s SUBBUF_SIZE] [-n NUM_SUBBUF] -- COMMAND [ARGS...]" >&2; exit 125; }
while getopts "o:s:n:h" opt; do
  case $opt in
    o) out=$OPTARG ;;
    s) subbuf=$OPTARG ;;
    n) nsubbuf=$OPTARG ;;
    *) usage ;;
  esac
done
shift $((OPTIND - 1))
[[ ${1:-} == -- ]] && shift
[[ $# -ge 1 ]] || usage
for tool in lttng lttng-sessiond; do
  command -v "$tool" >/dev/null || { echo "trace-run: $tool not found (apt-get install lttng-tools)" >&2; exit 125; }
done

work=$(mktemp -d "${TMPDIR:-/tmp}/hilsim-trace.XXXXXX")
[[ -n $out ]] || out="$work/trace"
mkdir -p "$(dirname "$out")"
out=$(cd "$(dirname "$out")" && pwd)/$(basename "$out")
export LTTNG_HOME="$work/home"
mkdir -p "$LTTNG_HOME"
if [[ $(id -u) -eq 0 ]]; then rundir=/var/run/lttng; else rundir="$LTTNG_HOME/.lttng"; fi
session="hilsim-$$-$RANDOM"
started_pid=""
session_made=0

exec 9>"${TMPDIR:-/tmp}/hilsim-trace-run.lock"
flock 9

cleanup() {
  set +e
  if [[ $session_made -eq 1 ]]; then
    lttng destroy "$session" >/dev/null 2>&1
  fi
  if [[ -n $started_pid ]]; then
    kill "$started_pid" 2>/dev/null
    for _ in $(seq 50); do kill -0 "$started_pid" 2>/dev/null || break; sleep 0.1; done
  fi
  rm -rf "$LTTNG_HOME"
}
trap cleanup EXIT

sessiond_alive() {
  local pid
  pid=$(cat "$rundir/lttng-sessiond.pid" 2>/dev/null) || return 1
  [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null && ! grep -q '^State:.*Z' "/proc/$pid/status" 2>/dev/null
}

if ! sessiond_alive; then
  # --no-kernel: otherwise it daemonizes fine and kernel commands fail later.
  if ! lttng-sessiond --no-kernel --daemonize >"$work/sessiond.log" 2>&1; then
    echo "trace-run: lttng-sessiond failed to start:" >&2
    cat "$work/sessiond.log" >&2
    exit 125
  fi
  started_pid=$(cat "$rundir/lttng-sessiond.pid")
fi

step() {
  if ! "$@" >"$work/lttng.log" 2>&1; then
    echo "trace-run: '$*' failed:" >&2
    cat "$work/lttng.log" >&2
    exit 125
  fi
}
step lttng create "$session" --output="$out"
session_made=1
step lttng enable-channel -u -s "$session" --subbuf-size="$subbuf" --num-subbuf="$nsubbuf" hschan
step lttng enable-event -u -s "$session" -c hschan 'hilsim:*'
step lttng start "$session"

set +e
"$@"
rc=$?
set -e

step lttng stop "$session"
step lttng destroy "$session"
session_made=0
echo "$out"
exit $rc
