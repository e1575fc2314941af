#!/usr/bin/env python3
"""Turns docs/protocol.md into the markdown of handoff-protocol(7), for go-md2man.

usage: protocol-manpage.py docs/protocol.md VERSION DATE > handoff-protocol.7.md

The text stays the specification's own. What a manual page cannot show changes
form: the title becomes the page's header and NAME, the table of contents and
links within the document go (their text stays), and tables become lists (a
terminal is narrower than the tables' long last column): each row is one
paragraph, its first cell in bold (with the middle cell in parentheses), then
its last cell.
"""
import re
import sys


def cells(line):
    inner = line.strip()[1:-1]
    return [cell.strip() for cell in re.split(r"(?<!\\)\|", inner)]


def table(rows):
    header, body = rows[0], rows[2:]
    out = []
    if any(header):
        names = [name for name in header if name]
        out.append("*" + ", ".join(names).replace("*", "") + ":*\n")
    for row in body:
        term = f"**{row[0]}**" if not row[0].startswith("`") else row[0]
        if len(row) > 2:
            term += " (" + ", ".join(cell for cell in row[1:-1] if cell) + ")"
        description = row[-1] or "-"
        out.append(f"{term}: {description}\n")
    return out


def main():
    path, version, date = sys.argv[1:4]
    lines = open(path, encoding="utf-8").read().split("\n")
    out = [
        f'% HANDOFF-PROTOCOL 7 "{date}" "handoff {version}" "handoff"',
        "",
        "# NAME",
        "",
        "handoff-protocol - the protocol between handoffd and the apps that use it",
        "",
        "# DESCRIPTION",
        "",
    ]
    i = 0
    if lines and lines[0].startswith("# "):
        i = 1
    in_code = False
    while i < len(lines):
        line = lines[i]
        if line.startswith("```"):
            in_code = not in_code
        if not in_code and line == "## Contents":
            i += 1
            while i < len(lines) and not lines[i].startswith("## "):
                i += 1
            continue
        if not in_code and line.startswith("|"):
            rows = []
            while i < len(lines) and lines[i].startswith("|"):
                rows.append(cells(re.sub(r"\[([^\]]+)\]\(#[^)]*\)", r"\1", lines[i])))
                i += 1
            out.extend(table(rows))
            continue
        if not in_code:
            line = re.sub(r"\[([^\]]+)\]\(#[^)]*\)", r"\1", line)
        out.append(line)
        i += 1
    out += ["", "# SEE ALSO", "", "**handoffd**(8), **handoffctl**(1), **handoffd.toml**(5)", ""]
    sys.stdout.write("\n".join(out))


if __name__ == "__main__":
    main()
