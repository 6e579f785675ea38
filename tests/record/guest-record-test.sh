#!/bin/sh
# guest-record-test.sh RUN_IN_GUEST HILSIM OUT_DIR
# The proof of issue 13 on real SocketCAN: guest-record.sh records a guest CAN run and plays
# its log back with canplayer; then, on the host, `hilsim replay` replays the recording offline
# and the shoulder's and elbow's trajectories must match the recorded ones within 1e-3 rad.
# Every received frame goes to the tick that took it in the run, so the replay is bit-exact in
# practice; what a replay cannot reproduce is a node's command timeout decided inside a stall
# (kernel receive time in the run, the tick's time in the replay), which the guest bench keeps
# out of reach with a 2 s MIT timeout (guest-record.sh).
set -u
GUEST=$1 HILSIM=$2 OUT=$3
HERE=$(cd "$(dirname "$0")" && pwd)
"$GUEST" "$HERE/guest-record.sh" "$HILSIM" "$OUT" || exit 1
"$HILSIM" replay "$OUT/rec" --tolerance 1e-3 --out "$OUT/replay.csv" --plot "$OUT/replay.svg" \
    --signal SHOULDER.q --signal ELBOW.q --events | grep -v "^event overrun\|^event skip"
RC=$?
echo "host replay exit status $RC (0: every signal within 1e-3)"
exit $RC
