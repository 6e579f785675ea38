#!/bin/sh
# guest-moteus-client.sh HILSIM CLIENT_LIB CLIENTS_DIR OUT_DIR
# Runs inside the PREEMPT_RT guest (tests/rtguest/run-in-rt-guest.sh, OUT_DIR in HS_GUEST_RW):
# mjbots' own moteus client and moteus_tool (CLIENTS_DIR/moteus, ../shared/clients/python, used
# in place) against `hilsim run tests/canio/arm2-moteus-guest.yaml` on vcan0 in CAN FD (MTU
# 72), in lockstep (moteus_client_peer.py releases the ticks). Then checks hilsim's counters:
# every frame to the servos taken, none bad. Exits 77 (skipped) without CLIENTS_DIR/moteus.
set -u
HILSIM=$1 CLIENT_LIB=$2 CLIENTS=$3 OUT=$4
HERE=$(cd "$(dirname "$0")" && pwd)
if [ ! -f "$CLIENTS/moteus/moteus_tool.py" ]; then
    echo "SKIP: no moteus client in $CLIENTS (../shared absent)"
    exit 77
fi
. "$HERE/guest-peer-run.sh"
ip link set vcan0 down && ip link set vcan0 mtu 72 && ip link set vcan0 up || {
    echo "cannot switch vcan0 to CAN FD"
    exit 1
}
export PYTHONPATH=$CLIENTS
guest_peer_run moteus moteus_client_peer.py

/usr/bin/python3 - "$LOG" "$LOG.out" <<'PY' || FAILED=1
import re, sys
text = open(sys.argv[1]).read() + open(sys.argv[2]).read()
bad = []
for name in ("shoulder", "elbow"):
    m = re.search(r"can node %s \(moteus, joint \w+\): (\d+) frames ok, (\d+) bad, (\d+) "
                  r"unsupported" % name, text)
    if not m:
        bad.append("no counters for node %s in hilsim's log" % name)
    elif int(m[2]) or int(m[3]):
        bad.append("%s: %s bad, %s unsupported frames" % (name, m[2], m[3]))
    else:
        print("%s: %s frames ok, none bad" % (name, m[1]))
for b in bad:
    print("FAIL " + b)
sys.exit(1 if bad else 0)
PY
[ $FAILED -eq 0 ] && echo "canio moteus client: PASS" || echo "canio moteus client: FAILED"
exit $FAILED
