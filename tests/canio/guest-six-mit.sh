#!/bin/sh
# shellcheck disable=SC2015 # "A && ok ... || fail ...": ok only echoes, so it never fails
# guest-six-mit.sh HILSIM CLIENT_LIB OUT_DIR
# Runs inside the PREEMPT_RT guest (run-in-rt-guest.sh, OUT_DIR in HS_GUEST_RW): hilsim serves
# six MIT motors on vcan0 (six-mit-guest.yaml) and six_mit_peer.py drives them, in three runs:
#   immediate          wall clock, `replies: immediate` (the default): the bus's I/O thread
#                      answers between ticks; the peer polls the motors one after another for
#                      5 s, each next command only after the previous reply. Judged by counts
#                      and order only; replies per tick are printed, never asserted (emulation,
#                      shared host).
#   lockstep-sync      --clock lockstep, the same sequential poll with a SYNC after each command
#                      (rt.clock.sync.source can): 30 cycles, exactly one tick per SYNC;
#   lockstep-commands  --clock lockstep, rt.clock.lockstep_source can_commands: a board that
#                      sends one command to every motor per cycle, no SYNC, then reads the six
#                      replies: 100 cycles, exactly one tick per cycle.
# Every run: every command answered once, by its motor; hilsim's node counters agree with the
# peer's. Lockstep runs are judged in simulated time: the tick counts above, and no node's
# 1 s MIT timeout (100 ticks) ran out, however slow the emulated guest was.
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

run_mode() { # MODE: immediate, lockstep-sync or lockstep-commands
    MODE=$1
    CONFIG=$OUT/six-mit-$MODE.yaml LOG=$OUT/hilsim-$MODE.log RESULT=$OUT/peer-$MODE.json
    rm -f "$LOG" "$LOG.out" "$RESULT" /dev/shm/hilsim-$BENCH
    CLOCK="" PEER="--seconds 5" RELEASE="clock: {sync: {source: can}}"
    case $MODE in
    lockstep-*)
        # a sequential poll costs a tick (a SYNC round trip) per motor: fewer cycles
        CYCLES=100
        [ "$MODE" = lockstep-sync ] && CYCLES=30
        CLOCK="--clock lockstep" PEER="--lockstep ${MODE#lockstep-} --cycles $CYCLES"
        [ "$MODE" = lockstep-commands ] && RELEASE="clock: {lockstep_source: can_commands}"
        ;;
    esac
    sed -e "s#\.\./\.\./models#$MODELS#" -e "s#clock: {sync: {source: can}}#$RELEASE#" \
        "$HERE/six-mit-guest.yaml" >"$CONFIG"
    # shellcheck disable=SC2086 # CLOCK is empty or two words
    "$HILSIM" run "$CONFIG" $CLOCK --duration 300 >"$LOG.out" 2>"$LOG" &
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
    # shellcheck disable=SC2086 # PEER is several words
    HILSIM_CLIENT_LIB=$CLIENT_LIB /usr/bin/python3 "$HERE/six_mit_peer.py" --bench $BENCH \
        $PEER --result "$RESULT" || fail "$MODE: the peer's checks"
    kill -TERM $HS
    wait $HS || fail "$MODE: hilsim run exited $?"
    grep -E "can (bus|node)|stopped:" "$LOG.out"
    # hilsim's own count: frames each node took and replies it sent, against the peer's
    /usr/bin/python3 - "$LOG.out" "$RESULT" "$MODE" <<'PY' || FAILED=1
import json, re, sys
text, res, mode = open(sys.argv[1]).read(), json.load(open(sys.argv[2])), sys.argv[3]
ok = sent = timeouts = 0
for m in range(1, 7):
    g = re.search(r"can node m%d \(mit, joint \w+\): (\d+) frames ok, (\d+) bad, \d+ unsupported, "
                  r"(\d+) timeouts, (\d+) sent" % m, text)
    if not g:
        print("FAIL no counters for node m%d" % m)
        sys.exit(1)
    ok += int(g[1])
    timeouts += int(g[3])
    sent += int(g[4])
print("%s: hilsim took %d frames and sent %d replies; the peer sent %d and got %d"
      % (mode, ok, sent, res["sent"], res["answered"]))
if ok != res["sent"] or sent != res["answered"]:
    print("FAIL hilsim's counters disagree with the peer's")
    sys.exit(1)
print("ok   %s: counters agree" % mode)
if mode.startswith("lockstep"):
    # simulated time: each motor hears a command every 6 ticks at most, its timeout is 100
    if timeouts:
        print("FAIL %d MIT timeouts in lockstep" % timeouts)
        sys.exit(1)
    print("ok   %s: no MIT timeout in simulated time" % mode)
PY
}

run_mode immediate
run_mode lockstep-sync
run_mode lockstep-commands
[ $FAILED -eq 0 ] && echo "six-mit: PASS" || echo "six-mit: FAILED"
exit $FAILED
