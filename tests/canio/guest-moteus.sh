#!/bin/sh
# guest-moteus.sh HILSIM CLIENT_LIB OUT_DIR
# Runs inside the PREEMPT_RT guest (tests/rtguest/run-in-rt-guest.sh, OUT_DIR in HS_GUEST_RW):
# vcan0 switched to CAN FD (MTU 72), `hilsim run tests/canio/arm2-moteus-guest.yaml` on it with
# real SocketCAN, `candump -L vcan0` into OUT_DIR/candump-moteus.log (kept as the test's
# artifact), and the python-can host moteus_peer.py in lockstep (its SYNC releases each tick).
# Then checks hilsim's counters against the peer's: every frame taken, none bad, one reply per
# frame that asked for one (and only those), nothing unclaimed, FD frames only on the wire
# (besides the SYNCs).
set -u
HILSIM=$1 CLIENT_LIB=$2 OUT=$3
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/guest-peer-run.sh"
# moteus speaks CAN FD: the vcan needs the FD MTU
ip link set vcan0 down && ip link set vcan0 mtu 72 && ip link set vcan0 up || {
    echo "cannot switch vcan0 to CAN FD"
    exit 1
}
guest_peer_run moteus moteus_peer.py

/usr/bin/python3 - "$LOG" "$LOG.out" "$RESULT" "$DUMP" <<'PY' || FAILED=1
import json, re, sys
text = open(sys.argv[1]).read() + open(sys.argv[2]).read()
res = json.load(open(sys.argv[3]))
bad = []
nodes = {}
for name in ("shoulder", "elbow"):
    m = re.search(r"can node %s \(moteus, joint \w+\): (\d+) frames ok, (\d+) bad, (\d+) "
                  r"unsupported, (\d+) timeouts, (\d+) sent" % name, text)
    if not m:
        bad.append("no counters for node %s in hilsim's log" % name)
        continue
    nodes[name] = dict(ok=int(m[1]), bad=int(m[2]), unsupported=int(m[3]), sent=int(m[5]))
bus = re.search(r"can bus main \(vcan0\): [\w-]+, rx (\d+) frames, tx (\d+), unclaimed (\d+)", text)
if not bus:
    bad.append("no bus counters in hilsim's log")
elif int(bus[3]):
    bad.append("%s frames passed the kernel filters without an owner" % bus[3])
sent, replies = res.get("sent", {}), res.get("replies", {})
for name, n in nodes.items():
    print("%s: peer sent %d and heard %d replies; hilsim took %d, bad %d, sent %d"
          % (name, sent.get(name, -1), replies.get(name, -1), n["ok"], n["bad"], n["sent"]))
    if n["ok"] != sent.get(name, -1) or n["bad"] or n["unsupported"]:
        bad.append("%s: %d taken, %d bad, %d unsupported of %d sent"
                   % (name, n["ok"], n["bad"], n["unsupported"], sent.get(name, -1)))
    if n["sent"] != replies.get(name, -1):
        bad.append("%s: hilsim sent %d replies, the peer heard %d"
                   % (name, n["sent"], replies.get(name, -1)))
# the wire: FD frames only (candump -L writes '##<flags>' for CAN FD), besides the host's
# classic SYNCs (0x080, no data) that release the lockstep ticks
fd = classic = syncs = 0
for line in open(sys.argv[4]):
    m = re.match(r"\((\d+\.\d+)\) vcan0 ([0-9A-F]+)(##?)(\S*)", line.strip())
    if not m:
        continue
    if m[3] == "##":
        fd += 1
    elif m[2] == "080" and not m[4]:
        syncs += 1
    else:
        classic += 1
print("candump: %d CAN FD frames, %d classic, %d SYNCs" % (fd, classic, syncs))
if classic or fd < 500:
    bad.append("candump: %d FD and %d classic frames" % (fd, classic))
for b in bad:
    print("FAIL " + b)
sys.exit(1 if bad else 0)
PY
[ $FAILED -eq 0 ] && echo "canio moteus: PASS" || echo "canio moteus: FAILED"
exit $FAILED
