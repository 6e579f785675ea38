#!/bin/sh
# Each model warning is printed exactly once by `hilsim model` and by `hilsim sim`, with its
# file:line:column. Usage: warnings_once.sh HILSIM LENIENT_DIR
set -u
hilsim=$1
f=$2/motor_zero_means_default.wrl
want="$f:13:17: Joint ARM: gearRatio, torqueConst, encoderPulse 0 read as not given"
fail=0
for cmd in "model $f" "sim --model $f --duration 0.01"; do
    # shellcheck disable=SC2086
    n=$("$hilsim" $cmd 2>&1 >/dev/null | grep -cF "$want")
    if [ "$n" != 1 ]; then
        echo "hilsim $cmd: warning printed $n times (expected once): $want"
        fail=1
    fi
done
exit $fail
