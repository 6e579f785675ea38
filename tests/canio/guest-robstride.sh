#!/bin/sh
# guest-robstride.sh HILSIM CLIENT_LIB OUT_DIR
# Runs inside the PREEMPT_RT guest (tests/rtguest/run-in-rt-guest.sh, OUT_DIR in HS_GUEST_RW):
# `hilsim run tests/canio/arm2-robstride-guest.yaml` on vcan0 with real SocketCAN,
# `candump -L vcan0` into OUT_DIR/candump-robstride.log (kept as the test's artifact), and the
# python-can host robstride_peer.py, in lockstep (its SYNC releases each tick). Then checks
# hilsim's counters against what the peer sent:
# every frame the peer sent was taken, except the one CAN-ID change (unsupported); each taken
# frame was answered exactly once; nothing passed the kernel filters unclaimed.
set -u
HILSIM=$1 CLIENT_LIB=$2 OUT=$3
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/guest-peer-run.sh"
guest_peer_run robstride robstride_peer.py

/usr/bin/python3 - "$LOG" "$LOG.out" "$RESULT" "$DUMP" <<'PY' || FAILED=1
import json, re, sys
text = open(sys.argv[1]).read() + open(sys.argv[2]).read()
res = json.load(open(sys.argv[3]))
bad = []
nodes = {}
for name in ("shoulder", "elbow"):
    m = re.search(r"can node %s \(robstride, joint \w+\): (\d+) frames ok, (\d+) bad, (\d+) "
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
sent = res.get("sent", {})
for name, n in nodes.items():
    want_unsup = res.get("set_id_sent", 0) if name == "shoulder" else 0
    print("%s: peer sent %d; hilsim took %d, bad %d, unsupported %d, sent %d"
          % (name, sent.get(name, -1), n["ok"], n["bad"], n["unsupported"], n["sent"]))
    if n["ok"] + n["unsupported"] != sent.get(name, -1) or n["unsupported"] != want_unsup:
        bad.append("%s: %d taken + %d unsupported != %d sent" % (name, n["ok"], n["unsupported"],
                                                                   sent.get(name, -1)))
    if n["bad"]:
        bad.append("%s: %d bad frames in a clean run" % (name, n["bad"]))
    if n["sent"] != n["ok"]:
        bad.append("%s: %d frames taken, %d answers sent" % (name, n["ok"], n["sent"]))
# the wire: 29-bit frames only, answers from motors 1 and 2 to 0xFD (type 0: to 0xFE), besides
# the host's SYNCs (0x080, no data) that release the lockstep ticks
ext = std = syncs = 0
for line in open(sys.argv[4]):
    m = re.match(r"\((\d+\.\d+)\) vcan0 ([0-9A-F]+)#([0-9A-F]*)$", line.strip())
    if not m:
        continue
    if len(m[2]) == 8:
        ext += 1
    elif m[2] == "080" and not m[3]:
        syncs += 1
    else:
        std += 1
print("candump: %d 29-bit frames, %d 11-bit, %d SYNCs" % (ext, std, syncs))
if std or ext < 500:
    bad.append("candump: %d 29-bit and %d 11-bit frames" % (ext, std))
for b in bad:
    print("FAIL " + b)
sys.exit(1 if bad else 0)
PY
[ $FAILED -eq 0 ] && echo "canio robstride: PASS" || echo "canio robstride: FAILED"
exit $FAILED
