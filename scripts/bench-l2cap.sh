#!/usr/bin/env bash
# bench-l2cap.sh: the LE L2CAP channel of continuation streams (docs/continuation.md section 10.6)
# on real bluetoothd and the guest's kernel in the VM rig, and its figures into docs/BENCHMARKS.md
# (the section "LE L2CAP channel" only). `make bench-continue` runs it after the continue latency.
#
# Builds handoff-l2cap-probe (a test tool, never installed) as `make install` builds the daemons,
# boots the rig (scripts/vm-rig/run-rig.sh) and runs Tests/e2e/guest-l2cap.sh there, quiet
# (bluetoothd without -d, no btmon): BENCH_L2CAP_RUNS transfers of 1 MiB from the listening
# laptop O (hci0) to the connecting laptop C (hci1), each on a fresh channel and LE link, each
# answered with 64 KiB, all checked byte for byte; then a connect to a PSM nobody listens on, and
# a transfer over bluetoothd's own LE link and right after it dropped. Every check must pass.
#
# Needs root (qemu boots /boot's kernel). Environment: BENCH_L2CAP_RUNS (default 5), BENCH_OUT
# (default docs/BENCHMARKS.md), SWIFT, SWIFT_FLAGS, INSTALL_BUILD_FLAGS (as the Makefile),
# E2E_LOGS (where the run's logs go: default e2e-logs/bench-l2cap/<timestamp>); BENCH_L2CAP_LOGS=DIR
# skips building and running and writes the section from the logs of an earlier run in DIR.
# Exit status: 0 when measured and every check passed, 1 otherwise.
set -uo pipefail
cd "$(dirname "$0")/.."

SWIFT=${SWIFT:-swift}
runs=${BENCH_L2CAP_RUNS:-5}
out=${BENCH_OUT:-docs/BENCHMARKS.md}
flags="${INSTALL_BUILD_FLAGS:--c release --static-swift-stdlib -Xswiftc -cross-module-optimization} ${SWIFT_FLAGS:-}"
say() { echo "bench-l2cap: $*" >&2; }

if [[ -n "${BENCH_L2CAP_LOGS:-}" ]]; then
    logs=$(cd "$BENCH_L2CAP_LOGS" && pwd) || { say "FAILED: no folder $BENCH_L2CAP_LOGS"; exit 1; }
    grep -q '^SUMMARY passed' "$logs/results.txt" 2>/dev/null || { say "FAILED: that run did not pass"; exit 1; }
    flags=$(cat "$logs/flags.txt" 2>/dev/null || echo "$flags")
else
[[ $(id -u) -eq 0 ]] || { say "FAILED: must run as root: qemu boots the kernel image in /boot"; exit 1; }
read -r -a build_flags <<<"$flags"
say "building handoff-l2cap-probe ($flags)"
"$SWIFT" build "${build_flags[@]}" --product handoff-l2cap-probe >/dev/null || { say "FAILED: the build failed"; exit 1; }
bin=$("$SWIFT" build "${build_flags[@]}" --show-bin-path) || { say "FAILED: --show-bin-path failed"; exit 1; }

logs=${E2E_LOGS:-e2e-logs}/bench-l2cap/$(date +%Y%m%d-%H%M%S)
mkdir -p "$logs" || { say "FAILED: cannot create $logs"; exit 1; }
logs=$(cd "$logs" && pwd)
# The guest runs a copy of Tests/e2e, kept with the logs (as scripts/e2e.sh does).
cp -r Tests/e2e "$logs/guest" || { say "FAILED: cannot copy Tests/e2e to $logs"; exit 1; }
date -u +"%Y-%m-%d at %H:%M UTC" > "$logs/started.txt"
echo "$flags" > "$logs/flags.txt"
say "running $runs transfers in the VM rig (a few minutes); logs: $logs"
RIG_OUT="$logs" RIG_TIMEOUT="${BENCH_L2CAP_TIMEOUT:-1200}" scripts/vm-rig/run-rig.sh "$logs/guest/guest-l2cap.sh" \
    --bin "$bin" --runs "$runs" --quiet > "$logs/console.log" 2>&1
rc=$?
grep -E '^(PASS|FAIL|SUMMARY)' "$logs/console.log" >&2
if [[ $rc -ne 0 ]]; then
    tail -5 "$logs/console.log" >&2
    say "FAILED (guest exit $rc); logs: $logs"
    exit 1
fi
fi
started=$(cat "$logs/started.txt" 2>/dev/null || date -u -r "$logs/results.txt" +"%Y-%m-%d at %H:%M UTC")

