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
#   HS_DEMO_CLOCK=lockstep scripts/demo.sh
#                                      the bench waits for the controller every tick
#                                      (`hilsim run --clock lockstep`), so a busy host slows the
#                                      run down instead of taking the joints from the controller
#   HS_DEMO_OUT=DIR scripts/demo.sh    where the logs go (default out/demo-<bench> under the
#                                      current directory); they are kept
#
# Prints hilsim's timing summary and what the controller achieved. Exits non-zero if hilsim, the
# controller or the logger failed, or if the controller was not in control: the bench held the
# joints itself (its overrun bucket latched the safe hold, or commands went stale for more than
# 1 % of the ticks), which on a host that cannot keep the 1 ms tick makes the controller's near-
# zero errors the bench's own.
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
CLOCK=${HS_DEMO_CLOCK:-wall}
case "$CLOCK" in wall | lockstep) ;; *) echo "demo: HS_DEMO_CLOCK is wall or lockstep" >&2; exit 2 ;; esac
# In lockstep the bench waits for the controller's release every tick, so both run the same
# number of ticks (the bench would otherwise hold, waiting, after the controller's last one).
[ "$CLOCK" = lockstep ] && DURATION_S=$((PD_TICKS / 1000))
OUT=${HS_DEMO_OUT:-out/demo-$NAME}
mkdir -p "$OUT" && OUT="$(cd "$OUT" && pwd)" || { echo "demo: cannot create $OUT" >&2; exit 2; }

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

echo "== hilsim run config/$BENCH.yaml --duration $DURATION_S --no-rt --clock $CLOCK"
"$HILSIM" run "$CONFIG" --duration "$DURATION_S" --no-rt --clock "$CLOCK" \
  >"$OUT/hilsim.out" 2>"$OUT/hilsim.err" &
HS_PID=$!

# The segment appears once the bench is built; hilsim failing first is an error.
for _ in $(seq 200); do
  [ -e "$SEGMENT" ] && break
  if ! kill -0 "$HS_PID" 2>/dev/null; then
    wait "$HS_PID" || true
    HS_PID=""
    echo "demo: hilsim exited before serving the bench:" >&2
    cat "$OUT/hilsim.err" >&2
    exit 1
  fi
  sleep 0.05
done
[ -e "$SEGMENT" ] || { echo "demo: $SEGMENT did not appear within 10 s" >&2; exit 1; }
echo "serving $SEGMENT (hilsim pid $HS_PID)"

if [ "$LOGGER" = 1 ]; then
  HILSIM_CLIENT_LIB="$LIB" python3 "$HERE/examples/logger.py" "$NAME" "$OUT/log.csv" \
    --timeout 5 >"$OUT/logger.out" 2>"$OUT/logger.err" &
  LOG_PID=$!
fi

echo "== examples/pd_controller $NAME $PD_TICKS ${GAINS[*]}"
pd_rc=0
timeout 60 "$PD" "$NAME" "$PD_TICKS" "${GAINS[@]}" >"$OUT/pd.out" 2>"$OUT/pd.err" || pd_rc=$?

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
cat "$OUT/hilsim.out"
grep -E "error|shm:|safe stop" "$OUT/hilsim.err" | sed 's/^/  /' || true
overruns=$(grep -c "overrun" "$OUT/hilsim.err" || true)
[ "$overruns" -eq 0 ] || echo "  ($overruns overrun warnings: see the deadline misses above)"
echo
echo "== pd_controller (exit $pd_rc)"
cat "$OUT/pd.out" "$OUT/pd.err"
if [ "$LOGGER" = 1 ]; then
  echo
  echo "== logger.py (exit $log_rc)"
  cat "$OUT/logger.out" "$OUT/logger.err"
  [ -f "$OUT/log.csv" ] && echo "  $(($(wc -l <"$OUT/log.csv") - 1)) rows, columns: $(head -1 "$OUT/log.csv" | cut -c1-100)..."
fi

fail=0
[ "$hs_rc" -eq 0 ] || { echo "demo: FAILED: hilsim exited $hs_rc" >&2; fail=1; }
[ "$pd_rc" -eq 0 ] || { echo "demo: FAILED: pd_controller exited $pd_rc" >&2; fail=1; }
[ "$log_rc" -eq 0 ] || { echo "demo: FAILED: logger exited $log_rc" >&2; fail=1; }
[ -e "$SEGMENT" ] && { echo "demo: FAILED: $SEGMENT left behind" >&2; fail=1; }

# Was the controller in control? The bench holds a joint itself when its command is stale, and
# all of them once the overrun bucket latches the safe hold: then the final errors above are the
# bench's hold, not the controller's.
held=$(sed -n 's/.* \([0-9][0-9]*\) ticks held.*/\1/p' "$OUT/pd.out" | head -1)
stale=$(sed -n 's/.* \([0-9][0-9]*\) ticks with a stale joint.*/\1/p' "$OUT/pd.out" | head -1)
if [ "$pd_rc" -eq 0 ] && { [ -z "$held" ] || [ -z "$stale" ]; }; then
  echo "demo: FAILED: pd_controller did not say how many ticks it held and how many went stale" >&2
  fail=1
elif grep -q "SAFE HOLD latched" "$OUT/hilsim.out"; then
  echo "demo: FAILED: the controller was not in control: this host could not keep the 1 ms tick" \
       "($(sed -n 's/.*deadline misses \([0-9]*\).*/\1/p' "$OUT/hilsim.out" | head -1) deadline" \
       "misses), the overrun bucket latched the safe hold and the bench held the joints itself" \
       "($stale of $held ticks with a stale joint). Run it on an idle or real-time host, or with" \
       "HS_DEMO_CLOCK=lockstep, where the bench waits for the controller." >&2
  fail=1
elif [ -n "$stale" ] && [ "$((stale * 100))" -gt "$held" ]; then
  echo "demo: FAILED: the controller was not in control: $stale of $held ticks had a stale" \
       "joint, which the bench held itself (more than 1 %)" >&2
  fail=1
fi
echo "demo: logs kept in $OUT (hilsim.out/.err, pd.out, logger.out, log.csv)"
[ "$fail" -eq 0 ] && echo "demo: OK: the controller held the robot on $((held - stale)) of $held ticks, the bench on $stale"
exit "$fail"
