#!/bin/bash
# build-deb.sh BUILD_DIR OUT_DIR
# Packages the build with cpack into OUT_DIR (the .deb a bench admin installs; CPack's scratch
# tree stays there too, out of the build tree) and checks that exactly one .deb came out. Run
# once per ctest run as the fixture service_deb: service_install inspects the package and
# service_systemd_guest installs it in the guest, so cpack runs once, beside any guest.
set -euo pipefail
BUILD=$(realpath "$1") OUT=$2
mkdir -p "$OUT"
OUT=$(realpath "$OUT")
rm -rf "${OUT:?}/_CPack_Packages" "${OUT:?}"/hilsim_*.deb
cpack -G DEB --config "$BUILD/CPackConfig.cmake" -B "$OUT" >"$OUT/cpack.log" 2>&1 || {
    cat "$OUT/cpack.log" >&2
    echo "build-deb: cpack failed" >&2
    exit 1
}
shopt -s nullglob
debs=("$OUT"/hilsim_*.deb)
[ ${#debs[@]} -eq 1 ] || {
    echo "build-deb: expected one hilsim_*.deb in $OUT, found: ${debs[*]:-none}" >&2
    exit 1
}
echo "build-deb: ${debs[0]}"
