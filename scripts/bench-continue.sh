#!/usr/bin/env bash
# make bench-continue: how long continuing an activity takes on real bluetoothd, and the
# figures into docs/BENCHMARKS.md (its section "Continue latency" only).
#
# Runs the e2e suite's continue scenario (Tests/e2e/guest-e2e.sh) in the VM rig with release
# builds of handoffd and handoffctl, as `make install` builds them, and bluetoothd as a laptop
# runs it: --quiet leaves out bluetoothd's -d, btmon and the harness's D-Bus monitor, whose
# work would share the guest's emulated CPU with bluetoothd. D (hci2) publishes about 100 B
# and about 3 KB of userInfo; B (hci1) continues each BENCH_CONTINUE_RUNS times. The latency
# is B's daemon's: from taking the `continue` request to handing over the restored activity
# (its log lines "continuing" and "continued"), which covers connecting, GATT discovery,
# the exchange, decryption and checks. The budget (issue 7) is 1 s for 3 KB.
#
# Needs root (qemu boots /boot's kernel). Environment: BENCH_CONTINUE_RUNS (default 5),
# BENCH_OUT (default docs/BENCHMARKS.md), SWIFT, SWIFT_FLAGS, INSTALL_BUILD_FLAGS (as the Makefile).
# Exit status: 0 when measured (whether or not within budget), 1 when the run failed.
set -uo pipefail
cd "$(dirname "$0")/.."

SWIFT=${SWIFT:-swift}
runs=${BENCH_CONTINUE_RUNS:-5}
out=${BENCH_OUT:-docs/BENCHMARKS.md}
flags="${INSTALL_BUILD_FLAGS:--c release --static-swift-stdlib -Xswiftc -cross-module-optimization --disable-local-rpath -Xlinker --no-export-dynamic} ${SWIFT_FLAGS:-}"
say() { echo "bench-continue: $*" >&2; }

[[ $(id -u) -eq 0 ]] || { say "FAILED: must run as root: qemu boots the kernel image in /boot"; exit 1; }
read -r -a build_flags <<<"$flags"
say "building handoffd and handoffctl ($flags)"
"$SWIFT" build "${build_flags[@]}" --product handoffd >/dev/null &&
    "$SWIFT" build "${build_flags[@]}" --product handoffctl >/dev/null || { say "FAILED: the build failed"; exit 1; }

work=${E2E_LOGS:-e2e-logs}/bench-continue
mkdir -p "$work" || { say "FAILED: cannot create $work"; exit 1; }
say "running the continue scenario in the VM rig, $runs continuations of each size (a few minutes)"
if ! SWIFT_FLAGS="$flags" E2E_CONFIG=private E2E_QUIET=1 E2E_RUNS="$runs" E2E_LOGS="$work" scripts/e2e.sh continue >"$work/last.out" 2>&1; then
    tail -20 "$work/last.out" >&2
    say "FAILED: the continue scenario failed (above); logs in $work"
    exit 1
fi
logs=$(ls -td "$work"/*/ | head -1)
started=$(date -u +"%Y-%m-%d at %H:%M UTC")

section=$(/usr/bin/python3 - "$logs" "$runs" "$started" "$flags" <<'PY'
import re, statistics, sys
from datetime import datetime
logs, runs, started, flags = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
def t(s): return datetime.strptime(s, "%Y-%m-%dT%H:%M:%S.%fZ").timestamp()
begin, steps, sizes = {}, {}, {}
for line in open(logs + "b.log", errors="replace"):
    m = re.match(r"(\S+) \w+ (continuing|continued) org\.handoff\.e2e\.continue\.(\d+) .*\((c\d+)\)", line)
    if m:
        at, what, size, cid = t(m[1]), m[2], int(m[3]), m[4]
        if what == "continuing": begin[cid] = at
        elif cid in begin: sizes.setdefault(size, []).append(at - begin[cid])
        continue
    m = re.match(r"(\S+) debug continuation (c\d+): (connected|services resolved|notifications on|response complete)", line)
    if m and m[2] in begin: steps.setdefault(m[2], {})[m[3]] = t(m[1])
whole = {}
for line in open(logs + "results.txt"):
    for size, vals in re.findall(r"(\d+) B: B's daemon [^;]*?whole handoffctl median ([0-9.]+) s", line):
        whole[int(size)] = float(vals)
def phase(a, b):
    d = [s[b] - (begin[c] if a is None else s[a]) for c, s in steps.items() if (a is None or a in s) and b in s]
    return statistics.median(d) if d else float("nan")
print("## Continue latency (real bluetoothd, VM rig)\n")
print(f"Measured on {started} with `sudo make bench-continue` (scripts/bench-continue.sh): the e2e")
print("suite's continue scenario in the VM rig (qemu TCG, Debian's kernel, bluetoothd 5.66 with `Privacy = device`,")
print("btvirt controllers with extended advertising: the e2e config `private`), with")
print(f"handoffd and handoffctl built as `make install` builds them (`{flags}`) and bluetoothd run")
print("as on a laptop (no `-d`, no btmon, no test monitor on the bus). D (hci2) publishes; B (hci1)")
print(f"continues each activity {runs} times, a fresh connection each time. Latency: B's daemon, from the")
print("`continue` request to the restored activity (connect, GATT discovery, exchange, opening, checks).\n")
print("| userInfo | runs | median | max | each run (s) | whole `handoffctl continue`, median |")
print("| --- | --- | --- | --- | --- | --- |")
for size in sorted(sizes):
    v = sizes[size]
    each = " ".join(f"{x:.2f}" for x in v)
    w = f"{whole[size]:.2f} s" if size in whole else "n/a"
    print(f"| {size} B | {len(v)} | {statistics.median(v):.2f} s | {max(v):.2f} s | {each} | {w} |")
print()
print("Where the time goes (medians over all runs, from the request): connected "
      f"{phase(None, 'connected'):.2f} s, services resolved {phase(None, 'services resolved'):.2f} s, "
      f"notifications on {phase(None, 'notifications on'):.2f} s, response complete "
      f"{phase(None, 'response complete'):.2f} s.")
big = sizes.get(3000, [])
verdict = ("within" if big and max(big) <= 1.0 else "**not** within")
print(f"\nBudget (issue 7): a 3 KB fetch in at most 1 s. This run: {verdict} it"
      f" (max {max(big):.2f} s)." if big else "\nNo 3 KB run was measured.")
print("The whole `handoffctl continue` adds the CLI's own start-up and socket exchange in the emulated"
      " guest. `make e2e` runs the same scenario with bluetoothd's debug log, btmon and a D-Bus monitor"
      " sharing the guest's CPU, and its times are longer: they test correctness, these measure speed.")
PY
) || { say "FAILED: could not read the figures from $logs"; exit 1; }

scripts/bench/put-section.py "$out" "$section" || { say "FAILED: could not write $out"; exit 1; }
echo "$section"
say "wrote the section \"Continue latency\" of $out"
