#!/usr/bin/env bash
# run-in-rt-guest.sh CMD [ARGS...]
#
# Runs CMD as root inside Debian's PREEMPT_RT kernel (linux-image-rt-amd64) booted under QEMU,
# with vcan0 and vcan1 up, and returns its exit status. The guest sees the host's / read-only
# through a writable overlay (writes are discarded), so host-built binaries run unchanged. The
# working directory is kept; CMD's stdout and stderr arrive separately on ours; stdin is empty.
#
# Exit status: CMD's, or 125 when the guest or this harness fails, or 124 on timeout.
#
# Environment:
#   HS_GUEST_ENV      space-separated NAME=VALUE or NAME (copied from here) set for CMD. Every
#                     HS_* variable except HS_GUEST_* is passed in as well.
#   HS_GUEST_RW       colon-separated host directories mounted read-write at the same path
#   HS_GUEST_TIMEOUT  seconds CMD may run once the guest is up (default 600)
#   HS_GUEST_BOOT_TIMEOUT  seconds without progress (QEMU start, or the last console output of
#                     a booting guest) before CMD has started, after which the boot counts as
#                     hung and is retried once (default 240: under emulation on a host loaded
#                     2-3 times over, a healthy boot took more than 90 s)
#   HS_GUEST_VCAN     number of vcan interfaces, vcan0.. (default 2)
#   HS_GUEST_CANHW    number of emulated CAN controllers (QEMU kvaser_pci, an SJA1000) on one
#                     virtual CAN bus: can0.. (default 0). They come up DOWN, without a bitrate.
#   HS_GUEST_ACCEL    auto | tcg | kvm (auto: kvm only where kvm_intel or kvm_amd is loaded)
#   HS_GUEST_SMP, HS_GUEST_MEM   vCPUs (default 2) and guest MiB (default 512)
#   HS_GUEST_APPEND   extra kernel command line, e.g. "isolcpus=1"
#   HS_GUEST_INIT     busybox (default): CMD runs straight from the initramfs's /init; or
#                     systemd: the host's systemd boots the overlay root as PID 1 and runs CMD as
#                     a oneshot unit, for tests of systemd services (needs the host's systemd)
#   HS_GUEST_CONSOLE  file that receives the guest's serial console (default: shown on failure)
#   HS_GUEST_CACHE    kernel and initramfs cache (default ${XDG_CACHE_HOME:-~/.cache}/hilsim-rtguest)
#   HS_GUEST_KERNEL_DEB  use this linux-image-*-rt-amd64 .deb instead of `apt-get download`
#   HS_GUEST_TSC_KHZ  TSC rate given to a TCG guest (tsc_early_khz=; default: the host kernel's
#                     own figure from its boot log; 0: the guest calibrates it itself)
set -euo pipefail

HERE=$(cd "$(dirname "$(realpath "$0")")" && pwd)
CACHE=${HS_GUEST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hilsim-rtguest}
TIMEOUT=${HS_GUEST_TIMEOUT:-600}
BOOT_TIMEOUT=${HS_GUEST_BOOT_TIMEOUT:-240}
NVCAN=${HS_GUEST_VCAN:-2}
NCANHW=${HS_GUEST_CANHW:-0}
ACCEL=${HS_GUEST_ACCEL:-auto}
SMP=${HS_GUEST_SMP:-2}
MEM=${HS_GUEST_MEM:-512}
INIT=${HS_GUEST_INIT:-busybox}
INIT_APPEND=
# Loaded in this order by the guest's /init; their dependencies come along. sja1000 and
# kvaser_pci drive HS_GUEST_CANHW's emulated controllers; without those devices they bind to
# nothing.
MODULES="virtio_pci virtio_console 9pnet_virtio 9p overlay can can-raw can-bcm can-gw can-isotp
         can-j1939 vcan vxcan can-dev sja1000 kvaser_pci"

say() { echo "run-in-rt-guest: $*" >&2; }
die() {
    say "error: $*"
    exit 125
}

