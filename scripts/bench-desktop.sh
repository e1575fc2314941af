#!/usr/bin/env bash
# make bench-desktop: how quickly the desktop shows a nearby activity and hands it to its app,
# on real bluetoothd, and the figures into docs/BENCHMARKS.md (its section "Desktop latency" only).
#
# Runs the e2e suite's desktop scenario (Tests/e2e/guest-e2e.sh) in the VM rig with release
# builds of handoffd, handoffctl, handoff-agent and the example reader, as `make install` builds
# them, and bluetoothd as a laptop runs it (--quiet: no -d, no btmon, no test monitor). A (hci0)
# publishes; B's handoff-agent notifies through the spec-written notification server on a
# session bus in the guest; the scenario clicks Continue BENCH_DESKTOP_RUNS times, each on a new
# activity. Figures: B's daemon heard the beacon (its event's lastSeen) -> the server received
# Notify (issue 14's budget: at most 0.5 s p50), and ActionInvoked -> the app launched from its
# desktop entry has the activity (claimed through HandoffKit).
#
# Needs root (qemu boots /boot's kernel). Environment: BENCH_DESKTOP_RUNS (default 5),
# BENCH_OUT (default docs/BENCHMARKS.md), SWIFT, SWIFT_FLAGS, INSTALL_BUILD_FLAGS (as the Makefile).
# Exit status: 0 when measured (whether or not within budget), 1 when the run failed.
set -uo pipefail
cd "$(dirname "$0")/.."

SWIFT=${SWIFT:-swift}
runs=${BENCH_DESKTOP_RUNS:-5}
out=${BENCH_OUT:-docs/BENCHMARKS.md}
flags="${INSTALL_BUILD_FLAGS:--c release --static-swift-stdlib -Xswiftc -cross-module-optimization --disable-local-rpath -Xlinker --no-export-dynamic} ${SWIFT_FLAGS:-}"
say() { echo "bench-desktop: $*" >&2; }

[[ $(id -u) -eq 0 ]] || { say "FAILED: must run as root: qemu boots the kernel image in /boot"; exit 1; }
read -r -a build_flags <<<"$flags"
say "building handoffd, handoffctl, handoff-agent and handoff-example-reader ($flags)"
for product in handoffd handoffctl handoff-agent handoff-example-reader; do
    "$SWIFT" build "${build_flags[@]}" --product "$product" >/dev/null || { say "FAILED: the build of $product failed"; exit 1; }
done

work=${E2E_LOGS:-e2e-logs}/bench-desktop
mkdir -p "$work" || { say "FAILED: cannot create $work"; exit 1; }
say "running the desktop scenario in the VM rig, $runs continuations (a few minutes)"
if ! SWIFT_FLAGS="$flags" E2E_CONFIG=private E2E_QUIET=1 E2E_RUNS="$runs" E2E_LOGS="$work" scripts/e2e.sh desktop >"$work/last.out" 2>&1; then
    tail -20 "$work/last.out" >&2
    say "FAILED: the desktop scenario failed (above); logs in $work"
    exit 1
fi
logs=$(ls -td "$work"/*/ | head -1)
started=$(date -u +"%Y-%m-%d at %H:%M UTC")

section=$(/usr/bin/python3 - "$logs" "$started" "$flags" <<'PY'
import json, statistics, sys
logs, started, flags = sys.argv[1], sys.argv[2], sys.argv[3]
f = json.load(open(logs + "desktop-figures.json"))
def row(name, v):
    if not v:
        return f"| {name} | 0 | n/a | n/a | |"
    return (f"| {name} | {len(v)} | {statistics.median(v):.2f} s | {max(v):.2f} s | "
            + " ".join(f"{x:.2f}" for x in v) + " |")
heard = f["heardToNotify"]
print("## Desktop latency (real bluetoothd, VM rig)\n")
print(f"Measured on {started} with `sudo make bench-desktop` (scripts/bench-desktop.sh): the e2e")
print("suite's desktop scenario in the VM rig (qemu TCG, Debian's kernel, bluetoothd 5.66 with `Privacy = device`,")
print("btvirt controllers with extended advertising: the e2e config `private`), with handoffd, handoffctl,")
print(f"handoff-agent and the example reader built as `make install` builds them (`{flags}`) and")
print("bluetoothd run as on a laptop (no `-d`, no btmon, no test monitor on the bus). A (hci0) publishes;")
print("B's handoff-agent shows it through the spec-written notification server")
print("(`Tests/HandoffAgentTests/Peers/notification_server.py`) on a session bus in the guest; the")
print(f"scenario clicks Continue on {f['runs']} activities, each a new one. Times are the guest's clock: B's")
print("daemon heard the beacon (the `lastSeen` of its `appeared` event), the server received `Notify` or")
print("emitted `ActionInvoked`, and the app (a script from the desktop entry running the example reader)")
print("started and had claimed the activity through HandoffKit.\n")
print("| from → to | samples | median (p50) | max | each (s) |")
print("| --- | --- | --- | --- | --- |")
print(row("B heard the beacon → `Notify` received", heard))
print(row("`ActionInvoked` → the app started", f["actionToAppStarted"]))
print(row("`ActionInvoked` → the app has the activity", f["actionToApp"]))
print(row("B's daemon, continuing → continued (inside the above)", f["continueInDaemon"]))
print()
if heard:
    p50 = statistics.median(heard)
    verdict = "within" if p50 <= 0.5 else "**not** within"
    print(f"Budget (issue 14): beacon heard → notification shown at most 0.5 s p50. This run: {verdict} it"
          f" (p50 {p50:.2f} s over {len(heard)} samples: the first activity, which the scenario lets B lose"
          f" to see the notification withdrawn ({f['withdrawn']}), and each continued one).")
print("What `ActionInvoked` → the app adds to B's daemon's fetch is the agent writing the hand-over"
      " file and starting the app, and the app's own start-up (bash, then a Swift program that claims the"
      " file) on the guest's emulated CPU.")
PY
) || { say "FAILED: could not read the figures from $logs"; exit 1; }

scripts/bench/put-section.py "$out" "$section" || { say "FAILED: could not write $out"; exit 1; }
echo "$section"
say "wrote the section \"Desktop latency\" of $out"
