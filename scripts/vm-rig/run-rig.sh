#!/usr/bin/env bash
# run-rig.sh: run a script inside a throw-away qemu guest that boots Debian's own
# kernel (linux-image-amd64) with the host's root filesystem shared read-only.
#
# The guest sees the host's files at the same paths (9p, read-only), with tmpfs
# overlays on /etc /var /tmp /root and a tmpfs /run, so binaries built on the host
# run in the guest as they are. One host folder, RIG_OUT, is shared read-write for
# logs. There is no KVM here: qemu emulates the CPU (TCG), so everything in the
# guest runs several times slower than on the host.
#
# The end-to-end suite (make e2e, scripts/e2e.sh) uses it to run real bluetoothd
# with two virtual LE controllers (btvirt); see docs/e2e.md.
#
# Usage: run-rig.sh GUEST_SCRIPT [ARGS...]
#   GUEST_SCRIPT runs in the guest as root, as PID 1's child, with RIG_OUT exported;
#   its stdout and stderr arrive on our stdout (the serial console).
# Environment:
#   RIG_OUT       host folder shared read-write into the guest, at the same path
#                 (default: a new mktemp -d folder)
#   RIG_TIMEOUT   seconds before the VM is killed (default 900): exit 124
#   RIG_MEM       guest memory (default 2G)
#   RIG_CPUS      guest vCPUs (default 2)
#   RIG_KVM=1     use KVM when /dev/kvm is writable (default: TCG only)
# Exit status: the guest script's; 124 on timeout; 125 when the rig itself failed
# (missing packages, no kernel, the guest did not boot or died without a status).
#
# Needs root (the kernel image in /boot is readable by root only) and the Debian
# packages in RIG_PACKAGES below (make e2e installs them through scripts/deps.sh).
set -u
RIG_TIMEOUT=${RIG_TIMEOUT:-900}
RIG_MEM=${RIG_MEM:-2G}
RIG_CPUS=${RIG_CPUS:-2}
RIG_PACKAGES="qemu-system-x86 linux-image-amd64 busybox-static cpio kmod"
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN{printf "%.1f", b-a}'; }
say() { echo "[rig] $*" >&2; }
die() { say "$*"; exit 125; }

