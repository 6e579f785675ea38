#!/bin/bash
# guest-systemd.sh DEB SOURCE_DIR OUT_DIR
# Runs inside the PREEMPT_RT guest booted with systemd as PID 1 (HS_GUEST_INIT=systemd, see
# tests/rtguest/README.md), as root, with vcan0 up. Installs the hilsim .deb the way a bench
# admin would (dpkg -i: the postinst creates the user and reloads systemd), then runs the real
# hilsim@.service under the real service manager with all its sandboxing and checks what the
# offline tests can only simulate:
#   - Type=notify start-up, STATUS=, the user, SCHED_FIFO, mlockall and the capabilities the
#     unit grants (and no others), NoNewPrivileges and the seccomp filter;
#   - the sandbox leaves what the bench needs: AF_CAN on vcan0 (MIT reply, ODrive heartbeats),
#     the shm segment readable by group hilsim and by nobody else, LTTng-UST registration with
#     a root lttng-sessiond;
#   - journald files the <N> prefixes as priorities under SyslogIdentifier hilsim-<bench>;
#   - systemctl reload (SIGHUP) keeps the main PID; the watchdog kills a stalled loop (test hook)
#     and Restart= brings the bench back (RemoveIPC must clear the crashed run's segment);
#   - systemctl stop: safe stop, exit 0, segment removed;
#   - a bad config fails with exit 2 and no restart; a missing one is a failed condition.
# Output: one "ok" or "FAIL" line per check with the guest's uptime; the journal is saved in
# OUT_DIR. Exit 1 on a FAIL.
set -u
DEB=$1 SRC=$2 OUT=$3
BENCH=can1                # the instance: /etc/hilsim/can1.yaml
SEG=/dev/shm/hilsim-guest-svc
UNIT=hilsim@$BENCH.service
FAILED=0
# Each line carries the guest's uptime, as journal.txt's timestamps do (-o short-monotonic), to
# show where a slow run spends its time.
uptime_s() { cut -d. -f1 /proc/uptime; }
ok() { printf 'ok   %4ss %s\n' "$(uptime_s)" "$*"; }
fail() {
    printf 'FAIL %4ss %s\n' "$(uptime_s)" "$*"
    FAILED=1
}
check() { # DESCRIPTION COMMAND...
    local what=$1
    shift
    if "$@"; then ok "$what"; else fail "$what"; fi
}
prop() { systemctl show -P "$2" "$1"; }
# Waits up to $2 seconds for COMMAND ($3...) to succeed. A deadline, not a count of tries: in a
# starved guest each try (journalctl over a large journal) can itself take seconds.
wait_for() {
    local what=$1 end=$(($(date +%s) + $2))
    shift 2
    while ! "$@"; do
        [ "$(date +%s)" -lt $end ] || {
            fail "timed out waiting for: $what"
            return 1
        }
        sleep 0.2
    done
    return 0
}
finish() {
    journalctl --no-pager -o short-monotonic >"$OUT/journal.txt" 2>&1
    [ $FAILED -eq 0 ] && echo "guest-systemd: every check passed" || echo "guest-systemd: FAILED"
    exit $FAILED
}

[ "$(ps -o comm= -p 1)" = systemd ] || {
    echo "FAIL PID 1 is not systemd: run with HS_GUEST_INIT=systemd"
    exit 1
}

# --- install ---------------------------------------------------------------------------------
dpkg -i "$DEB" >"$OUT/dpkg.log" 2>&1 || {
    cat "$OUT/dpkg.log"
    fail "dpkg -i $(basename "$DEB")"
    finish
}
ok "dpkg -i $(basename "$DEB")"
check "the postinst created user hilsim" id hilsim
check "the postinst created /etc/hilsim (root:hilsim 0750)" \
    test "$(stat -c %U:%G:%a /etc/hilsim)" = root:hilsim:750
check "systemd knows hilsim@.service after the postinst" \
    test "$(prop hilsim@x.service LoadState)" = loaded
