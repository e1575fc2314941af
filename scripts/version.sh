#!/usr/bin/env bash
# Prints handoff's version, read from the one place it is written:
# Sources/HandoffProtocol/HandoffVersion.swift. With --date, prints the date of
# that version's section in CHANGELOG.md instead (and fails when it has none).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
version=$(sed -n 's/^ *public static let current = "\([0-9][0-9A-Za-z.+~-]*\)"$/\1/p' \
    "$root/Sources/HandoffProtocol/HandoffVersion.swift")
[[ -n "$version" ]] || { echo "version.sh: no version in Sources/HandoffProtocol/HandoffVersion.swift" >&2; exit 1; }
case "${1:-}" in
"") echo "$version" ;;
--date)
    date=$(sed -n "s/^## \[${version//./\\.}\] - \([0-9]\{4\}-[0-9]\{2\}-[0-9]\{2\}\)\$/\1/p" "$root/CHANGELOG.md")
    [[ -n "$date" ]] || { echo "version.sh: CHANGELOG.md has no section '## [$version] - YYYY-MM-DD'" >&2; exit 1; }
    echo "$date"
    ;;
*) echo "usage: $0 [--date]" >&2; exit 2 ;;
esac
