#!/usr/bin/env bash
# guest-l2cap.sh: the LE L2CAP channel (docs/continuation.md section 10.6) on real bluetoothd and
# the guest's kernel. Runs INSIDE the qemu guest that scripts/vm-rig/run-rig.sh boots;
# scripts/bench-l2cap.sh starts it (docs/e2e.md, "The L2CAP channel").
#
# BlueZ as in the e2e config private (Tests/e2e/rig-bluez.sh: btvirt controllers with extended
# advertising, bluetoothd with Privacy = device). O (hci0) advertises connectably, as handoffd does,
# and listens with handoff-l2cap-probe on a dynamic PSM; C (hci1) learns O's private address from
# bluetoothd's Device1 after a discovery and connects to the PSM with the probe. Checks:
#   transfer   O writes BYTES to C and C answers back 64 KiB, each checked byte for byte (RUNS times,
#              a fresh channel and LE link each time); also the MTUs each side got
#   refused    a connect to a PSM nobody listens on: which error, how fast
#   over-link  the same while bluetoothd holds an LE link from C to O (Device1.Connect, as handoffd
#              does before GATT), then right after that link was dropped (Device1.Disconnect)
# Prints "PASS name (figures)" or "FAIL name: reason" per check and exits 0 only when all passed.
# Every probe's RESULT line goes to $RIG_OUT/l2cap-results.jsonl (with "run" and "check" added),
# its stderr to l2cap-probe.log; BlueZ's logs as in guest-e2e.sh (bluetoothd.log, btmon.snoop).
#
# Usage: guest-l2cap.sh --bin DIR [--runs N] [--bytes N] [--quiet]
#   --bin DIR   where handoff-l2cap-probe is (the host's swift build --show-bin-path)
#   --runs N    transfers of BYTES (default 1)
#   --bytes N   bytes from O to C in each transfer (default 1048576)
#   --quiet     bluetoothd without -d and no btmon (for timing: scripts/bench-l2cap.sh)
#   --read-pause MS  C reads slowly in the transfers: MS milliseconds after every 4 SDUs (default 0),
#               so that O runs ahead of C and the kernel's receive queue and credits must hold it back
#   --receive-buffer N  C's socket receive buffer in the transfers (SO_RCVBUFFORCE; default 0: the kernel's)
set -u
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BIN=""; RUNS=1; BYTES=1048576; QUIET=0; READ_PAUSE=0; RCVBUF=0
while [ $# -gt 0 ]; do
    case "$1" in
        --bin) BIN=$2; shift 2 ;;
        --runs) RUNS=$2; shift 2 ;;
        --bytes) BYTES=$2; shift 2 ;;
        --quiet) QUIET=1; shift ;;
        --read-pause) READ_PAUSE=$2; shift 2 ;;
        --receive-buffer) RCVBUF=$2; shift 2 ;;
        *) echo "guest-l2cap: unknown argument $1" >&2; exit 2 ;;
    esac
done
PROBE=$BIN/handoff-l2cap-probe
[ -x "$PROBE" ] || { echo "guest-l2cap: no handoff-l2cap-probe in --bin '$BIN'" >&2; exit 2; }
LOGDIR=${RIG_OUT:?RIG_OUT is not set: run this through scripts/vm-rig/run-rig.sh}
W=/tmp/l2cap; PY=/usr/bin/python3; PRIVACY=1; EXT_ADV=1
COMPANY=0xFFFF; DATA=4c32636f63   # "L2coc"
mkdir -p "$W" "$LOGDIR"
RESULTS=$LOGDIR/l2cap-results.jsonl; : > "$RESULTS"; : > "$LOGDIR/results.txt"
PLOG=$LOGDIR/l2cap-probe.log

LOG_NAME=l2cap
# shellcheck source=guest-common.sh
. "$HERE/guest-common.sh"
pass() { echo "PASS $*" | tee -a "$LOGDIR/results.txt"; }
fail() { echo "FAIL $*" | tee -a "$LOGDIR/results.txt"; FAILED=$((FAILED + 1)); }
json() { jq -r "$2" <<<"$1"; }   # JSON FILTER

. "$HERE/rig-bluez.sh"
log "kernel $(uname -r); $RUNS transfer(s) of $BYTES B"
rig_bluez_up

