# Sourced by the one-protocol guest tests (guest-robstride.sh, guest-moteus.sh,
# guest-cia402.sh) inside the PREEMPT_RT guest: the run they share. After
#   guest_peer_run NAME PEER.py
# with HILSIM, CLIENT_LIB, OUT and HERE set: `candump -d -L vcan0` ran into
# OUT/candump-NAME.log, `hilsim run HERE/arm2-NAME-guest.yaml` into OUT/hilsim-NAME.log(.out),
# the python-can PEER wrote OUT/peer-NAME.json; LOG, DUMP, RESULT name those files, the
# summary lines are printed, and FAILED is 1 when the peer failed, hilsim did not exit 0 or
# latched safe hold. fail MSG marks the test failed with a reason. Exits 1 when hilsim does not
# start.
FAILED=0
fail() {
    echo "FAIL $*"
    FAILED=1
}

guest_peer_run() {
    CONFIG=$HERE/arm2-$1-guest.yaml
    BENCH=arm2-$1-guest
    mkdir -p "$OUT"
    LOG=$OUT/hilsim-$1.log DUMP=$OUT/candump-$1.log RESULT=$OUT/peer-$1.json
    rm -f "$LOG" "$LOG.out" "$DUMP" "$RESULT" /dev/shm/hilsim-$BENCH
    # above hilsim's priority, or the observer falls behind under TCG; -d reports its drops
    chrt -f 90 candump -d -L vcan0 >"$DUMP" &
    CANDUMP=$!
    "$HILSIM" run "$CONFIG" --duration 300 >"$LOG.out" 2>"$LOG" &
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
    HILSIM_CLIENT_LIB=$CLIENT_LIB /usr/bin/python3 "$HERE/$2" --bench $BENCH --result "$RESULT"
    PEER=$?
    # The control socket's status ends with each CAN bus as the tick last saw it: the config's
    # bus on vcan0 and its state (vcan has no controller: error-active, or what error frames
    # said), and the kernel's receive drops.
    STATUS=$("$HILSIM" ctl $BENCH status 2>&1)
    echo "ctl status: $STATUS"
    echo "$STATUS" | grep -Eq '; can [A-Za-z0-9_-]+ \(vcan0\) (error-active|error-warning|error-passive|bus-off|stopped|unknown) drops [0-9]+$' ||
        fail "ctl status does not end with the vcan0 bus and its state"
    kill -TERM $HS
    wait $HS
    HSRC=$?
    sleep 0.2
    kill $CANDUMP
    wait $CANDUMP 2>/dev/null
    grep -E "can (bus|node)|stopped:|SAFE HOLD|error" "$LOG" "$LOG.out"
    [ $PEER -eq 0 ] || fail "the peer's checks (see above)"
    [ $HSRC -eq 0 ] || fail "hilsim run exited $HSRC"
    grep -q "SAFE HOLD" "$LOG.out" && fail "safe hold latched"
}
