#!/bin/bash
# guest-advmon-probe.sh - runs INSIDE the qemu guest started by run-rig.sh:
#   RIG_OUT=DIR scripts/vm-rig/run-rig.sh scripts/vm-rig/guest-advmon-probe.sh
# Starts a system dbus-daemon and btvirt (two LE controllers), then bluetoothd twice, without and with -E,
# and prints (lines starting PROBE) the interfaces on /org/bluez/hci0 and what
# org.bluez.AdvertisementMonitorManager1 offers (docs/e2e.md, "AdvertisementMonitor").
# Setup adapted from shared/vm-rig/guest-demo.sh. Logs go to $RIG_OUT. Exits 0 once both probes ran.
set -u

LOGDIR=${RIG_OUT:-${TMPDIR:-/tmp}/vm-rig-guest-logs}
mkdir -p "$LOGDIR"
PIDS=()
cleanup() {
  local i
  for (( i=${#PIDS[@]}-1; i>=0; i-- )); do kill "${PIDS[$i]}" 2>/dev/null; done
  sleep 0.3
  for (( i=${#PIDS[@]}-1; i>=0; i-- )); do kill -9 "${PIDS[$i]}" 2>/dev/null; done
}
trap cleanup EXIT
up() { cut -d' ' -f1 /proc/uptime; }
log() { echo "[guest $(up)s] $*"; }

log "kernel $(uname -r), guest script start"
modprobe -a bluetooth hci_vhci || { log "FAIL: modprobe"; exit 10; }
[ -c /dev/vhci ] || { log "FAIL: no /dev/vhci"; exit 11; }

# --- system D-Bus ---------------------------------------------------------
mkdir -p /run/dbus
rm -f /run/dbus/system_bus_socket /run/dbus/pid
dbus-daemon --system --nofork --nopidfile >"$LOGDIR/dbus.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 100); do [ -S /run/dbus/system_bus_socket ] && break; sleep 0.1; done
[ -S /run/dbus/system_bus_socket ] || { log "FAIL: dbus-daemon socket"; exit 12; }
log "dbus-daemon up (pid ${PIDS[-1]})"

# --- two virtual LE controllers -------------------------------------------
# -l2: two local controllers on /dev/vhci; -L: LE-only. Both live in the same
# btvirt process, so they see each other's advertising and can connect.
# btvirt creates controller #0, then (in btdev_create) binds AF_ALG sockets for ecb(aes)
# and cmac(aes) before it creates #1 and starts serving either. In a fresh guest those
# binds autoload af_alg/algif_*/ecb/cmac and instantiate the crypto templates, each lookup
# also running modprobe over 9p under TCG: ~6 s (still ~2.5 s with the modules preloaded),
# during which hci0's first HCI_Reset times out ("hci0: Opcode 0x0c03 failed: -110") and
# hci0 stays dead at 00:00:00:00:00:00. So: preload the modules, instantiate both
# algorithms once with a throw-away AF_ALG bind, and keep a detect-and-restart safety net.
# Readiness is read with hciconfig (ioctl): btmgmt/bluetoothctl print nothing when their
# stdin is at EOF (e.g. </dev/null in CI) because they exit before the reply arrives.
modprobe -a af_alg algif_hash algif_skcipher ecb cmac || log "WARN: crypto modules preload failed"
/usr/bin/python3 -c '
import socket
for t, n in (("skcipher", "ecb(aes)"), ("hash", "cmac(aes)")):
    s = socket.socket(socket.AF_ALG, socket.SOCK_SEQPACKET, 0); s.bind((t, n)); s.close()
' || log "WARN: AF_ALG warm-up failed"
log "crypto warm-up done"
ctrl_ok() { # all of hci0 hci1 exist with a non-zero BD address
  local h a
  for h in hci0 hci1; do
    a=$(hciconfig $h 2>/dev/null | awk '/BD Address/{print $3}')
    [ -n "$a" ] && [ "$a" != 00:00:00:00:00:00 ] || return 1
  done
}
BTVIRT_PID=""
for try in 1 2 3 4 5; do
  nfail0=$(dmesg | grep -c 'Opcode 0x0c03 failed')
  btvirt -L -l2 >>"$LOGDIR/btvirt.log" 2>&1 &
  BTVIRT_PID=$!
  ok=0; end=$(( $(date +%s) + 20 ))
  while [ "$(date +%s)" -lt $end ]; do
    ctrl_ok && { ok=1; break; }
    kill -0 $BTVIRT_PID 2>/dev/null || break
    [ "$(dmesg | grep -c 'Opcode 0x0c03 failed')" != "$nfail0" ] && break
    sleep 0.2
  done
  [ $ok = 1 ] && break
  log "btvirt try $try: controllers not ready ($(hciconfig | awk '/BD Address/{print $3}' | tr '\n' ' ')), $(dmesg | grep -c 'Opcode 0x0c03 failed') reset timeouts so far; restarting btvirt"
  kill $BTVIRT_PID 2>/dev/null; wait $BTVIRT_PID 2>/dev/null
  for _ in $(seq 50); do [ -z "$(ls /sys/class/bluetooth 2>/dev/null)" ] && break; sleep 0.1; done
done
PIDS+=($BTVIRT_PID)
[ $ok = 1 ] || { log "FAIL: btvirt did not bring up 2 working controllers"; dmesg | grep -i -E 'bluetooth|hci' | tail; exit 13; }
log "btvirt up (try $try): $(hciconfig | awk '/^hci/{n=$1} /BD Address/{printf "%s%s ", n, $3}')"

btmon -w "$LOGDIR/btmon.snoop" >/dev/null 2>&1 &
PIDS+=($!)

BTD=/usr/libexec/bluetooth/bluetoothd
probe() {
  local exp=$1
  $BTD -n -d $exp >>"$LOGDIR/bluetoothd$exp.log" 2>&1 &
  local pid=$!
  for _ in $(seq 100); do busctl --system introspect org.bluez /org/bluez/hci0 >/dev/null 2>&1 && break; sleep 0.1; done
  sleep 1
  echo "PROBE bluetoothd ${exp:-without -E}: interfaces on /org/bluez/hci0:"
  busctl --system introspect org.bluez /org/bluez/hci0 2>&1 | awk '$2=="interface"{print "PROBE   " $1}'
  echo "PROBE AdvertisementMonitorManager1 properties:"
  busctl --system introspect org.bluez /org/bluez/hci0 org.bluez.AdvertisementMonitorManager1 2>&1 | sed 's/^/PROBE   /'
  busctl --system get-property org.bluez /org/bluez/hci0 org.bluez.AdvertisementMonitorManager1 SupportedMonitorTypes 2>&1 | sed 's/^/PROBE   SupportedMonitorTypes: /'
  busctl --system get-property org.bluez /org/bluez/hci0 org.bluez.AdvertisementMonitorManager1 SupportedFeatures 2>&1 | sed 's/^/PROBE   SupportedFeatures: /'
  grep -i "monitor\|experimental" "$LOGDIR/bluetoothd$exp.log" | head -8 | sed 's/^/PROBE   log: /'
  kill $pid; wait $pid 2>/dev/null
  sleep 1
}
probe ""
probe "-E"
echo "PROBE bluetoothd version: $($BTD --version)"
exit 0
