#!/usr/bin/env bash
# make bench: measures the DBus module against python3-dbus on a private bus,
# counts an idle connection's wakeups, measures the BlueZ layer's scanner and the
# whole handoffd (built as `make install` builds it) against a bare libdbus client
# on the simulator's flood, counts the desktop agent's idle wakeups and its memory,
# runs BeaconBench, and writes every figure to docs/BENCHMARKS.md.
#
# Environment (all optional):
#   BENCH_SECONDS       length of each throughput run (default 2.5)
#   BENCH_ROUNDS        runs of each throughput scenario; the best is kept (default 2)
#   BENCH_IDLE_SECONDS  length of each idle measurement (default 5)
#   BENCH_SCAN_SECONDS  length of each paced scanner run, at 1k/s and 5k/s (default 10)
#   BENCH_SCAN_MAX_REPORTS  reports in the unpaced scanner run (default 100000)
#   BENCH_SCAN_DEVICES  devices the flood cycles through (default 100)
#   BENCH_SCAN_ROUNDS   runs of each scanner scenario, each its own row; the result is their
#                       median (default 5)
#   BENCH_DAEMON_SECONDS  length of each paced whole-daemon run, at 1k/s and 5k/s (default 10)
#   BENCH_DAEMON_MAX_REPORTS  reports in the unpaced whole-daemon run (default 100000)
#   BENCH_DAEMON_DEVICES  devices the whole-daemon flood cycles through (default 1000)
#   BENCH_DAEMON_ROUNDS   rounds of the whole-daemon runs (default 5); the result is their median
#   BENCH_DAEMON_RATES    rates of the whole-daemon runs, 0 for unpaced (default "1000 5000 0")
#   BENCH_DAEMON_MEMORY_DEVICES  device counts of the memory runs (default "1000 10000")
#   BENCH_AGENT_SECONDS each window of the agent section, idle and with a notification (default 60)
#   BENCH_AGENT_STRACE_SECONDS  how long strace watches the idle agent (default 20)
#   BENCH_SECTIONS      which sections to run and write (default "dbus idle scan daemon agent beacon")
#   BENCH_OUT           where to write (default docs/BENCHMARKS.md)
#   SWIFT, SWIFT_FLAGS  as in the Makefile (e.g. SWIFT_FLAGS="--scratch-path .build-x")
#   BENCH_BEACON_FLAGS  extra flags for BeaconBench's release build only (default
#                       "-Xswiftc -cross-module-optimization", as `make install` builds handoffd:
#                       it specialises swift-crypto's generic entry points into HandoffCore;
#                       BENCH_BEACON_FLAGS= measures a plain -c release build)
#
#   INSTALL_BUILD_FLAGS how handoffd (and what the daemon section runs with it) is built, as the
#                       Makefile's `make install` builds it
#
# Every process it starts is killed by PID on exit.
set -euo pipefail
cd "$(dirname "$0")/.."

SWIFT=${SWIFT:-swift}
read -r -a swift_flags <<<"${SWIFT_FLAGS:-}"
BENCH_BEACON_FLAGS=${BENCH_BEACON_FLAGS--Xswiftc -cross-module-optimization}
read -r -a beacon_flags <<<"$BENCH_BEACON_FLAGS"
run_seconds=${BENCH_SECONDS:-2.5}
rounds=${BENCH_ROUNDS:-2}
idle_seconds=${BENCH_IDLE_SECONDS:-5}
scan_seconds=${BENCH_SCAN_SECONDS:-10}
scan_max_reports=${BENCH_SCAN_MAX_REPORTS:-100000}
scan_devices=${BENCH_SCAN_DEVICES:-100}
scan_rounds=${BENCH_SCAN_ROUNDS:-5}
sections=" ${BENCH_SECTIONS:-dbus idle scan daemon agent beacon} "
INSTALL_BUILD_FLAGS=${INSTALL_BUILD_FLAGS:--c release --static-swift-stdlib -Xswiftc -cross-module-optimization --disable-local-rpath -Xlinker --no-export-dynamic}
read -r -a install_flags <<<"$INSTALL_BUILD_FLAGS"
out=${BENCH_OUT:-docs/BENCHMARKS.md}
python=/usr/bin/python3
peer=Tests/DBusTests/Peers/peer.py

