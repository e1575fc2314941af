#!/usr/bin/env bash
# bench-monitor.sh: what scanning through bluetoothd's advertisement monitor changes against
# filtered discovery (issue 17), on real bluetoothd in the VM rig with a stranger flooding, and
# its figures into docs/BENCHMARKS.md (the section "Advertisement monitor against discovery" only).
# `make bench-monitor` runs it.
#
# Builds handoffd and handoffctl as `make install` builds them, boots the rig
# (scripts/vm-rig/run-rig.sh) and runs Tests/e2e/guest-monitor.sh there: bluetoothd 5.66 with -E
# (it offers AdvertisementMonitorManager1 only so) and without -d, no btmon; A (hci0) publishes
# one activity, a stranger (hci2) changes the data of three advertisements that are not handoff
# beacons every 50 ms between them, and B (hci1) runs a phase with [scan] monitor = "auto" and one
# with "off", each BENCH_MONITOR_SECONDS long, in the order BENCH_MONITOR_ORDER. Per phase: CPU of
# B's handoffd, the dbus-daemon and bluetoothd, the Device1 signals about hci1 on the bus, B's
# status counters, and whether B lists A's activity (a check, as is B's scan path).
#
# Needs root (qemu boots /boot's kernel). Usage: bench-monitor.sh [--bin DIR]
#   --bin DIR   use the handoffd and handoffctl in DIR instead of building them (BENCH_MONITOR_BIN);
#               DIR/commit.txt, when there, names the commit they were built from
#
# qemu TCG charges a guest process for time its vCPU was descheduled on the host, so the host's other
# work inflates the guest's CPU figures: this script samples the host's load every 5 s into the
# run's logs (host-load.txt), and the guest measures a phase again (twice at most) when the host was
# more than BENCH_MONITOR_HOST_BUSY_MAX % (default 15; 0: never) busy outside qemu during it.
# Environment: BENCH_MONITOR_SECONDS (default 60), BENCH_MONITOR_ORDER (default "auto off off auto"),
# BENCH_OUT (default docs/BENCHMARKS.md), SWIFT, SWIFT_FLAGS, INSTALL_BUILD_FLAGS (as the Makefile),
# E2E_LOGS (where the run's logs go: default e2e-logs/bench-monitor/<timestamp>);
# BENCH_MONITOR_LOGS=DIR skips building and running and writes the section from the logs of an
# earlier run in DIR. Exit status: 0 when measured and every check passed, 1 otherwise.
set -uo pipefail
cd "$(dirname "$0")/.."

SWIFT=${SWIFT:-swift}
seconds=${BENCH_MONITOR_SECONDS:-60}
order=${BENCH_MONITOR_ORDER:-auto off off auto}
out=${BENCH_OUT:-docs/BENCHMARKS.md}
flags="${INSTALL_BUILD_FLAGS:--c release --static-swift-stdlib -Xswiftc -cross-module-optimization --disable-local-rpath -Xlinker --no-export-dynamic} ${SWIFT_FLAGS:-}"
bin=${BENCH_MONITOR_BIN:-}
say() { echo "bench-monitor: $*" >&2; }
while [ $# -gt 0 ]; do
    case "$1" in
        --bin) bin=$2; bin_given=1; shift 2 ;;
        *) say "unknown argument $1 (usage: bench-monitor.sh [--bin DIR])"; exit 2 ;;
    esac
done

if [[ -n "${BENCH_MONITOR_LOGS:-}" ]]; then
    logs=$(cd "$BENCH_MONITOR_LOGS" && pwd) || { say "FAILED: no folder $BENCH_MONITOR_LOGS"; exit 1; }
    grep -q '^SUMMARY passed' "$logs/results.txt" 2>/dev/null || { say "FAILED: that run did not pass"; exit 1; }
else
[[ $(id -u) -eq 0 ]] || { say "FAILED: must run as root: qemu boots the kernel image in /boot"; exit 1; }
if [[ -n "$bin" ]]; then
    bin=$(cd "$bin" && pwd) || { say "FAILED: no folder $bin"; exit 1; }
    [[ -x "$bin/handoffd" && -x "$bin/handoffctl" ]] || { say "FAILED: no handoffd and handoffctl in $bin"; exit 1; }
    say "using handoffd and handoffctl in $bin (not built here; taken as built \`$flags\`)"