check "systemd-analyze verify hilsim@$BENCH.service" \
    systemd-analyze verify "/lib/systemd/system/hilsim@.service" 2>/dev/null

# The bench: the CAN guest bench (MIT + ODrive on vcan0, 10 ms tick) with the installed models,
# its segment shared with group hilsim, and tracing on.
sed -e 's#\.\./\.\./models#/usr/share/hilsim/models#' -e 's/name: arm2-can-guest/name: guest-svc/' \
    -e 's/mode: 0600/mode: 0660/' "$SRC/tests/canio/arm2-can-guest.yaml" >/etc/hilsim/$BENCH.yaml
printf 'trace:\n  enabled: true\n' >>/etc/hilsim/$BENCH.yaml
chgrp hilsim /etc/hilsim/$BENCH.yaml
chmod 0640 /etc/hilsim/$BENCH.yaml
# The stall hook is only armed through the environment. The unit's WatchdogSec=5s is raised to
# 20 s here (the stall to 60 s): on a host loaded several times over, the emulated guest once
# kept the tick loop from progressing for 5 s ("sched: RT throttling activated", then a watchdog
# kill before any stall was asked for). The mechanism under test is the same: pings only while
# the loop progresses, systemd's kill, Restart= and RemoveIPC; the shipped unit keeps its 5 s.
mkdir -p /etc/systemd/system/$UNIT.d
printf '[Service]\nEnvironment=HILSIM_TEST_HOOKS=1 HILSIM_TEST_STALL_MS=60000\nWatchdogSec=20s\n' \
    >/etc/systemd/system/$UNIT.d/test-hooks.conf
systemctl daemon-reload

# A root session daemon, as on a bench that traces: the service must register with it through
# its sandbox.
TRACE=$OUT/trace
rm -rf "$TRACE"
lttng-sessiond --daemonize --no-kernel >/dev/null 2>&1 || fail "lttng-sessiond did not start"
lttng create svc --output="$TRACE" >/dev/null && lttng enable-event -u 'hilsim:*' >/dev/null &&
    lttng start >/dev/null || fail "lttng session set-up"

candump -L vcan0 >"$OUT/candump.log" &
CANDUMP=$!

# --- start -----------------------------------------------------------------------------------
T0=$(date +%s)
if systemctl start $UNIT; then
    ok "systemctl start $UNIT returned after READY=1 ($(($(date +%s) - T0)) s)"
else
    fail "systemctl start $UNIT"
    journalctl -u $UNIT --no-pager | tail -n 30
    finish
fi
PID=$(prop $UNIT MainPID)
check "active (running), main PID $PID" \
    test "$(prop $UNIT ActiveState)/$(prop $UNIT SubState)" = active/running
# Why it is not running is in the unit's journal, and the guest may be stopped before finish.
[ "$PID" != 0 ] || journalctl -u $UNIT --no-pager -o short-monotonic | tail -n 30
# READY=1 comes with STATUS=running; the supervisor's first tick line follows within a second.
status_reports() {
    STATUS=$(prop $UNIT StatusText)
    echo "$STATUS" | grep -Eq 'tick [0-9]+' && echo "$STATUS" | grep -q 'main'
}
wait_for "STATUS= with the tick count and the bus state" 60 status_reports
echo "     STATUS=$STATUS"
check "STATUS= carries the tick count and the bus state" status_reports
check "runs as user hilsim" test "$(ps -o user= -p "$PID")" = hilsim
check "the tick loop runs SCHED_FIFO 80 (LimitRTPRIO, CAP_SYS_NICE)" \
    test "$(ps -o cls=,rtprio= -p "$PID" | tr -s ' ')" = " FF 80"
