#!/usr/bin/env bash
# Fuzzes the beacon decoder (and the key file and export code parsers) with
# libFuzzer for a bounded time, seeded from the test vectors.
#
#   scripts/fuzz.sh                 # 60 s
#   FUZZ_SECONDS=600 scripts/fuzz.sh
#   scripts/fuzz.sh crash-1234abcd  # replay inputs instead of fuzzing
#
# Environment:
#   FUZZ_SECONDS        fuzzing time in seconds (default 60)
#   FUZZ_SANITIZERS     sanitizers besides fuzzer, comma-separated (default address;
#                       empty for none)
#   FUZZ_CONFIGURATION  debug or release (default release)
#
# The build uses SwiftPM's own `--sanitize=fuzzer` rather than
# `-Xswiftc -sanitize=fuzzer`: SwiftPM links executables with
# `--defsym main=<Module>_main` (a renamed entry point), which fails when
# libFuzzer must provide `main`; its own option switches that renaming off.
# `-DFUZZING` drops the replay `@main` from BeaconFuzz.swift.
#
# The corpus grows in fuzz-corpus/beacon/ and crashes are written to
# ./crash-* (both git-ignored). Exits non-zero if libFuzzer finds a crash.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds="${FUZZ_SECONDS:-60}"
sanitizers="${FUZZ_SANITIZERS-address}"
configuration="${FUZZ_CONFIGURATION:-release}"
corpus="fuzz-corpus/beacon"
seeds="fuzz-corpus/seeds"
vectors="Tests/HandoffCoreTests/Vectors/beacon-v1.json"

flags=(--scratch-path .build-fuzz -c "$configuration" --sanitize=fuzzer)
IFS=',' read -ra extra <<<"$sanitizers"
for sanitizer in "${extra[@]}"; do flags+=("--sanitize=$sanitizer"); done
swift build "${flags[@]}" -Xswiftc -DFUZZING --product BeaconFuzz
binary="$(swift build "${flags[@]}" -Xswiftc -DFUZZING --show-bin-path)/BeaconFuzz"

if [[ $# -gt 0 ]]; then
    exec "$binary" "$@"
fi

# Seeds: every beacon payload in the vectors (hex to bytes without xxd),
# plus the key files and export codes when python3 is there to unpack them.
rm -rf "$seeds"
mkdir -p "$corpus" "$seeds"
count=0
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
echo "fuzz: $(ls "$seeds" | wc -l) seeds, $(ls "$corpus" | wc -l) corpus entries, ${seconds} s, sanitizers fuzzer,${sanitizers}"

"$binary" "$corpus" "$seeds" \
    -max_total_time="$seconds" -max_len=256 -timeout=10 -print_final_stats=1
