#!/bin/sh
# Runs inside the PREEMPT_RT guest: hilsim run and hilsim bench at a 10 ms tick. Checks what the
# real RT kernel grants and that the loop and the report work; asserts no timing figure.
# usage: guest-run-bench.sh HILSIM CONFIG OUTDIR
set -eu
HILSIM=$1 CONFIG=$2 OUT=$3
fail() { echo "FAIL: $*" >&2; exit 1; }

uname -v | grep -q PREEMPT_RT || fail "guest kernel is not PREEMPT_RT: $(uname -v)"

"$HILSIM" run "$CONFIG" --duration 2 --require-rt > "$OUT/run.out" 2> "$OUT/run.err" ||
  fail "hilsim run --require-rt exited $? ($(tail -3 "$OUT/run.err"))"
grep -q "preemption model       PREEMPT_RT" "$OUT/run.out" || fail "audit does not say PREEMPT_RT"
grep -q "SCHED_FIFO             granted" "$OUT/run.out" || fail "SCHED_FIFO not granted"
grep -q "mlockall               granted" "$OUT/run.out" || fail "mlockall not granted"
grep -q "RT capable             yes" "$OUT/run.out" || fail "audit does not call the guest RT capable"
grep -q "stopped: max ticks reached; ticks 200," "$OUT/run.out" || fail "the loop did not run 200 ticks"

rm -rf "$OUT/report"
# The verdict is a timing judgement, meaningless under emulation: exit 1 with a written report
# (a failed budget) is accepted; any other failure is not.
rc=0
"$HILSIM" bench "$CONFIG" --duration 1 --report "$OUT/report" --require-rt > "$OUT/bench.out" \
  2> "$OUT/bench.err" || rc=$?
[ "$rc" -eq 0 ] || { [ "$rc" -eq 1 ] && [ -f "$OUT/report/report.json" ]; } ||
  fail "hilsim bench exited $rc ($(tail -3 "$OUT/bench.err"))"
python3 - "$OUT/report" <<'PY' || fail "report check failed"
import json, sys
d = sys.argv[1]
j = json.load(open(d + "/report.json"))
assert j["stats"]["ticks"] == 100, j["stats"]["ticks"]
assert j["baseline_wake"]["count"] == 100, j["baseline_wake"]["count"]
assert j["audit"]["preempt_rt"] is True, j["audit"]
assert j["verdict"] in ("pass", "fail")
svg = open(d + "/latency.svg").read()
assert svg.startswith("<svg") and "</svg>" in svg
assert "verdict:" in open(d + "/report.txt").read()
PY
echo "guest: PREEMPT_RT, SCHED_FIFO and mlockall granted; run 200 ticks; bench report parses"