VMLCK=$(awk '/^VmLck:/ {print $2}' /proc/"$PID"/status)
check "mlockall held (VmLck $VMLCK kB; LimitMEMLOCK, CAP_IPC_LOCK)" test "${VMLCK:-0}" -gt 0
# CAP_IPC_LOCK is bit 14, CAP_SYS_NICE bit 23.
check "effective capabilities are exactly CAP_SYS_NICE and CAP_IPC_LOCK" \
    test "$(awk '/^CapEff:/ {print $2}' /proc/"$PID"/status)" = 0000000000804000
check "NoNewPrivileges and a seccomp filter" \
    sh -c "grep -q '^NoNewPrivs:[[:space:]]*1' /proc/$PID/status &&
           grep -q '^Seccomp:[[:space:]]*2' /proc/$PID/status"

# --- what the sandbox must leave working -----------------------------------------------------
check "shm segment $SEG is hilsim:hilsim 0660" \
    test "$(stat -c %U:%G:%a $SEG 2>/dev/null)" = hilsim:hilsim:660
useradd --no-create-home --groups hilsim benchctl
# wait_tick can return at once for a tick published before the first read: poll until the
# published tick moves on (5 s at most).
READER="import sys, time; sys.path.insert(0, '$SRC/python'); import hilsim_client as h
c = h.Client('guest-svc'); a = c.read_state().tick; end = time.monotonic() + 5
while c.read_state().tick <= a and time.monotonic() < end:
    try: c.wait_tick(0.5)
    except TimeoutError: pass
b = c.read_state().tick; print(a, b); sys.exit(0 if b > a else 1)"
LIB=$(dpkg -L hilsim | grep -m1 'libhilsim-client\.so\.[0-9]*$')
CANPEER=$(
    cat <<'EOF'
import can, sys, time
bus = can.Bus(interface="socketcan", channel="vcan0")
# MIT enter-motor-mode to node 1: the node answers on reply id 0 with 6 bytes.
bus.send(can.Message(arbitration_id=1, is_extended_id=False, data=[0xFF] * 7 + [0xFC]))
mit = heartbeats = 0
end = time.monotonic() + 30  # generous: a loaded host stalls the emulated guest for seconds
while time.monotonic() < end and (mit == 0 or heartbeats < 3):
    m = bus.recv(0.5)
    if m is None:
        continue
    if m.arbitration_id == 0 and len(m.data) == 6 and m.data[0] == 1:
        mit += 1
    if m.arbitration_id == (2 << 5 | 0x01) and len(m.data) == 8:
        heartbeats += 1
print("MIT replies", mit, "ODrive heartbeats", heartbeats)
sys.exit(0 if mit and heartbeats >= 3 else 1)
EOF
)
# The three probes are independent (two shm readers, one CAN peer) and each spends seconds
# importing Python in the emulated guest: they run side by side, and are judged one by one.
PROBES=$(mktemp -d)
/usr/bin/python3 -c "$CANPEER" >"$PROBES/can" 2>&1 &
CANPEER_PID=$!
setpriv --reuid=benchctl --regid=benchctl --init-groups \
    env HILSIM_CLIENT_LIB="$LIB" /usr/bin/python3 -c "$READER" >"$PROBES/member" 2>&1 &
MEMBER_PID=$!
setpriv --reuid=nobody --regid=nogroup --clear-groups \
    env HILSIM_CLIENT_LIB="$LIB" /usr/bin/python3 -c "$READER" >"$PROBES/refused" 2>&1 &
REFUSED_PID=$!
exited_0() { # PID OUTPUT_FILE: the probe's exit status, its output shown
    wait "$1"
    local rc=$?
    sed 's/^/     /' "$2"
    return $rc
}
check "a member of group hilsim reads the live state ($LIB)" exited_0 $MEMBER_PID "$PROBES/member"
wait $REFUSED_PID
tail -n 1 "$PROBES/refused" | sed 's/^/     /'
refused_for_permission() { tail -n 1 "$PROBES/refused" | grep -q 'HilsimError.*ermission denied'; }
check "a user outside group hilsim is refused for want of permission" \
    refused_for_permission
