#!/bin/bash
# run-systemd-guest.sh BUILD_DIR OUT_DIR [DEB_DIR]
# Boots the PREEMPT_RT guest with systemd as PID 1 and runs guest-systemd.sh there on the .deb
# a bench admin installs: the one in DEB_DIR (ctest's fixture service_deb, build-deb.sh, built
# once for the whole run), or, without DEB_DIR, one packaged here with build-deb.sh into
# OUT_DIR/deb. The journal, the candump log and the LTTng trace stay in OUT_DIR.
set -euo pipefail
BUILD=$(realpath "$1") OUT=$2 DEBDIR=${3:-}
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$HERE/../.." && pwd)
mkdir -p "$OUT"
OUT=$(realpath "$OUT")
if [ -z "$DEBDIR" ]; then
    DEBDIR=$OUT/deb
    "$HERE/build-deb.sh" "$BUILD" "$DEBDIR" >/dev/null
fi
DEB=$(ls "$DEBDIR"/hilsim_*.deb)
HS_GUEST_INIT=systemd HS_GUEST_RW=$OUT exec "$SRC/tests/rtguest/run-in-rt-guest.sh" \
    "$HERE/guest-systemd.sh" "$DEB" "$SRC" "$OUT"