[ $# -ge 1 ] || die "usage: $0 CMD [ARGS...]"
for n in TIMEOUT BOOT_TIMEOUT NVCAN NCANHW SMP MEM; do
    v=${n/NVCAN/VCAN}
    [[ ${!n} =~ ^[0-9]+$ ]] || die "HS_GUEST_${v/NCANHW/CANHW}='${!n}' is not a whole number"
done
# kvaser_pci has one channel per device; 8 controllers are plenty for any bench test.
((NCANHW <= 8)) || die "HS_GUEST_CANHW=$NCANHW: at most 8 emulated controllers"
[ -f "$HERE/guest-init.sh" ] || die "$HERE/guest-init.sh is missing"
case "$INIT" in
busybox) ;;
systemd)
    [ -x /lib/systemd/systemd ] || die "HS_GUEST_INIT=systemd needs systemd on this host"
    # Boot progress on the console only when something fails.
    INIT_APPEND="systemd.show_status=error"
    ;;
*) die "HS_GUEST_INIT must be busybox or systemd, not '$INIT'" ;;
esac

check_host_tools() {
    local missing=() t
    for t in qemu-system-x86_64 cpio xz dpkg-deb flock md5sum; do
        command -v "$t" >/dev/null || missing+=("$t")
    done
    # The initramfs needs a static busybox: the dynamic one would need the host's libc in it.
    dpkg-query -W -f='${Status}' busybox-static 2>/dev/null | grep -q "install ok installed" ||
        missing+=(busybox-static)
    [ ${#missing[@]} -eq 0 ] ||
        die "missing on this host: ${missing[*]}; run scripts/setup.sh (it installs them)"
}

# Prints the versioned package behind linux-image-rt-amd64, e.g. linux-image-6.1.0-56-rt-amd64.
# apt-cache takes ~0.7 s, so the answer is kept until apt's package lists change.
resolve_kernel_package() {
    local memo=$CACHE/kernel-package pkg
    if [ -s "$memo" ] && ! [ /var/lib/apt/lists -nt "$memo" ]; then
        cat "$memo"
        return
    fi
    pkg=$(apt-cache depends linux-image-rt-amd64 2>/dev/null |
        awk '$1 == "Depends:" && $2 ~ /^linux-image-/ { print $2; exit }')
    if [ -z "$pkg" ]; then
        # Offline or without package lists: any kernel already unpacked will do.
        pkg=$(find "$CACHE" -maxdepth 2 -name .ok -path '*/linux-image-*' -printf '%h\n' 2>/dev/null |
            sort -V | tail -n 1)
        pkg=${pkg##*/}
        [ -n "$pkg" ] || die "apt knows no linux-image-rt-amd64; run 'sudo apt-get update'"
        echo "$pkg"
        return
    fi
    echo "$pkg" >"$memo"
    echo "$pkg"
}

# QEMU boots an uncompressed ELF vmlinux through its PVH entry point, which under TCG is ~2.5 s
# faster than a bzImage (no real-mode setup, no in-guest XZ decompression).
unpack_vmlinux() { # BZIMAGE OUT
    local at
    at=$(LC_ALL=C grep -m 1 -abo $'\xfd7zXZ\x00' "$1" | sed -n 1p | cut -d: -f1)
    [ -n "$at" ] || return 1
    tail -c +$((at + 1)) "$1" | xz -dc --single-stream >"$2" 2>/dev/null || true
    [ "$(head -c 4 "$2" | od -An -tx1 | tr -d ' \n')" = 7f454c46 ] || {
        rm -f "$2"
        return 1
    }
}

fetch_kernel() { # PKG DIR
    local pkg=$1 dir=$2 tmp=$2.tmp kver
    rm -rf "$tmp"
    mkdir -p "$tmp/root"
    if [ -n "${HS_GUEST_KERNEL_DEB:-}" ]; then
        cp "$HS_GUEST_KERNEL_DEB" "$tmp/" || die "cannot read HS_GUEST_KERNEL_DEB=$HS_GUEST_KERNEL_DEB"
    else
        say "downloading $pkg (~70 MB, once; unpacked into $CACHE, not installed)"
        (cd "$tmp" && apt-get download "$pkg" >download.log 2>&1) || {
            cat "$tmp/download.log" >&2
            die "apt-get download $pkg failed"
        }
    fi
    dpkg-deb -x "$tmp"/*.deb "$tmp/root" || die "cannot unpack the kernel package"
    rm -f "$tmp"/*.deb
    kver=$(ls "$tmp/root/lib/modules")
    [ -f "$tmp/root/boot/vmlinuz-$kver" ] || die "no /boot/vmlinuz-$kver in $pkg"
    # The package leaves modules.dep to its postinst, which we do not run.
    busybox depmod -b "$tmp/root" "$kver" || die "depmod failed for $kver"
    # Drivers for hardware a QEMU guest never has: about half of the unpacked size.
    (cd "$tmp/root/lib/modules/$kver/kernel" && rm -rf sound drivers/gpu drivers/media \
        drivers/infiniband drivers/scsi drivers/staging drivers/iio drivers/net/wireless \
        drivers/net/ethernet)
    unpack_vmlinux "$tmp/root/boot/vmlinuz-$kver" "$tmp/vmlinux" ||
        say "cannot unpack vmlinux from the bzImage; booting the bzImage (slower)"
    echo "$kver" >"$tmp/kernel-version"
    touch "$tmp/.ok"
    rm -rf "$dir"
    mv "$tmp" "$dir"
}

# Prints the modules to copy (paths relative to /lib/modules/KVER): MODULES and their dependencies.
module_closure() { # MODULES.DEP
    awk -v want="$MODULES" '
        function canon(s) { sub(/.*\//, "", s); sub(/\.ko.*$/, "", s); gsub(/-/, "_", s); return s }
        function add(file,    n, i, d) {
            if (file in seen) return
            seen[file] = 1
            print file
            n = split(deps[file], d, " ")
            for (i = 1; i <= n; i++) add(d[i])
        }
        {
            file = $1; sub(/:$/, "", file)
            path[canon(file)] = file
            deps[file] = ""
            for (i = 2; i <= NF; i++) deps[file] = deps[file] " " $i
        }
        END {
            n = split(want, w, " ")
            for (i = 1; i <= n; i++) {
                if (!(canon(w[i]) in path)) { print "no module " w[i] > "/dev/stderr"; bad = 1; continue }
                add(path[canon(w[i])])
            }
            exit bad
        }' "$1"
}

build_initramfs() { # KDIR OUT
    local kdir=$1 out=$2 kver tree a f
    kver=$(cat "$kdir/kernel-version")
    tree=$(mktemp -d "$CACHE/initramfs.XXXXXX")
    mkdir -p "$tree"/{bin,dev,proc,sys,lower,upper,newroot} "$tree/lib/modules/$kver"
    cp "$(command -v busybox)" "$tree/bin/busybox"
    # Applets as symlinks; busybox itself must stay a file or the link loops.
    for a in $("$tree/bin/busybox" --list); do
        [ "$a" = busybox ] || ln -s busybox "$tree/bin/$a"
    done
    module_closure "$kdir/root/lib/modules/$kver/modules.dep" >"$tree/closure" ||
        die "kernel $kver lacks a module the guest needs"
    while read -r f; do
        mkdir -p "$tree/lib/modules/$kver/$(dirname "$f")"
        cp "$kdir/root/lib/modules/$kver/$f" "$tree/lib/modules/$kver/$f" ||
            die "module $f is not in the cache; delete $CACHE to fetch the kernel again"
    done <"$tree/closure"
    rm "$tree/closure"
    busybox depmod -b "$tree" "$kver" || die "depmod failed in the initramfs"
    cp "$HERE/guest-init.sh" "$tree/init"
    chmod 755 "$tree/init"
    echo "$MODULES" | tr -s " \n" "  " >"$tree/modules.list"
    (cd "$tree" && find . -print0 | cpio --null -o -H newc --quiet) >"$out.tmp"
    mv "$out.tmp" "$out"
    rm -rf "$tree"
}

# The initramfs is rebuilt whenever anything that goes into it changes.
initramfs_key() {
    {
        cat "$HERE/guest-init.sh"
        echo "$MODULES"
        # sed reads to the end: with head, busybox could die of SIGPIPE and pipefail would end
        # the whole script (exit 141, silently) whenever the initramfs had to be rebuilt.
        busybox | sed -n 1p
    } | md5sum | cut -c1-16
}

# Sets KDIR and INITRD, building what is missing. Caller holds the cache lock exclusively.
prepare() {
    local pkg key
    check_host_tools
    pkg=$(resolve_kernel_package)
    KDIR=$CACHE/$pkg
    [ -f "$KDIR/.ok" ] || fetch_kernel "$pkg" "$KDIR"
    key=$(initramfs_key)
    INITRD=$KDIR/initrd-$key.cpio
    if [ ! -f "$INITRD" ]; then
        rm -f "$KDIR"/initrd-*.cpio
        build_initramfs "$KDIR" "$INITRD"
    fi
    # Older kernels are dropped once a newer one is ready (each is ~230 MB unpacked).
    find "$CACHE" -mindepth 1 -maxdepth 1 -type d -name 'linux-image-*' ! -name "$pkg" \
        -exec rm -rf {} +
}

ready() { # cheap check under the shared lock
    local pkg
    pkg=$(resolve_kernel_package 2>/dev/null) || return 1
    KDIR=$CACHE/$pkg
    [ -f "$KDIR/.ok" ] || return 1
    INITRD=$KDIR/initrd-$(initramfs_key).cpio
    [ -f "$INITRD" ]
}

mkdir -p "$CACHE" || die "cannot create the cache dir $CACHE"
# Runs hold the lock shared for their whole life, so set-up (exclusive) never swaps files under a
# running guest.
exec 9>"$CACHE/lock"
flock -s 9
if ! ready; then
    flock -x 9
    prepare
    flock -s 9
    ready || die "set-up of $CACHE did not complete"
fi
KIMG=$KDIR/vmlinux
[ -f "$KIMG" ] || KIMG=$KDIR/root/boot/vmlinuz-$(cat "$KDIR/kernel-version")

if [ "$ACCEL" = auto ]; then
    ACCEL=tcg
    # /dev/kvm alone is not enough: a paravirtual nested KVM (kvm_pvm) cannot run a stock kernel
    # at a usable speed, so use KVM only on hardware virtualisation.
    if [ -r /dev/kvm ] && [ -w /dev/kvm ] && { [ -d /sys/module/kvm_intel ] || [ -d /sys/module/kvm_amd ]; }; then
        ACCEL=kvm
    fi
fi
# shellcheck disable=SC2054 # the commas belong to QEMU's option syntax
case "$ACCEL" in
kvm) ACCEL_ARGS=(-accel kvm -cpu host) APPEND= ;;
# TCG derives the guest TSC from one host clock, so it is safe to tell the kernel to trust it;
# otherwise the guest falls back to a slow, coarse clocksource.
# no_timer_check: on a loaded host TCG runs the boot's IO-APIC timer check too slowly and the
# kernel panics ("IO-APIC + timer doesn't work"); virtual machines skip that check.
tcg) ACCEL_ARGS=(-accel tcg,thread=multi,tb-size=512 -cpu max,la57=off) APPEND="tsc=reliable no_timer_check" ;;
*) die "HS_GUEST_ACCEL must be auto, tcg or kvm, not '$ACCEL'" ;;
esac

# Under TCG the guest's TSC counts at the host's TSC rate. Left to calibrate it against the
# emulated PIT, a guest starved during boot got it 11 times too low ("PIT calibration deviates
# from HPET: 226852 2595490", "Using PIT calibration value") and its clock then ran 11 times too
# fast, so every deadline in the guest expired early; the kernel's later refinement only
# corrects errors within 1 %. tsc_early_khz= skips that calibration. The rate is the host
# kernel's own: its refined calibration, else its detected one, from its boot log.
host_tsc_khz() {
    local log mhz
    log=$(dmesg 2>/dev/null) || log=
    grep -q 'tsc: \(Refined\|Detected\)' <<<"$log" || log=$(journalctl -k -b -q --no-pager 2>/dev/null) || log=
    mhz=$(sed -n 's/.*tsc: Refined TSC clocksource calibration: \([0-9.]*\) MHz.*/\1/p' <<<"$log" | tail -n 1)
    [ -n "$mhz" ] || mhz=$(sed -n 's/.*tsc: Detected \([0-9.]*\) MHz processor.*/\1/p' <<<"$log" | tail -n 1)
    [ -n "$mhz" ] && awk -v m="$mhz" 'BEGIN { printf "%d\n", m * 1000 + 0.5 }'
}
if [ "$ACCEL" = tcg ]; then
    TSC_KHZ=${HS_GUEST_TSC_KHZ:-$(host_tsc_khz || true)}
    [[ ${TSC_KHZ:-0} =~ ^[0-9]+$ ]] || die "HS_GUEST_TSC_KHZ must be a number of kHz, not '$TSC_KHZ'"
    [ "${TSC_KHZ:-0}" -eq 0 ] || APPEND="$APPEND tsc_early_khz=$TSC_KHZ"
fi

RUN=$(mktemp -d "${TMPDIR:-/tmp}/hs-rtguest.XXXXXX")
[[ $RUN != *[[:space:]]* ]] || die "TMPDIR must not contain spaces"
QEMU_PID=
# shellcheck disable=SC2317 # called from the EXIT trap
cleanup() {
    [ -z "$QEMU_PID" ] || kill "$QEMU_PID" 2>/dev/null || true
    rm -rf "$RUN"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

write_command() {
    local item name value items
    echo 'export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'
    echo 'export HOME=/root LANG=C.UTF-8 TERM=dumb'
    for name in $(compgen -e); do
        [[ $name == HS_* && $name != HS_GUEST_* ]] || continue
        printf 'export %s=%q\n' "$name" "${!name}"
    done
    read -r -a items <<<"${HS_GUEST_ENV:-}" # split on blanks, no globbing
    for item in "${items[@]}"; do
        name=${item%%=*}
        [[ $name =~ ^[A-Za-z_][A-Za-z0-9_]*$ ]] || die "HS_GUEST_ENV: '$item' is not NAME or NAME=VALUE"
        if [[ $item == *=* ]]; then
            value=${item#*=}
        elif [ -n "${!name+set}" ]; then
            value=${!name}
        else
            continue
        fi
        printf 'export %s=%q\n' "$name" "$value"
    done
    printf 'cd %q || exit 125\n' "$PWD"
    printf 'exec'
    printf ' %q' "$@"
    printf '\n'
}
write_command "$@" >"$RUN/cmd.sh"

SHARES=(-fsdev "local,id=hostroot,path=/,security_model=none,readonly=on,multidevs=remap"
    -device "virtio-9p-pci,fsdev=hostroot,mount_tag=hostroot"
    -fsdev "local,id=hsrun,path=$RUN,security_model=none"
    -device "virtio-9p-pci,fsdev=hsrun,mount_tag=hsrun")
IFS=: read -r -a RW_DIRS <<<"${HS_GUEST_RW:-}"
i=0
for d in "${RW_DIRS[@]}"; do
    [ -n "$d" ] || continue
    [ -d "$d" ] || die "HS_GUEST_RW: $d is not a directory"
    d=$(realpath "$d")
    [[ $d != *[[:space:]]* ]] || die "HS_GUEST_RW: '$d' contains white space"
    i=$((i + 1))
    SHARES+=(-fsdev "local,id=hsrw$i,path=$d,security_model=none"
        -device "virtio-9p-pci,fsdev=hsrw$i,mount_tag=hsrw$i")
    echo "hsrw$i $d" >>"$RUN/mounts"
done
# Emulated CAN controllers, all on one QEMU CAN bus: frames sent on one reach the others.
CANHW=()
if ((NCANHW > 0)); then
    # shellcheck disable=SC2054 # the commas belong to QEMU's option syntax
    CANHW=(-object can-bus,id=hscanbus0)
    for ((i = 0; i < NCANHW; i++)); do
        # shellcheck disable=SC2054
        CANHW+=(-device kvaser_pci,canbus=hscanbus0)
    done
fi
CONSOLE=${HS_GUEST_CONSOLE:-$RUN/console.log}
# If this script is killed outright (e.g. SIGKILL from a test driver), QEMU goes with it.
REAPER=()
if setpriv --help 2>/dev/null | grep -q -- --pdeathsig; then
    REAPER=(setpriv --pdeathsig KILL)
fi

show_failure() {
    if [ -s "$CONSOLE" ]; then
        say "guest console, last 30 lines:"
        tail -n 30 "$CONSOLE" >&2
    else
        say "the guest console is empty (set HS_GUEST_APPEND=loglevel=7 for boot messages)"
    fi
    # Our own kill of a hung guest is not news.
    if grep -qv 'terminating on signal' "$RUN/qemu.log" 2>/dev/null; then
        say "qemu said:"
        grep -v 'terminating on signal' "$RUN/qemu.log" >&2
    fi
}

# Boots once. Sets RC and returns 0 once CMD has started in the guest, 1 if the guest never got
# that far (crashed or hung while booting).
boot() {
    local t0 started='' finished='' seen=0 size
    rm -f "$RUN/started" "$RUN/rc"
    : >"$CONSOLE"
    # CMD's stderr leaves through hvc1 into fd 3 (our stderr), passed with -add-fd: a file
    # chardev on /dev/stderr would reopen and truncate a redirected stderr. QEMU's own
    # messages go to qemu.log so they never mix with CMD's stderr.
    "${REAPER[@]}" qemu-system-x86_64 "${ACCEL_ARGS[@]}" -M q35 -m "$MEM" -smp "$SMP" \
        -nodefaults -no-user-config -display none -no-reboot \
        -kernel "$KIMG" -initrd "$INITRD" \
        -append "console=ttyS0 quiet loglevel=3 panic=-1 $APPEND hs.run=$RUN hs.vcan=$NVCAN hs.init=$INIT $INIT_APPEND ${HS_GUEST_APPEND:-}" \
        -chardev "file,id=serial,path=$CONSOLE" -serial chardev:serial \
        -device virtio-serial-pci \
        -chardev stdio,id=out,signal=off -device virtconsole,chardev=out \
        -add-fd fd=3,set=1 -chardev file,id=err,path=/dev/fdset/1,append=on \
        -device virtconsole,chardev=err \
        "${SHARES[@]}" "${CANHW[@]}" </dev/null 3>&2 2>"$RUN/qemu.log" &
    QEMU_PID=$!
    t0=$SECONDS
    while kill -0 "$QEMU_PID" 2>/dev/null; do
        if [ -z "$started" ]; then
            size=$(stat -c %s "$CONSOLE" 2>/dev/null || echo 0)
            if [ -e "$RUN/started" ]; then
                started=$SECONDS
            elif ((size > seen)); then
                seen=$size t0=$SECONDS # still booting (systemd prints its progress)
            elif ((SECONDS - t0 >= BOOT_TIMEOUT)); then
                break
            fi
        elif [ -z "$finished" ] && [ -s "$RUN/rc" ]; then
            finished=$SECONDS
        elif [ -n "$finished" ] && ((SECONDS - finished >= 10)); then
            break # the guest reported and then failed to power off
        elif [ -z "$finished" ] && ((SECONDS - started >= TIMEOUT)); then
            break
        fi
        sleep 0.05
    done
    kill "$QEMU_PID" 2>/dev/null || true
    wait "$QEMU_PID" 2>/dev/null || true
    QEMU_PID=
    [ -n "$started" ] || [ -e "$RUN/started" ] || return 1
    if [ -s "$RUN/rc" ]; then
        RC=$(cat "$RUN/rc")
    elif ((SECONDS - ${started:-$t0} >= TIMEOUT)); then
        say "timeout: the command ran longer than ${TIMEOUT}s (HS_GUEST_TIMEOUT)"
        RC=124
    else
        RC=$(grep -ao '@@HS-GUEST-RC=[0-9]*@@' "$CONSOLE" | tail -n 1 | tr -dc 0-9 || true)
        RC=${RC:-125}
        [ "$RC" != 125 ] || {
            say "the guest died while the command ran"
            show_failure
        }
    fi
    return 0
}

RC=125
if ! boot; then
    say "the guest did not start the command within ${BOOT_TIMEOUT}s; booting again"
    if ! boot; then
        say "error: the guest failed to boot twice"
        show_failure
        exit 125
    fi
fi
exit "$RC"