bprop() { busctl --system get-property org.bluez "/org/bluez/$1" org.bluez.Adapter1 "$2" | cut -d'"' -f2; }
O_ADDR=$(bprop hci0 Address); O_TYPE=$(bprop hci0 AddressType)
C_ADDR=$(bprop hci1 Address); C_TYPE=$(bprop hci1 AddressType)
log "O = hci0 $O_ADDR ($O_TYPE), C = hci1 $C_ADDR ($C_TYPE)"
echo "kernel $(uname -r), bluetoothd $(/usr/libexec/bluetooth/bluetoothd -v), O $O_ADDR $O_TYPE, C $C_ADDR $C_TYPE" > "$LOGDIR/l2cap-setup.txt"
# BT_MODE is a socket option only with bluetooth.enable_ecred (Linux 5.11 and later); without it the
# probe's setsockopt(BT_MODE) fails with ENOPROTOOPT, which the library ignores (docs/e2e.md).
echo "bluetooth.enable_ecred = $(cat /sys/module/bluetooth/parameters/enable_ecred 2>/dev/null || echo absent)" >> "$LOGDIR/l2cap-setup.txt"

$PY "$HERE/l2cap-peer.py" advertise /org/bluez/hci0 $COMPANY $DATA "$W/adv-ready" >> "$PLOG" 2>&1 &
PIDS+=($!)
wait_until 60 test -e "$W/adv-ready" || { fail "setup: O's advertisement was not registered (l2cap-probe.log)"; exit 1; }
log "O advertises connectably"
FOUND=$($PY "$HERE/l2cap-peer.py" find /org/bluez/hci1 $COMPANY $DATA 60 2>>"$PLOG")
read -r PEER PEER_TYPE _ <<<"$FOUND"
[ -n "${PEER:-}" ] || { fail "setup: C did not discover O (l2cap-probe.log)"; exit 1; }
log "C knows O as $PEER ($PEER_TYPE) from Device1"
echo "O as C's bluetoothd knows it: $PEER $PEER_TYPE" >> "$LOGDIR/l2cap-setup.txt"

# listen: starts O's probe for one channel; its PSM into PSM, its output into $W/listen.out.
LISTEN_PID=""
listen() {
    rm -f "$W/psm"
    "$PROBE" listen --local "$O_ADDR" --local-type "$O_TYPE" --psm-file "$W/psm" > "$W/listen.out" 2>> "$PLOG" &
    LISTEN_PID=$!; PIDS+=($LISTEN_PID)
    wait_until 30 test -s "$W/psm" || return 1
    PSM=$(cat "$W/psm")
}
# record CHECK RUN LINE: the RESULT json with check and run added, into RESULTS; into REC.
record() {
    REC=$(jq -c --arg c "$1" --argjson r "$2" '. + {check: $c, run: $r}' <<<"${3#RESULT }") || REC='{}'
    echo "$REC" >> "$RESULTS"
}
# transfer CHECK RUN: one channel O -> C with BYTES and the answer back; 0 when all intact.
transfer() {
    local out rc lout
    listen || { WHY="O's listener did not start"; return 1; }
    out=$("$PROBE" connect --local "$C_ADDR" --local-type "$C_TYPE" "$PEER" "$PEER_TYPE" "$PSM" --bytes "$BYTES" --read-pause-ms "$READ_PAUSE" --receive-buffer "$RCVBUF" 2>> "$PLOG")
    rc=$?
    wait "$LISTEN_PID"; local lrc=$?
    lout=$(grep '^RESULT ' "$W/listen.out")
    [ -n "$lout" ] && record "$1-listen" "$2" "$lout"
    record "$1" "$2" "$(grep '^RESULT ' <<<"$out")"
    if [ $rc != 0 ] || [ $lrc != 0 ] || [ "$(json "$REC" .intact)" != true ] || [ "$(json "$REC" .answer_intact)" != true ]; then
        WHY="probe connect exit $rc, listen exit $lrc: $(json "$REC" '.error // "bytes not intact"')"
        return 1
    fi
    FIG="connect $(json "$REC" '.connect_s*1000|floor') ms, first byte $(json "$REC" '.first_byte_s*1000|floor') ms,"
    FIG="$FIG $(json "$REC" '.kbit_s|floor') kbit/s, MTU send $(json "$REC" .send_mtu) receive $(json "$REC" .recv_mtu)"
}