section=$(/usr/bin/python3 - "$logs" "$runs" "$started" "$flags" <<'PY'
import json, statistics, sys
import re
logs, started = sys.argv[1], sys.argv[3]
flags = re.sub(r"--scratch-path \S+", "", sys.argv[4]).split()
flags = " ".join(flags)
rows = [json.loads(l) for l in open(logs + "/l2cap-results.jsonl") if l.strip()]
def of(check): return [r for r in rows if r.get("check") == check]
transfers = of("transfer")
runs = len(transfers)
assert runs and all(r["intact"] and r["answer_intact"] for r in transfers), "a transfer failed"
setup = open(logs + "/l2cap-setup.txt").read().splitlines()[0]
def stat(key, scale=1.0, fmt="{:.0f}"):
    v = sorted(r[key] * scale for r in transfers)
    return [fmt.format(statistics.median(v)), fmt.format(v[0]), fmt.format(v[-1])]
print("## LE L2CAP channel (real bluetoothd, VM rig)\n")
print(f"Measured on {started} with `sudo scripts/bench-l2cap.sh` (Tests/e2e/guest-l2cap.sh): the transport of")
print("continuation streams (docs/continuation.md section 10.6) between two btvirt controllers in the VM rig")
print(f"(qemu TCG; {setup}; bluetoothd with `Privacy = device` and")
print("no `-d`, no btmon). O (hci0) advertises connectably and listens on a kernel-assigned dynamic PSM with")
print(f"`handoff-l2cap-probe` (built `{flags}`); C (hci1) connects to the private address bluetoothd's")
print(f"Device1 gave it. {runs} runs, each on a fresh channel and LE link: O writes 1 MiB in SDUs of the send MTU,")
print("C checks it byte for byte and answers 64 KiB, which O checks.\n")
print("| figure | median | min | max |")
print("| --- | --- | --- | --- |")
print("| connect (socket to connected channel, LE link included) | " + " | ".join(x + " ms" for x in stat("connect_s", 1000)) + " |")
print("| time to first byte (from the start of connect) | " + " | ".join(x + " ms" for x in stat("first_byte_s", 1000)) + " |")
print("| time to first byte (from C's request on the open channel) | " + " | ".join(x + " ms" for x in stat("first_byte_after_request_s", 1000)) + " |")
print("| 1 MiB O→C, from the request to the last byte | " + " | ".join(x + " s" for x in stat("receive_s", 1, "{:.2f}")) + " |")
print("| throughput O→C | " + " | ".join(x + " kbit/s" for x in stat("kbit_s")) + " |")
mtus = sorted({(r["send_mtu"], r["recv_mtu"]) for r in transfers})
lmtus = sorted({(r["send_mtu"], r["recv_mtu"]) for r in of("transfer-listen")})
sdus = sorted({r["sdus"] for r in transfers})
def pairs(v): return ", ".join(f"send {a} / receive {b}" for a, b in v)
print(f"\nMTUs the kernel settled on, each side asking for a receive MTU of 2048 (BT_RCVMTU): "
      f"C {pairs(mtus)}, O {pairs(lmtus)}; the 1 MiB arrived in {' or '.join(map(str, sdus))} SDUs.")
for check, what in (("refused", "A connect to PSM 0x00f0, where nobody listens"),):
    for r in of(check):
        print(f"{what}: errno {r.get('errno')} (ECONNREFUSED is 111) after {r['seconds']*1000:.0f} ms.")
for check, what in (("over-link", "Over the LE link bluetoothd already held (Device1.Connect, as the daemon connects for GATT)"),
                    ("after-drop", "Right after Device1.Disconnect dropped that link")):
    for r in of(check):
        print(f"{what}: connect {r['connect_s']*1000:.0f} ms, first byte {r['first_byte_s']*1000:.0f} ms, "
              f"{r['kbit_s']:.0f} kbit/s, intact.")
print("""
**For comparison, the radio.** btvirt emulates no air time: its controllers pass packets between each
other in one process, so the figures above are bound by the emulated CPU (qemu TCG) that the kernel,
bluetoothd and both probes share, not by a radio. On air, LE 1M PHY carries 1 Mbit/s and LE 2M PHY
2 Mbit/s (Bluetooth Core 5.x, Vol 6, Part A); after link-layer overhead, gaps and connection events, the
application-level ceiling is about 0.8 Mbit/s on 1M PHY and about 1.4 Mbit/s on 2M PHY with Data Length
Extension and a 7.5 ms connection interval, and reported real-world figures are 100 to 800 kbit/s
(Novel Bits, "Bluetooth 5 speed: How to achieve maximum throughput for your BLE application",
https://novelbits.io/bluetooth-5-speed-maximum-throughput/; Memfault, "A Practical Guide to BLE
Throughput", https://interrupt.memfault.com/blog/ble-throughput-primer). LE CoC rides the same link layer
as GATT, with 4 bytes of L2CAP header and 2 of SDU length per SDU instead of ATT's 3 per notification, so
the same ceilings hold for it. That the rig's median lands inside the real-world range is a coincidence
of the emulated CPU's speed, not a prediction for laptops. Linux asks for a connection interval of 30 to 50 ms by default
(`le_conn_min_interval` 0x0018, `le_conn_max_interval` 0x0028 in 1.25 ms units), which with a few packets per
event puts an untuned laptop-to-laptop channel in the low hundreds of kbit/s: at 244 bytes × 4 packets per
30 ms event, about 260 kbit/s. We found no published measurement of LE CoC between two Linux laptops; a
figure from real radios is still to be taken.""")
PY
) || { say "FAILED: could not read the figures from $logs"; exit 1; }

scripts/bench/put-section.py "$out" "$section" || { say "FAILED: could not write $out"; exit 1; }
echo "$section"
say "wrote the section \"LE L2CAP channel\" of $out"