work=$(mktemp -d /tmp/handoff-bench-XXXXXX)
# Every process is started in its own session (setsid), so that it and whatever it
# starts (DBusBench spawns servers and clients) form one process group, killed here.
groups=()
cleanup() {
    local pgid
    for pgid in "${groups[@]}"; do
        kill -KILL -- "-$pgid" 2>/dev/null || true
    done
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

say() { echo "bench: $*" >&2; }
# wants SECTION: true when SECTION is to be run.
wants() { [[ "$sections" == *" $1 "* ]]; }

# start OUT ERR CMD…: runs CMD in the background as a new process group; sets $started_pid.
start() {
    local out=$1 err=$2
    shift 2
    setsid "$@" >"$out" 2>"$err" &
    started_pid=$!
    groups+=("$started_pid")
}

# --- Build -----------------------------------------------------------------------
say "building what the sections need (release)"
# Only what the chosen sections run.
products=()
if wants dbus || wants idle; then products+=(DBusBench); fi
if wants scan; then products+=(ScanBench handoff-sim-bluez); fi
for product in "${products[@]}"; do
    "$SWIFT" build -c release "${swift_flags[@]}" --product "$product" >&2
done
if wants beacon && ! wants daemon; then
    "$SWIFT" build -c release "${swift_flags[@]}" "${beacon_flags[@]}" --product BeaconBench >&2
fi
# The whole daemon as `make install` builds it, and what runs beside it built the same way
# (BeaconBench writes the own beacons; with cross-module optimisation, as the beacon section
# measures it by default). Last, so that the plain release builds above do not replace them.
install_products=()
if wants daemon; then install_products+=(handoffd handoff-sim-bluez BeaconBench); fi
# The desktop agent as installed, with a handoffd and handoffctl on the simulator.
if wants agent; then install_products+=(handoff-agent handoffctl handoffd handoff-sim-bluez); fi
# The agent's floor (DBusBench idle's baseline), built the same way unless built above.
if wants agent && ! wants dbus && ! wants idle; then install_products+=(DBusBench); fi
for product in $(printf '%s\n' "${install_products[@]}" | awk '!seen[$0]++'); do
    "$SWIFT" build "${install_flags[@]}" "${swift_flags[@]}" --product "$product" >&2
done
bin=$("$SWIFT" build -c release "${swift_flags[@]}" --show-bin-path)
# BeaconBench prints how it was built.
export BEACON_BENCH_BUILD="swift build -c release${BENCH_BEACON_FLAGS:+ $BENCH_BEACON_FLAGS}"
# The scanner's floor: a bare libdbus client in C.
# shellcheck disable=SC2046 # pkg-config's flags are words
cc -O2 -o "$work/scan-floor" scripts/bench/scan-floor.c $(pkg-config --cflags --libs dbus-1)

# --- Header facts (taken before anything runs) -------------------------------------
started=$(date -u '+%Y-%m-%d %H:%M UTC')
cpus=$(nproc)
cpu_model=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
kernel=$(uname -sr)
swift_version=$("$SWIFT" --version 2>/dev/null | head -1)
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
daemon_version=$(dbus-daemon --version | head -1)
libdbus_version=$(pkg-config --modversion dbus-1)
cc_version=$(cc --version | head -1)
python_dbus=$("$python" -c 'import dbus, sys; print("python3-dbus %s, Python %s" % (dbus.__version__, sys.version.split()[0]))')

# --- A private bus -------------------------------------------------------------------
cat >"$work/bus.conf" <<EOF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path=$work/bus</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
    <allow user="*"/>
  </policy>
  <limit name="max_replies_per_connection">50000</limit>
</busconfig>
EOF
start "$work/address" "$work/bus.log" \
    dbus-daemon --config-file="$work/bus.conf" --nofork --nopidfile --nosyslog --print-address=1
bus_pid=$started_pid
for _ in $(seq 100); do
    [[ -s "$work/address" ]] && break
    sleep 0.1
done
[[ -s "$work/address" ]] || { say "dbus-daemon did not start: $(cat "$work/bus.log")"; exit 1; }
export DBUS_SESSION_BUS_ADDRESS
DBUS_SESSION_BUS_ADDRESS=$(head -1 "$work/address")
say "private bus at $DBUS_SESSION_BUS_ADDRESS"

# --- Throughput: DBusBench against python3-dbus ----------------------------------------------
dbus_section=""
if wants dbus; then
    say "calls and signals: ${rounds} rounds, ${run_seconds} s per run"
    start "$work/report.md" /dev/stderr "$bin/DBusBench" report --peer "$peer" --python "$python" \
        --seconds "$run_seconds" --rounds "$rounds"
    if wait "$started_pid" && [[ -s "$work/report.md" ]]; then
        dbus_section=$(cat "$work/report.md")
    else
        dbus_section=$'## D-Bus: the DBus module against python3-dbus\n\n`DBusBench report` failed; see the output of `make bench`.'
    fi
fi

# --- Idle wakeups ---------------------------------------------------------------------------
# Waits until $1 holds a line starting "ready "; prints its PID.
wait_ready() {
    local file=$1 pid=""
    for _ in $(seq 200); do
        pid=$(sed -n 's/^ready \([0-9]*\)$/\1/p' "$file" 2>/dev/null | head -1)
        [[ -n "$pid" ]] && { echo "$pid"; return 0; }
        sleep 0.05
    done
    return 1
}

idle_section=""
if wants idle; then
say "idle wakeups: context switches, ${idle_seconds} s unconnected then ${idle_seconds} s connected"
start "$work/idle.txt" /dev/stderr "$bin/DBusBench" idle "$idle_seconds"
wait "$started_pid" || true
baseline=$(sed -n 's/^baseline wakeups \([0-9]*\) .*/\1/p' "$work/idle.txt")
connected=$(sed -n 's/^connected wakeups \([0-9]*\) .*/\1/p' "$work/idle.txt")
loop_wakeups=$(sed -n 's/^connected wakeups [0-9]* dbus-loop \([0-9]*\) .*/\1/p' "$work/idle.txt")

strace_table="strace was not run (not installed)."
if command -v strace >/dev/null; then
    say "idle wakeups: syscalls under strace, ${idle_seconds} s"
    start "$work/idle-strace.txt" /dev/stderr "$bin/DBusBench" idle "$idle_seconds" --no-baseline
    traced_pid=$started_pid
    if pid=$(wait_ready "$work/idle-strace.txt"); then
        for task in /proc/"$pid"/task/*; do
            echo "$(basename "$task") $(cat "$task/comm" 2>/dev/null)"
        done >"$work/threads.txt"
        # Attach to every thread for most of the connected sleep, then detach.
        timeout -s INT "$((idle_seconds > 1 ? idle_seconds - 1 : 1))" \
            strace -f -p "$pid" -o "$work/trace.txt" 2>"$work/strace.err" || true
        wait "$traced_pid" || true
        if [[ -s "$work/trace.txt" ]] || grep -q attached "$work/strace.err"; then
            # Count the syscalls that completed while attached ("= result"); a call that
            # was already blocked when strace came and still is when it goes is not one.
            strace_table=$(awk '
                NR == FNR { name[$1] = $2; calls[$1] = 0; next }
                / = / && !/<unfinished|<detached/ {
                    call = ($2 == "<...") ? $3 : substr($2, 1, index($2, "(") - 1)
                    calls[$1]++; count[$1, call]++; if (!((call, $1) in seen)) { seen[call, $1] = 1; list[$1] = list[$1] " " call }
                }
                END {
                    for (tid in name) {
                        detail = ""
                        n = split(list[tid], names, " ")
                        for (i = 1; i <= n; i++) detail = detail (i > 1 ? ", " : "") names[i] " ×" count[tid, names[i]]
                        print "| " tid " " name[tid] " | " calls[tid] " | " detail " |"
                    }
                }' "$work/threads.txt" "$work/trace.txt" | sort -t' ' -k2,2n)
            strace_table=$'| thread | syscalls completed while attached | which |\n|---|---:|---|\n'"$strace_table"
        else
            strace_table="strace could not attach: $(head -3 "$work/strace.err")"
        fi
    else
        strace_table="DBusBench idle did not become ready: $(head -5 "$work/idle-strace.txt")"
    fi
fi

idle_section=$(cat <<EOF
## Idle wakeups

\`DBusBench idle ${idle_seconds}\` sleeps ${idle_seconds} s without a connection, then connects, exports an
object, subscribes to a signal, owns a name, and sleeps ${idle_seconds} s more. Each sleep is one
\`nanosleep\` on one thread; the figures are the context switches (voluntary and involuntary, from
\`/proc/self/task/*/status\`) of every *other* thread over that time.

| | wakeups in ${idle_seconds} s |
|---|---:|
| unconnected (the Swift runtime alone) | ${baseline:-?} |
| connected, all threads | ${connected:-?} |
| connected, the connection's \`dbus-loop\` thread | ${loop_wakeups:-?} |

The \`dbus-loop\` thread blocks in \`epoll_wait\` with no timeout while nothing is pending, so it
should not wake at all; what remains is the Swift runtime's own (libdispatch's worker threads), which a
program that never touches D-Bus shows as well (first row).

Per thread:

\`\`\`
$(grep -v '^ready' "$work/idle.txt")
\`\`\`

A second run with \`strace -f\` attached for $((idle_seconds > 1 ? idle_seconds - 1 : 1)) s of the connected sleep
(syscalls that completed while attached, per thread; a thread blocked throughout shows 0):

${strace_table}
EOF
)
fi

# --- Scanning: the BlueZ layer's scanner against a bare libdbus client -----------------------
# The simulator floods Device1 PropertiesChanged on one adapter; ScanBench (the path handoffd
# takes: BlueZObjectManager, LERadio, its scan events read by an actor) and scan-floor (C,
# libdbus, decode and count) listen to the same flood at the same time.
# proc_cpu PID: user + system CPU of a process so far, in clock ticks.
proc_cpu() { awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null || echo 0; }
ticks=$(getconf CLK_TCK)
# control METHOD ARGS…: calls the simulator's control interface, printing the reply.
control() {
    local method=$1
    shift
    dbus-send --bus="$DBUS_SESSION_BUS_ADDRESS" --print-reply --dest=org.handoff.Simulator \
        /org/handoff/Simulator "org.handoff.Simulator1.$method" "$@"
}
flood_sent() { control GetStats | awk '/"FloodReportsSent"/ { getline; print $3 }'; }
# field FILE KEY: a key=value line's value.
field() { sed -n "s/^$2=//p" "$1" | head -1; }
# proc_kib PID KEY: VmRSS or VmHWM of a process, in KiB.
proc_kib() { awk -v key="$2:" '$1 == key { print $2 }' "/proc/$1/status" 2>/dev/null || echo 0; }

scan_section=""
if wants scan; then
    scan_rounds_done=0

    start "$work/sim.out" "$work/sim.err" "$bin/handoff-sim-bluez" --bus "$DBUS_SESSION_BUS_ADDRESS" \
        --adapters 1 --quiet
    sim_pid=$started_pid
    for _ in $(seq 200); do
        [[ -s "$work/sim.out" ]] && control GetStats >/dev/null 2>&1 && break
        sleep 0.05
    done
    scan_rows=""
    scan_others=""
    scan_errors=""
    for round in $(seq "$scan_rounds"); do
        for rate in 1000 5000 0; do
            if ((rate > 0)); then
                total=$((rate * scan_seconds))
                label="$((rate / 1000))k/s"
            else
                total=$scan_max_reports
                label="unpaced"
            fi
            # The window counts reports numbered 1 … total-1 (see scan-floor.c).
            expected=$((total - 1))
            limit=$((rate > 0 ? scan_seconds + 60 : 300))
            say "scanning: ${label}, ${total} reports over ${scan_devices} devices (round ${round})"
            start "$work/scan-c.txt" "$work/scan-c.err" timeout -s KILL "$limit" \
                "$work/scan-floor" "$DBUS_SESSION_BUS_ADDRESS" 0xFFFF "$expected" 3
            c_pid=$started_pid
            start "$work/scan-swift.txt" "$work/scan-swift.err" timeout -s KILL "$limit" \
                "$bin/ScanBench" "$DBUS_SESSION_BUS_ADDRESS" 0xFFFF "$expected" 3 hci0
            swift_pid=$started_pid
            if ! wait_ready "$work/scan-c.txt" >/dev/null || ! wait_ready "$work/scan-swift.txt" >/dev/null; then
                scan_errors+="${label}: a receiver did not start: $(tail -3 "$work/scan-c.err" "$work/scan-swift.err")"$'\n'
                kill -KILL -- "-$c_pid" "-$swift_pid" 2>/dev/null || true
                continue
            fi
            sent_before=$(flood_sent)
            bus_before=$(proc_cpu "$bus_pid")
            sim_before=$(proc_cpu "$sim_pid")
            control StartFlood string:hci0 "uint32:$scan_devices" "uint32:$rate" "uint32:$total" >/dev/null
            wait "$c_pid" || true
            wait "$swift_pid" || true
            bus_after=$(proc_cpu "$bus_pid")
            sim_after=$(proc_cpu "$sim_pid")
            sent=$(($(flood_sent) - sent_before))
            control StopFlood >/dev/null
            for receiver in c swift; do
                file="$work/scan-$receiver.txt"
                if [[ -z "$(field "$file" cpu_seconds)" ]]; then
                    scan_errors+="${label}: ${receiver} printed no figures: $(tail -3 "$work/scan-$receiver.err")"$'\n'
                fi
            done
            scan_rows+=$(awk -v label="$label" -v sent="$sent" -v ticks="$ticks" -v ratios="$work/scan-ratios.txt" \
                -v bus="$((bus_after - bus_before))" -v sim="$((sim_after - sim_before))" '
                FNR == 1 { file++ }
                { split($0, kv, "="); value[file, kv[1]] = kv[2] }
                END {
                    window = sent - 1
                    for (f = 1; f <= 2; f++) {
                        w[f] = value[f, "window_reports"]
                        cpu[f] = (w[f] > 0) ? value[f, "cpu_seconds"] / w[f] * 1e6 : 0
                    }
                    rate = (value[2, "wall_seconds"] > 0) ? w[2] / value[2, "wall_seconds"] : 0
                    for (f = 1; f <= 2; f++) {
                        name = (f == 1) ? "C, libdbus (floor)" : "Swift, BlueZ layer"
                        received = value[f, "received"]
                        kept = (received == window && value[f, "dropped"] == 0) ? "yes" : "no"
                        lost = window - received
                        ratio = (f == 2 && cpu[1] > 0) ? sprintf("%.2f×", cpu[2] / cpu[1]) : "1.00×"
                        if (f == 2 && cpu[1] > 0) printf "%s %.4f %s %d\n", label, cpu[2] / cpu[1], kept, \
                            value[f, "rss_end_kib"] - value[f, "rss_mid_kib"] >> ratios
                        printf "| %s | %s | %s | %d of %d%s | %s | %.1f | %s | %.1f / %.1f / %.1f / %.1f |\n", \
                            (f == 1) ? label : "", (f == 1) ? sprintf("%.0f", rate) : "", name, received, window, \
                            (value[f, "dropped"] > 0) ? sprintf(" (%d dropped)", value[f, "dropped"]) : "", \
                            kept, cpu[f], ratio, \
                            value[f, "rss_start_kib"] / 1024, value[f, "rss_mid_kib"] / 1024, \
                            value[f, "rss_end_kib"] / 1024, value[f, "rss_peak_kib"] / 1024
                    }
                }' "$work/scan-c.txt" "$work/scan-swift.txt")$'\n'
            scan_others+=$(awk -v label="$label" -v sent="$sent" -v ticks="$ticks" \
                -v bus="$((bus_after - bus_before))" -v sim="$((sim_after - sim_before))" 'BEGIN {
                    printf "| %s | %d | %.1f | %.1f |\n", label, sent, \
                        (sent > 0) ? bus / ticks / sent * 1e6 : 0, (sent > 0) ? sim / ticks / sent * 1e6 : 0
                }')$'\n'
            cp "$work/scan-c.txt" "$work/scan-c-$rate-$round.txt"
            cp "$work/scan-swift.txt" "$work/scan-swift-$rate-$round.txt"
        done
        scan_rounds_done=$round
    done
    kill -TERM "$sim_pid" 2>/dev/null || true
    # The result: per rate, the median ratio over the rounds and its range.
    scan_result=$(awk '
        {
            n[$1]++; r[$1, n[$1]] = $2; total++
            if ($3 != "yes") { behind[$1]++; notKept++ }
            if ($2 > 1.305) over++
            if ($4 > growth) growth = $4
        }
        END {
            split("1k/s 5k/s unpaced", order, " ")
            line = ""; met = 1
            for (i = 1; i <= 3; i++) {
                l = order[i]; k = n[l]
                if (k == 0) continue
                for (a = 1; a <= k; a++) v[a] = r[l, a]
                for (a = 1; a <= k; a++) for (b = a + 1; b <= k; b++) if (v[b] < v[a]) { t = v[a]; v[a] = v[b]; v[b] = t }
                median = (k % 2) ? v[(k + 1) / 2] : (v[k / 2] + v[k / 2 + 1]) / 2
                if (median > 1.305) met = 0
                line = line sprintf("%s%s %.2f× (%.2f–%.2f)", line == "" ? "" : ", ", l, median, v[1], v[k])
            }
            if (notKept > 0 || growth > 1024) met = 0
            printf "**Result: the target is %s.** Median over the rounds of the Swift receiver'"'"'s CPU per report\n", met ? "met" : "not met"
            printf "against the floor'"'"'s (lowest–highest round in brackets): %s. %d of %d single rounds\n", line, over + 0, total
            printf "were above 1.3×; a round'"'"'s ratio moves by about ±0.1 with what else the machine is doing.\n"
            printf "%s Memory: RSS grew by at most %.1f MiB from mid-run to the end of a round.\n", \
                notKept ? sprintf("%d round(s) did not keep up.", notKept) : "Every round kept up.", growth / 1024
        }' "$work/scan-ratios.txt" 2>/dev/null)
    scan_section=$(cat <<EOF
## Scanning: the BlueZ layer against a bare libdbus client

${scan_result}

The simulator (\`handoff-sim-bluez --adapters 1\`, release build) floods Device1 \`PropertiesChanged\`
on hci0 (\`StartFlood\`): ManufacturerData 0xFFFF with 24 bytes plus RSSI, for ${scan_devices} devices in
turn, each announced first by \`InterfacesAdded\`. Two receivers listen to the **same flood at the same
time**, each its own process on the same private bus:

- **Swift, BlueZ layer** (\`ScanBench\`): handoffd's path. A \`BlueZObjectManager\` mirror, an \`LERadio\`
  on hci0 (discovery filter set, discovery started), and an actor reading \`LERadio.scanEvents\` as
  \`HandoffDaemon.run\` does, counting the reports with our company ID. Reports are handed over in
  batches of at most \`reportCoalescing\` (50 ms, the default).
- **C, libdbus** (\`scripts/bench/scan-floor.c\`, \`cc -O2\`): the floor. It adds two match rules
  (InterfacesAdded and PropertiesChanged from org.bluez) and only decodes ManufacturerData (\`a{qv}\`
  of \`ay\`) and RSSI from each signal and counts them, in one thread, allocating nothing per report.

CPU is the whole receiving process's user + system time (\`getrusage\`) from its first flood report to
its last, divided by the reports in between; RSS is \`VmRSS\` before the flood, half-way, and at the end,
and \`VmHWM\` (peak). "Kept up" means every report sent arrived and none was dropped from the scanner's
bounded buffer; the window is every report but the first (reports are numbered from 0 in their
payload, and the \`InterfacesAdded\` that announce the devices carry 0 too). The rate is what the Swift
receiver saw; "unpaced" is the simulator emitting as fast as it can (${scan_max_reports} reports).
${scan_rounds_done} round(s).

| rate asked | reports/s | receiver | reports received | kept up | CPU µs per report (= ms per 1000) | vs floor | RSS MiB start / mid / end / peak |
|---|---:|---|---:|---|---:|---:|---:|
${scan_rows}

The target is at most 1.3× the floor's CPU per report, keeping up, with flat memory. For reference, on
this machine bleak (the Python client most users pick) costs about 95 ms per 1000 reports at 1k/s and 31 ms
at 5k/s, and a bare libdbus decoder about 30 and 16 (figures from the issue, not measured here).

Where the Swift receiver's extra time goes (\`perf stat\` at 5k/s, per report): about 56,800 user-space
instructions against the floor's 44,900 (kernel: 6,900 against 7,500); reading and validating each
message inside libdbus, about 30,000, is the same in both. Of the difference, the scanner's report
and the hand-over to the consuming task took about 5,400 before the shared identity described below
(measured by having the scanner drop every advertisement; that change then saved about 1,000), and
the rest is the event loop's iteration, matching the signal to its subscriptions,
reading it through \`DBusMessageReader\` and updating the device's record. The path a report takes:
\`BlueZObjectManager\` reads a Device1 \`PropertiesChanged\` that carries only ManufacturerData and
RSSI straight into a typed record per device, found by a hash of the path's bytes, and hands a
\`DeviceAdvertisement\` to the scanner; no property dictionary, \`DBusValue\` or \`Event\` is built (the
tree's dictionaries catch up when they are read). A device's path, adapter and address live in one
shared immutable object that its advertisements and reports point to, so a report crosses from the
D-Bus thread to the consumer with two references (that object and its bytes) rather than five.
Reference counts on objects both threads touch cost more than their instructions: this change took
quick runs at 5k/s from 1.17–1.19× to 1.11–1.13×. The scanner queues the report under one lock, and
the batch is moved into \`ScanEvents\` when the coalescing interval ends. At 1k/s the receiver wakes for
each message, as the floor does; the consumer wakes once per batch (50 ms), which is why the default
interval is 50 ms rather than 10: in back-to-back runs at 1k/s, 10 ms gave 1.34–1.35× and 50 ms
1.23–1.25×.

Where the ceiling is: CPU that the other two processes spent per report sent, over the whole run (the bus
routes each report to both receivers). The unpaced rate is set by the simulator's emitter (each signal is
encoded from a \`DBusValue\` tree and handed to its connection's thread) and by the machine's load, not by
dbus-daemon, which stays well below a core.

| rate asked | reports sent | dbus-daemon µs per report | simulator µs per report |
|---|---:|---:|---:|
${scan_others}
${scan_errors:+Problems: ${scan_errors}}
EOF
)
fi

# --- The whole daemon: handoffd against the simulator's flood, beside the C floor --------------
# The real handoffd (built as `make install` builds it) and scan-floor listen to the same flood
# on the private bus, each its own process; CPU is read from /proc/PID/stat before the flood and
# once handoffd has taken every report, keep-up and drops from handoffd's own `status`.
daemon_section=""
if wants daemon; then
    daemon_seconds=${BENCH_DAEMON_SECONDS:-10}
    daemon_max=${BENCH_DAEMON_MAX_REPORTS:-100000}
    daemon_devices=${BENCH_DAEMON_DEVICES:-1000}
    daemon_rounds=${BENCH_DAEMON_ROUNDS:-5}
    read -r -a daemon_rates <<<"${BENCH_DAEMON_RATES:-1000 5000 0}"
    read -r -a memory_devices <<<"${BENCH_DAEMON_MEMORY_DEVICES:-1000 10000}"
    statuspy=scripts/bench/daemon-status.py
    cat >"$work/handoffd.toml" <<TOML
[nearby]
# Own beacons come from ${daemon_devices} devices of one account: room for all of them.
registry_cap = $((daemon_devices * 2))

[socket]
# No handoff group on a build machine: the socket keeps the bench's own group.
group = ""

[log]
level = "notice"
TOML
    start "$work/sim-d.out" "$work/sim-d.err" "$bin/handoff-sim-bluez" --bus "$DBUS_SESSION_BUS_ADDRESS" \
        --adapters 1 --quiet
    dsim_pid=$started_pid
    for _ in $(seq 200); do
        control GetStats >/dev/null 2>&1 && break
        sleep 0.05
    done
    # dstatus KEY: a counter from handoffd's status ($daemon_socket).
    dstatus() { "$python" "$statuspy" "$daemon_socket" 2>/dev/null | sed -n "s/^$1=//p"; }
    # start_daemon NAME ACCOUNTS: starts handoffd and scan-floor; sets $h_pid and $f_pid.
    start_daemon() {
        daemon_socket="$work/$1.sock"
        start "$work/$1.out" "$work/$1.err" "$bin/handoffd" --config "$work/handoffd.toml" \
            --bus "$DBUS_SESSION_BUS_ADDRESS" --socket "$daemon_socket" --accounts "$2" --adapter hci0
        h_pid=$started_pid
        start "$work/$1-floor.txt" "$work/$1-floor.err" "$work/scan-floor" "$DBUS_SESSION_BUS_ADDRESS" 0xFFFF \
            1000000000 3600
        f_pid=$started_pid
        for _ in $(seq 300); do
            if [[ "$(dstatus scanning)" == yes ]] && wait_ready "$work/$1-floor.txt" >/dev/null; then
                # The steady state: handoffd hands its start-up pages back to the kernel 10 s after it
                # started (StartupPages, docs/architecture.md), and the refaults must not land in a run.
                sleep 11
                return 0
            fi
            sleep 0.1
        done
        say "handoffd did not start scanning: $(tail -3 "$work/$1.err")"
        return 1
    }
    stop_daemon() {
        kill -TERM "$h_pid" 2>/dev/null || true
        kill -KILL "$f_pid" 2>/dev/null || true
        wait "$h_pid" 2>/dev/null || true
        wait "$f_pid" 2>/dev/null || true
    }
    # settle: waits until handoffd has taken every report it will (its counters stop moving).
    settle() {
        local last="" now
        for _ in $(seq 120); do
            now=$("$python" "$statuspy" "$daemon_socket" 2>/dev/null | grep -E '^scanReports(Heard|Dropped)=' | tr '\n' ' ')
            [[ "$now" == "$last" ]] && return 0
            last=$now
            sleep 0.25
        done
    }
    # flood DEVICES RATE TOTAL: runs one flood to its end; sets $sent and $flood_wall.
    flood() {
        local before after t0 t1 limit=$(($2 > 0 ? $3 / $2 + 120 : 600)) waited=0
        before=$(flood_sent)
        t0=$(date +%s.%N)
        control StartFlood string:hci0 "uint32:$1" "uint32:$2" "uint32:$3" >/dev/null
        while :; do
            after=$(flood_sent)
            (( after - before >= $3 )) && break
            sleep 0.1
            waited=$((waited + 1))
            (( waited > limit * 10 )) && break
        done
        t1=$(date +%s.%N)
        sent=$((after - before))
        flood_wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')
    }
    # rss_sampler PID FILE: VmRSS every half second, until killed.
    rss_sampler() { while :; do proc_kib "$1" VmRSS >>"$2"; sleep 0.5; done; }

    daemon_rows=""
    daemon_errors=""
    drop_notes=""
    : >"$work/daemon-runs.txt"
    for round in $(seq "$daemon_rounds"); do
        for kind in strangers own; do
            accounts="$work/accounts-$round-$kind"
            mkdir -m 700 "$accounts"
            # An account of the daemon's either way; the own rounds flood its beacons, one device each.
            "$bin/BeaconBench" --flood-account "$accounts" "$daemon_devices" >"$work/beacons.txt"
            if [[ $kind == own ]]; then
                "$python" scripts/bench/flood-payloads.py "$DBUS_SESSION_BUS_ADDRESS" "$work/beacons.txt"
            else
                "$python" scripts/bench/flood-payloads.py "$DBUS_SESSION_BUS_ADDRESS"
            fi
            if ! start_daemon "handoffd-$round-$kind" "$accounts"; then
                daemon_errors+="round ${round}, ${kind}: handoffd did not start: $(tail -3 "$work/handoffd-$round-$kind.err")"$'\n'
                stop_daemon
                continue
            fi
            for rate in "${daemon_rates[@]}"; do
                if ((rate > 0)); then
                    total=$((rate * daemon_seconds))
                    label="$((rate / 1000))k/s"
                else
                    total=$daemon_max
                    label="unpaced"
                fi
                say "whole daemon: ${kind} beacons, ${label}, ${total} reports over ${daemon_devices} devices (round ${round})"
                heard0=$(dstatus scanReportsHeard)
                dropped0=$(dstatus scanReportsDropped)
                rss0=$(proc_kib "$h_pid" VmRSS)
                h0=$(proc_cpu "$h_pid")
                f0=$(proc_cpu "$f_pid")
                : >"$work/rss.txt"
                rss_sampler "$h_pid" "$work/rss.txt" &
                sampler=$!
                flood "$daemon_devices" "$rate" "$total"
                settle
                h1=$(proc_cpu "$h_pid")
                f1=$(proc_cpu "$f_pid")
                kill "$sampler" 2>/dev/null || true
                wait "$sampler" 2>/dev/null || true
                rss1=$(proc_kib "$h_pid" VmRSS)
                hwm=$(proc_kib "$h_pid" VmHWM)
                rss_mid=$(awk '{ v[NR] = $1 } END { print (NR > 0) ? v[int((NR + 1) / 2)] : 0 }' "$work/rss.txt")
                heard=$(($(dstatus scanReportsHeard) - heard0))
                dropped=$(($(dstatus scanReportsDropped) - dropped0))
                control StopFlood >/dev/null
                # Each device's InterfacesAdded carries a report too.
                wanted=$((sent + daemon_devices))
                kept=$([[ $dropped -eq 0 && $heard -ge $wanted ]] && echo yes || echo no)
                # $work goes at exit: keep the log of a run that dropped or fell short, and say why.
                if [[ $kept == no ]]; then
                    kept_logs=${kept_logs:-$(mktemp -d /tmp/handoff-bench-logs-XXXXXX)}
                    cp "$work/handoffd-$round-$kind.err" "$kept_logs/handoffd-$round-$kind-$label.err"
                    say "round ${round}, ${kind}, ${label}: ${dropped} dropped, ${heard} of ${wanted} heard; handoffd's log kept at $kept_logs/handoffd-$round-$kind-$label.err"
                    causes=$(grep -h 'scan: dropped' "$work/handoffd-$round-$kind.err" | sed 's/.*scan: dropped/dropped/' | paste -sd ';' -)
                    drop_notes+="- round ${round}, ${kind}, ${label}: ${causes:-no drop line in the log of handoffd, which heard ${heard} of ${wanted}}"$'\n'
                fi
                echo "$round $kind $label $sent $flood_wall $((h1 - h0)) $((f1 - f0)) $heard $dropped $kept $rss0 $rss_mid $rss1 $hwm" \
                    >>"$work/daemon-runs.txt"
            done
            stop_daemon
        done
    done

    # Memory: handoffd's RSS with N strangers' devices in its mirror (each heard three times).
    memory_rows=""
    : >"$work/daemon-memory.txt"
    "$python" scripts/bench/flood-payloads.py "$DBUS_SESSION_BUS_ADDRESS"
    for devices in "${memory_devices[@]}"; do
        accounts="$work/accounts-memory-$devices"
        mkdir -m 700 "$accounts"
        "$bin/BeaconBench" --flood-account "$accounts" 1 >/dev/null
        say "whole daemon: memory with ${devices} devices"
        if ! start_daemon "handoffd-memory-$devices" "$accounts"; then
            daemon_errors+="memory, ${devices} devices: handoffd did not start"$'\n'
            stop_daemon
            continue
        fi
        idle=$(proc_kib "$h_pid" VmRSS)
        idle_split="$(proc_kib "$h_pid" RssAnon) $(proc_kib "$h_pid" RssFile)"
        flood "$devices" 0 $((devices * 2))
        settle
        echo "$devices $idle $(proc_kib "$h_pid" VmRSS) $(proc_kib "$h_pid" VmHWM) $(proc_kib "$f_pid" VmRSS)" \
            "$(proc_kib "$h_pid" RssAnon) $(proc_kib "$h_pid" RssFile) $idle_split" >>"$work/daemon-memory.txt"
        control StopFlood >/dev/null
        stop_daemon
    done
    kill -TERM "$dsim_pid" 2>/dev/null || true

    daemon_rows=$(awk -v ticks="$ticks" '
        {
            cpu_d = ($4 > 0) ? $6 / ticks / $4 * 1e6 : 0
            cpu_f = ($4 > 0) ? $7 / ticks / $4 * 1e6 : 0
            printf "| %s | %s | %s | %d | %.0f | %d / %d | %s | %.1f | %.1f | %.2f× | %.1f / %.1f / %.1f / %.1f |\n", \
                $1, $2, $3, $4, ($5 > 0) ? $4 / $5 : 0, $8, $9, $10, cpu_d, cpu_f, (cpu_f > 0) ? cpu_d / cpu_f : 0, \
                $11 / 1024, $12 / 1024, $13 / 1024, $14 / 1024
        }' "$work/daemon-runs.txt")
    memory_rows=$(awk '{
            printf "| %d | %.1f (%.1f / %.1f) | %.1f | %.1f / %.1f | %.1f | %s | %.1f |\n", $1, $2 / 1024, $8 / 1024, $9 / 1024, \
                $3 / 1024, $6 / 1024, $7 / 1024, \
                $4 / 1024, ($3 / 1024 <= ($1 <= 1000 ? 20 : 24)) ? "yes" : "no", $5 / 1024
        }' "$work/daemon-memory.txt")
    daemon_result=$(awk -v ticks="$ticks" '
        function median(list, count,    a, b, t, v) {
            for (a = 1; a <= count; a++) v[a] = list[a]
            for (a = 1; a <= count; a++) for (b = a + 1; b <= count; b++) if (v[b] < v[a]) { t = v[a]; v[a] = v[b]; v[b] = t }
            lowest = v[1]; highest = v[count]
            return (count % 2) ? v[(count + 1) / 2] : (v[count / 2] + v[count / 2 + 1]) / 2
        }
        {
            d = ($4 > 0) ? $6 / ticks / $4 * 1e6 : 0
            f = ($4 > 0) ? $7 / ticks / $4 * 1e6 : 0
            cost[$1, $2, $3] = d; floor[$1, $2, $3] = f
            if ($10 != "yes") notKept++
            droppedAll += $9; if ($9 > 0) droppingRuns++
            runs++
            rounds[$1] = 1; labels[$3] = 1
        }
        END {
            split("1k/s 5k/s unpaced", order, " ")
            met = 1; strangers = ""; own = ""
            for (i = 1; i <= 3; i++) {
                l = order[i]
                if (!(l in labels)) continue
                n = 0; m = 0
                for (r in rounds) {
                    if (((r, "strangers", l) in cost) && floor[r, "strangers", l] > 0) {
                        s[++n] = cost[r, "strangers", l] / floor[r, "strangers", l]
                        if (((r, "own", l) in cost) && cost[r, "strangers", l] > 0)
                            o[++m] = cost[r, "own", l] / cost[r, "strangers", l]
                    }
                }
                if (n > 0) {
                    x = median(s, n)
                    if (x > 1.305) met = 0
                    strangers = strangers sprintf("%s%s %.2f× (%.2f–%.2f)", strangers == "" ? "" : ", ", l, x, lowest, highest)
                }
                if (m > 0) {
                    x = median(o, m)
                    if (x > 1.305) met = 0
                    own = own sprintf("%s%s %.2f× (%.2f–%.2f)", own == "" ? "" : ", ", l, x, lowest, highest)
                }
            }
            if (notKept > 0) met = 0
            if (runs == 0) { print "**Result: not measured** (no run finished; see the problems below)."; exit }
            printf "**Result: the CPU target is %s.** Median over the rounds of handoffd'"'"'s CPU per report against the\n", met ? "met" : "not met"
            printf "floor'"'"'s, strangers'"'"' beacons (lowest–highest round in brackets): %s. Own beacons against\n", strangers
            printf "strangers'"'"' (the same round): %s. %s\n", own, \
                notKept ? sprintf("%d of %d runs did not keep up or dropped reports (%d report(s) dropped in %d run(s), as handoffd'"'"'s scanReportsDropped counted them).", notKept, runs, droppedAll, droppingRuns) : sprintf("All %d runs kept up, with no report dropped (handoffd'"'"'s scanReportsDropped stayed 0).", runs)
        }' "$work/daemon-runs.txt")
    memory_result=$(awk '
        { if ($3 / 1024 > ($1 <= 1000 ? 20 : 24)) over = over sprintf(" %d devices: %.1f MiB;", $1, $3 / 1024); n++ }
        END {
            if (n == 0) print "**Memory: not measured.**"
            else if (over == "") print "**Memory: within the targets** (at most 20 MiB RSS at 1000 devices, 24 MiB at 10,000)."
            else print "**Memory: over the targets** (at most 20 MiB RSS at 1000 devices, 24 MiB at 10,000):" over
        }' "$work/daemon-memory.txt")

    # Anonymous memory per device between the smallest and the largest memory run.
    per_device_text=$(sort -n "$work/daemon-memory.txt" | awk '
        NR == 1 { d0 = $1; a0 = $6 } { d1 = $1; a1 = $6 }
        END {
            if (NR < 2 || d1 == d0) print "the table below has too few rows to tell the cost of a device."
            else printf "the table below shows %.2f KiB of anonymous memory per stranger'"'"'s device between %d and %d devices (%.1f MiB more)", (a1 - a0) / (d1 - d0), d0, d1, (a1 - a0) / 1024
        }')
    if [[ -n $drop_notes ]]; then
        drop_text="its \`scan: dropped\` lines, per run:"$'\n\n'"${drop_notes}"
    else
        drop_text="none this time."
    fi
    daemon_section=$(cat <<SECTION
## Whole daemon: handoffd against a bare libdbus client

${daemon_result}

${memory_result}

The real \`handoffd\`, built as \`make install\` builds it (\`swift build ${INSTALL_BUILD_FLAGS}\`), runs on the
private bus against the simulator (\`handoff-sim-bluez --adapters 1\`, built the same way), with its usual
options (\`--adapter hci0\`, log level notice, \`[nearby] registry_cap = $((daemon_devices * 2))\` so that
every own device fits) and one account of its own. The simulator floods Device1 \`PropertiesChanged\`
on hci0 (\`StartFlood\`): ManufacturerData 0xFFFF with 24 bytes plus RSSI, from ${daemon_devices} devices in
turn, each announced first by \`InterfacesAdded\`. **Strangers' beacons** are the flood's numbered
pattern, which handoffd rejects; **own beacons** are ${daemon_devices} real beacons of handoffd's account, one
per device (\`BeaconBench --flood-account\`, \`SetFloodPayloads\`): each is recognised once and then
heard again and again, as bluetoothd reports an unchanged advertisement. Beside handoffd, the C floor
(\`scripts/bench/scan-floor.c\`, as in the scanning section) decodes the same flood in its own process.

CPU is each process's user + system time from \`/proc/PID/stat\`, read before the flood starts and
again once handoffd has taken every report (its \`scanReportsHeard\` has stopped moving), divided by the
reports sent; both processes are measured over the same span, which includes handoffd's and the
floor's wakeups while idle. "Heard / dropped" are the deltas of handoffd's \`scanReportsHeard\` and
\`scanReportsDropped\`; it kept up when it dropped none and heard every report (the reports sent plus
one per device's \`InterfacesAdded\`). RSS is handoffd's \`VmRSS\` before the flood, at the middle of the
samples taken every 0.5 s during it, after it, and \`VmHWM\` (peak since start). A handoffd and a floor
start afresh for each round and kind; the rates run in order within it. ${daemon_rounds} round(s); paced runs last
${daemon_seconds} s, the unpaced one sends ${daemon_max} reports.

| round | beacons | rate asked | reports sent | reports/s | handoffd heard / dropped | kept up | handoffd µs per report | floor µs per report | handoffd / floor | handoffd RSS MiB start / mid / end / peak |
|---|---|---|---:|---:|---:|---|---:|---:|---:|---:|
${daemon_rows}

Drops: "dropped" is handoffd's \`scanReportsDropped\`, every report lost between the bus and the
registry that handoffd can see (docs/protocol.md, \`status\`): the consumer fell more than 4096 reports
behind the scanner, or bluetoothd reported a device it had not announced. A run kept up when heard plus
dropped is every report sent (plus one per device's \`InterfacesAdded\`) and nothing was dropped. What
the bus daemon itself would discard for handoffd's connection (beyond its \`max_outgoing_bytes\`)
handoffd cannot count; it would show here as heard plus dropped short of the reports sent. The bench
keeps the log of every run that did not keep up (it says where) and lists what handoffd logged of its
drops here: ${drop_text}

Where handoffd's time goes, beyond the floor. handoffd's bus connection batches input that streams in
(\`DBusConnection.batchInput\`, 4 ms, docs/architecture.md): while advertisements stream in it drains
the socket, then waits out the window and reads what came meanwhile in one go, where the floor wakes
once per message. At 1k/s (\`strace -c -f\` of handoffd for 6 s on 2026-11-25, about 6000 reports)
that made 1431 \`clock_nanosleep\`, 3044 \`epoll_wait\` (half of them the zero-timeout check that the
socket is drained) and 3176 \`recvmsg\`, about half a wake per report against the floor's one
\`poll\` and two \`recvmsg\`. \`perf record\` at 1k/s for 6 s (the same day, about 265 samples):
\`dbus-loop\` had 97% of them: libdbus 43%, handoffd's own code 30%, libc 12% (libdbus's mutexes,
\`strcmp\` while matching the signal to its handlers, \`malloc\`), the kernel 12% (down from 19% with a
wake per message). No function of handoffd's took more than 2.3%: retain and release (3%), the byte
array of each report (1.5%: \`_ContiguousArrayStorage\`'s generic metadata is looked up at each
allocation, from \`DBusMessageReader.readBytes\`), the device table's lookup by path hash (1.1%). The
daemon's consumer (recognition, the registry, the hop to its actor, once per 50 ms batch) took under
3%: a stranger's beacon is rejected by the tag lookup (41 ns, see the beacon section). Announcing a
device costs handoffd about twice what it costs the floor (about 75 µs against 37 on 2026-11-24: the
\`InterfacesAdded\` is decoded whole into a value tree and merged into the mirror's dictionaries),
about 4 µs per report at 1k/s, where 1000 devices are announced per 10,000 reports. Own beacons cost
more at 1k/s than at the higher rates because that run comes first for each handoffd: each of the
1000 own devices appears once (recognised with its key, listed, its clients told) before it is only
heard again. Counted with \`valgrind --tool=callgrind\` on 2026-11-28 (9900 reports at 300/s over 1000
devices, instructions of the whole process from the flood's start until handoffd had taken it all), own
beacons took 979 million instructions against strangers' 749 million before four changes of that day,
and 812 million after them: an appearance no longer encodes its \`appeared\` event when no client is
connected to receive it (89,000 instructions of JSON each); the repeat cache no longer loses payloads to
collisions (direct-mapped, 1024 slots, it lost 62% of 1000 devices' beacons and recomputed their MACs
at every repeat; it is now open-addressed and grows, docs/beacon-format.md section 5); a repeat updates
its registry entry in place instead of copying it three times; and the delayed introductions of 1000
new devices wait on one timer rather than 1000 sleeping tasks (RSS with 1000 own devices 1.9 MiB lower).

Memory: most of handoffd's RSS is its own executable. Idle, with no device, it was 29–31 MiB while it
linked all of Foundation, of which about 3 MiB anonymous and the rest file-backed; the floor, dynamically
linked C, has 2.8 MiB. On 2026-11-25 an idle handoffd of then (release, the \`make install\` flags) had
27.0 MiB file-backed: by the binary's sections (its page table, \`/proc/PID/pagemap\`), 14.4 MiB of its
22.6 MiB \`.text\` (the kernel maps pages in blocks around each page touched, and start-up touches code
all over the statically linked runtime, Foundation, ICU, swift-crypto, NIO and the rest), 2.6 of 36.3 MiB
\`.rodata\` (mostly ICU's data, untouched), all 2.4 MiB of \`.rela.dyn\` (the static PIE's relocations,
read once at start) and 0.9 MiB \`.data.rel.ro\`. swift-crypto 3 imported all of Foundation on Linux;
with swift-crypto 4.5.2, which imports FoundationEssentials where it can, and our own modules moved to
FoundationEssentials, handoffd links no Foundation, FoundationInternationalization, CoreFoundation or ICU
(the same day: the binary 131.5 → 85.3 MB, \`.rodata\` 38.1 → 2.6 MB, idle RSS 30.8 → 27.2 MiB, of
it file-backed 28.0 → 24.9 MiB). Two changes of the same day then took the file-backed part under the
target. The programs are linked with \`--no-export-dynamic\` (the toolchain's static runtime asks for
\`-export-dynamic\`, which put 30,817 symbols in \`.dynsym\`, 0.7 MiB, and their names in
\`.dynstr\`, 1.9 MiB, that nothing in handoffd looks up): idle RSS 26.5 → 23.6 MiB. And 10 s after it
started, handoffd hands the read-only pages of its executable back to the kernel
(\`madvise(MADV_PAGEOUT)\`, \`StartupPages\`): start-up touched most of them once, the work after it
needs a fraction, and what it needs comes back on first use (idle RSS 23.8 → 8.9 MiB, measured on an
idle handoffd from outside with \`process_madvise\`). It marks them \`MADV_RANDOM\` too, so that a page
comes back alone, without the 128 KiB of read-around that fault-around would then map (its share of the
figures below was not measured apart: the run of 15:47 without it had Foundation linked back in by mistake,
which scripts/check-no-foundation.sh now catches). The tables below are taken after that hand-back
(the bench waits 11 s after each handoffd starts). Strangers' devices are held compact in the mirror
(docs/architecture.md): ${per_device_text} (3.2 KiB a device, 28 MiB more at 10,000 devices than at 1000,
on 2026-11-25 before they were).

Memory with many devices: a fresh handoffd, then a flood of strangers' beacons from N devices (each
announced and then heard twice, unpaced); RSS once handoffd has taken them all, with the devices still
in bluetoothd's tree (and so in handoffd's mirror). Anonymous memory (\`RssAnon\`: the heap, stacks) is
what the mirror and the registry grow; file-backed (\`RssFile\`) is the pages of the binary and its
libraries that the work since the hand-back has read, which the kernel maps in blocks around each page
touched.

| devices | handoffd RSS idle (anonymous / file-backed), MiB | handoffd RSS with the devices (MiB) | of which anonymous / file-backed (MiB) | peak (MiB) | within target | floor RSS (MiB) |
|---:|---:|---:|---:|---:|---|---:|
${memory_rows}
${daemon_errors:+
Problems: ${daemon_errors}}
SECTION
)
fi

# --- The desktop agent: idle wakeups and memory ------------------------------------------------
# handoff-agent (built as `make install` builds it) as a user's session runs it: connected to a
# real handoffd (B, on the simulator's hci1, sharing an account with A on hci0) and to the
# private bus, where the agent tests' notification server (written from the spec) owns
# org.freedesktop.Notifications. Idle: nothing nearby, nothing happening. Then A publishes an
# activity of the type the agent's desktop entry declares; once the notification is shown, the
# same again, with whatever handoffd sends meanwhile counted.
agent_section=""
if wants agent; then
    agent_seconds=${BENCH_AGENT_SECONDS:-60}
    agent_strace_seconds=${BENCH_AGENT_STRACE_SECONDS:-20}
    ad="$work/agent"
    mkdir -p "$ad/data/applications" "$ad/none" "$ad/run" "$ad/home"
    chmod 0700 "$ad/run"
    agent_errors=""
    start "$ad/sim.out" "$ad/sim.err" "$bin/handoff-sim-bluez" --bus "$DBUS_SESSION_BUS_ADDRESS" --adapters 2 \
        --extended-advertising --quiet
    asim_pid=$started_pid
    for _ in $(seq 200); do
        control GetStats >/dev/null 2>&1 && break
        sleep 0.05
    done
    agent_pids=("$asim_pid")
    for name in a b; do
        adapter=$([[ $name == a ]] && echo hci0 || echo hci1)
        mkdir -p "$ad/$name/accounts"
        printf '[General]\nPrivacy = device\n' >"$ad/$name/main.conf"
        cat >"$ad/$name/handoffd.toml" <<TOML
[bluetooth]
adapter = "$adapter"
advertisement_type = "peripheral"
bluetoothd_main_conf = "$ad/$name/main.conf"
[socket]
path = "$ad/$name/handoffd.sock"
mode = "0600"
group = ""
[accounts]
directory = "$ad/$name/accounts"
[log]
level = "notice"
[dbus]
bus = "$DBUS_SESSION_BUS_ADDRESS"
TOML
        start "$ad/$name.out" "$ad/$name.log" "$bin/handoffd" --config "$ad/$name/handoffd.toml"
        agent_pids+=("$started_pid")
    done
    actl() { local name=$1; shift; "$bin/handoffctl" "$@" --socket "$ad/$name/handoffd.sock"; }
    for name in a b; do
        for _ in $(seq 200); do [[ -S "$ad/$name/handoffd.sock" ]] && break; sleep 0.1; done
    done
    actl a account create bench >/dev/null
    code=$(actl a account export bench 2>/dev/null | sed -n "s/.*account import '\(.*\)'.*/\1/p")
    actl b account import "$code" --name bench >/dev/null
    unset code
    start "$ad/server.out" "$ad/server.err" "$python" Tests/HandoffAgentTests/Peers/notification_server.py \
        actions,body,body-markup "$ad/notifications.jsonl"
    agent_pids+=("$started_pid")
    for _ in $(seq 200); do grep -qs '"ready"' "$ad/notifications.jsonl" && break; sleep 0.1; done
    printf '[Desktop Entry]\nType=Application\nName=Bench Reader\nExec=/bin/true %%u\nX-Handoff-ActivityTypes=org.handoff.bench.reading;\n' \
        >"$ad/data/applications/org.handoff.bench.Reader.desktop"
    clients() { actl b status --json 2>/dev/null | sed -n 's/.*"clientCount" *: *\([0-9]*\).*/\1/p'; }
    clients_before=$(clients)
    start "$ad/agent.out" "$ad/agent.log" env HOME="$ad/home" XDG_DATA_HOME="$ad/data" XDG_DATA_DIRS="$ad/none" \
        XDG_RUNTIME_DIR="$ad/run" HANDOFF_SOCKET="$ad/b/handoffd.sock" "$bin/handoff-agent"
    agent_group=$started_pid
    agent_pids+=("$agent_group")
    agent_pid=""
    for _ in $(seq 300); do
        agent_pid=$(pgrep -f -x -s "$agent_group" "$bin/handoff-agent" || true)
        [[ -n "$agent_pid" ]] && grep -q "notification server capabilities" "$ad/agent.log" &&
            [[ "$(clients)" -gt "${clients_before:-0}" ]] && break
        sleep 0.1
    done
    # The watcher counts what handoffd sends its clients (the agent gets the same events).
    start "$ad/watch.jsonl" "$ad/watch.err" "$bin/handoffctl" watch --json --socket "$ad/b/handoffd.sock"
    agent_pids+=("$started_pid")
    # Everything that starting woke goes back to sleep (libdispatch retires idle workers after 5 s).
    sleep 10

    # threads PID: "tid comm voluntary nonvoluntary blocked-in" for every thread (blocked-in: the
    # system call it sleeps in, from /proc/PID/task/TID/syscall, by its x86-64 number).
    threads() {
        local task nr
        for task in /proc/"$1"/task/*; do
            nr=$(cut -d' ' -f1 "$task/syscall" 2>/dev/null)
            case $nr in
                7) nr=poll ;; 232) nr=epoll_wait ;; 281) nr=epoll_pwait ;; 202) nr=futex ;; 271) nr=ppoll ;;
                0) nr=read ;; 130) nr=rt_sigsuspend ;; 35) nr=nanosleep ;; 230) nr=clock_nanosleep ;; 23) nr=select ;; running) ;; *) nr="syscall-${nr:-?}" ;;
            esac
            printf '%s %s %s %s %s\n' "$(basename "$task")" "$(tr ' ' '_' <"$task/comm")" \
                "$(awk '$1 == "voluntary_ctxt_switches:" { print $2 }' "$task/status")" \
                "$(awk '$1 == "nonvoluntary_ctxt_switches:" { print $2 }' "$task/status")" "$nr"
        done 2>/dev/null
    }
    # window NAME: the agent's wakeups over agent_seconds, per thread; sets $wakeups and $window_rows.
    window() {
        threads "$agent_pid" >"$ad/$1-before.txt"
        sleep "$agent_seconds"
        threads "$agent_pid" >"$ad/$1-after.txt"
        wakeups=$(awk 'NR == FNR { v[$1] = $3; n[$1] = $4; next }
            { t += ($1 in v) ? ($3 - v[$1]) + ($4 - n[$1]) : $3 + $4 } END { print t + 0 }' \
            "$ad/$1-before.txt" "$ad/$1-after.txt")
        window_rows=$(awk 'NR == FNR { v[$1] = $3; n[$1] = $4; next }
            { printf "  thread %s %s: %d voluntary, %d involuntary%s; sleeps in %s\n", $1, $2, ($1 in v) ? $3 - v[$1] : $3,
                ($1 in n) ? $4 - n[$1] : $4, ($1 in v) ? "" : " (new)", $5 }' "$ad/$1-before.txt" "$ad/$1-after.txt")
    }
    # memory: "VmRSS VmHWM RssAnon RssFile" of the agent, in MiB.
    memory() {
        awk '$1 == "VmRSS:" { r = $2 } $1 == "VmHWM:" { h = $2 } $1 == "RssAnon:" { a = $2 } $1 == "RssFile:" { f = $2 }
            END { printf "%.1f %.1f %.1f %.1f", r / 1024, h / 1024, a / 1024, f / 1024 }' "/proc/$agent_pid/status"
    }

    if [[ -z "$agent_pid" ]] || ! kill -0 "$agent_pid" 2>/dev/null; then
        agent_errors+="handoff-agent did not start: $(tail -3 "$ad/agent.log")"$'\n'
    else
        say "agent: idle for ${agent_seconds} s (nothing nearby), beside the Swift runtime's own floor"
        events0=$(wc -l <"$ad/watch.jsonl")
        # The floor, over the same seconds: a Swift program that only sleeps (DBusBench idle's
        # baseline, before it connects). libdispatch on Linux wakes once a second on its own
        # (its workqueue monitor, a timer on the manager queue), in every Swift program.
        start "$ad/floor.txt" "$ad/floor.err" "$bin/DBusBench" idle "$agent_seconds"
        floor_group=$started_pid
        window idle
        for _ in $(seq 100); do grep -q '^baseline wakeups' "$ad/floor.txt" && break; sleep 0.1; done
        kill -KILL -- "-$floor_group" 2>/dev/null || true
        wait "$floor_group" 2>/dev/null || true
        floor_wakeups=$(sed -n 's/^baseline wakeups \([0-9]*\) .*/\1/p' "$ad/floor.txt")
        floor_rows=$(sed -n '/^baseline/,/^ready/p' "$ad/floor.txt" | grep '^  thread' || true)
        idle_wakeups=$wakeups; idle_rows=$window_rows
        idle_events=$(($(wc -l <"$ad/watch.jsonl") - events0))
        read -r idle_rss idle_hwm idle_anon idle_file <<<"$(memory)"
        idle_threads=$(wc -l <"$ad/idle-after.txt")
        own_wakeups=$(( idle_wakeups - ${floor_wakeups:-0} ))
        # Where the resident pages are: the largest mappings by Rss (/proc/PID/smaps).
        resident=$(awk '/^[0-9a-f]+-[0-9a-f]+ / { name = (NF >= 6) ? $6 : "[anonymous]" }
                $1 == "Rss:" { rss[name] += $2 }
                END { for (n in rss) if (rss[n] >= 256) printf "%.1f MiB %s\n", rss[n] / 1024, n }' \
            "/proc/$agent_pid/smaps" | sort -rn | head -6 | sed "s|$bin/||; s/^/  /")
        # The executable's own pages by mapping kind: code (r-x), read-only data (r--), data (rw-).
        resident_binary=$(awk -v exe="$bin/handoff-agent" '/^[0-9a-f]+-[0-9a-f]+ / { mine = ($6 == exe); perms = $2 }
                mine && $1 == "Size:" { all[perms] += $2 }
                mine && $1 == "Rss:" { rss[perms] += $2 }
                END { for (p in rss) printf "  %s: %.1f of %.1f MiB resident\n", p, rss[p] / 1024, all[p] / 1024 }' \
            "/proc/$agent_pid/smaps" | sort)

        agent_strace="strace was not run (not installed)."
        if command -v strace >/dev/null; then
            say "agent: syscalls under strace, ${agent_strace_seconds} s idle"
            threads "$agent_pid" >"$ad/strace-threads.txt"
            timeout -s INT "$agent_strace_seconds" strace -f -p "$agent_pid" -o "$ad/trace.txt" 2>"$ad/strace.err" || true
            if grep -q attached "$ad/strace.err" || [[ -s "$ad/trace.txt" ]]; then
                # Syscalls that completed while attached ("= result"), per thread: a call that
                # was already blocked when strace came and still is when it goes is not one.
                traced=$(awk '
                    NR == FNR { name[$1] = $2; calls[$1] = 0; next }
                    / = / && !/<unfinished|<detached/ {
                        call = ($2 == "<...") ? $3 : substr($2, 1, index($2, "(") - 1)
                        calls[$1]++; count[$1, call]++; if (!((call, $1) in seen)) { seen[call, $1] = 1; list[$1] = list[$1] " " call }
                        if (!($1 in name)) name[$1] = "(new)"
                    }
                    END {
                        for (tid in name) {
                            detail = ""
                            n = split(list[tid], names, " ")
                            for (i = 1; i <= n; i++) detail = detail (i > 1 ? ", " : "") names[i] " ×" count[tid, names[i]]
                            print "| " tid " " name[tid] " | " calls[tid] + 0 " | " detail " |"
                        }
                    }' "$ad/strace-threads.txt" "$ad/trace.txt" | sort -t' ' -k2,2n)
                agent_strace=$'A run with `strace -f` attached to the idle agent for '"${agent_strace_seconds}"$' s (syscalls that completed while attached, per thread; a thread blocked throughout shows 0):\n\n| thread | syscalls | which |\n|---|---:|---|\n'"$traced"
            else
                agent_strace="strace could not attach: $(head -3 "$ad/strace.err")"
            fi
        fi

        say "agent: A publishes; then ${agent_seconds} s with the notification shown"
        start "$ad/publish.out" "$ad/publish.err" "$bin/handoffctl" publish --type org.handoff.bench.reading \
            --title "Chapter 3" --socket "$ad/a/handoffd.sock"
        agent_pids+=("$started_pid")
        for _ in $(seq 300); do grep -qs '"method": "Notify"' "$ad/notifications.jsonl" && break; sleep 0.1; done
        if grep -qs '"method": "Notify"' "$ad/notifications.jsonl"; then
            sleep 3
            events0=$(wc -l <"$ad/watch.jsonl")
            window shown
            shown_wakeups=$wakeups; shown_rows=$window_rows
            shown_events=$(($(wc -l <"$ad/watch.jsonl") - events0))
            read -r shown_rss shown_hwm shown_anon shown_file <<<"$(memory)"
            shown_notifies=$(grep -c '"method": "Notify"' "$ad/notifications.jsonl")
        else
            agent_errors+="no notification within 30 s of A publishing: $(tail -3 "$ad/agent.log")"$'\n'
        fi
    fi
    for pid in "${agent_pids[@]}"; do kill -TERM -- "-$pid" 2>/dev/null || true; done
    agent_binary=$(du -m "$bin/handoff-agent" | cut -f1)
    # Met: no more wakeups than the floor, give or take one tick of its 1 Hz timer at the
    # window's edges, and a peak RSS of at most 20 MiB.
    verdict() { awk -v w="$1" -v r="$2" -v h="$3" 'BEGIN {
        printf "%s", (w <= 0 ? "no wakeups of its own" : w " wakeup(s) more than the floor") " in " '"$agent_seconds"' " s idle (" \
            (w <= 1 ? "met" : "**not met**") "), RSS " r " MiB, peak " h " MiB (" (h <= 20 ? "met" : "**not met**") ")" }'; }
    agent_result=""
    if [[ -n "${idle_wakeups:-}" ]]; then
        agent_result="**Result** (issue 14: no wakeups of its own when idle, at most 20 MiB RSS): $(verdict "$own_wakeups" "$idle_rss" "$idle_hwm"). Its own wakeups are the ${idle_wakeups} of all its threads less the ${floor_wakeups:-?} that a Swift program which only sleeps had over the same ${agent_seconds} s (the floor, below; a difference of one is a tick of the floor's 1 Hz timer at the window's edges)."
    fi
    agent_section=$(cat <<SECTION
## Agent: handoff-agent's idle wakeups and memory

${agent_result}

handoff-agent as \`make install\` builds it (\`${INSTALL_BUILD_FLAGS}\`; the binary is ${agent_binary} MB),
started as a session starts it, connected to a real handoffd (B, on hci1 of the simulator,
\`handoff-sim-bluez --adapters 2 --extended-advertising\`, sharing an account with A on hci0) and to
the private bus, where the agent tests' notification server
(\`Tests/HandoffAgentTests/Peers/notification_server.py\`, python3-dbus) owns
org.freedesktop.Notifications. One desktop entry declares \`org.handoff.bench.reading\`; inotify
watches its directories. Wakeups are the context switches (voluntary and involuntary, from
\`/proc/PID/task/*/status\`) of every thread of the agent over ${agent_seconds} s; memory is the
agent's \`VmRSS\`, \`VmHWM\` (peak since start), \`RssAnon\` and \`RssFile\` at the end of each window.

| window | wakeups in ${agent_seconds} s | events handoffd sent meanwhile | threads | RSS MiB | peak MiB | anonymous / file-backed MiB |
|---|---:|---:|---:|---:|---:|---:|
| idle: nothing nearby | ${idle_wakeups:-?} | ${idle_events:-?} | ${idle_threads:-?} | ${idle_rss:-?} | ${idle_hwm:-?} | ${idle_anon:-?} / ${idle_file:-?} |
| the floor: a Swift program that only sleeps (\`DBusBench idle\`'s baseline), same seconds | ${floor_wakeups:-?} | | | | | |
| one notification shown (A publishes) | ${shown_wakeups:-?} | ${shown_events:-?} | | ${shown_rss:-?} | ${shown_hwm:-?} | ${shown_anon:-?} / ${shown_file:-?} |

The floor is libdispatch's own: on Linux it emulates the kernel workqueue with a monitor, a timer
that fires once a second on its manager queue (\`_dispatch_workq_monitor_pools\`), in every Swift
program whose runtime has started libdispatch's workers. The agent's own threads (the session bus's
\`dbus-loop\`, HandoffKit's NIO event loop, the desktop-entry watcher in \`poll\` on its inotify
descriptor, which inherited its creator's name) sleep with no timeout; "sleeps in" is the system
call each was in at the end of the window (\`/proc/PID/task/TID/syscall\`).

Per thread, idle (the agent, then the floor):

\`\`\`
${idle_rows:-}
floor:
${floor_rows:-}
\`\`\`

Where the idle agent's resident memory is (the largest mappings by \`Rss\` in \`/proc/PID/smaps\`):

\`\`\`
${resident:-}
\`\`\`

Of the executable (its mappings by permission: code, read-only data, data):

\`\`\`
${resident_binary:-}
\`\`\`

With the notification shown (${shown_notifies:-?} Notify call(s) in all). Wakeups beyond the floor there
would be the agent's work on handoffd's events (an \`updated\` for a changed signal strength, say;
handoffd sent ${shown_events:-?} in the window) or on the bus:

\`\`\`
${shown_rows:-}
\`\`\`

${agent_strace:-}
${agent_errors:+
Problems: ${agent_errors}}
SECTION
)
fi

# --- The beacon codec (BeaconBench prints its own section) --------------------------------------
beacon_section=""
if wants beacon; then
    say "BeaconBench"
    if beacon_section=$("$bin/BeaconBench" 2>"$work/beacon.err"); then
        :
    else
        status=$?
        beacon_section=$(printf '## Beacons\n\nBeaconBench failed (exit status %s):\n\n```\n%s\n```' "$status" "$(tail -20 "$work/beacon.err")")
    fi
fi

# --- Write -------------------------------------------------------------------------------
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
mkdir -p "$(dirname "$out")"
if [[ "$sections" == " dbus idle scan daemon agent beacon " || ! -s "$out" ]]; then
    # Sections other scripts write (make bench-continue, make bench-desktop: the VM rig)
    # are kept as they were, after this run's.
    kept=""
    if [[ -s "$out" ]]; then
        kept=$("$python" - "$out" <<'PY'
import sys
lines = open(sys.argv[1]).read().rstrip("\n").split("\n")
ours = ("## D-Bus", "## Idle", "## Scanning", "## Beacon", "## Whole", "## Agent")
keep, inside = [], False
for line in lines:
    if line.startswith("## "):
        inside = not line.startswith(ours)
        if inside and keep:
            keep.append("")
    if inside:
        keep.append(line)
print("\n".join(keep).strip("\n"))
PY
)
    fi
    {
        echo "# Benchmarks"
        echo
        echo "Written by \`make bench\` (scripts/bench.sh) on ${started}. Release builds."
        echo
        echo "- Machine: ${cpus} CPUs (${cpu_model}), ${kernel}"
        echo "- Load average (1, 5, 15 min): ${load_before} before, ${load_after} after. Figures taken on a busy"
        echo "  machine are low and noisy; compare rows of one run with each other rather than across runs."
        echo "- ${swift_version}"
        echo "- ${daemon_version}; ${python_dbus}; libdbus ${libdbus_version}; ${cc_version}"
        for section in "$dbus_section" "$idle_section" "$scan_section" "$daemon_section" "$agent_section" "$beacon_section"; do
            [[ -n "$section" ]] || continue
            echo
            echo "$section"
        done
        if [[ -n "$kept" ]]; then
            echo
            echo "$kept"
        fi
    } >"$out"
else
    # Some sections only: each replaces its own section of the existing file (from its
    # "## " heading to the next one); the header and the other sections stay as they were.
    note="Measured on ${started} with \`BENCH_SECTIONS=\"${BENCH_SECTIONS:-}\" scripts/bench.sh\` (load average ${load_before} before, ${load_after} after), on top of the header's run."
    for section in "$dbus_section" "$idle_section" "$scan_section" "$daemon_section" "$agent_section" "$beacon_section"; do
        [[ -n "$section" ]] || continue
        printf '%s' "$section" >"$work/section.md"
        NOTE="$note" "$python" - "$out" "$work/section.md" <<'PY'
import os, sys
out, new_path = sys.argv[1], sys.argv[2]
new = open(new_path).read().rstrip("\n").split("\n")
heading, body = new[0], new[1:]
new = [heading, "", os.environ["NOTE"]] + body
lines = open(out).read().rstrip("\n").split("\n")
# Sections are matched on the heading's first words ("## Beacon" also matches "## Beacons").
key = " ".join(heading.split()[:2])
start = next((i for i, l in enumerate(lines) if l.startswith("## ") and " ".join(l.split()[:2]).rstrip("s") == key.rstrip("s")), None)
if start is None:
    lines += [""] + new
else:
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
    tail = [""] if end < len(lines) else []
    lines = lines[:start] + new + tail + lines[end:]
open(out, "w").write("\n".join(lines) + "\n")
PY
    done
fi
say "wrote $out"
