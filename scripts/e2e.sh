#!/usr/bin/env bash
# make e2e: the end-to-end suite on real bluetoothd (docs/e2e.md).
#
# Boots a qemu guest with Debian's kernel (scripts/vm-rig/run-rig.sh), where real
# bluetoothd runs on two virtual LE controllers (btvirt), and runs Tests/e2e/guest-e2e.sh
# there against the handoffd and handoffctl binaries built here (and handoff-agent with the
# example reader for the desktop scenario). Prints one PASS/FAIL line
# per scenario and a summary, and names the folder with every log of the run.
#
# Usage: scripts/e2e.sh [SCENARIO...]     (default: all fifteen in config private; see docs/e2e.md)
# Environment:
#   SWIFT, SWIFT_FLAGS  as in the Makefile: which build's binaries to run (built beforehand)
#   E2E_LOGS            where the run's folder goes (default e2e-logs/; the folder is <timestamp>)
#   E2E_TIMEOUT         seconds before the guest is killed (default 1200)
#   E2E_EPOCH, E2E_EXPIRY  the daemons' epoch and nearby expiry in seconds (default 15 and 20)
#   E2E_QUIET=1         bluetoothd without -d, no btmon, no monitor (continue, streams, desktop: latency)
#   E2E_RUNS            continuations of each size in the continue scenario, fetches (streams) in the
#                       streams scenario (default 1)
#   E2E_CONFIG          the Bluetooth side (default private):
#                         private: bluetoothd with Privacy = device, as `make install` configures
#                                  it, on controllers with LE extended advertising (most laptops'
#                                  since Bluetooth 5);
#                         legacy:  Debian's bluetoothd configuration (privacy off) on LE-only
#                                  controllers with legacy advertising only (btvirt -L); scenario
#                                  legacy-privacy, last, restarts bluetoothd with Privacy = device
#                                  on them in the same boot (make e2e runs it so)
#                         legacy-private: Privacy = device on those legacy controllers from the
#                                  boot (legacy-privacy alone: not in make e2e's default list)
#   E2E_PRIVACY, E2E_EXT_ADV  0 or 1: override the config's privacy and controller kind
# Exit status: 0 when every scenario passed; 1 when one failed; 2 when the rig could not
# run it (no qemu, no kernel, the guest did not boot) or the run timed out. Never skips.
set -uo pipefail
cd "$(dirname "$0")/.."

SWIFT=${SWIFT:-swift}
read -r -a swift_flags <<<"${SWIFT_FLAGS:-}"
say() { echo "e2e: $*" >&2; }

if [[ $(id -u) -ne 0 ]]; then
    say "FAILED: must run as root: qemu boots the kernel image in /boot, which only root can read"
    exit 2
fi
BIN=$("$SWIFT" build "${swift_flags[@]}" --show-bin-path) || { say "FAILED: swift build --show-bin-path failed"; exit 2; }
tools=(handoffd handoffctl)
# The desktop scenario (named, or all by default in config private) runs the agent and the example app.
if [[ $# -eq 0 && "${E2E_CONFIG:-private}" == private ]] || [[ " $* " == *" desktop "* ]]; then
    tools+=(handoff-agent handoff-example-reader)
fi
# The streams scenario (named, or all by default in config private) runs the example document app.
if [[ $# -eq 0 && "${E2E_CONFIG:-private}" == private ]] || [[ " $* " == *" streams "* ]]; then
    tools+=(handoff-example-document)
fi
for tool in "${tools[@]}"; do
    [[ -x "$BIN/$tool" ]] || { say "FAILED: $BIN/$tool is missing: build it first (make e2e does)"; exit 2; }
done

logs="${E2E_LOGS:-e2e-logs}/$(date +%Y%m%d-%H%M%S)"
mkdir -p "$logs" || { say "FAILED: cannot create $logs"; exit 2; }
logs=$(cd "$logs" && pwd)
start=$(date +%s)
say "running on real bluetoothd in a qemu guest (TCG: a few minutes), config ${E2E_CONFIG:-private}; logs: $logs"
args=(--bin "$BIN")
[[ -n "${E2E_EPOCH:-}" ]] && args+=(--epoch "$E2E_EPOCH")
[[ -n "${E2E_EXPIRY:-}" ]] && args+=(--expiry "$E2E_EXPIRY")
[[ "${E2E_QUIET:-0}" == 1 ]] && args+=(--quiet)
[[ -n "${E2E_RUNS:-}" ]] && args+=(--runs "$E2E_RUNS")
case "${E2E_CONFIG:-private}" in
    private) privacy=1; ext_adv=1 ;;
    legacy) privacy=0; ext_adv=0 ;;
    legacy-private) privacy=1; ext_adv=0 ;;
    *) say "FAILED: E2E_CONFIG is '${E2E_CONFIG}': private, legacy or legacy-private"; exit 2 ;;
esac
[[ "${E2E_PRIVACY:-$privacy}" == 1 ]] && args+=(--privacy)
[[ "${E2E_EXT_ADV:-$ext_adv}" == 1 ]] && args+=(--ext-adv)
# The guest runs a copy of Tests/e2e, kept with the logs: what ran, even if the tree changes.
# The desktop scenario's notification server is the agent tests' own (written from the spec).
cp -r Tests/e2e "$logs/guest" && cp Tests/HandoffAgentTests/Peers/notification_server.py "$logs/guest/" ||
    { say "FAILED: cannot copy Tests/e2e to $logs"; exit 2; }
RIG_OUT="$logs" RIG_TIMEOUT="${E2E_TIMEOUT:-1200}" scripts/vm-rig/run-rig.sh "$logs/guest/guest-e2e.sh" \
    "${args[@]}" "$@" 2>&1 | tee "$logs/console.log"
rc=${PIPESTATUS[0]}
wall=$(( $(date +%s) - start ))

# What failed, with the last words of the daemons' logs: `make e2e` prints it again
# after every config, where a CI log that keeps only its end still shows it.
digest() { # LOGDIR
    echo "== e2e config ${E2E_CONFIG}: $1"
    grep -E '^FAIL' "$1/results.txt" 2>/dev/null
    local f
    for f in a b c d; do
        [ -f "$1/$f.log" ] || continue
        echo "-- $f.log: its last notices, warnings and errors"
        grep -E '^[^ ]+ (notice|warning|error|critical) ' "$1/$f.log" | tail -n 10 | cut -c1-220
    done
}

case $rc in
    0)
        say "all scenarios passed in ${wall} s; logs: $logs"
        exit 0 ;;
    124)
        say "FAILED: the guest did not finish within ${E2E_TIMEOUT:-1200} s (${wall} s); logs: $logs"
        exit 2 ;;
    125)
        say "FAILED: the VM rig could not run the suite (qemu, the kernel or the guest's boot; see above); logs: $logs"
        exit 2 ;;
    10)
        say "FAILED: real BlueZ did not come up in the guest (see above); logs: $logs"
        exit 1 ;;
    *)
        say "FAILED (guest exit $rc) after ${wall} s:"
        grep -E '^(FAIL|SUMMARY)' "$logs/results.txt" >&2 2>/dev/null || true
        say "logs: $logs"
        digest "$logs" >> "${E2E_DIGEST:-/dev/null}"
        exit 1 ;;
esac
