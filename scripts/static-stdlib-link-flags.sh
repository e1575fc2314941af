#!/usr/bin/env bash
# Prints the linker flags that link a debug build, compiled for the toolchain's
# shared Swift runtime, with its static one instead: make test packages its debug
# build this way for the install test (DEB_TEST_BUILD_FLAGS in the Makefile).
#
# swift build --static-swift-stdlib alone is not enough there. The libraries that the
# static Foundation needs (CoreFoundation, _FoundationICU, …) are named by the
# modules' autolink entries, and a module compiled against the shared runtime names
# only the shared one's. So this compiles "import Foundation" both ways with the
# toolchain in use and prints, as -Xlinker flags, the libraries that only the static
# compile names; SwiftPM puts them in the link command alone, so nothing is compiled
# again. (The release build, compiled with --static-swift-stdlib from the start,
# needs none of this.)
#
# usage: scripts/static-stdlib-link-flags.sh
#   SWIFT: the swift of the build (default swift); its swiftc compiles the probe.
set -euo pipefail

swift=$(command -v "${SWIFT:-swift}") || { echo "static-stdlib-link-flags: no ${SWIFT:-swift}" >&2; exit 1; }
swiftc=$(dirname "$swift")/swiftc
probe=$(mktemp -d "${TMPDIR:-/tmp}/handoff-static-flags.XXXXXX")
trap 'rm -rf "$probe"' EXIT

printf 'import Foundation\nprint(Date(), JSONEncoder(), FileManager.default.currentDirectoryPath)\n' > "$probe/probe.swift"
entries() { # entries OBJECT: its autolink entries, one a line, sorted
    readelf -p .swift1_autolink_entries "$1" | sed -n 's/^ *\[ *[0-9a-f]*\] *//p' | sort -u
}
"$swiftc" -c "$probe/probe.swift" -o "$probe/shared.o"
"$swiftc" -static-stdlib -c "$probe/probe.swift" -o "$probe/static.o"
extra=$(comm -13 <(entries "$probe/shared.o") <(entries "$probe/static.o"))
[[ -n "$extra" ]] || { echo "static-stdlib-link-flags: found no libraries that the static Foundation adds" >&2; exit 1; }
for entry in $extra; do
    printf -- '-Xlinker %s ' "$entry"
done
echo
