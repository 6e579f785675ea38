#!/usr/bin/env bash
# harness-selftest.sh RUNNER: checks, from the host, the promises run-in-rt-guest.sh makes: the
# exit status, stdout and stderr kept apart and intact, HS_GUEST_ENV and HS_* passed in, the
# working directory kept, HS_GUEST_RW dirs writable, other host files untouched, 124 on timeout,
# one retry of a hung boot and 125 on bad set-up, and a guest clock that keeps the host's pace.
# Two full guest boots and two cut short.
set -uo pipefail
RUNNER=${1:?usage: harness-selftest.sh RUNNER}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
failed=0
check() { # WHAT CONDITION...
    local what=$1
    shift
    if "$@"; then echo "PASS $what"; else echo "FAIL $what"; failed=1; fi
}

mkdir "$WORK/rw" "$WORK/cwd"
# Path of a file the guest creates outside the read-write dirs; it must not reach the host.
STRAY=/var/tmp/hs-rtguest-stray-$$
# t0 and t1 are stamped by the host (9p) 4 s of guest time apart: a guest clock running fast
# (a TSC miscalibrated at a starved boot ran one 11 times too fast) puts them closer.
GUEST_SCRIPT='
echo >"$RW/t0"
sleep 4
echo >"$RW/t1"
head -c 300000 /dev/urandom | od -An -tx1 >"$RW/data"
printf "%s|%s|%s|%s|%s\n" "$A" "$B" "$FROM_HOST" "$HS_SELFTEST_MARK" "$(pwd)" >"$RW/env"
echo written >"$STRAY"
cat "$RW/data"
echo "last stdout line"
echo "also to stderr" >&2
exit 7'
(cd "$WORK/cwd" && RW=$WORK/rw STRAY=$STRAY FROM_HOST="a b" HS_SELFTEST_MARK=mark \
    HS_GUEST_RW="$WORK/rw" HS_GUEST_ENV="A=1 B=two RW STRAY FROM_HOST UNSET_HERE" \
    "$RUNNER" bash -c "$GUEST_SCRIPT" >"$WORK/stdout" 2>"$WORK/stderr")
rc=$?
check "exit status comes back (got $rc, want 7)" test "$rc" = 7
check "stdout carries exactly what the command wrote (~900 kB)" \
    cmp -s "$WORK/stdout" <(cat "$WORK/rw/data" && echo "last stdout line")
check "stderr carries only the command's stderr" \
    test "$(cat "$WORK/stderr")" = "also to stderr"
check "HS_GUEST_ENV, HS_* and the working directory reach the command" \
    test "$(cat "$WORK/rw/env" 2>/dev/null)" = "1|two|a b|mark|$WORK/cwd"
check "writes outside HS_GUEST_RW stay in the guest" test ! -e "$STRAY"
host_ms() { date -r "$1" +%s%3N 2>/dev/null || echo 0; }
clock_ms=$(($(host_ms "$WORK/rw/t1") - $(host_ms "$WORK/rw/t0")))
# A lower bound only: load on the host can stretch the gap, never shorten it.
check "the guest's clock keeps the host's pace (4 s of guest sleep took $clock_ms ms on the host)" \
    test "$clock_ms" -ge 3600
rm -f "$STRAY"

start=$SECONDS
HS_GUEST_TIMEOUT=3 "$RUNNER" sleep 120 >/dev/null 2>"$WORK/stderr"
rc=$?
check "a command past HS_GUEST_TIMEOUT ends with 124 (got $rc after $((SECONDS - start)) s)" \
    test "$rc" = 124 -a $((SECONDS - start)) -lt 100
check "the timeout is explained on stderr" grep -q 'HS_GUEST_TIMEOUT' "$WORK/stderr"

# A boot that cannot finish in time: retried once, then reported as a guest failure.
HS_GUEST_BOOT_TIMEOUT=1 "$RUNNER" true >/dev/null 2>"$WORK/stderr"
rc=$?
check "a hung boot is retried once, then fails with 125 (got $rc)" \
    test "$rc" = 125 -a "$(grep -c 'booting again' "$WORK/stderr")" = 1
check "a failed boot is explained on stderr" grep -q 'failed to boot twice' "$WORK/stderr"

HS_GUEST_RW=$WORK/no-such-dir "$RUNNER" true >/dev/null 2>"$WORK/stderr"
rc=$?
check "a bad HS_GUEST_RW fails with 125 and names the directory (got $rc)" \
    test "$rc" = 125 -a -n "$(grep "$WORK/no-such-dir" "$WORK/stderr")"
exit $failed
