#!/usr/bin/env bash
# Checks that handoffd's own code uses FoundationEssentials only, never Foundation: one
# Foundation symbol pulls all of Foundation, FoundationInternationalization and ICU into the
# statically linked handoffd (85 -> 131 MB, about 5 MiB more resident; docs/BENCHMARKS.md).
# Foundation's extensions stay visible in our modules through packages that import it (TOMLKit),
# so an innocent call can bind to it: Substring.contains("w") took Foundation's
# StringProtocol.contains on 2026-11-25, where utf8.contains(UInt8(ascii: "w")) does not.
#
# It reads the undefined symbols of every object of ours that handoffd links (its
# Objects.LinkFileList; objects under a Sources/ module's name) and fails on any of module
# Foundation ("10Foundation" in the mangled name; FoundationEssentials is "20FoundationEssentials").
#
# usage: scripts/check-no-foundation.sh [PRODUCT]   (default handoffd)
#   SWIFT, SWIFT_FLAGS: which build (as the Makefile); the product must be built.
set -euo pipefail
cd "$(dirname "$0")/.."
product=${1:-handoffd}
read -r -a swift_flags <<<"${SWIFT_FLAGS:-}"
bin=$("${SWIFT:-swift}" build "${swift_flags[@]}" --show-bin-path)
list="$bin/$product.product/Objects.LinkFileList"
[[ -r "$list" ]] || { echo "check-no-foundation: $list is missing: build $product first" >&2; exit 2; }
ours=$(ls Sources | paste -sd '|' -)
objects=()
while read -r object; do
    module=$(basename "$(dirname "$object")" .build)
    [[ "|$ours|" == *"|$module|"* || "|$ours|" == *"|${module//_/-}|"* ]] && objects+=("$object")
done < <(tr -d '"' <"$list")
(( ${#objects[@]} > 0 )) || { echo "check-no-foundation: none of $product's objects is ours ($list)" >&2; exit 2; }
# One nm for all of them: "OBJECT:                 U SYMBOL" per undefined symbol.
found=$(nm -A -u "${objects[@]}" | awk '{ print $1, $NF }' | grep -E ' (.*[^0-9])?10Foundation' || true)
if [[ -n "$found" ]]; then
    while read -r object symbol; do
        echo "check-no-foundation: ${object%:} uses Foundation: $symbol ($(swift demangle --compact "$symbol" 2>/dev/null || echo "?"))"
    done <<<"$found"
    echo "check-no-foundation: $product must link FoundationEssentials only (import it under canImport, and call what it has)" >&2
    exit 1
fi
echo "check-no-foundation: ${#objects[@]} objects of ours in $product, none uses Foundation"