else
    read -r -a build_flags <<<"$flags"
    say "building handoffd and handoffctl ($flags)"
    for product in handoffd handoffctl; do
        "$SWIFT" build "${build_flags[@]}" --product "$product" >/dev/null || { say "FAILED: the build of $product failed"; exit 1; }
    done
    bin=$("$SWIFT" build "${build_flags[@]}" --show-bin-path) || { say "FAILED: --show-bin-path failed"; exit 1; }
fi

logs=${E2E_LOGS:-e2e-logs}/bench-monitor/$(date +%Y%m%d-%H%M%S)
mkdir -p "$logs" || { say "FAILED: cannot create $logs"; exit 1; }
logs=$(cd "$logs" && pwd)
# The guest runs a copy of Tests/e2e, kept with the logs (as scripts/e2e.sh does).
cp -r Tests/e2e "$logs/guest" || { say "FAILED: cannot copy Tests/e2e to $logs"; exit 1; }
date -u +"%Y-%m-%d at %H:%M UTC" > "$logs/started.txt"
echo "$flags" > "$logs/flags.txt"
# The commit the binaries were built from: --bin's commit.txt when it has one, else the work tree's.
if [[ -n "${BENCH_MONITOR_BIN:-}${bin_given:-}" ]]; then
    cat "$bin/commit.txt" > "$logs/commit.txt" 2>/dev/null || echo "unknown (--bin $bin)" > "$logs/commit.txt"
else
    echo "$(git rev-parse --short HEAD 2>/dev/null)$(git diff --quiet HEAD -- Sources Package.swift 2>/dev/null || echo ' with uncommitted changes')" > "$logs/commit.txt"
fi
nproc > "$logs/host-cpus.txt"
# How this run was started, for the section.
cmd="sudo make bench-monitor"
[[ -n "${bin_given:-}${BENCH_MONITOR_BIN:-}" ]] && cmd="sudo scripts/bench-monitor.sh --bin $bin"
[[ "$seconds" != 60 ]] && cmd="BENCH_MONITOR_SECONDS=$seconds $cmd"
[[ "$order" != "auto off off auto" ]] && cmd="BENCH_MONITOR_ORDER=\"$order\" $cmd"
echo "$cmd" > "$logs/command.txt"
say "running the phases \"$order\" of ${seconds}s each in the VM rig (about $(( ($(wc -w <<<"$order") * (seconds + 40) + 120) / 60 )) minutes); logs: $logs"
t0=$(date +%s)
# The host's own load while the guest runs: qemu TCG charges a guest process for the time its vCPU
# was not running on the host, so other work on the host inflates the guest's CPU figures. Every
# 5 s: the time, the host's /proc/stat cpu line and qemu's utime + stime (host-load.txt).
( hz=$(getconf CLK_TCK)
  while :; do
      q=""
      for p in $(pgrep -f "rig.out=$logs"); do [ "$(cat /proc/$p/comm 2>/dev/null)" = qemu-system-x86 ] && q=$p; done
      qt=-1
      [ -n "$q" ] && qt=$(awk '{sub(/.*\) /, ""); print $12 + $13}' /proc/$q/stat 2>/dev/null)
      echo "$(date +%s.%N) $hz $(head -1 /proc/stat) qemu ${qt:--1}"
      sleep 5
  done ) > "$logs/host-load.txt" 2>/dev/null &
sampler=$!
RIG_OUT="$logs" RIG_TIMEOUT="${BENCH_MONITOR_TIMEOUT:-2400}" scripts/vm-rig/run-rig.sh "$logs/guest/guest-monitor.sh" \
    --bin "$bin" --seconds "$seconds" --order "$order" --host-load "$logs/host-load.txt" --host-cpus "$(nproc)" \
    --host-busy-max "${BENCH_MONITOR_HOST_BUSY_MAX:-15}" > "$logs/console.log" 2>&1
rc=$?
kill "$sampler" 2>/dev/null; wait "$sampler" 2>/dev/null
echo "$(( $(date +%s) - t0 ))" > "$logs/wall-seconds.txt"
grep -E '^(PASS|FAIL|SUMMARY)' "$logs/console.log" >&2
if [[ $rc -ne 0 ]]; then
    tail -5 "$logs/console.log" >&2
    say "FAILED (guest exit $rc); logs: $logs"
    exit 1
