#!/usr/bin/env bash
# The shared-memory demo: hilsim serves a robot in real time for 10 s while the example C
# controller (examples/pd_controller) holds every joint with a PD in
# lockstep over shared memory, and the Python logger (examples/logger.py) records every tick it
# sees. Builds nothing: give it a build directory.
#
#   scripts/demo.sh [BUILD_DIR]        default: ./build
#   HS_DEMO_BENCH=arm2 scripts/demo.sh the two-joint arm (config/arm2-shm.yaml) instead of the
#                                      humanoid (config/biped-shm.yaml, the default)
#   HS_DEMO_LOGGER=0 scripts/demo.sh   without the Python logger
#   HS_DEMO_UNIQUE=1 scripts/demo.sh   serve the bench as <bench>-<pid> (a copy of the config), so
#                                      that several checkouts' tests can run the demo at once
#
# Prints hilsim's timing summary and what the controller achieved; exits non-zero if hilsim, the
# controller or the logger failed.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="$(cd "${1:-build}" 2>/dev/null && pwd)" || {
  echo "demo: build directory '${1:-build}' not found (cmake -S . -B build && cmake --build build)" >&2
  exit 2
}
case "${HS_DEMO_BENCH:-biped}" in
  biped) BENCH=biped-shm GAINS=(100 2 "$HERE/config/biped-shm.gains") ;;
  arm2) BENCH=arm2-shm GAINS=(300 20) ;;
  *) echo "demo: HS_DEMO_BENCH is biped or arm2" >&2; exit 2 ;;
esac
CONFIG=$HERE/config/$BENCH.yaml
NAME=$BENCH
[ "${HS_DEMO_UNIQUE:-0}" = 1 ] && NAME=$BENCH-$$
SEGMENT=/dev/shm/hilsim-$NAME
HILSIM=$BUILD/hilsim
PD=$BUILD/examples/pd_controller
LIB=$BUILD/src/client/libhilsim-client.so
DURATION_S=10
PD_TICKS=8000 # 8 s at the config's 1 ms tick
LOGGER=${HS_DEMO_LOGGER:-1}

for f in "$HILSIM" "$PD"; do
  [ -x "$f" ] || { echo "demo: $f is missing: build first" >&2; exit 2; }
done
if [ "$LOGGER" = 1 ] && { ! command -v python3 >/dev/null || [ ! -e "$LIB" ]; }; then
  echo "demo: python3 or $LIB missing: running without the logger"
  LOGGER=0
fi
if [ -e "$SEGMENT" ]; then
  echo "demo: $SEGMENT exists: another hilsim serves bench $NAME (or a crashed one left it;" \
       "then remove it)" >&2
  exit 1
fi

TMP="$(mktemp -d)"
HS_PID=""
LOG_PID=""
# Ends only what this script started, by pid; hilsim removes its own segment when it stops.
# shellcheck disable=SC2317 # invoked by the EXIT trap
cleanup() {
  local rc=$?
  if [ -n "$LOG_PID" ] && kill -0 "$LOG_PID" 2>/dev/null; then
    kill "$LOG_PID" 2>/dev/null || true
  fi
  if [ -n "$HS_PID" ] && kill -0 "$HS_PID" 2>/dev/null; then
    kill -TERM "$HS_PID" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$HS_PID" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$HS_PID" 2>/dev/null; then
      kill -KILL "$HS_PID" 2>/dev/null || true
      wait "$HS_PID" 2>/dev/null || true
      rm -f "$SEGMENT" # it was ours: created O_EXCL by the process just killed
    fi
  fi
  rm -rf "$TMP"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if [ "$NAME" != "$BENCH" ]; then
  # The same bench under its own name: a copy in TMP, its model paths made absolute.
  sed -e "s#^  name: $BENCH\$#  name: $NAME#" -e "s#file: \.\./models/#file: $HERE/models/#" \
    "$CONFIG" >"$TMP/$NAME.yaml"
  grep -q "^  name: $NAME\$" "$TMP/$NAME.yaml" ||
    { echo "demo: $CONFIG has no 'name: $BENCH' line to rename" >&2; exit 2; }
  CONFIG=$TMP/$NAME.yaml
fi

echo "== hilsim run config/$BENCH.yaml --duration $DURATION_S --no-rt"
"$HILSIM" run "$CONFIG" --duration "$DURATION_S" --no-rt \
  >"$TMP/hilsim.out" 2>"$TMP/hilsim.err" &
HS_PID=$!

# The segment appears once the bench is built; hilsim failing first is an error.
for _ in $(seq 200); do
  [ -e "$SEGMENT" ] && break
  if ! kill -0 "$HS_PID" 2>/dev/null; then
    wait "$HS_PID" || true
    HS_PID=""
    echo "demo: hilsim exited before serving the bench:" >&2
    cat "$TMP/hilsim.err" >&2
    exit 1
  fi
  sleep 0.05
done
[ -e "$SEGMENT" ] || { echo "demo: $SEGMENT did not appear within 10 s" >&2; exit 1; }
echo "serving $SEGMENT (hilsim pid $HS_PID)"

if [ "$LOGGER" = 1 ]; then
  HILSIM_CLIENT_LIB="$LIB" python3 "$HERE/examples/logger.py" "$NAME" "$TMP/log.csv" \
    --timeout 5 >"$TMP/logger.out" 2>"$TMP/logger.err" &
  LOG_PID=$!
fi

echo "== examples/pd_controller $NAME $PD_TICKS ${GAINS[*]}"
pd_rc=0
timeout 60 "$PD" "$NAME" "$PD_TICKS" "${GAINS[@]}" >"$TMP/pd.out" 2>"$TMP/pd.err" || pd_rc=$?

hs_rc=0
wait "$HS_PID" || hs_rc=$?
HS_PID=""
log_rc=0
if [ -n "$LOG_PID" ]; then
  wait "$LOG_PID" || log_rc=$?
  LOG_PID=""
fi

echo
echo "== hilsim (exit $hs_rc): timing summary"
cat "$TMP/hilsim.out"
grep -E "error|shm:|safe stop" "$TMP/hilsim.err" | sed 's/^/  /' || true
overruns=$(grep -c "overrun" "$TMP/hilsim.err" || true)
[ "$overruns" -eq 0 ] || echo "  ($overruns overrun warnings: see the deadline misses above)"
if grep -q "SAFE HOLD" "$TMP/hilsim.out"; then
  echo "  note: the overrun bucket latched the safe hold (a loaded host): from then on the bench" \
       "held the joints itself"
fi
echo
echo "== pd_controller (exit $pd_rc)"
cat "$TMP/pd.out" "$TMP/pd.err"
if [ "$LOGGER" = 1 ]; then
  echo
  echo "== logger.py (exit $log_rc)"
  cat "$TMP/logger.out" "$TMP/logger.err"
  [ -f "$TMP/log.csv" ] && echo "  $(($(wc -l <"$TMP/log.csv") - 1)) rows, columns: $(head -1 "$TMP/log.csv" | cut -c1-100)..."
fi

fail=0
[ "$hs_rc" -eq 0 ] || { echo "demo: FAILED: hilsim exited $hs_rc" >&2; fail=1; }
[ "$pd_rc" -eq 0 ] || { echo "demo: FAILED: pd_controller exited $pd_rc" >&2; fail=1; }
[ "$log_rc" -eq 0 ] || { echo "demo: FAILED: logger exited $log_rc" >&2; fail=1; }
[ -e "$SEGMENT" ] && { echo "demo: FAILED: $SEGMENT left behind" >&2; fail=1; }
[ "$fail" -eq 0 ] && echo "demo: OK"
exit "$fail"
