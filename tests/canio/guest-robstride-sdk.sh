#!/bin/sh
# guest-robstride-sdk.sh HILSIM CLIENT_LIB CLIENTS OUT_DIR
# Runs inside the PREEMPT_RT guest (tests/rtguest/run-in-rt-guest.sh, OUT_DIR in HS_GUEST_RW):
# `hilsim run tests/canio/arm2-robstride-sdk-guest.yaml` on vcan0 on the wall clock, candump
# into OUT_DIR/candump-robstride-sdk.log, and robstride_sdk_peer.py driving it with the real
# libraries in CLIENTS (../shared/clients/python: the vendor's robstride_dynamics SDK and the
# community robstride client, used in place). Then checks hilsim's counters: every frame the
# libraries sent was taken and answered exactly once (by the reply thread), none was bad, every
# frame on the wire is 29-bit, and on candump's stamps every request was answered, the median
# well inside a tick (median, p99 and max printed). Exits 77 (skipped) when CLIENTS is absent.
set -u
HILSIM=$1 CLIENT_LIB=$2 CLIENTS=$3 OUT=$4
HERE=$(cd "$(dirname "$0")" && pwd)
if [ ! -d "$CLIENTS/robstride_dynamics" ] || [ ! -d "$CLIENTS/robstride" ]; then
    echo "SKIP: no Robstride client libraries in $CLIENTS (../shared is absent)"
    exit 77
fi
export PYTHONPATH="$CLIENTS"
. "$HERE/guest-peer-run.sh"
guest_peer_run robstride-sdk robstride_sdk_peer.py

/usr/bin/python3 - "$LOG" "$LOG.out" "$DUMP" <<'PY' || FAILED=1
import re, sys
text = open(sys.argv[1]).read() + open(sys.argv[2]).read()
bad = []
for name in ("shoulder", "elbow"):
    m = re.search(r"can node %s \(robstride, joint \w+\): (\d+) frames ok, (\d+) bad, (\d+) "
                  r"unsupported, (\d+) timeouts, (\d+) sent" % name, text)
    if not m:
        bad.append("no counters for node %s in hilsim's log" % name)
        continue
    ok, nbad, unsup, sent = int(m[1]), int(m[2]), int(m[3]), int(m[5])
    print("%s: %d frames taken, %d bad, %d unsupported, %d answers" % (name, ok, nbad, unsup, sent))
    if nbad or unsup:
        bad.append("%s: %d bad, %d unsupported frames" % (name, nbad, unsup))
    if sent != ok or ok == 0:
        bad.append("%s: %d frames taken, %d answers sent" % (name, ok, sent))
ext = std = 0
for line in open(sys.argv[3]):
    m = re.match(r"\((\d+\.\d+)\) vcan0 ([0-9A-F]+)#", line.strip())
    if m:
        ext, std = ext + (len(m[2]) == 8), std + (len(m[2]) != 8)
print("candump: %d 29-bit frames, %d 11-bit" % (ext, std))
if std or ext < 100:
    bad.append("candump: %d 29-bit and %d 11-bit frames" % (ext, std))
# Request to answer on the wire (candump's kernel stamps): a request names its motor (1, 2) in
# ID bits 7-0 and its host (0xFF, 0xAA) in bits 15-8; the answer (types 0, 2, 17) carries the
# motor in bits 15-8. Every request answered; the median below half the 10 ms tick (answers
# with the tick wait for it: about a period); the slowest is printed, not judged: an emulated
# guest on a loaded host stalls whole for tens of ms (the SDK's own 0.1 s is judged by the peer).
pending, lat = {}, []
for line in open(sys.argv[3]):
    m = re.match(r"\((\d+\.\d+)\) vcan0 ([0-9A-F]{8})#", line.strip())
    if not m:
        continue
    t, i = float(m[1]), int(m[2], 16)
    typ, mid, low = i >> 24 & 0x1F, i >> 8 & 0xFF, i & 0xFF
    if typ in (0, 2, 17) and mid in (1, 2) and mid in pending:
        lat.append(t - pending.pop(mid))
    elif low in (1, 2) and typ not in (2, 21) and mid not in (1, 2):
        pending[low] = t
lat.sort()
if lat:
    print("request -> answer on the wire: %d pairs, median %.0f us, p99 %.0f us, max %.0f us"
          % (len(lat), 1e6 * lat[len(lat) // 2], 1e6 * lat[int(0.99 * (len(lat) - 1))],
             1e6 * lat[-1]))
if len(lat) < 50 or pending or lat[len(lat) // 2] >= 0.005:
    bad.append("%d answers timed, %d requests unanswered, median %.4f s (half a tick: 0.005)"
               % (len(lat), len(pending), lat[len(lat) // 2] if lat else -1))
for b in bad:
    print("FAIL " + b)
sys.exit(1 if bad else 0)
PY
[ $FAILED -eq 0 ] && echo "canio robstride-sdk: PASS" || echo "canio robstride-sdk: FAILED"
exit $FAILED