# ---- transfer (a) and MTUs (d)
ok=0
for run in $(seq "$RUNS"); do
    if transfer transfer "$run"; then
        ok=$((ok + 1)); log "transfer $run: $FIG"
    else
        fail "transfer run $run: $WHY"
    fi
done
slow=""; [ "$READ_PAUSE" != 0 ] && slow=", C pausing $READ_PAUSE ms every 4 SDUs"
[ "$RCVBUF" != 0 ] && slow="$slow, C's receive buffer $(json "$REC" .receive_buffer) B"
[ $ok = "$RUNS" ] && pass "transfer ($RUNS x $BYTES B O->C and 64 KiB back, intact$slow; last: $FIG; PSM $PSM)"

# ---- refused (c): a PSM nobody listens on (0x00f0: the kernel hands out 0x0080 upwards)
out=$("$PROBE" connect --local "$C_ADDR" --local-type "$C_TYPE" "$PEER" "$PEER_TYPE" 0x00f0 --bytes 1 2>> "$PLOG"); rc=$?
record refused 1 "$(grep '^RESULT ' <<<"$out")"
if [ $rc = 2 ] && [ "$(json "$REC" .errno)" = 111 ]; then
    pass "refused (errno 111 ECONNREFUSED after $(json "$REC" '.seconds*1000|floor') ms: $(json "$REC" .error))"
else
    fail "refused: probe exit $rc, $(json "$REC" '.error // "it connected"')"
fi

# ---- any-source (information, not a check): connecting from BDADDR_ANY instead of C's own address
out=$("$PROBE" connect --local 00:00:00:00:00:00 --local-type public "$PEER" "$PEER_TYPE" 0x00f0 --bytes 1 --timeout 10 2>> "$PLOG")
record any-source 1 "$(grep '^RESULT ' <<<"$out")"
echo "INFO any-source (connect from 00:00:00:00:00:00 to a PSM nobody listens on: $(json "$REC" '.error // "connected"'))" | tee -a "$LOGDIR/results.txt"

# ---- over-link (b): bluetoothd holds the LE link (Device1.Connect), then drops it
rm -f "$W/hold.in"; mkfifo "$W/hold.in"
$PY "$HERE/l2cap-peer.py" find /org/bluez/hci1 $COMPANY $DATA 60 hold < "$W/hold.in" > "$W/hold.out" 2>> "$PLOG" &
HOLD_PID=$!; PIDS+=($HOLD_PID)
exec {HOLD_FD}> "$W/hold.in"
if wait_until 90 grep -q '^connected' "$W/hold.out"; then
    read -r HELD_PEER HELD_TYPE _ < "$W/hold.out"
    log "bluetoothd connected C to O ($HELD_PEER): $(grep '^connected' "$W/hold.out"); links: $(hcitool -i hci1 con | tail -n +2 | tr '\n\t' '  ')"
    if [ "$HELD_PEER" != "$PEER" ]; then log "O's address changed: $PEER -> $HELD_PEER"; PEER=$HELD_PEER; PEER_TYPE=$HELD_TYPE; fi
    links_before=$(hcitool -i hci1 con | grep -c LE)
    if transfer over-link 1; then
        links_during=$(hcitool -i hci1 con | grep -c LE)
        pass "over-link (while bluetoothd's LE link is up: $FIG; LE links on hci1 before $links_before, after $links_during)"
    else
        fail "over-link: $WHY"
    fi
    echo >&"$HOLD_FD"
    wait_until 40 grep -q '^disconnected' "$W/hold.out" || log "bluetoothd did not report the disconnect"
    log "dropped: $(grep '^disconnected' "$W/hold.out")"
    if transfer after-drop 1; then
        pass "after-drop (right after Device1.Disconnect: $FIG)"
    else
        fail "after-drop: $WHY"
    fi
else
    fail "over-link: bluetoothd did not connect C to O (l2cap-probe.log)"
fi
exec {HOLD_FD}>&-

echo "SUMMARY $([ $FAILED = 0 ] && echo passed || echo "$FAILED failed")" | tee -a "$LOGDIR/results.txt"
[ $FAILED = 0 ]
