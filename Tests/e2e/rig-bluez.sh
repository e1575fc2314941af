# rig-bluez.sh: real BlueZ in the VM rig's guest, shared by the guest scripts (guest-e2e.sh,
# guest-l2cap.sh; docs/e2e.md). Sourced, not run: it only defines rig_bluez_up.
#
# rig_bluez_up brings up a system dbus-daemon, btvirt with four virtual LE controllers hci0 to
# hci3 that hear each other, btmon (unless QUIET=1) and bluetoothd (with -d unless QUIET=1), and
# returns when bluetoothd shows the four adapters; it exits the script with status 10 when BlueZ
# does not come up. It reads LOGDIR (logs), W (a work folder), PY (Debian's python3), EXT_ADV (1:
# controllers with extended advertising, else btvirt -L), QUIET, PRIVACY (1: bluetoothd with
# Privacy = device from $W/main.conf), and uses the caller's PIDS array (every background process,
# which the caller stops), log, wait_until and nap. It sets BTVIRT_PID, BTD_PID, BTD_CONF and
# BTD_ARGS, and defines start_bluetoothd and bluez_ready.
#
# rig_bluez_privacy_on (after rig_bluez_up) turns LE privacy on in the running rig: bluetoothd again
# with Privacy = device, on the same controllers (guest-e2e.sh's legacy-privacy scenario, in config
# legacy after the scenarios that run with privacy off). rig_bluez_experimental_on starts it again
# with -E (the monitor scenario).

# rig_bluez_conf: bluetoothd's configuration for PRIVACY: Debian's, or with PRIVACY=1 one of our own
# (the daemons are told: their handoffd.toml names BTD_CONF). Sets BTD_CONF and BTD_ARGS.
# Ours also turns EATT off ([GATT] Channels = 1): the guest's kernel 6.1 matches an L2CAP response
# to a channel by its signalling identifier alone, so when A's and B's bluetoothd open EATT channels
# to each other at the same moment (both number their requests from 1), B's kernel gives the
# answer to its own request to the channel A opened, and the two kernels' tables of B's channel
# numbers part: A then refuses every later channel B opens from that number with "source CID
# already allocated" (result 10), which failed B's stream connect in 2 of 3 streams runs on
# 2026-11-25 (e2e-logs/20261125-121749 and -122129: L2CAP signalling read from btmon.snoop). Later
# kernels track their own outstanding identifiers; docs/continuation.md 10.6 "The channel" tells users.
# And it keeps temporary devices 120 s instead of 30 ([General] TemporaryTimeout): bluetoothd 5.66
# removes a device with a private address, and the link to it, TemporaryTimeout after the link that
# Device1.Connect made came up (or after the device's last advertisement, if later), even while
# connected; that cut the streams scenario's 2 MB exchange, about 30 s after B connected, in 5 of 7
# runs on 2026-11-28/29 (2 of 15 the day before), whenever the rig's throughput fell below about
# 560 kbit/s. docs/continuation.md 10.6
# "BlueZ before 5.73 and long streams" tells users the same setting.
rig_bluez_conf() {
    BTD_CONF=/etc/bluetooth/main.conf; BTD_ARGS=()
    if [ $PRIVACY = 1 ]; then
        BTD_CONF=$W/main.conf
        printf '[General]\nPrivacy = device\nTemporaryTimeout = 120\n\n[GATT]\nChannels = 1\n' > "$BTD_CONF"
        BTD_ARGS=(-f "$BTD_CONF")
    fi
}