fi
fi
started=$(cat "$logs/started.txt" 2>/dev/null || date -u -r "$logs/results.txt" +"%Y-%m-%d at %H:%M UTC")
flags=$(cat "$logs/flags.txt" 2>/dev/null || echo "$flags")
commit=$(head -1 "$logs/commit.txt" 2>/dev/null); commit=${commit:-unknown}

command=$(cat "$logs/command.txt" 2>/dev/null || echo "sudo make bench-monitor")

section=$(/usr/bin/python3 - "$logs" "$started" "$flags" "$commit" "$command" <<'PY'
import json, re, sys, textwrap
def para(text):
    print(textwrap.fill(" ".join(text.split()), width=110, break_long_words=False, break_on_hyphens=False))
logs, started, commit = sys.argv[1], sys.argv[2], sys.argv[4]
command = sys.argv[5]
commit = commit[:7] if re.fullmatch(r"[0-9a-f]{40}", commit) else commit
flags = " ".join(re.sub(r"--scratch-path \S+", "", sys.argv[3]).split())
records = [json.loads(l) for l in open(logs + "/monitor-results.jsonl") if l.strip()]
rows = [r for r in records if not r.get("repeated")]
repeated = [r for r in records if r.get("repeated")]
setup = open(logs + "/monitor-setup.txt").read().splitlines()
assert rows and all(r["listedAtEnd"] and r["bluetoothdAlive"] for r in rows), "a phase failed"
PATH = {"auto": "monitor", "off": "discovery"}
assert all(r["scanPathStart"] == r["scanPathEnd"] == PATH[r["mode"]] for r in rows), "a scan path was wrong"
hz = int(re.search(r"clock ticks (\d+)/s", "\n".join(setup)).group(1))
cpus = int(re.search(r"guest CPUs (\d+)", "\n".join(setup)).group(1))


def figures(r):
    """One phase's figures, each per minute of its own reading's span."""
    a, b = r["start"], r["end"]
    f = {}
    span = b["t"] - a["t"]                              # the /proc readings
    per = 60.0 / span
    for k in a["ticks"]:
        f["cpu_" + k] = (b["ticks"][k] - a["ticks"][k]) * 1000.0 / hz * per   # ms of CPU per minute
    total = [y - x for x, y in zip(a["guestCpu"], b["guestCpu"])]
    busy = sum(total) - total[3] - total[4]             # all but idle and iowait
    f["guest_busy"] = 100.0 * busy / (hz * cpus * span)
    f["guest_ctxt"] = (b["guestCtxt"] - a["guestCtxt"]) * per
    for who in ("b", "dbus", "bluetoothd"):
        s0, s1 = a["switches"][who], b["switches"][who]
        vol = sum(v[0] - s0.get(t, [0, 0])[0] for t, v in s1.items())
        inv = sum(v[1] - s0.get(t, [0, 0])[1] for t, v in s1.items())
        f["sw_" + who] = (vol + inv) * per
        f["swv_" + who] = vol * per
        f["threads_" + who] = (len(s0), len(s1))
    f["hci1_events"] = (b["hci1"]["events"] - a["hci1"]["events"]) * per if a["hci1"] and b["hci1"] else None
    bs = b["bus"]["t"] - a["bus"]["t"]
    for k in ("all", "deviceChanged", "deviceAdded", "deviceRemoved", "ownHeader", "ffffForeign", "otherCompany",
              "noManufacturerData", "adapterOther"):
        f["bus_" + k] = (b["bus"][k] - a["bus"][k]) * 60.0 / bs
    f["bus_device"] = f["bus_deviceChanged"] + f["bus_deviceAdded"]
    ss = b["stranger"]["t"] - a["stranger"]["t"]
    f["sent"] = (b["stranger"]["sent"] - a["stranger"]["sent"]) * 60.0 / ss
    st = b["tStatus"] - a["tStatus"]
    for k in ("scanReportsHeard", "beaconsRejected", "beaconsRecognized", "scanReportsDropped", "beaconCopiesRefused"):
        f[k] = ((b["status"].get(k) or 0) - (a["status"].get(k) or 0)) * 60.0 / st
    f["span"] = span
    f["to_list"] = r["startToListedMs"] / 1000.0
    return f


# The host's other work in each window (host-load.txt, host-cpus.txt): the share of the host's
# cores busy with anything but qemu.
host = []
try:
    ncpu = int(open(logs + "/host-cpus.txt").read())
    for line in open(logs + "/host-load.txt"):
        p = line.split()
        if len(p) < 13 or p[-1] == "-1":
            continue
        c = [int(x) for x in p[3:11]]
        host.append((float(p[0]), int(p[1]), sum(c) - c[3] - c[4], int(p[-1])))
except (OSError, ValueError):
    host, ncpu = [], 0


def other_load(t0, t1):
    s = [h for h in host if t0 - 2.5 <= h[0] <= t1 + 2.5]
    if len(s) < 2 or not ncpu:
        return None
    a, b = s[0], s[-1]
    return max(0.0, 100.0 * ((b[2] - a[2]) - (b[3] - a[3])) / (a[1] * ncpu * (b[0] - a[0])))


figs = [(r, figures(r)) for r in rows]
for r, f in figs:
    f["host_other"] = max(0.0, r["hostBusy"]) if r.get("hostBusy") is not None else other_load(r["start"]["t"], r["end"]["t"])
by = {m: [f for r, f in figs if r["mode"] == m] for m in ("auto", "off")}
assert by["auto"] and by["off"], "both paths must have run"


def mean(mode, key):
    v = [f[key] for f in by[mode] if f[key] is not None]
    return sum(v) / len(v) if v else None


def num(v, unit=""):
    if v is None:
        return "n/a"
    s = f"{v:,.0f}" if abs(v) >= 10 or v == 0 else f"{v:.1f}"
    return s + unit


def ratio(key):
    m, d = mean("auto", key), mean("off", key)
    if m is None or d is None or d == 0:
        return "n/a"
    r = m / d
    return f"{r:.2f}" if r >= 0.01 else f"{r:.3f}"


order = " → ".join(PATH[r["mode"]] for r in rows)
window = round(sum(f["span"] for _, f in figs) / len(figs))
ready = next((json.loads(l) for l in open(logs + "/stranger.jsonl") if '"ready"' in l), {})
adverts, period = ready.get("adverts"), ready.get("periodMs")
companies = ready.get("companies", [])
print("## Advertisement monitor against discovery (real bluetoothd, VM rig)\n")
setup0 = "\n".join(setup)
kernel = re.search(r"kernel (\S+?),", setup0)
btd = re.search(r"bluetoothd (\d[\d.]*)", setup0)
para(f"""Measured on {started} with `{command}` (scripts/bench-monitor.sh, `make bench-monitor`;
Tests/e2e/guest-monitor.sh in the guest): issue 17's question, what scanning through bluetoothd's advertisement monitor
(`[scan] monitor = "auto"`) changes against filtered discovery (`"off"`) while a stranger floods. VM rig (qemu
TCG, {cpus} vCPUs, kernel {kernel.group(1) if kernel else "?"}): bluetoothd {btd.group(1) if btd else "?"} with `-E` (5.66
offers `AdvertisementMonitorManager1` only so) and `Privacy = device`, without `-d`, no btmon; btvirt controllers
with extended advertising that hear each other; one bluetoothd serves all four. handoffd and handoffctl (commit
{commit}) built `{flags}`, run with the default configuration but for the adapter and `[scan] monitor`. A (hci0,
monitor) publishes one activity for the whole run (its beacon renewed every third of the default 45 s
expiry). The stranger on hci2 (`Tests/e2e/stranger-flood.py`) registers {adverts} non-connectable advertisements
through bluetoothd, company IDs {", ".join(companies)} (the 0xFFFF one with header 0x2_, not a beacon's version),
and changes one of them in turn with `PropertiesChanged`, so that each gets new 24-byte data every {period} ms.
B (hci1) starts afresh for each phase with `monitor = "auto"` (checked: `scanPath` `monitor`, hci1 not
discovering) or `"off"` (`scanPath` `discovery`, hci1 discovering); once B lists A's activity and has run
20 s (its start-up work is over), a window of about {window} s is measured. Phases in this order: {order}.
Every figure is per minute, the mean of the phases of each path; CPU is utime + stime from
`/proc/PID/stat`. A signal counter (`Tests/e2e/bus-count.py`, with handoffd's match rule: every signal from
org.bluez) ran through all phases.""")
print()
print("| per minute | monitor | discovery | monitor / discovery |")
print("| --- | ---: | ---: | ---: |")


def row(name, key, unit=""):
    print(f"| {name} | {num(mean('auto', key), unit)} | {num(mean('off', key), unit)} | {ratio(key)} |")


row("stranger's data changes sent", "sent")
row("HCI events from hci1's controller to its host", "hci1_events")
row("Device1 signals about hci1's devices (PropertiesChanged + InterfacesAdded)", "bus_device")
row("… of them with the stranger's data (other company IDs)", "bus_otherCompany")
row("… with the stranger's 0xFFFF data (foreign header)", "bus_ffffForeign")
row("… with a handoff header (A's beacons)", "bus_ownHeader")
row("… without manufacturer data", "bus_noManufacturerData")
row("all signals from org.bluez (what every handoffd is sent)", "bus_all")
row("B: `scanReportsHeard`", "scanReportsHeard")
row("B: `beaconsRejected`", "beaconsRejected")
row("B: `beaconsRecognized`", "beaconsRecognized")
row("B's handoffd, CPU", "cpu_b", " ms")
row("B's handoffd, context switches", "sw_b")
row("A's handoffd, CPU (sent the same signals)", "cpu_a", " ms")
row("system dbus-daemon, CPU", "cpu_dbus", " ms")
row("dbus-daemon, context switches", "sw_dbus")
row("bluetoothd (all four controllers), CPU", "cpu_bluetoothd", " ms")
row("bluetoothd, context switches", "sw_bluetoothd")
row("btvirt (all four controllers), CPU", "cpu_btvirt", " ms")
row("the stranger's script, CPU", "cpu_stranger", " ms")
row("the signal counter, CPU", "cpu_counter", " ms")
print(f"| guest, busy (of {cpus} vCPUs) | {mean('auto', 'guest_busy'):.0f} % | {mean('off', 'guest_busy'):.0f} % | {ratio('guest_busy')} |")
print()
print("| phase | path | window | B listed A's activity after B's start | B's CPU | dbus-daemon CPU | bluetoothd CPU | hci1 Device1 signals | B heard / rejected / recognized | stranger's changes | host busy outside qemu |")
print("| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
for r, f in figs:
    span = f["span"] / 60.0
    print(f"| {r['phase']} | {PATH[r['mode']]} | {f['span']:.0f} s | {f['to_list']:.1f} s | {f['cpu_b'] * span:,.0f} ms | "
          f"{f['cpu_dbus'] * span:,.0f} ms | {f['cpu_bluetoothd'] * span:,.0f} ms | {f['bus_device'] * span:,.0f} | "
          f"{f['scanReportsHeard'] * span:,.0f} / {f['beaconsRejected'] * span:,.0f} / {f['beaconsRecognized'] * span:,.0f} | "
          f"{f['sent'] * span:,.0f} | {'n/a' if f['host_other'] is None else format(f['host_other'], '.0f') + ' %'} |")
print("\n(Per-phase counts are per window, the per-minute rates scaled back; B listed A's activity at the end of every window.)")

# What the figures show, in the run's own numbers.
dev_m, dev_d = mean("auto", "bus_device"), mean("off", "bus_device")
hci_m, hci_d = mean("auto", "hci1_events"), mean("off", "hci1_events")
cb_m, cb_d = mean("auto", "cpu_b"), mean("off", "cpu_b")
db_m, db_d = mean("auto", "cpu_dbus"), mean("off", "cpu_dbus")
bt_m, bt_d = mean("auto", "cpu_bluetoothd"), mean("off", "cpu_bluetoothd")
sw_m, sw_d = mean("auto", "sw_b"), mean("off", "sw_b")
thr = sorted({n for f in by["auto"] + by["off"] for n in f["threads_b"]})
def about(m, d):
    """How two figures compare, in words the numbers bear out."""
    r = m / d if d else float("inf")
    if 0.8 <= r <= 1.25:
        return "about as many"
    return "fewer" if r < 1 else "more"


host_m, host_d = mean("auto", "host_other"), mean("off", "host_other")
limit = re.search(r"host busy max (\S+) %", setup0)
again = ""
if repeated:
    again = (f"{len(repeated)} attempt(s) were measured again because the host was more than "
             f"{limit.group(1) if limit else '?'} % busy outside qemu during them ("
             + ", ".join(f"phase {r['phase']}: {r['hostBusy']:.0f} %" for r in repeated)
             + "); the tables show the attempt kept. ")
host_all = [f["host_other"] for _, f in figs if f["host_other"] is not None]
lists = [f["to_list"] for _, f in figs]
print()
para(f"""**What it shows.** hci1's controller sent its host {about(hci_m, hci_d)} events on either path
({num(hci_m)} against {num(hci_d)} a minute): btvirt has no controller offload (the manager's
`SupportedFeatures` is empty), so on the monitor path the kernel scans passively and bluetoothd matches the patterns in software
(B logged "bluetoothd filters"). What changed is what leaves bluetoothd: with the monitor, {num(dev_m)} Device1 signals a
minute about hci1's devices, all of them A's beacons; with discovery {num(dev_d)}, all but
{num(mean('off', 'bus_ownHeader'))} (A's) of them the stranger's. The dbus-daemon delivers each to every program that follows
bluetoothd's signals (here B's and A's handoffd and the signal counter), and B decodes them and drops the
other companies' or rejects the 0xFFFF ones (`beaconsRejected`). B's handoffd used {num(cb_m)} ms of CPU a
minute on the monitor path against {num(cb_d)} ms on the discovery path ({ratio('cpu_b')}×), and switched
context {num(sw_m)} against {num(sw_d)} times a minute ({ratio('sw_b')}×; summed over the threads alive at
both readings of a window, {"–".join(map(str, thr))} of them, so a thread that ended inside a window would be
missing). A's handoffd, on the monitor path throughout, used {num(mean('auto', 'cpu_a'))} against
{num(mean('off', 'cpu_a'))} ms: it is sent B's adapter's signals too. The dbus-daemon used {num(db_m)} against
{num(db_d)} ms ({ratio('cpu_dbus')}×) and bluetoothd {num(bt_m)} against {num(bt_d)} ms
({ratio('cpu_bluetoothd')}×). In the rig both also carry the stranger's own side, the same on both paths, which a
real stranger (another device) would not put on this laptop: its script's `PropertiesChanged` go through the
dbus-daemon to bluetoothd, which puts each new data on the air from hci2; so for them the difference,
{num(db_d - db_m)} and {num(bt_d - bt_m)} ms a minute, says more than the ratio.""")
print()
para(f"""qemu TCG charges a guest process for time its vCPU was not running on the host, so work elsewhere on the
host inflates the guest's CPU figures: the last column of the phase table is the share of the host's cores
busy with anything but qemu during each window ({min(host_all):.0f} to {max(host_all):.0f} % in this run,
{num(host_m)} % on average in the monitor phases and {num(host_d)} % in the discovery phases).
{again}B listed A's activity {min(lists):.1f} to {max(lists):.1f} s after its start, on either path.""" if host_all else "")
print()
para("""**Power.** For the monitor, the kernel scans passively (it sends no scan requests), where discovery scans
actively; scan requests were not counted here. On btvirt the controller sends its host about as many events
either way, as measured above; on a controller whose manager lists "controller-patterns" in `SupportedFeatures` the
patterns are matched in the controller, which should wake the host only for matching advertisements:
not measured, as btvirt has no such offload and the rig has no other controller. What the monitor saves
here is in the host's software: the D-Bus signals about strangers, and with them the wakeups and CPU of
every handoffd (and every other follower of bluetoothd's signals). The costs: the API is experimental in
BlueZ 5.66 and needs `bluetoothd -E`, which turns on its other experimental features too; and bluetoothd
reports a device through the monitor only when its advertisement changes, which handoffd's beacon renewal
(every third of the nearby expiry) covers: B listed A's activity at the end of every window on both paths.
The rig's CPU is emulated, so the milliseconds are the emulated machine's, for comparing the two paths
with each other, not a laptop's figures.""")
PY
) || { say "FAILED: could not read the figures from $logs"; exit 1; }

scripts/bench/put-section.py "$out" "$section" || { say "FAILED: could not write $out"; exit 1; }
echo "$section"
say "wrote the section \"Advertisement monitor against discovery\" of $out"
