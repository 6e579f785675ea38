#!/bin/sh
# guest-cia402-canopen.sh HILSIM CLIENT_LIB OUT_DIR
# Runs inside the PREEMPT_RT guest (tests/rtguest/run-in-rt-guest.sh, OUT_DIR in HS_GUEST_RW):
# the real canopen master (../shared/clients/python/canopen, used in place) against
# `hilsim run tests/canio/arm2-cia402-canopen-guest.yaml --no-rt` on vcan0, through the EDS files
# `hilsim can eds` writes for its two nodes (cia402_canopen_peer.py says what is driven and
# judged). hilsim runs without real-time priority so the master's fixed internal timeouts get
# CPU time under TCG. `candump -L vcan0` goes to OUT_DIR/candump-cia402-canopen.log (the test's
# artifact). Then checks hilsim's counters: no bad or unsupported frame, nothing unclaimed, and
# that the reply thread answered. Exits 77 (skipped) without the shared client libraries.
set -u
HILSIM=$1 CLIENT_LIB=$2 OUT=$3
HERE=$(cd "$(dirname "$0")" && pwd)
CLIENTS=${HS_SHARED_DIR:-$HERE/../../../shared}/clients/python
if [ ! -d "$CLIENTS/canopen" ]; then
    echo "skip: no canopen client library in $CLIENTS"
    exit 77
fi
CONFIG=$HERE/arm2-cia402-canopen-guest.yaml
BENCH=arm2-cia402-canopen-guest
mkdir -p "$OUT"
LOG=$OUT/hilsim-cia402-canopen.log DUMP=$OUT/candump-cia402-canopen.log
RESULT=$OUT/peer-cia402-canopen.json
rm -f "$LOG" "$LOG.out" "$DUMP" "$RESULT" "$RESULT.out" /dev/shm/hilsim-$BENCH
FAILED=0
fail() {
    echo "FAIL $*"
    FAILED=1
}
for node in shoulder elbow; do
    "$HILSIM" can eds "$CONFIG" $node -o "$OUT/$node.eds" || {
        echo "hilsim can eds $node failed"
        exit 1
    }
done
chrt -f 90 candump -d -L vcan0 >"$DUMP" &
CANDUMP=$!
"$HILSIM" run "$CONFIG" --no-rt --duration 900 >"$LOG.out" 2>"$LOG" &
HS=$!
i=0
while [ ! -e /dev/shm/hilsim-$BENCH ] && kill -0 $HS 2>/dev/null && [ $i -lt 600 ]; do
    sleep 0.1
    i=$((i + 1))
done
if [ ! -e /dev/shm/hilsim-$BENCH ]; then
    echo "hilsim did not start:"
    cat "$LOG"
    kill $CANDUMP
    exit 1
fi
# the master's own report is kept as an artifact too (OUT/peer-cia402-canopen.out)
PYTHONPATH=$CLIENTS HILSIM_CLIENT_LIB=$CLIENT_LIB /usr/bin/python3 "$HERE/cia402_canopen_peer.py" \
    --bench $BENCH --eds-dir "$OUT" --result "$RESULT" >"$RESULT.out" 2>&1
PEER=$?
cat "$RESULT.out"
kill -TERM $HS
wait $HS
HSRC=$?
sleep 0.2
kill $CANDUMP
wait $CANDUMP 2>/dev/null
grep -E "can (bus|node)|reply|stopped:|SAFE HOLD|error" "$LOG" "$LOG.out"
[ $PEER -eq 0 ] || fail "the canopen master's checks (see above)"
[ $HSRC -eq 0 ] || fail "hilsim run exited $HSRC"
grep -q "SAFE HOLD" "$LOG.out" && fail "safe hold latched"
/usr/bin/python3 - "$LOG" "$LOG.out" <<'PY' || FAILED=1
import re, sys
text = open(sys.argv[1]).read() + open(sys.argv[2]).read()
bad = []
for name in ("shoulder", "elbow"):
    m = re.search(r"can node %s \(cia402, joint \w+\): (\d+) frames ok, (\d+) bad, (\d+) "
                  r"unsupported" % name, text)
    if not m:
        bad.append("no counters for node %s in hilsim's log" % name)
        continue
    print("%s: %s frames ok, %s bad, %s unsupported" % (name, m[1], m[2], m[3]))
    if int(m[2]) or int(m[3]):
        bad.append("%s: bad or unsupported frames" % name)
bus = re.search(r"can bus main \(vcan0\): [\w-]+, rx (\d+) frames, tx (\d+), unclaimed (\d+)", text)
if not bus:
    bad.append("no bus counters in hilsim's log")
elif int(bus[3]):
    bad.append("%s frames without an owner" % bus[3])
for b in bad:
    print("FAIL " + b)
sys.exit(1 if bad else 0)
PY
[ $FAILED -eq 0 ] && echo "canio cia402 canopen: PASS" || echo "canio cia402 canopen: FAILED"
exit $FAILED
