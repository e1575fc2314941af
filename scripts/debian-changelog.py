#!/usr/bin/env python3
"""Writes handoff's changelog in Debian's format from CHANGELOG.md.

usage: debian-changelog.py CHANGELOG.md "NAME <EMAIL>" > changelog

Every released section "## [VERSION] - YYYY-MM-DD" becomes an entry of the
native package handoff, newest first; its items become "* Added: ...",
"* Changed: ..." and so on. [Unreleased] is left out.
"""
import datetime
import re
import sys
import textwrap

RELEASE = re.compile(r"^## \[([^\]]+)\] - (\d{4}-\d{2}-\d{2})\s*$")


def releases(path):
    current = None
    kind = ""
    for line in open(path, encoding="utf-8"):
        line = line.rstrip("\n")
        match = RELEASE.match(line)
        if match:
            current = {"version": match.group(1), "date": match.group(2), "items": []}
            yield current
            continue
        if line.startswith("## "):
            current = None
        if current is None:
            continue
        if line.startswith("### "):
            kind = line[4:].strip()
        elif line.startswith("- "):
            current["items"].append([kind, line[2:].strip()])
        elif line.startswith("  ") and current["items"]:
            current["items"][-1][1] += " " + line.strip()


def main():
    path, maintainer = sys.argv[1:3]
    entries = []
    for release in list(releases(path)):
        lines = [f"handoff ({release['version']}) unstable; urgency=medium", ""]
        for kind, text in release["items"]:
            text = text.replace("`", "")
            lines += textwrap.wrap(f"{kind}: {text}", width=78, initial_indent="  * ", subsequent_indent="    ",
                                   break_on_hyphens=False)
        if not release["items"]:
            lines.append("  * Release " + release["version"] + ".")
        day = datetime.datetime.strptime(release["date"], "%Y-%m-%d").replace(tzinfo=datetime.timezone.utc)
        lines += ["", f" -- {maintainer}  {day.strftime('%a, %d %b %Y %H:%M:%S +0000')}", ""]
        entries.append("\n".join(lines))
    if not entries:
        sys.exit(f"debian-changelog: no released version in {path}")
    sys.stdout.write("\n".join(entries))


if __name__ == "__main__":
    main()