[ $# -ge 1 ] || { echo "usage: $0 GUEST_SCRIPT [ARGS...]" >&2; exit 125; }
GUEST_SCRIPT=$(readlink -f "$1"); shift
[ -r "$GUEST_SCRIPT" ] || die "guest script $GUEST_SCRIPT is not readable"
[ "$(id -u)" = 0 ] || die "must run as root (the kernel image in /boot is readable by root only)"
T_ALL=$(now)

missing=""
for p in $RIG_PACKAGES; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing="$missing $p"
done
[ -z "$missing" ] || die "missing Debian packages:$missing (install them: scripts/deps.sh$missing)"
command -v qemu-system-x86_64 >/dev/null || die "qemu-system-x86_64 is not on PATH"

# The newest installed distribution kernel whose modules include hci_vhci (btvirt's driver).
KVER=""
for m in $(ls -1d /lib/modules/*/kernel/drivers/bluetooth/hci_vhci.ko* 2>/dev/null | sort -V); do
    v=${m#/lib/modules/}; v=${v%%/*}
    [ -r "/boot/vmlinuz-$v" ] && KVER=$v
done
[ -n "$KVER" ] || die "no /boot/vmlinuz-* with a matching hci_vhci module (install linux-image-amd64)"
KERNEL=/boot/vmlinuz-$KVER

if [ -z "${RIG_OUT:-}" ]; then RIG_OUT=$(mktemp -d /tmp/rig-out.XXXXXX); fi
mkdir -p "$RIG_OUT" || die "cannot create RIG_OUT $RIG_OUT"
RIG_OUT=$(readlink -f "$RIG_OUT")
GCMD="export RIG_OUT=$(printf %q "$RIG_OUT"); exec bash $(printf %q "$GUEST_SCRIPT")"
for a in "$@"; do GCMD="$GCMD $(printf %q "$a")"; done
say "kernel $KERNEL, qemu $(qemu-system-x86_64 --version | head -1 | awk '{print $4}'), out $RIG_OUT"

# Everything started from here ends with this script.
VM_PID=""
WORK=""
cleanup() {
    if [ -n "$VM_PID" ] && kill -0 "$VM_PID" 2>/dev/null; then
        kill -TERM -- "-$VM_PID" 2>/dev/null   # timeout's process group: timeout and qemu
        for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 "$VM_PID" 2>/dev/null || break; sleep 0.5; done
        kill -KILL -- "-$VM_PID" 2>/dev/null
    fi
    [ -z "$WORK" ] || rm -rf "$WORK"
}
trap 'cleanup; exit 130' INT TERM HUP
trap cleanup EXIT
WORK=$(mktemp -d /tmp/rig-work.XXXXXX) || die "mktemp failed"

# The initramfs: busybox, and the modules for 9p and overlayfs. /init mounts the host's /
# read-only over 9p, puts tmpfs-backed overlays on the directories programs write to,
# mounts RIG_OUT read-write at its own path and switches root to run the guest script.
INITRD="$WORK/initrd-$KVER.cpio.gz"
IR="$WORK/initramfs"
mkdir -p "$IR"/{bin,dev,proc,sys,newroot,mods}
cp /bin/busybox "$IR/bin/busybox" || die "no /bin/busybox (install busybox-static)"
for a in sh mount mkdir insmod switch_root cat sed echo; do ln -s busybox "$IR/bin/$a"; done
: > "$IR/mods/order"
for m in virtio_pci 9pnet_virtio 9p overlay; do
    modprobe -S "$KVER" --show-depends "$m" | awk '$1=="insmod"{print $2}'
done | awk '!seen[$0]++' | while read -r ko; do
    cp "$ko" "$IR/mods/"; echo "/mods/$(basename "$ko")" >> "$IR/mods/order"
done
# cache=loose on the read-only root: the guest keeps what it read in its page cache.
# Without it every exec of handoffctl or python3 reads its files through 9p again,
# which under TCG costs seconds. The host's files must not change during a run
# (make e2e builds before it boots the guest).
cat > "$IR/init" <<'INITEOF'
#!/bin/sh
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev
for m in $(cat /mods/order); do insmod "$m" || echo "rig-initramfs: insmod $m failed"; done
OUT=$(sed -n 's/.*rig\.out=\([^ ]*\).*/\1/p' /proc/cmdline)
mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=512000,cache=loose rootfs /newroot || { echo "rig-initramfs: 9p root mount failed"; sh; }
mount -t tmpfs -o mode=755 run /newroot/run
for d in etc var tmp root; do
  mkdir -p /newroot/run/ovl/$d/u /newroot/run/ovl/$d/w
  mount -t overlay -o lowerdir=/newroot/$d,upperdir=/newroot/run/ovl/$d/u,workdir=/newroot/run/ovl/$d/w ovl-$d /newroot/$d
done
mkdir -p "/newroot$OUT"
mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000 rigout "/newroot$OUT"
mount --move /proc /newroot/proc; mount --move /sys /newroot/sys; mount --move /dev /newroot/dev
exec switch_root /newroot /bin/bash "$OUT/.rig-init.sh"
INITEOF
chmod +x "$IR/init"
( cd "$IR" && find . | cpio -o -H newc --quiet | gzip -1 ) > "$INITRD" || { rm -rf "$WORK"; die "building the initramfs failed"; }

# PID 1 after switch_root: a minimal environment, the guest script, its status into
# RIG_OUT/.rig-rc, then power off.
cat > "$RIG_OUT/.rig-init.sh" <<INITEOF
#!/bin/bash
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root TERM=dumb LANG=C.UTF-8
mkdir -p /dev/pts /dev/shm; mount -t devpts devpts /dev/pts; mount -t tmpfs tmpfs /dev/shm
ln -sf /proc/self/fd /dev/fd 2>/dev/null
hostname rig
stty -F /dev/console -onlcr 2>/dev/null
cd /
( $GCMD ) < /dev/null > /dev/console 2>&1
echo \$? > $(printf %q "$RIG_OUT")/.rig-rc
sync
/bin/busybox poweroff -f 2>/dev/null || echo o > /proc/sysrq-trigger
sleep 10
INITEOF
rm -f "$RIG_OUT/.rig-rc"


ACCEL="-accel tcg,thread=multi"
[ "${RIG_KVM:-0}" = 1 ] && [ -w /dev/kvm ] && ACCEL="-accel kvm -accel tcg"
T=$(now)
# GNU timeout runs qemu in a process group of its own and signals all of it on expiry.
# qemu's output goes through a pipe (the cat): with stdout redirected to a regular file
# qemu's re-opened descriptors would clobber each other.
timeout -k 15 "$RIG_TIMEOUT" qemu-system-x86_64 -nodefaults -no-user-config -machine pc $ACCEL \
    -cpu max -smp "$RIG_CPUS" -m "$RIG_MEM" -display none -no-reboot -monitor none \
    -serial stdio -kernel "$KERNEL" -initrd "$INITRD" \
    -append "console=ttyS0 quiet loglevel=0 panic=-1 rig.out=$RIG_OUT" \
    -fsdev local,id=fsroot,path=/,security_model=none,readonly=on,multidevs=remap \
    -device virtio-9p-pci,fsdev=fsroot,mount_tag=rootfs \
    -fsdev local,id=fsout,path="$RIG_OUT",security_model=none \
    -device virtio-9p-pci,fsdev=fsout,mount_tag=rigout \
    < /dev/null > >(cat) &
VM_PID=$!
wait "$VM_PID"; RC=$?
VM_PID=""
[ $RC = 137 ] && RC=124   # timeout had to SIGKILL
if [ $RC = 124 ]; then
    say "TIMEOUT: the guest ran longer than RIG_TIMEOUT=${RIG_TIMEOUT}s and was killed"
elif [ -r "$RIG_OUT/.rig-rc" ]; then
    RC=$(cat "$RIG_OUT/.rig-rc")
else
    say "the guest stopped without an exit status: it did not boot, or crashed (qemu exit $RC)"
    RC=125
fi
say "TIMING guest: $(elapsed "$T")s, total $(elapsed "$T_ALL")s; guest rc=$RC; logs in $RIG_OUT"
exit $RC
