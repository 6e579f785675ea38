#!/bin/sh
# /init of the test guest's initramfs (busybox sh, PID 1). run-in-rt-guest.sh copies it into the
# initramfs; it never runs on the host.
#
# Protocol with the host, through the per-run directory hs.run= (shared read-write over 9p):
#   in:  cmd.sh (the command, its environment and cwd), mounts ("tag path" per read-write dir)
#   out: started (the command is about to run), rc (its exit status)
# The command's stdout and stderr leave through virtio consoles hvc0 and hvc1.
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
exec </dev/console >/dev/console 2>&1

RUN=
VCAN=2
INIT=busybox
for arg in $(cat /proc/cmdline); do
    case "$arg" in
    hs.run=*) RUN=${arg#hs.run=} ;;
    hs.vcan=*) VCAN=${arg#hs.vcan=} ;;
    hs.init=*) INIT=${arg#hs.init=} ;;
    esac
done

# The host reads this marker from the serial console when it cannot read the rc file.
fail() {
    echo "hs-guest: error: $*"
    echo "@@HS-GUEST-RC=125@@"
    poweroff -f
    sleep 10
}

for m in $(cat /modules.list); do
    modprobe "$m" || fail "modprobe $m failed"
done

NINEP="trans=virtio,version=9p2000.L,msize=262144"
NEW=/newroot
# The host's / is the read-only lower layer; a tmpfs upper layer lets the command write anywhere,
# and those writes vanish with the guest.
mount -t 9p -o "ro,cache=loose,$NINEP" hostroot /lower || fail "cannot mount the host's / (9p)"
mount -t tmpfs -o mode=755 tmpfs /upper || fail "cannot mount the overlay's tmpfs"
mkdir -p /upper/data /upper/work
mount -t overlay overlay -o lowerdir=/lower,upperdir=/upper/data,workdir=/upper/work $NEW ||
    fail "cannot mount the overlay root"

mount -t proc proc $NEW/proc
mount -t sysfs sys $NEW/sys
mount -t devtmpfs dev $NEW/dev
mkdir -p $NEW/dev/pts $NEW/dev/shm $NEW/dev/mqueue
mount -t devpts -o newinstance,ptmxmode=0666 devpts $NEW/dev/pts
mount -t tmpfs -o mode=1777 tmpfs $NEW/dev/shm
mount -t mqueue mqueue $NEW/dev/mqueue
mount -t tmpfs -o mode=755 tmpfs $NEW/run

[ -n "$RUN" ] || fail "no hs.run= on the kernel command line"
mkdir -p "$NEW$RUN" && mount -t 9p -o "rw,cache=none,$NINEP" hsrun "$NEW$RUN" ||
    fail "cannot mount the run directory $RUN"
if [ -f "$NEW$RUN/mounts" ]; then
    while read -r tag dir; do
        mkdir -p "$NEW$dir" && mount -t 9p -o "rw,cache=none,$NINEP" "$tag" "$NEW$dir" ||
            fail "cannot mount read-write dir $dir"
    done <"$NEW$RUN/mounts"
fi

ip link set lo up
i=0
while [ "$i" -lt "$VCAN" ]; do
    ip link add dev "vcan$i" type vcan || fail "cannot create vcan$i"
    ip link set "vcan$i" up || fail "cannot bring vcan$i up"
    i=$((i + 1))
done
hostname rtguest

# The command runner, in the overlay root because both modes use it: chrooted to from here, or
# started by the systemd unit below once the initramfs is gone. It writes "started", runs
# cmd.sh, writes "rc" and the console marker.
# The command writes into pipes (as under ctest); cat copies them to the consoles. hvc0/hvc1 stay
# open because the last close resets their termios, and they are raw because with output
# processing on every line becomes its own virtio message (very slow for big outputs).
cat >$NEW/hs-guest-cmd.sh <<'EOF'
RUN=$1
i=0
while [ ! -c /dev/hvc1 ] && [ "$i" -lt 100 ]; do
    sleep 0.05
    i=$((i + 1))
done
if [ ! -c /dev/hvc1 ]; then
    echo "hs-guest: error: virtio consoles did not appear" >/dev/ttyS0
    echo "@@HS-GUEST-RC=125@@" >/dev/ttyS0
    exit 0
fi
exec 5<>/dev/hvc0 6<>/dev/hvc1
stty raw -echo <&5
stty raw -echo <&6
rm -f /run/hs-out /run/hs-err
mkfifo /run/hs-out /run/hs-err
cat /run/hs-out >&5 &
pump_out=$!
cat /run/hs-err >&6 &
pump_err=$!
: >"$RUN/started"
/bin/bash "$RUN/cmd.sh" </dev/null >/run/hs-out 2>/run/hs-err
rc=$?
# A background process left by the command may still hold the pipes: give the pumps 3 s.
i=0
while { kill -0 $pump_out || kill -0 $pump_err; } 2>/dev/null && [ "$i" -lt 30 ]; do
    sleep 0.1
    i=$((i + 1))
done
kill $pump_out $pump_err 2>/dev/null
echo "$rc" >"$RUN/rc"
echo "@@HS-GUEST-RC=$rc@@" >/dev/ttyS0
sync
EOF

# hs.init=systemd: the host's own systemd becomes PID 1 of the overlay root and runs the command
# as a unit, so services can be tested under a real service manager. Only what the command's unit
# needs is started (default.target is replaced), and the host's fstab is ignored.
if [ "$INIT" = systemd ]; then
    [ -x $NEW/lib/systemd/systemd ] || fail "hs.init=systemd, but the host has no /lib/systemd/systemd"
    U=$NEW/etc/systemd/system
    mkdir -p $U
    cat >$U/hs-guest.target <<EOF
[Unit]
Description=hilsim test guest: the command
Requires=basic.target hs-guest-cmd.service
After=basic.target hs-guest-cmd.service
AllowIsolate=yes
EOF
    cat >$U/hs-guest-cmd.service <<EOF
[Unit]
Description=hilsim test guest command
After=basic.target
[Service]
Type=oneshot
TimeoutStartSec=infinity
ExecStart=/bin/sh /hs-guest-cmd.sh $RUN
StandardInput=null
StandardOutput=journal+console
SuccessAction=poweroff-force
FailureAction=poweroff-force
EOF
    ln -sf hs-guest.target $U/default.target
    # Units that would walk or write the host's tree through 9p (tmpfiles-setup cleans all of
    # /tmp and /var/tmp: minutes), or that make no sense in a throwaway guest. A test that
    # needs tmpfiles or sysusers runs them for its own files.
    for u in systemd-tmpfiles-setup.service systemd-tmpfiles-clean.timer \
        systemd-random-seed.service systemd-pstore.service systemd-timesyncd.service \
        systemd-firstboot.service systemd-machine-id-commit.service systemd-repart.service \
        systemd-binfmt.service proc-sys-fs-binfmt_misc.automount systemd-journal-flush.service \
        systemd-update-utmp.service systemd-sysusers.service ldconfig.service \
        systemd-hwdb-update.service systemd-modules-load.service systemd-journal-catalog-update.service \
        systemd-update-done.service; do
        ln -sf /dev/null "$U/$u"
    done
    : >$NEW/etc/fstab
    umount /proc /sys /dev 2>/dev/null
    exec switch_root $NEW /lib/systemd/systemd
fi

chroot $NEW /bin/sh /hs-guest-cmd.sh "$RUN"
umount "$NEW$RUN" 2>/dev/null
poweroff -f
sleep 10