check "AF_CAN through the sandbox: an MIT reply and ODrive heartbeats on vcan0" \
    exited_0 $CANPEER_PID "$PROBES/can"
rm -rf "$PROBES"

# --- journal ---------------------------------------------------------------------------------
# PRIORITY= of hilsim's own lines, as journald filed them from the <N> prefixes: MESSAGE regex
# and the priority every matching line must have; a leading "?" lets the line be absent. No
# message may keep a literal prefix.
# One journalctl call per check, read with awk from its export format (an entry a paragraph,
# a field a line): starting Python or journalctl costs seconds each in a starved guest.
priorities() { # IDENTIFIER REGEX=PRIORITY...
    journalctl -t "$1" -o export --output-fields=PRIORITY,MESSAGE --no-pager | awk '
BEGIN { RS = ""; FS = "\n"; for (i = 1; i < ARGC; i++) { rules[i] = ARGV[i]; delete ARGV[i] } }
{
    p = ""; m = ""
    for (i = 1; i <= NF; i++)
        if ($i ~ /^PRIORITY=/) p = substr($i, 10); else if ($i ~ /^MESSAGE=/) m = substr($i, 9)
    n++; prio[n] = p; msg[n] = m
    if (m ~ /^<[0-7]>/) { print "     literal prefix in: " m; bad = 1 }
}
END {
    if (!n) { print "     no journal entries"; exit 1 }
    for (r in rules) {
        rx = rules[r]; want = rx; sub(/.*=/, "", want); sub(/=[^=]*$/, "", rx)
        optional = sub(/^\?/, "", rx)
        got = ""; seen = 0
        for (i = 1; i <= n; i++)
            if (msg[i] ~ rx) { seen++; if (prio[i] != want && index(got, " " prio[i]) == 0) got = got " " prio[i] }
        if ((seen == 0 && !optional) || got != "") {
            printf "     \"%s\": %d lines, at other priorities than %s:%s\n", rx, seen, want, got
            bad = 1
        }
    }
    exit bad
}' "${@:2}"
}
check "journald files hilsim's lines (identifier hilsim-$BENCH) by their <N> prefix: \
info 6, overruns 4" priorities hilsim-$BENCH '^running bench=6' '?: overrun, took=4'

# --- reload ----------------------------------------------------------------------------------
# A live change (budgets) is applied, a frozen one (rt.priority) refused with a warning, a broken
# file keeps the running config with an error; the process stays the same throughout.
cp /etc/hilsim/$BENCH.yaml /tmp/$BENCH.yaml.orig
sed -i -e 's/max_misses: 1000000/max_misses: 999999/' -e 's/priority: 80/priority: 70/' \
    /etc/hilsim/$BENCH.yaml
# systemd 252 does not wait for the reload itself (ExecReload only sends SIGHUP), so each step
# waits for hilsim's own last line for it before the file changes again.
lines_like() { journalctl -t hilsim-$BENCH --no-pager -o cat | grep -c -- "$1"; }
reload_and_wait() { # WHAT REGEX: reload, then wait for one more line matching REGEX
    local before
    before=$(lines_like "$2")
    check "systemctl reload ($1)" systemctl reload $UNIT
    answered() { [ "$(lines_like "$1")" -gt "$before" ]; }
    wait_for "hilsim's answer to the reload ($1)" 90 answered "$2"
}
reload_and_wait "budgets and RT priority changed" '^SIGHUP: applied new budgets'
echo 'rt: [' >>/etc/hilsim/$BENCH.yaml
reload_and_wait "a broken file" '^SIGHUP: keeping the running config'
cp /tmp/$BENCH.yaml.orig /etc/hilsim/$BENCH.yaml
reload_and_wait "the original again" '^SIGHUP: applied new budgets'
check "the reloads kept the main PID" test "$(prop $UNIT MainPID)" = "$PID"
check "the reloads in the journal: applied 6, refused 4, broken 3" priorities hilsim-$BENCH \
    '^SIGHUP: applied new budgets=6' '^SIGHUP: refused changes to rt=4' \
    '^SIGHUP: keeping the running config: /etc/hilsim/can1\.yaml:[0-9]+:[0-9]+: =3'

