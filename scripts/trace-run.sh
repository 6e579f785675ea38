#!/usr/bin/env bash
# Records an LTTng-UST trace of the hilsim:* events while a command runs.
#
#   scripts/trace-run.sh [-o TRACE_DIR] [-s SUBBUF_SIZE] [-n NUM_SUBBUF] -- COMMAND [ARGS...]
#
# Starts its own lttng-sessiond (--no-kernel --daemonize, LTTNG_HOME in a temp dir) unless one
# already serves this user, in which case it reuses it and leaves it running (as root the
# sessiond is machine-wide whatever LTTNG_HOME says). Creates a uniquely named session that
# records 'hilsim:*' from COMMAND's process only (other hilsim processes on the machine emit
# the same events), with the vpid context; starts, runs COMMAND, stops, destroys, stops the
# sessiond it started (by PID) and prints the trace directory as the last line of stdout.
# SIGINT/SIGTERM are passed on to COMMAND so a run can be ended with Ctrl-C.
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

work=$(mktemp -d "${TMPDIR:-/tmp}/hilsim-trace-run.XXXXXX") # scratch, always removed
if [[ -z $out ]]; then
  out=$(mktemp -d "${TMPDIR:-/tmp}/hilsim-trace.XXXXXX")
  rmdir "$out" # lttng create makes it
fi
mkdir -p "$(dirname "$out")"
out=$(cd "$(dirname "$out")" && pwd)/$(basename "$out")
export LTTNG_HOME="$work/home"
mkdir -p "$LTTNG_HOME"
if [[ $(id -u) -eq 0 ]]; then rundir=/var/run/lttng; else rundir="$LTTNG_HOME/.lttng"; fi
session="hilsim-$$-$RANDOM"
started_pid=""
session_made=0
cmd_pid=""

exec 9>"${TMPDIR:-/tmp}/hilsim-trace-run.lock"
flock 9

# shellcheck disable=SC2317 # called by the EXIT trap
cleanup() {
  set +e
  if [[ -n $cmd_pid ]] && kill -0 "$cmd_pid" 2>/dev/null; then
    kill "$cmd_pid" 2>/dev/null # set-up failed while COMMAND was held
  fi
  if [[ $session_made -eq 1 ]]; then
    lttng destroy "$session" >/dev/null 2>&1
  fi
  if [[ -n $started_pid ]]; then
    kill "$started_pid" 2>/dev/null
    for _ in $(seq 50); do kill -0 "$started_pid" 2>/dev/null || break; sleep 0.1; done
  fi
  rm -rf "$work"
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
step lttng add-context -u -s "$session" -c hschan -t vpid

# COMMAND is started held on a fifo so its PID (kept across exec) can be tracked before it
# runs: only its events are recorded, from its first tick.
# The app registers with the sessiond in its constructor; by default it gives up after 3 s on
# a busy machine and the first ticks go unrecorded. Wait longer unless told otherwise.
export LTTNG_UST_REGISTER_TIMEOUT=${LTTNG_UST_REGISTER_TIMEOUT:-30000}
mkfifo "$work/go"
( trap - INT QUIT; read -r _ <"$work/go"; exec "$@" <&3 3<&- ) 3<&0 &
cmd_pid=$!
trap 'kill -INT $cmd_pid 2>/dev/null' INT
trap 'kill -TERM $cmd_pid 2>/dev/null' TERM
step lttng track -u -s "$session" --vpid="$cmd_pid"
step lttng start "$session"

set +e
echo go >"$work/go"
while :; do
  wait "$cmd_pid"
  rc=$?
  kill -0 "$cmd_pid" 2>/dev/null || break # a trapped signal interrupted wait: wait again
done
set -e
trap - INT TERM

step lttng stop "$session"
step lttng destroy "$session"
session_made=0
echo "$out"
exit "$rc"
