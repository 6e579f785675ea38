#!/bin/sh
# shellcheck disable=SC2015 # "A && ok ... || fail ...": ok only echoes, so it never fails
# guest-six-mit.sh HILSIM CLIENT_LIB OUT_DIR
# Runs inside the PREEMPT_RT guest (run-in-rt-guest.sh, OUT_DIR in HS_GUEST_RW): hilsim serves
# six MIT motors on vcan0 (six-mit-guest.yaml) and six_mit_peer.py polls them one after another,
# each next command only after the previous reply, for 5 s: first with `replies: immediate`
# (the default), then with `replies: tick` for contrast. Judged by counts and order: every
# command answered once, by its motor; hilsim's node counters agree with the peer's. Replies
# per tick are printed for both modes: at most 1 with the tick (a sequential poll waits a tick
# per motor), more when answered at once; never asserted (emulation, shared host).
set -u
HILSIM=$1 CLIENT_LIB=$2 OUT=$3
HERE=$(cd "$(dirname "$0")" && pwd)
MODELS=$(cd "$HERE/../../models" && pwd)
BENCH=six-mit-guest
mkdir -p "$OUT"
FAILED=0
fail() {
    echo "FAIL $*"
    FAILED=1
}

run_mode() { # MODE
    MODE=$1
    CONFIG=$OUT/six-mit-$MODE.yaml LOG=$OUT/hilsim-$MODE.log RESULT=$OUT/peer-$MODE.json
    rm -f "$LOG" "$LOG.out" "$RESULT" /dev/shm/hilsim-$BENCH
    sed -e "s#replies: immediate#replies: $MODE#" -e "s#\.\./\.\./models#$MODELS#" \
        "$HERE/six-mit-guest.yaml" >"$CONFIG"
    "$HILSIM" run "$CONFIG" --duration 300 >"$LOG.out" 2>"$LOG" &
    HS=$!
    i=0
    while [ ! -e /dev/shm/hilsim-$BENCH ] && kill -0 $HS 2>/dev/null && [ $i -lt 600 ]; do
        sleep 0.1
        i=$((i + 1))
    done
    if [ ! -e /dev/shm/hilsim-$BENCH ]; then
        fail "$MODE: hilsim did not start"
        cat "$LOG"
        return
    fi
    echo "== replies: $MODE"
    HILSIM_CLIENT_LIB=$CLIENT_LIB /usr/bin/python3 "$HERE/six_mit_peer.py" --bench $BENCH \
        --seconds 5 --result "$RESULT" || fail "$MODE: the peer's checks"
    kill -TERM $HS
    wait $HS || fail "$MODE: hilsim run exited $?"
    grep -E "can (bus|node)|stopped:" "$LOG.out"
    # hilsim's own count: frames each node took and replies it sent, against the peer's
    /usr/bin/python3 - "$LOG.out" "$RESULT" "$MODE" <<'PY' || FAILED=1
import json, re, sys
text, res, mode = open(sys.argv[1]).read(), json.load(open(sys.argv[2])), sys.argv[3]
ok = sent = 0
for m in range(1, 7):
    g = re.search(r"can node m%d \(mit, joint \w+\): (\d+) frames ok, (\d+) bad, \d+ unsupported, "
                  r"\d+ timeouts, (\d+) sent" % m, text)
    if not g:
        print("FAIL no counters for node m%d" % m)
        sys.exit(1)
    ok += int(g[1])
    sent += int(g[3])
print("%s: hilsim took %d frames and sent %d replies; the peer sent %d and got %d"
      % (mode, ok, sent, res["sent"], res["answered"]))
if ok != res["sent"] or sent != res["answered"]:
    print("FAIL hilsim's counters disagree with the peer's")
    sys.exit(1)
print("ok   %s: counters agree" % mode)
PY
}

run_mode immediate
run_mode tick
[ $FAILED -eq 0 ] && echo "six-mit: PASS" || echo "six-mit: FAILED"
exit $FAILED
