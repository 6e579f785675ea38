#!/bin/bash
# run-systemd-guest.sh BUILD_DIR OUT_DIR
# Packages the build with cpack (the .deb a bench admin installs), then boots the PREEMPT_RT
# guest with systemd as PID 1 and runs guest-systemd.sh there. The .deb, the journal, the
# candump log and the LTTng trace stay in OUT_DIR.
set -euo pipefail
BUILD=$(realpath "$1") OUT=$2
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$HERE/../.." && pwd)
mkdir -p "$OUT"
OUT=$(realpath "$OUT")
rm -rf "$OUT/deb"
cpack -G DEB --config "$BUILD/CPackConfig.cmake" -B "$OUT/deb" >"$OUT/cpack.log" 2>&1 || {
    cat "$OUT/cpack.log" >&2
    echo "run-systemd-guest: cpack failed" >&2
    exit 1
}
DEB=$(ls "$OUT"/deb/hilsim_*.deb)
HS_GUEST_INIT=systemd HS_GUEST_RW=$OUT exec "$SRC/tests/rtguest/run-in-rt-guest.sh" \
    "$HERE/guest-systemd.sh" "$DEB" "$SRC" "$OUT"
