#!/usr/bin/env bash
# Installs what hilsim needs on Debian 12. Idempotent. Runs apt as root, through sudo when not
# root.
#
#   scripts/setup.sh --demo   only what building hilsim and running the demo need (the compiler,
#                             CMake and the libraries hilsim links): to try it
#   scripts/setup.sh          that, and everything the tests, checks and tools use (QEMU and a
#                             PREEMPT_RT kernel for the guest tests, clang for fuzzing, LTTng's
#                             tools, MuJoCo, Chromium and the web view's npm packages, stress-ng,
#                             the real client libraries' Python dependencies): to develop
set -euo pipefail
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
case "${1:-}" in
  --demo) demo=1 ;;
  "") demo=0 ;;
  *) echo "usage: scripts/setup.sh [--demo]" >&2; exit 2 ;;
esac

BUILD=(
  # build
  build-essential cmake pkg-config
  # mandated libraries
  libode-dev libsocketcan-dev liblttng-ust-dev libcmocka-dev
  # config parsing (YAML with line/column marks), systemd notify/watchdog, URDF (XML) and meshes
  libyaml-dev libsystemd-dev libxml2-dev libassimp-dev
  # convex hulls of collision meshes (mesh_collision: convex; the reentrant libqhull_r)
  libqhull-dev
  # JSON written and read back (reports, DBC dumps, manifests)
  libjansson-dev
  # hilsim replay --plot FILE.png: cairo draws the antialiased curves and their text
  libcairo2-dev
  # hilsim view (src/view): its HTTP/WebSocket server
  libwebsockets-dev
  # recordings' blocks compressed on the writer thread (src/record, record.compression: zstd)
  libzstd-dev
  # the demo's Python logger (examples/logger.py)
  python3
)
TEST=(
  # formatting and static checks (scripts/lint.sh)
  clang-format cppcheck
  # clang-tidy with the checks of .clang-tidy (scripts/tidy.sh)
  clang-tidy-14
  # tracing tools: record and read LTTng traces
  lttng-tools babeltrace2
  # fuzzing and sanitizers with clang
  clang-14 libclang-rt-14-dev
  # CAN peers and tools used by tests, the Python client bindings' CAN side
  can-utils python3-can
  # the vendor's Robstride SDK (../shared/clients/python/robstride_dynamics) imports numpy and tqdm:
  # tests/canio/guest-robstride-sdk.sh drives hilsim with it
  python3-numpy python3-tqdm
  # python/hilsim_record.py reads zstd-compressed recordings with it (tests/record)
  python3-zstandard
  # DBC oracle for tests/can/test_dbc_canmatrix.py (the test skips without it)
  python3-canmatrix
  # URDF oracle: urdfdom's check_urdf judges every exported model (tests/model/test_urdf_cli.py)
  liburdfdom-tools
  # what mjbots' moteus client and moteus_tool (../shared/clients/python) import, for
  # canio_guest_moteus_client (numpy and tqdm above)
  python3-serial python3-importlib-metadata python3-scipy python3-pyelftools
  # MuJoCo 2.2.2 beside hilsim in bench/contact_bench (issue 16; the row is skipped without it)
  libmujoco-dev
  # PREEMPT_RT test guest (tests/rtguest): kernel is fetched on first use
  qemu-system-x86 busybox-static cpio xz-utils
  # service checks
  systemd procps
  # loads the machine (stress-ng --cpu 2) while tests show lockstep runs stay byte-identical
  stress-ng
  # a one-node Slurm cluster that tests/campaign/test_campaign_slurm.py starts and stops itself
  # (its own munge key and slurm.conf in a temporary folder) to run a campaign as an array job
  munge slurmctld slurmd slurm-client
  # mkfs.ext4 and fsfreeze: tests/ctl/test_ctl_stuck_fs.py freezes a loop-mounted file system
  # under a live scenario's verdict files
  e2fsprogs util-linux
  # hilsim view's page: node for its packages (web/) and its browser test, chromium for that
  # test (headless, tests/view)
  nodejs chromium
)
PKGS=("${BUILD[@]}")
[ "$demo" = 1 ] || PKGS+=("${TEST[@]}")

missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
echo "setup: all ${#PKGS[@]} packages present$([ "$demo" = 1 ] && echo " (--demo: to build and run the demo)")"
[ "$demo" = 1 ] && exit 0

# hilsim view's page: three.js, urdf-loader, uPlot (and puppeteer-core for its test) exactly as
# web/package-lock.json pins them; node_modules is never committed.
web="$(cd "$(dirname "$0")/.." && pwd)/web"
if [ -f "$web/package-lock.json" ]; then
  # Debian's nodejs leaves npm to its own package; NodeSource's nodejs ships it.
  command -v npm >/dev/null || DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq \
    --no-install-recommends npm
  (cd "$web" && npm ci --no-audit --no-fund --loglevel=error)
  echo "setup: web/node_modules installed from web/package-lock.json"
fi
