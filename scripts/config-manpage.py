#!/usr/bin/env python3
"""Writes the settings of handoffd.toml(5) from the annotated configuration.

usage: config-manpage.py CONFIG FRAME > handoffd.toml.5.md

CONFIG is Config/handoffd.toml: every setting there is a commented-out
"#key = default" line below the comment that describes it. FRAME is
man/handoffd.toml.5.md, whose line "@SETTINGS@" is replaced by one entry per
setting, section by section, so that the manual page lists every setting the
shipped file does, with the same words and defaults. Fails when a section has
no settings or a setting has no description.
"""
import re
import sys

SECTION = re.compile(r"^\[([a-z_]+)\]\s*$")
SETTING = re.compile(r"^#([a-z_]+) = (.+)$")


def escaped(text):
    """Markdown-safe prose (the words are the configuration file's)."""
    return re.sub(r"([\\`*_\[\]<>])", r"\\\1", text)


def settings(path):
    """[(section, [(keys_and_defaults, description)])] in file order."""
    sections = []
    comment, keys = [], []

    def flush():
        if keys:
            if not comment:
                sys.exit(f"config-manpage: {keys[0][0]} has no description in {path}")
            sections[-1][1].append((list(keys), " ".join(comment)))
        comment.clear()
        keys.clear()

    for line in open(path, encoding="utf-8"):
        line = line.rstrip("\n")
        match = SECTION.match(line)
        if match:
            flush()
            sections.append((match.group(1), []))
            continue
        if not sections:
            continue  # the file's own introduction
        match = SETTING.match(line)
        if match:
            keys.append((match.group(1), match.group(2)))
        elif line.startswith("#"):
            if keys:
                flush()
            comment.append(line.lstrip("#").strip())
        elif not line.strip():
            flush()
    flush()
    for name, entries in sections:
        if not entries:
            sys.exit(f"config-manpage: section [{name}] has no settings in {path}")
    return sections


def main():
    config, frame = sys.argv[1:3]
    out = []
    for name, entries in settings(config):
        out.append(f"## [{name}]\n")
        for keys, description in entries:
            term = ", ".join(f"**{escaped(key)}** = {escaped(default)}" for key, default in keys)
            out.append(f"{term}\n:   {escaped(description)}\n")
    text = open(frame, encoding="utf-8").read()
    if "@SETTINGS@" not in text:
        sys.exit(f"config-manpage: {frame} has no @SETTINGS@ line")
    sys.stdout.write(text.replace("@SETTINGS@", "\n".join(out).rstrip("\n")))


if __name__ == "__main__":
    main()
