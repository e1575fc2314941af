#!/usr/bin/env bash
# bench-streams.sh: continuation streams through both daemons on real bluetoothd (issue 16), and the
# figures into docs/BENCHMARKS.md (its section "Continuation streams" only). `make bench-continue`
# runs it after the continue latency and the raw LE L2CAP channel (scripts/bench-l2cap.sh).
#
# Runs the e2e suite's streams scenario (Tests/e2e/guest-e2e.sh) in the VM rig with release builds
# of handoffd, handoffctl and handoff-example-document, as `make install` builds them, and
# bluetoothd as a laptop runs it (--quiet: no -d, no btmon, no D-Bus monitor). A (hci0) serves a
# 1 MB document with `handoff-example-document serve`; B (hci1) fetches it BENCH_STREAMS_RUNS
# times with `handoff-example-document fetch --rounds 2`, each on a new continuation stream through
# both daemons. Figures from the app's RESULT line of each run (first round): time to open the
# stream (continueWithStreams), time to first byte after the request, throughput. Median and
# range are computed here, and the ratio of the median throughput to the raw channel's median in
# the section "LE L2CAP channel" of the same BENCHMARKS.md (written by bench-l2cap.sh just before
# in `make bench-continue`, which sets BENCH_CONTINUE_STARTED to its start in unix seconds, so that
# the section can say whether the raw figure is of the same run).
#
# Needs root (qemu boots /boot's kernel). Environment: BENCH_STREAMS_RUNS (default 5), BENCH_OUT
# (default docs/BENCHMARKS.md), SWIFT, SWIFT_FLAGS, INSTALL_BUILD_FLAGS (as the Makefile), E2E_LOGS.
# Exit status: 0 when measured and every run passed its checks, 1 otherwise.
set -uo pipefail
cd "$(dirname "$0")/.."

SWIFT=${SWIFT:-swift}
runs=${BENCH_STREAMS_RUNS:-5}
out=${BENCH_OUT:-docs/BENCHMARKS.md}
flags="${INSTALL_BUILD_FLAGS:--c release --static-swift-stdlib -Xswiftc -cross-module-optimization} ${SWIFT_FLAGS:-}"
say() { echo "bench-streams: $*" >&2; }

[[ $(id -u) -eq 0 ]] || { say "FAILED: must run as root: qemu boots the kernel image in /boot"; exit 1; }
read -r -a build_flags <<<"$flags"
say "building handoffd, handoffctl and handoff-example-document ($flags)"
for product in handoffd handoffctl handoff-example-document; do
    "$SWIFT" build "${build_flags[@]}" --product "$product" >/dev/null || { say "FAILED: the build of $product failed"; exit 1; }
done

work=${E2E_LOGS:-e2e-logs}/bench-streams
mkdir -p "$work" || { say "FAILED: cannot create $work"; exit 1; }
started=$(date -u +"%Y-%m-%d at %H:%M UTC")
t0=$(date +%s)
say "running the streams scenario in the VM rig, $runs fetches of 1 MB (a few minutes)"
if ! SWIFT_FLAGS="$flags" E2E_CONFIG=private E2E_QUIET=1 E2E_RUNS="$runs" E2E_LOGS="$work" scripts/e2e.sh streams >"$work/last.out" 2>&1; then
    tail -20 "$work/last.out" >&2
    say "FAILED: the streams scenario failed (above); logs in $work"
    exit 1
