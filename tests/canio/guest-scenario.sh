#!/bin/sh
# guest-scenario.sh HILSIM OUT_DIR
# Runs inside the PREEMPT_RT guest (tests/rtguest/run-in-rt-guest.sh, OUT_DIR in HS_GUEST_RW):
# a CAN scenario end to end over real SocketCAN. `hilsim run tests/canio/arm2-can-guest.yaml
# --scenario scenarios/arm-can-odrive-fault.yaml --junit ... --result-json ...` on vcan0, with
# `candump -L vcan0` into OUT_DIR/candump-scenario.log and the python-can controller
# scenario_peer.py, which clears the ODrive axis error the scenario raises. hilsim ends the run
# when the scenario's time is played; then the JUnit XML is parsed: one test case per
# expectation of the file, none failed, exit status 0, and the summary shows the MIT commands
# the delay held.
set -u
HILSIM=$1 OUT=$2
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$HERE/../.." && pwd)
CONFIG=$HERE/arm2-can-guest.yaml SCEN=$SRC/scenarios/arm-can-odrive-fault.yaml
BENCH=arm2-can-guest
mkdir -p "$OUT"
LOG=$OUT/hilsim-scenario.log DUMP=$OUT/candump-scenario.log RESULT=$OUT/peer-scenario.json
JUNIT=$OUT/junit.xml JSON=$OUT/result.json
rm -f "$LOG" "$LOG.out" "$DUMP" "$RESULT" "$JUNIT" "$JSON" /dev/shm/hilsim-$BENCH
FAILED=0
fail() {
    echo "FAIL $*"
    FAILED=1
}
chrt -f 90 candump -d -L vcan0 >"$DUMP" &
CANDUMP=$!
# the controller first: python starts slowly under emulation, the scenario's clock does not wait
READY=$OUT/peer-ready
rm -f "$READY"
/usr/bin/python3 "$HERE/scenario_peer.py" --bench $BENCH --result "$RESULT" --ready "$READY" &
PEERPID=$!
i=0
while [ ! -e "$READY" ] && kill -0 $PEERPID 2>/dev/null && [ $i -lt 1200 ]; do
    sleep 0.1
    i=$((i + 1))
done
"$HILSIM" run "$CONFIG" --scenario "$SCEN" --junit "$JUNIT" --result-json "$JSON" \
    >"$LOG.out" 2>"$LOG" &
HS=$!
i=0
while [ ! -e /dev/shm/hilsim-$BENCH ] && kill -0 $HS 2>/dev/null && [ $i -lt 600 ]; do
    sleep 0.1
    i=$((i + 1))
done
if [ ! -e /dev/shm/hilsim-$BENCH ]; then
    echo "hilsim did not start:"
    cat "$LOG"
    kill $CANDUMP $PEERPID
    exit 1
fi
wait $HS
HSRC=$?
wait $PEERPID
PEER=$?
sleep 0.2
kill $CANDUMP
wait $CANDUMP 2>/dev/null
cat "$LOG.out"
grep -E "error|SAFE HOLD" "$LOG"
[ $PEER -eq 0 ] || fail "the peer's checks (see above)"
[ $HSRC -eq 0 ] || fail "hilsim run exited $HSRC (5: a scenario expectation failed)"

/usr/bin/python3 - "$JUNIT" "$SCEN" "$LOG.out" <<'PY' || FAILED=1
import re, sys
import xml.etree.ElementTree as ET
bad = []
root = ET.parse(sys.argv[1]).getroot()
suite = root.find("testsuite")
cases = suite.findall("testcase") if suite is not None else []
scen = open(sys.argv[2]).read()
want = len(re.findall(r"^\s+expect:", scen, re.M))
print("junit: suite %s, %d test cases, %s failures" % (suite.get("name") if suite is not None
      else None, len(cases), suite.get("failures") if suite is not None else None))
for c in cases:
    f = c.find("failure")
    print("  %s: %s" % (c.get("name"), "FAIL " + (f.get("message") or "") if f is not None
                        else "pass"))
    if f is not None:
        bad.append("test case %s failed" % c.get("name"))
if suite is None or suite.get("name") != "arm-can-odrive-fault":
    bad.append("no test suite named arm-can-odrive-fault")
if len(cases) != want:
    bad.append("%d test cases for %d expectations" % (len(cases), want))
names = {c.get("name") for c in cases}
for n in ("elbow_goes_idle", "controller_recovers_elbow", "no_joint_runs_away"):
    if n not in names:
        bad.append("no test case %s" % n)
out = open(sys.argv[3]).read()
m = re.search(r"step shoulder_commands_late .*; (\d+) frame\(s\) acted on, (\d+) lost", out)
if not m or int(m[1]) < 5:
    bad.append("the delay held no MIT commands (%s)" % (m[0] if m else "no summary line"))
if "verdict: PASS" not in out:
    bad.append("no PASS verdict in hilsim's summary")
for b in bad:
    print("FAIL " + b)
sys.exit(1 if bad else 0)
PY
[ $FAILED -eq 0 ] && echo "canio scenario: PASS" || echo "canio scenario: FAILED"
exit $FAILED