# --- watchdog --------------------------------------------------------------------------------
# SIGUSR1 (test hook) stalls the loop for 60 s; WatchdogSec (20 s here) must kill it and Restart=
# start it again, which only works if RemoveIPC cleared the segment the killed run left.
# Counted from here: a restart before the stall (a guest starved for WatchdogSec) must neither
# satisfy this wait nor go unnoticed.
RESTARTS=$(prop $UNIT NRestarts)
check "no restart before the stall (NRestarts=$RESTARTS)" test "$RESTARTS" = 0
systemctl kill --kill-whom=main -s SIGUSR1 $UNIT
restarted() {
    [ "$(prop $UNIT NRestarts)" -gt "$RESTARTS" ] && [ "$(prop $UNIT ActiveState)" = active ]
}
if wait_for "the restart after the watchdog" 120 restarted; then
    ok "the stalled loop was restarted (NRestarts=$(prop $UNIT NRestarts))"
fi
check "systemd logged the watchdog timeout" \
    sh -c "journalctl --no-pager -o cat | grep -q 'hilsim@$BENCH.service: Watchdog timeout'"
check "the restarted bench runs a new process" test "$(prop $UNIT MainPID)" != "$PID"
PID=$(prop $UNIT MainPID)
check "the restarted bench recreated its segment" test -e $SEG

# --- stop ------------------------------------------------------------------------------------
# The restarted run has logged its start (after READY=1), so the safe stop judged below is its.
started_twice() { [ "$(lines_like '^running bench')" -ge 2 ]; }
wait_for "the restarted run's start in the journal" 60 started_twice
systemctl stop $UNIT
check "systemctl stop: exit status 0, result success" \
    test "$(prop $UNIT ExecMainStatus)/$(prop $UNIT Result)" = 0/success
check "the safe stop is in the journal at priority 6" priorities hilsim-$BENCH '^safe stop: 2 joints=6'
check "the shm segment is gone" test ! -e $SEG
lttng stop >/dev/null 2>&1
lttng destroy >/dev/null 2>&1
kill $CANDUMP
TICKS=$(babeltrace2 "$TRACE" 2>/dev/null | grep -c 'hilsim:tick')
check "LTTng-UST through the sandbox: $TICKS hilsim:tick events in the root session" \
    test "${TICKS:-0}" -gt 0

# --- refusals --------------------------------------------------------------------------------
printf 'bench:\n  name: bad\nrt:\n  period_ns: -5\n' >/etc/hilsim/bad.yaml
chgrp hilsim /etc/hilsim/bad.yaml
chmod 0640 /etc/hilsim/bad.yaml
check "a bad config fails to start" sh -c "! systemctl start hilsim@bad.service 2>/dev/null"
# The start job ends when the unit has failed for good or entered auto-restart (waiting its
# RestartSec=2s): failed/failed is systemd's final decision not to restart (a failed unit is
# never restarted automatically), so nothing needs to wait out RestartSec.
check "exit status 2 and no restart (RestartPreventExitStatus=2)" \
    test "$(prop hilsim@bad.service ExecMainStatus)/$(prop hilsim@bad.service NRestarts)" = 2/0
check "hilsim@bad.service is failed, not waiting to restart" test \
    "$(prop hilsim@bad.service ActiveState)/$(prop hilsim@bad.service SubState)" = failed/failed
check "the error names the file, line and field at priority 3" \
    priorities hilsim-bad '^/etc/hilsim/bad\.yaml:4:14: rt\.period_ns: =3'
systemctl start hilsim@none.service 2>/dev/null
check "an instance without a config is a failed condition, not a crash loop" \
    test "$(prop hilsim@none.service ConditionResult)/$(prop hilsim@none.service NRestarts)" = no/0

finish