fi
wall=$(( $(date +%s) - t0 ))
logs=$(ls -td "$work"/*/ | head -1)

section=$(/usr/bin/python3 - "$logs" "$runs" "$started" "$flags" "$wall" "$out" "${BENCH_CONTINUE_STARTED:-}" <<'PY'
import re, statistics, sys
logs, runs, started, flags, wall, out = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], int(sys.argv[5]), sys.argv[6]
same_since = int(sys.argv[7]) if sys.argv[7] else None
flags = " ".join(re.sub(r"--scratch-path \S+", "", flags).split())
rows = []
for line in open(logs + "streams-results.txt"):
    if line.startswith("RESULT "):
        rows.append({k: v for k, v in re.findall(r"(\w+)=(\S+)", line)})
assert len(rows) == runs, f"{len(rows)} RESULT lines for {runs} runs"
def col(key): return [float(r[key]) for r in rows]
def row(name, key, unit, fmt="{:.0f}"):
    v = col(key)
    each = " ".join(fmt.format(x) for x in v)
    return (f"| {name} | {fmt.format(statistics.median(v))} {unit} | {fmt.format(min(v))} {unit} | "
            f"{fmt.format(max(v))} {unit} | {each} |")
kbit = statistics.median(col("kbit_s"))
# The raw channel's median throughput, from bench-l2cap's section of the same file.
raw, raw_date = None, None
try:
    text = open(out).read()
    sec = text[text.index("## LE L2CAP channel"):]
    sec = sec[:sec.find("\n## ", 3)] if "\n## " in sec[3:] else sec
    m = re.search(r"^\| throughput O→C \| ([0-9.]+) kbit/s", sec, re.M)
    d = re.search(r"Measured on (\d{4}-\d\d-\d\d at \d\d:\d\d UTC)", sec)
    if m: raw, raw_date = float(m[1]), (d[1] if d else "an unknown date")
except ValueError:
    pass
print("## Continuation streams (both daemons, real bluetoothd, VM rig)\n")
print(f"Measured on {started} with `sudo make bench-continue` (scripts/bench-streams.sh; only this section:")
print("`sudo make bench-continue BENCH_SECTIONS=streams`): the e2e suite's streams scenario in the VM rig (qemu")
print("TCG, Debian's kernel, bluetoothd 5.66 with `Privacy = device`, btvirt controllers with extended")
print(f"advertising), with handoffd, handoffctl and handoff-example-document built as `make install` builds them")
print(f"(`{flags}`) and bluetoothd run as on a laptop (no `-d`, no btmon, no test monitor on the bus).")
print("A (hci0) serves a 1 MB document (`handoff-example-document serve`); B (hci1) fetches it")
print(f"(`handoff-example-document fetch --rounds 2`) {runs} times, each on a new continuation stream and LE link: the")
print("app asks B's handoffd, which connects to A's over GATT and the LE L2CAP channel, and A's handoffd hands")
print("the stream to A's app. Every copy is checked byte for byte (SHA-256, by both apps). Figures are the first")
print("round of each run, from the app's RESULT line; kbit/s are of 1000 bits.\n")
print("| figure | median | min | max | each run |")
print("| --- | --- | --- | --- | --- |")
print(row("time to open the stream (`continueWithStreams`, LE link and GATT exchange included)", "continue_ms", "ms"))
print(row("time to first byte (from the app's request on the open stream)", "ttfb_ms", "ms"))
print(row("throughput A→B, 1 MB", "kbit_s", "kbit/s"))
print()
same = False
if raw and same_since:
    from datetime import datetime, timezone
    at = datetime.strptime(raw_date, "%Y-%m-%d at %H:%M UTC").replace(tzinfo=timezone.utc).timestamp()
    same = at >= same_since - 60
if raw:
    when = ("in this same `make bench-continue`, just before" if same else
            "in an earlier run, under another load: compare with care")
    print(f"Against the raw channel: the median daemon-level throughput is {kbit / raw:.2f} × the raw LE L2CAP")
    print(f"channel's median ({raw:.0f} kbit/s, section \"LE L2CAP channel\", measured on {raw_date}, {when};")
    print("two probes on a socket each, no daemons, 1 MiB). Through the daemons each byte also crosses their relays")
    print("(docs/continuation.md 10.6: app socket → A's handoffd, which seals each frame → L2CAP → B's handoffd, which")
    print("opens it → app socket), all on the same emulated CPU; both figures are bound by that CPU and vary widely")
    print("from run to run (see the ranges), so a ratio near or above 1 means the relays cost nothing measurable here.")
else:
    print("Against the raw channel: no section \"LE L2CAP channel\" in this file to compare with; the figure to")
    print("compare is that section's median throughput (scripts/bench-l2cap.sh, two probes, no daemons).")
print(f"\nThe rig run (boot, BlueZ, daemons, {runs} fetches) took {wall} s, the builds not included.")
print("""
**Physical limits, for comparison (estimates).** LE 1M PHY has a raw symbol rate of 1 Mbit/s; with Data
Length Extension (251-byte link-layer PDUs) the application throughput is at most about 800 kbit/s in ideal
conditions. LE 2M PHY reaches about 1.4 to 1.6 Mbit/s in practice. btvirt in a TCG guest is emulated (no
air time: the controllers pass packets in one process), so the figures above are those of the software
path on an emulated CPU, not of a radio. Between real laptops, LE CoC commonly gets somewhere from a few
hundred kbit/s to about 1 Mbit/s depending on the connection interval and the PHY; that is an estimate, not
a measurement of ours.""")
PY
) || { say "FAILED: could not read the figures from $logs"; exit 1; }

scripts/bench/put-section.py "$out" "$section" || { say "FAILED: could not write $out"; exit 1; }
echo "$section"
say "wrote the section \"Continuation streams\" of $out (rig run ${wall} s)"