rig_bluez_up() {
    modprobe -a bluetooth hci_vhci || { echo "FAIL setup: modprobe bluetooth hci_vhci"; exit 10; }
    [ -c /dev/vhci ] || { echo "FAIL setup: no /dev/vhci"; exit 10; }

    mkdir -p /run/dbus
    rm -f /run/dbus/system_bus_socket /run/dbus/pid
    dbus-daemon --system --nofork --nopidfile > "$LOGDIR/dbus.log" 2>&1 &
    PIDS+=($!)
    wait_until 30 test -S /run/dbus/system_bus_socket || { echo "FAIL setup: the system dbus-daemon did not start"; exit 10; }
    log "dbus-daemon up"

    # btvirt creates a controller, then binds AF_ALG sockets for ecb(aes) and cmac(aes) before
    # it creates the next and serves any. In a fresh guest those binds load modules and
    # instantiate crypto templates (seconds under TCG), during which hci0's first HCI_Reset
    # times out and hci0 stays dead at 00:00:00:00:00:00. So: load the modules, instantiate
    # both algorithms once, and still restart btvirt when a controller did not come up.
    # hciconfig reads the addresses: btmgmt and bluetoothctl print nothing with stdin at EOF.
    modprobe -a af_alg algif_hash algif_skcipher ecb cmac || log "warning: crypto modules did not load"
    $PY -c '
import socket
for kind, name in (("skcipher", "ecb(aes)"), ("hash", "cmac(aes)")):
    s = socket.socket(socket.AF_ALG, socket.SOCK_SEQPACKET, 0); s.bind((kind, name)); s.close()
' || log "warning: AF_ALG warm-up failed"
    controllers_up() {
        local h a
        for h in hci0 hci1 hci2 hci3; do
            a=$(hciconfig $h 2>/dev/null | awk '/BD Address/{print $3}')
            [ -n "$a" ] && [ "$a" != 00:00:00:00:00:00 ] || return 1
        done
    }
    reset_timeouts() { dmesg | grep -c 'Opcode 0x0c03 failed'; }
    btvirt_settled() { controllers_up || ! kill -0 $BTVIRT_PID 2>/dev/null || [ "$(reset_timeouts)" != "$before" ]; }
    BTVIRT_PID=""; ok=0
    for try in 1 2 3 4 5; do
        before=$(reset_timeouts)
        # Four LE controllers in one process, so they hear each other (hci3 is the stranger's,
        # scenario continue). A advertises on
        # hci0, B listens on hci1, C (another account) advertises on hci2. (A legacy controller
        # cannot start a non-connectable advertisement while it scans, so two daemons on one
        # controller would keep each other's advertisements off the air.)
        if [ $EXT_ADV = 1 ]; then btvirt -l4 >> "$LOGDIR/btvirt.log" 2>&1 &
        else btvirt -L -l4 >> "$LOGDIR/btvirt.log" 2>&1 &
        fi
        BTVIRT_PID=$!
        wait_until 60 btvirt_settled
        controllers_up && { ok=1; break; }
        log "btvirt try $try: the controllers did not come up; restarting it"
        kill $BTVIRT_PID 2>/dev/null; wait $BTVIRT_PID 2>/dev/null
        for _ in $(seq 50); do [ -z "$(ls /sys/class/bluetooth 2>/dev/null)" ] && break; nap 0.1; done
    done
    PIDS+=($BTVIRT_PID)
    [ $ok = 1 ] || { echo "FAIL setup: btvirt did not bring up hci0, hci1 and hci2"; dmesg | grep -i -E 'bluetooth|hci' | tail; exit 10; }
    log "btvirt up: $(hciconfig | awk '/^hci/{n=$1} /BD Address/{printf "%s%s ", n, $3}')"

    if [ $QUIET = 0 ]; then
        btmon -w "$LOGDIR/btmon.snoop" > /dev/null 2>&1 &
        PIDS+=($!)
    fi

    BTD_PID=""
    BTD_DEBUG=-d; [ $QUIET = 1 ] && BTD_DEBUG=""
    # bluetoothd's configuration: Debian's, or with --privacy one of our own (the daemons are told).
    rig_bluez_conf
    start_bluetoothd() {
        /usr/libexec/bluetooth/bluetoothd -n $BTD_DEBUG "${BTD_ARGS[@]}" >> "$LOGDIR/bluetoothd.log" 2>&1 &
        BTD_PID=$!
        PIDS+=($BTD_PID)
    }
    # The four adapters are on the bus with their LEAdvertisingManager1.
    bluez_ready() {
        [ "$(busctl --system call org.bluez / org.freedesktop.DBus.ObjectManager GetManagedObjects 2>/dev/null |
            grep -o 'org.bluez.LEAdvertisingManager1' | wc -l)" -ge 4 ]
    }
    start_bluetoothd
    wait_until 90 bluez_ready || { echo "FAIL setup: bluetoothd did not show four adapters"; exit 10; }
    log "bluetoothd up (pid $BTD_PID)"
    # What bluetoothd says hci0 can do (SupportedSecondaryChannels exists only with extended advertising).
    busctl --system introspect org.bluez /org/bluez/hci0 org.bluez.LEAdvertisingManager1 > "$LOGDIR/adv-manager.txt" 2>&1
}

