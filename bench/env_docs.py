#!/usr/bin/env python3
"""How many of the documented environment variables `surface` finds (issue 26).

Claude Code's documentation has a page of environment variables (the
`env-vars` page of its docs: a Markdown table whose rows start with the
variable's name in backquotes). This script reads a copy of that page given
on the command line — the copy published when the build came out — and
never keeps it: the page's text is not ours to commit.

    bench/env_docs.py PAGE.md EXTRACTED_DIR SURFACE.json

PAGE.md        the documentation page (Markdown)
EXTRACTED_DIR  `cc-teardown extract BUILD -o DIR` of the build
SURFACE.json   `cc-teardown surface BUILD --only env --json`

Prints: the documented names, how many occur in the build's bytes (a word
of its own in any extracted file), how many of those `.env` holds, and the
misses (each with up to two places it occurs, to read its reason).
"""

import json
import os
import re
import sys


def documented(page):
    row = re.compile(r"^\|\s*`([A-Za-z_][A-Za-z0-9_]*)`\s*\|", re.M)
    return sorted(set(row.findall(page)))


def build_bytes(d):
    out = []
    for root, _, files in os.walk(d):
        for f in files:
            if f == "manifest.json":
                continue
            with open(os.path.join(root, f), "rb") as fh:
                out.append(fh.read())
    return out


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    page = open(sys.argv[1], encoding="utf-8").read()
    names = documented(page)
    blobs = build_bytes(sys.argv[2])
    found = {e["name"] for e in json.load(open(sys.argv[3]))["env"]}

    def occurs(n):
        w = re.compile(rb"(?<![A-Za-z0-9_$])" + re.escape(n.encode()) + rb"(?![A-Za-z0-9_$])")
        return [(b, m.start()) for b in blobs for m in w.finditer(b)]

    present = {n: occurs(n) for n in names}
    present = {n: o for n, o in present.items() if o}
    hit = [n for n in present if n in found]
    print(f"documented: {len(names)}")
    print(f"in the build's bytes: {len(present)}")
    print(f"in .env: {len(hit)} ({100.0 * len(hit) / max(1, len(present)):.1f} %)")
    for n in sorted(set(present) - found):
        print(f"miss {n}")
        for b, at in present[n][:2]:
            ctx = b[max(0, at - 80) : at + len(n) + 40].decode("utf-8", "replace")
            print("    " + ctx.replace("\n", " "))


if __name__ == "__main__":
    main()
