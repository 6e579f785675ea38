#!/usr/bin/env bash
# Installs everything hilsim needs to build, run and test on Debian 12. Idempotent.
# Runs apt as root, through sudo when not root.
set -euo pipefail
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"

PKGS=(
  # build
  build-essential cmake pkg-config clang-format
  # static checks (scripts/lint.sh)
  cppcheck
  # clang-tidy with the checks of .clang-tidy (scripts/tidy.sh)
  clang-tidy-14
  # mandated libraries
  libode-dev libsocketcan-dev liblttng-ust-dev libcmocka-dev
  # config parsing (YAML with line/column marks), systemd notify/watchdog, URDF (XML) and meshes
  libyaml-dev libsystemd-dev libxml2-dev libassimp-dev
  # JSON written and read back (reports, DBC dumps, manifests)
  libjansson-dev
  # hilsim replay --plot FILE.png: cairo draws the antialiased curves and their text
  libcairo2-dev
  # tracing tools: record and read LTTng traces
  lttng-tools babeltrace2
  # fuzzing and sanitizers with clang
  clang-14 libclang-rt-14-dev
  # CAN peers and tools used by tests, python for the client bindings
  can-utils python3 python3-can
  # DBC oracle for tests/can/test_dbc_canmatrix.py (the test skips without it)
  python3-canmatrix
  # MuJoCo 2.2.2 beside hilsim in bench/contact_bench (issue 16; the row is skipped without it)
  libmujoco-dev
  # PREEMPT_RT test guest (tests/rtguest): kernel is fetched on first use
  qemu-system-x86 busybox-static cpio xz-utils
  # service checks
  systemd procps
  # loads the machine (stress-ng --cpu 2) while tests show lockstep runs stay byte-identical
  stress-ng
)

missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
echo "setup: all ${#PKGS[@]} packages present"