# rig_bluez_privacy_on: LE privacy on, as config legacy-private has it from the boot. Stops bluetoothd
# (SIGTERM), makes sure every controller is powered off, writes PRIVACY=1's main.conf and starts
# bluetoothd again with it; btvirt, btmon and the system bus keep running. The kernel takes
# bluetoothd's Set Privacy only from a powered-off controller (from a powered one it answers
# Rejected and privacy stays off): bluetoothd powers its adapters off when it stops on SIGTERM, and
# hciconfig powers off any it left on. Stop the clients of bluetoothd that would power an adapter on
# (handoffd with power_on) first, and start them again after, with the new BTD_CONF. Returns 0 when
# bluetoothd shows the four adapters again, else 1 with the reason in RIG_ERROR. Does nothing when
# PRIVACY is 1 already.
rig_bluez_privacy_on() {
    RIG_ERROR=""
    [ $PRIVACY = 1 ] && return 0
    rig_bluez_stop || return 1
    PRIVACY=1
    rig_bluez_conf
    start_bluetoothd
    wait_until 90 bluez_ready || { RIG_ERROR="bluetoothd with Privacy = device did not show four adapters"; return 1; }
    log "bluetoothd up again with Privacy = device (pid $BTD_PID, -f $BTD_CONF)"
}

# rig_bluez_experimental_on (after rig_bluez_up) starts bluetoothd again with -E, its experimental
# interfaces (AdvertisementMonitorManager1 with or_patterns, in 5.66), on the same controllers and
# configuration (guest-e2e.sh's monitor scenario). Sets RIG_ERROR and returns 1 when it cannot.
rig_bluez_experimental_on() {
    RIG_ERROR=""
    rig_bluez_stop || return 1
    rig_bluez_conf
    BTD_ARGS+=(-E)
    start_bluetoothd
    wait_until 90 bluez_ready || { RIG_ERROR="bluetoothd -E did not show four adapters"; return 1; }
    log "bluetoothd up again with -E (pid $BTD_PID, ${BTD_ARGS[*]})"
}

# rig_bluez_stop: bluetoothd stops (SIGTERM), and every controller ends powered off (bluetoothd's
# Set Privacy is taken only from a powered-off controller).
rig_bluez_stop() {
    local h up
    kill -TERM $BTD_PID 2>/dev/null; wait $BTD_PID 2>/dev/null
    powered_off() {
        for h in hci0 hci1 hci2 hci3; do hciconfig $h 2>/dev/null | grep -q -E '^[[:space:]]+UP' && return 1; done
        return 0
    }
    if ! wait_until 10 powered_off; then
        up=""
        for h in hci0 hci1 hci2 hci3; do
            hciconfig $h 2>/dev/null | grep -q -E '^[[:space:]]+UP' && { up+=" $h"; hciconfig $h down; }
        done
        log "bluetoothd stopped, but left$up powered: powered off with hciconfig"
        wait_until 10 powered_off || { RIG_ERROR="the controllers stayed powered after bluetoothd stopped: $(hciconfig | tr '\n' ' ')"; return 1; }
    fi
}
