#!/usr/bin/env bash
# Writes handoff's manual pages into OUT_DIR (uncompressed, one file per page):
#
#   handoffctl.1, handoff-agent.1, handoff-example-viewer.1
#       from the programs' argument parsers, by swift-argument-parser's
#       generate-manual tool (for each program that BIN_DIR holds);
#   handoffd.8          from man/handoffd.8.md (hand-written);
#   handoffd.toml.5     from man/handoffd.toml.5.md, with every setting of
#                       Config/handoffd.toml (scripts/config-manpage.py);
#   handoff-protocol.7  from docs/protocol.md (scripts/protocol-manpage.py).
#
# usage: scripts/manpages.sh OUT_DIR BIN_DIR
#
# BIN_DIR is a SwiftPM build directory holding handoffctl (make install and make
# deb pass the release one). generate-manual is built from the swift-argument-
# parser checkout that SwiftPM resolved next to BIN_DIR (a small debug build,
# kept in that scratch path), unless GENERATE_MANUAL names one. The markdown
# pages need go-md2man (Debian package go-md2man). Pages carry the version of
# scripts/version.sh and the date of its CHANGELOG.md section, so the same
# source gives the same pages.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: manpages.sh OUT_DIR BIN_DIR}
bin=${2:?usage: manpages.sh OUT_DIR BIN_DIR}
version=$("$root/scripts/version.sh")
date=$("$root/scripts/version.sh" --date)
SWIFT=${SWIFT:-swift}

command -v go-md2man >/dev/null || { echo "manpages: go-md2man is missing (apt-get install go-md2man)" >&2; exit 1; }
[[ -x "$bin/handoffctl" ]] || { echo "manpages: $bin/handoffctl is missing: build it first" >&2; exit 1; }
mkdir -p "$out"

# MARK: From the argument parsers

if [[ -z "${GENERATE_MANUAL:-}" ]]; then
    scratch=$(dirname "$(dirname "$(realpath "$bin")")")
    parser="$scratch/checkouts/swift-argument-parser"
    [[ -f "$parser/Package.swift" ]] || { echo "manpages: no swift-argument-parser checkout in $scratch/checkouts" >&2; exit 1; }
    log=$(mktemp)
    if ! "$SWIFT" build --package-path "$parser" --scratch-path "$scratch/generate-manual" \
        --product generate-manual > "$log" 2>&1; then
        cat "$log" >&2
        rm -f "$log"
        echo "manpages: could not build swift-argument-parser's generate-manual" >&2
        exit 1
    fi
    rm -f "$log"
    GENERATE_MANUAL="$scratch/generate-manual/debug/generate-manual"
fi
for program in handoffctl handoff-agent handoff-example-viewer; do
    [[ -x "$bin/$program" ]] || continue
    "$GENERATE_MANUAL" "$bin/$program" --section 1 --date "$date" --output-directory "$out"
    [[ -s "$out/$program.1" ]] || { echo "manpages: generate-manual wrote no $out/$program.1" >&2; exit 1; }
    # Its blank lines (paragraphs of the help text) are what mdoc wants as .Pp.
    # A line of text starting with ' would be a control line: \& keeps it text.
    sed -i -e 's/^$/.Pp/' -e "s/^'/\\\\\&'/" "$out/$program.1"
    echo "manpages: $out/$program.1"
done

# MARK: From markdown

markdown_page() { # markdown_page NAME.SECTION < MARKDOWN
    sed -e "s/@VERSION@/$version/g" -e "s/@DATE@/$date/g" | go-md2man -out "$out/$1"
    echo "manpages: $out/$1"
}
markdown_page handoffd.8 < "$root/man/handoffd.8.md"
python3 "$root/scripts/config-manpage.py" "$root/Config/handoffd.toml" "$root/man/handoffd.toml.5.md" \
    | markdown_page handoffd.toml.5

# handoff-protocol(7): docs/protocol.md, its tables as lists (scripts/protocol-manpage.py).
python3 "$root/scripts/protocol-manpage.py" "$root/docs/protocol.md" "$version" "$date" \
    | go-md2man -out "$out/handoff-protocol.7"
echo "manpages: $out/handoff-protocol.7"
