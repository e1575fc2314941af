#!/usr/bin/python3
"""Puts one section into docs/BENCHMARKS.md (or another file), for the VM-rig benches.

usage: put-section.py FILE SECTION

SECTION is the whole section's Markdown, starting with its "## " heading line. When FILE has a
section with that heading, it is replaced (up to the next "## " heading); otherwise SECTION is
appended. A missing FILE is started with "# Benchmarks". Other sections are left as they are.
"""
import sys

path, section = sys.argv[1], sys.argv[2].rstrip("\n") + "\n"
head = section.split("\n", 1)[0]
if not head.startswith("## "):
    sys.exit(f"put-section: the section must start with a '## ' heading, not {head!r}")
try:
    text = open(path).read()
except FileNotFoundError:
    text = "# Benchmarks\n"
if head in text:
    start = text.index(head)
    nxt = text.find("\n## ", start + len(head))
    text = text[:start] + section + ("\n" + text[nxt + 1:] if nxt != -1 else "")
else:
    text = text.rstrip("\n") + "\n\n" + section
open(path, "w").write(text)
