#!/usr/bin/env bash
# guest-selftest.sh [--rt-probe PATH] PROBE... | all
# Checks, inside the PREEMPT_RT test guest, what hilsim's tests rely on. Prints PASS or FAIL per
# probe and exits 1 if any failed. Run it through run-in-rt-guest.sh; on the host it fails.
#   kernel  the kernel is PREEMPT_RT (uname -v, /sys/kernel/realtime)
#   sched   SCHED_FIFO is granted (chrt) and rt_probe gets SCHED_FIFO 80 and mlockall
#   vcan    cansend/candump round trips on vcan0 and vcan1, and the buses stay apart
#   pycan   Debian's python3-can sends and receives on vcan0 and vcan1
# shellcheck disable=SC2317 # the probe_* functions are called by name
set -uo pipefail
HERE=$(cd "$(dirname "$(realpath "$0")")" && pwd)
RT_PROBE=
if [ "${1:-}" = --rt-probe ]; then
    RT_PROBE=${2:?--rt-probe needs a path}
    shift 2
fi
[ $# -ge 1 ] || { echo "usage: $0 [--rt-probe PATH] kernel|sched|vcan|pycan...|all" >&2; exit 2; }
[ "$*" != all ] || set -- kernel sched vcan pycan
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

probe_kernel() {
    local version realtime
    version=$(uname -v)
    realtime=$(cat /sys/kernel/realtime 2>/dev/null || echo missing)
    echo "uname -r: $(uname -r); uname -v: $version; /sys/kernel/realtime: $realtime"
    [[ $version == *PREEMPT_RT* ]] || { echo "uname -v does not say PREEMPT_RT"; return 1; }
    [ "$realtime" = 1 ] || { echo "/sys/kernel/realtime is '$realtime', not 1"; return 1; }
}

probe_sched() {
    chrt -f 80 true || { echo "chrt -f 80 true was refused"; return 1; }
    echo "chrt -f 80: granted"
    [ -n "$RT_PROBE" ] || { echo "no --rt-probe given"; return 1; }
    "$RT_PROBE" 80
}

# Starts candump -n 1 on each bus, then sends one frame per bus until both dumps have one. A
# frame that leaked onto the other bus would be the first one seen there (it is sent first).
probe_vcan() {
    local bus pids=() pid alive
    command -v cansend >/dev/null || { echo "can-utils is missing on the host: run scripts/setup.sh"; return 1; }
    for bus in vcan0 vcan1; do
        ip link show "$bus" >/dev/null || { echo "$bus does not exist"; return 1; }
        candump -L -n 1 "$bus" >"$WORK/$bus.log" &
        pids+=($!)
    done
    for _ in $(seq 100); do
        cansend vcan0 123#DEADBEEF || return 1
        cansend vcan1 456#CAFE || return 1
        alive=0
        for pid in "${pids[@]}"; do
            kill -0 "$pid" 2>/dev/null && alive=1
        done
        [ "$alive" = 1 ] || break
        sleep 0.1
    done
    kill "${pids[@]}" 2>/dev/null
    wait "${pids[@]}" 2>/dev/null
    echo "vcan0 saw: $(cat "$WORK/vcan0.log")"
    echo "vcan1 saw: $(cat "$WORK/vcan1.log")"
    grep -Eq '^\([0-9.]+\) vcan0 123#DEADBEEF$' "$WORK/vcan0.log" || { echo "vcan0 round trip failed"; return 1; }
    grep -Eq '^\([0-9.]+\) vcan1 456#CAFE$' "$WORK/vcan1.log" || { echo "vcan1 round trip failed"; return 1; }
}

probe_pycan() {
    # A pyenv python3 may come first on PATH and lack Debian's python3-can.
    /usr/bin/python3 -c 'import can' 2>/dev/null ||
        { echo "Debian's python3-can is missing on the host: run scripts/setup.sh"; return 1; }
    /usr/bin/python3 "$HERE/pycan_roundtrip.py" vcan0 vcan1
}

failed=0
for probe in "$@"; do
    declare -F "probe_$probe" >/dev/null || { echo "unknown probe '$probe'" >&2; exit 2; }
    if "probe_$probe" >"$WORK/out" 2>&1; then verdict=PASS; else verdict=FAIL; failed=1; fi
    echo "$verdict $probe"
    sed 's/^/    /' "$WORK/out"
done
exit $failed
