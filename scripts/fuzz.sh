#!/usr/bin/env bash
# Fuzzes with libFuzzer for a bounded time each:
#   beacon    the beacon decoder (and the key file and export code parsers),
#             seeded from the test vectors (Sources/BeaconFuzz);
#   protocol  the socket protocol's line splitter and request dispatch through a
#             real ClientGateway and daemon over a silent radio, seeded from the
#             requests in docs/protocol.md (Sources/ProtocolFuzz).
#
#   scripts/fuzz.sh                 # 60 s each
#   FUZZ_SECONDS=600 FUZZ_TARGETS=protocol scripts/fuzz.sh
#   FUZZ_TARGETS=protocol scripts/fuzz.sh crash-1234abcd  # replay inputs instead of fuzzing
#
# Environment:
#   FUZZ_TARGETS        which of beacon, protocol (default both; one when replaying)
#   FUZZ_SECONDS        fuzzing time in seconds, per target (default 60)
#   FUZZ_SANITIZERS     sanitizers besides fuzzer, comma-separated (default address;
#                       empty for none)
#   FUZZ_CONFIGURATION  debug or release (default release)
#
# The build uses SwiftPM's own `--sanitize=fuzzer` rather than
# `-Xswiftc -sanitize=fuzzer`: SwiftPM links executables with
# `--defsym main=<Module>_main` (a renamed entry point), which fails when
# libFuzzer must provide `main`; its own option switches that renaming off.
# `-DFUZZING` drops the replay `@main` from each target.
#
# The corpora grow in fuzz-corpus/beacon/ and fuzz-corpus/protocol/ and crashes
# are written to ./crash-* (all git-ignored). Exits non-zero if libFuzzer finds a crash.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds="${FUZZ_SECONDS:-60}"
sanitizers="${FUZZ_SANITIZERS-address}"
configuration="${FUZZ_CONFIGURATION:-release}"
targets="${FUZZ_TARGETS:-beacon protocol}"
vectors="Tests/HandoffCoreTests/Vectors/beacon-v1.json"

flags=(--scratch-path .build-fuzz -c "$configuration" --sanitize=fuzzer)
IFS=',' read -ra extra <<<"$sanitizers"
for sanitizer in "${extra[@]}"; do flags+=("--sanitize=$sanitizer"); done
bin="$(swift build "${flags[@]}" -Xswiftc -DFUZZING --show-bin-path)"

product() { case "$1" in beacon) echo BeaconFuzz ;; protocol) echo ProtocolFuzz ;; *) echo "unknown target $1" >&2; exit 2 ;; esac; }

if [[ $# -gt 0 ]]; then
    target="${targets%% *}"
    swift build "${flags[@]}" -Xswiftc -DFUZZING --product "$(product "$target")"
    exec "$bin/$(product "$target")" "$@"
fi

# Beacon seeds: every beacon payload in the vectors (hex to bytes without xxd),
# plus the key files and export codes when python3 is there to unpack them.
beacon_seeds() {
    local seeds="$1" count=0
    while read -r hex; do
        printf '%b' "$(sed 's/../\\x&/g' <<<"$hex")" >"$seeds/beacon-$count.bin"
        count=$((count + 1))
    done < <(grep -o '"payload": "[0-9a-f]\{48\}"' "$vectors" | grep -o '[0-9a-f]\{48\}')
    if command -v python3 >/dev/null; then
        python3 - "$vectors" "$seeds" <<'PYTHON'
import json, sys
vectors, seeds = sys.argv[1], sys.argv[2]
document = json.load(open(vectors))
for index, item in enumerate(document["keyFiles"]):
    open(f"{seeds}/keyfile-{index}.txt", "w").write(item["text"])
for index, item in enumerate(document["exportCodes"]):
    open(f"{seeds}/code-{index}.txt", "w").write(item["code"])
PYTHON
    fi
}

# Protocol seeds: each request of docs/protocol.md after hello, and all of them as
# one session. The first byte picks the uid (0: root, 1: 1000, 2: 1001).
protocol_seeds() {
    local seeds="$1" count=0 hello
    hello="$(grep -m1 '^→ {"id":1,"method":"hello"' docs/protocol.md | sed 's/^→ //')"
    while read -r line; do
        printf '\x01%s\n%s\n' "$hello" "$line" >"$seeds/request-$count.txt"
        count=$((count + 1))
    done < <(grep '^→ ' docs/protocol.md | sed 's/^→ //')
    { printf '\x01'; grep '^→ ' docs/protocol.md | sed 's/^→ //'; } >"$seeds/session.txt"
    { printf '\x00'; grep '^→ ' docs/protocol.md | sed 's/^→ //;s/$/\r/'; } >"$seeds/session-root-crlf.txt"
}

status=0
for target in $targets; do
    name="$(product "$target")"
    corpus="fuzz-corpus/$target"
    seeds="fuzz-corpus/seeds-$target"
    swift build "${flags[@]}" -Xswiftc -DFUZZING --product "$name"
    rm -rf "$seeds"
    mkdir -p "$corpus" "$seeds"
    case "$target" in
        beacon) "beacon_seeds" "$seeds"; max_len=256 ;;
        protocol) "protocol_seeds" "$seeds"; max_len=4096 ;;
    esac
    echo "fuzz $target: $(ls "$seeds" | wc -l) seeds, $(ls "$corpus" | wc -l) corpus entries, ${seconds} s, sanitizers fuzzer,${sanitizers}"
    "$bin/$name" "$corpus" "$seeds" \
        -max_total_time="$seconds" -max_len="$max_len" -timeout=10 -print_final_stats=1 || status=$?
done
exit "$status"
