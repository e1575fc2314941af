#!/usr/bin/env bash
# make bench: measures the DBus module against python3-dbus on a private bus,
# counts an idle connection's wakeups, runs BeaconBench, and writes every
# figure to docs/BENCHMARKS.md.
#
# Environment (all optional):
#   BENCH_SECONDS       length of each throughput run (default 2.5)
#   BENCH_ROUNDS        runs of each throughput scenario; the best is kept (default 2)
#   BENCH_IDLE_SECONDS  length of each idle measurement (default 5)
#   BENCH_OUT           where to write (default docs/BENCHMARKS.md)
#   SWIFT, SWIFT_FLAGS  as in the Makefile (e.g. SWIFT_FLAGS="--scratch-path .build-x")
#
# Every process it starts is killed by PID on exit.
set -euo pipefail
cd "$(dirname "$0")/.."

SWIFT=${SWIFT:-swift}
read -r -a swift_flags <<<"${SWIFT_FLAGS:-}"
run_seconds=${BENCH_SECONDS:-2.5}
rounds=${BENCH_ROUNDS:-2}
idle_seconds=${BENCH_IDLE_SECONDS:-5}
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

# start OUT ERR CMD…: runs CMD in the background as a new process group; sets $started_pid.
start() {
    local out=$1 err=$2
    shift 2
    setsid "$@" >"$out" 2>"$err" &
    started_pid=$!
    groups+=("$started_pid")
}

# --- Build -----------------------------------------------------------------------
say "building DBusBench and BeaconBench (release)"
"$SWIFT" build -c release "${swift_flags[@]}" --product DBusBench >&2
"$SWIFT" build -c release "${swift_flags[@]}" --product BeaconBench >&2
bin=$("$SWIFT" build -c release "${swift_flags[@]}" --show-bin-path)

# --- Header facts (taken before anything runs) -------------------------------------
started=$(date -u '+%Y-%m-%d %H:%M UTC')
cpus=$(nproc)
cpu_model=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
kernel=$(uname -sr)
swift_version=$("$SWIFT" --version 2>/dev/null | head -1)
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
daemon_version=$(dbus-daemon --version | head -1)
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
for _ in $(seq 100); do
    [[ -s "$work/address" ]] && break
    sleep 0.1
done
[[ -s "$work/address" ]] || { say "dbus-daemon did not start: $(cat "$work/bus.log")"; exit 1; }
export DBUS_SESSION_BUS_ADDRESS
DBUS_SESSION_BUS_ADDRESS=$(head -1 "$work/address")
say "private bus at $DBUS_SESSION_BUS_ADDRESS"

# --- Throughput: DBusBench against python3-dbus ----------------------------------------------
say "calls and signals: ${rounds} rounds, ${run_seconds} s per run"
start "$work/report.md" /dev/stderr "$bin/DBusBench" report --peer "$peer" --python "$python" \
    --seconds "$run_seconds" --rounds "$rounds"
if wait "$started_pid" && [[ -s "$work/report.md" ]]; then
    dbus_section=$(cat "$work/report.md")
else
    dbus_section=$'## D-Bus: the DBus module against python3-dbus\n\n`DBusBench report` failed; see the output of `make bench`.'
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

# --- The beacon codec (BeaconBench prints its own section) --------------------------------------
say "BeaconBench"
if beacon_section=$("$bin/BeaconBench" 2>"$work/beacon.err"); then
    :
else
    status=$?
    beacon_section=$(printf '## Beacons\n\nBeaconBench failed (exit status %s):\n\n```\n%s\n```' "$status" "$(tail -20 "$work/beacon.err")")
fi

# --- Write -------------------------------------------------------------------------------
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
mkdir -p "$(dirname "$out")"
{
    echo "# Benchmarks"
    echo
    echo "Written by \`make bench\` (scripts/bench.sh) on ${started}. Release builds."
    echo
    echo "- Machine: ${cpus} CPUs (${cpu_model}), ${kernel}"
    echo "- Load average (1, 5, 15 min): ${load_before} before, ${load_after} after. Figures taken on a busy"
    echo "  machine are low and noisy; compare rows of one run with each other rather than across runs."
    echo "- ${swift_version}"
    echo "- ${daemon_version}; ${python_dbus}"
    echo
    echo "$dbus_section"
    echo
    echo "$idle_section"
    echo
    echo "$beacon_section"
} >"$out"
say "wrote $out"
