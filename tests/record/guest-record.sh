#!/bin/sh
# guest-record.sh HILSIM OUT_DIR
# Runs inside the PREEMPT_RT guest (tests/rtguest/run-in-rt-guest.sh, OUT_DIR in HS_GUEST_RW):
# `hilsim run tests/canio/arm2-can-guest.yaml --record OUT_DIR/rec` on vcan0 with real
# SocketCAN while the python-can host record_peer.py swings the MIT shoulder; then canplayer
# plays hilsim's own candump log back onto vcan1, `candump -L vcan1` captures it and python-can
# compares the two logs frame by frame. The offline replay runs on the host afterwards
# (guest-record-test.sh).
set -u
HILSIM=$1 OUT=$2
HERE=$(cd "$(dirname "$0")" && pwd)
# The canio guest bench with the MIT node's command timeout at 2 s instead of 0.1 s: TCG stalls
# the loop for 100 ms and more now and then, and a timeout that ends inside a stall is decided
# on the kernel's receive time in the run but on the tick's time in a replay (replay.c).
MODELS=$(cd "$HERE/../../models" && pwd)
CONFIG=$OUT/arm2-rec.yaml
sed -e "s#\.\./\.\./models#$MODELS#" -e "s/timeout_s: 0.1}/timeout_s: 2.0}/" \
    "$HERE/../canio/arm2-can-guest.yaml" >"$CONFIG"
grep -q "timeout_s: 2.0}" "$CONFIG" || { echo "FAIL the MIT timeout was not raised"; exit 1; }
REC=$OUT/rec
rm -rf "$REC" "$OUT/played.log"
FAILED=0
fail() { echo "FAIL $*"; FAILED=1; }

# Until the peer is done (python-can's start-up alone takes seconds under TCG), then SIGTERM.
"$HILSIM" run "$CONFIG" --duration 300 --record "$REC" >"$OUT/hilsim.out" 2>"$OUT/hilsim.err" &
HS=$!
i=0
while [ ! -e /dev/shm/hilsim-arm2-can-guest ] && kill -0 $HS 2>/dev/null && [ $i -lt 600 ]; do
    sleep 0.1
    i=$((i + 1))
done
/usr/bin/python3 "$HERE/record_peer.py" vcan0 5 || fail "the peer failed"
kill -TERM $HS
wait $HS || fail "hilsim run exited $?"
cat "$OUT/hilsim.err" | grep -v "^hilsim: info" | head -20
grep "^recording:" "$OUT/hilsim.out" || fail "no recording summary"
grep -q "dropped 0 states, 0 items" "$OUT/hilsim.out" || fail "the recording dropped records"

# canplayer: hilsim's log back onto a bus, as can-utils plays any candump log
# candump ends by itself (a kill loses what its stdout buffer holds): after as many frames as
# the log has, or 5 s of silence
N=$(grep -c . "$REC/can-main.log")
chrt -f 90 candump -d -r 8388608 -n "$N" -T 5000 -L vcan1 >"$OUT/played-raw.log" &
DUMP=$!
sleep 0.5
canplayer -I "$REC/can-main.log" vcan1=vcan0 || fail "canplayer refused the log"
wait $DUMP
# -d: candump reports the frames its own socket dropped (DROPCOUNT lines, total last)
grep -v '^DROPCOUNT' "$OUT/played-raw.log" >"$OUT/played.log"
DROPS=$(grep '^DROPCOUNT' "$OUT/played-raw.log" | tail -1 | sed 's/.*total drops \([0-9]*\).*/\1/')
/usr/bin/python3 - "$REC/can-main.log" "$OUT/played.log" "${DROPS:-0}" <<'PY' || fail "the played-back log differs"
import sys
import can
rec = list(can.CanutilsLogReader(sys.argv[1]))
played = list(can.CanutilsLogReader(sys.argv[2]))
rx = sum(1 for m in rec if m.is_rx)
print(f"python-can: recorded {len(rec)} frames ({rx} received, {len(rec) - rx} sent); "
      f"canplayer put {len(played)} on vcan1")
assert len(rec) > 500 and 0 < rx < len(rec), "both directions recorded"
# canplayer sends every line; the observing candump under TCG may drop some from its socket,
# and says how many: what it saw must be the recorded frames in order, and with its drops
# every one of them
drops = int(sys.argv[3])
it = iter((m.arbitration_id, bytes(m.data)) for m in rec)
assert all(any(x == (p.arbitration_id, bytes(p.data)) for x in it) for p in played), \
    "played-back frames are the recorded ones in order"
print(f"candump on vcan1 saw {len(played)}, dropped {drops}")
assert len(played) + drops == len(rec), "every recorded frame played back (seen or dropped)"
gaps_rec = rec[-1].timestamp - rec[0].timestamp
gaps_played = played[-1].timestamp - played[0].timestamp
print(f"span: recorded {gaps_rec:.3f} s, played back {gaps_played:.3f} s")
PY
exit $FAILED
