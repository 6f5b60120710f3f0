#!/usr/bin/env python3
"""Checks of the documentation (README.md and docs/*.md), run from the repository root.

  scripts/check-docs.py links        every relative link and #anchor resolves
  scripts/check-docs.py kept REV     every non-empty line of README.md at git revision REV
                                     is still somewhere in README.md or docs/*.md

Both print what they found wrong and exit 1 if anything was; 0 otherwise.

kept compares lines with leading '#'s and surrounding blanks removed, and reads a markdown
link [text](target) as its text, so a heading that changed level or a phrase that became a
link still counts as kept; a line counts when it is part of a line of the docs (text may be
added around it, never taken out of it).
"""
import glob
import os
import re
import subprocess
import sys

LINK = re.compile(r"\[([^\]]*)\]\(([^)\s]+)\)")


def doc_files():
    return ["README.md"] + sorted(glob.glob("docs/*.md"))


def strip_code(text):
    """Drops fenced code blocks and inline code spans, where brackets are not links."""
    text = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
    return re.sub(r"`[^`\n]*`", "", text)


def slug(heading):
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces as dashes."""
    s = heading.strip().lower()
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")


def anchors(path):
    text = re.sub(r"^```.*?^```", "", open(path).read(), flags=re.S | re.M)
    return {slug(m.group(1)) for m in re.finditer(r"^#+\s+(.*)$", text, flags=re.M)}


def check_links():
    bad = 0
    count = 0
    for f in doc_files():
        for lineno, line in enumerate(strip_code(open(f).read()).split("\n"), 1):
            for m in LINK.finditer(line):
                target = m.group(2)
                if re.match(r"^[a-z]+:", target):  # http:, https:, mailto:
                    continue
                count += 1
                path, _, frag = target.partition("#")
                dest = os.path.normpath(os.path.join(os.path.dirname(f), path)) if path else f
                if not os.path.exists(dest):
                    print(f"{f}: link {target}: {dest} does not exist")
                    bad += 1
                elif frag and dest.endswith(".md") and frag not in anchors(dest):
                    print(f"{f}: link {target}: no heading #{frag} in {dest}")
                    bad += 1
    print(f"links: {count} relative links checked, {bad} broken")
    return 1 if bad else 0


def norm(line):
    line = LINK.sub(lambda m: m.group(1), line)
    return line.strip().lstrip("#").strip()


def check_kept(rev):
    old = subprocess.run(["git", "show", f"{rev}:README.md"], check=True,
                         capture_output=True, text=True).stdout.split("\n")
    new = [norm(l) for f in doc_files() for l in open(f).read().split("\n")]
    newset = set(new)
    missing = []
    total = 0
    for lineno, line in enumerate(old, 1):
        n = norm(line)
        if not n:
            continue
        total += 1
        if n in newset or any(n in l for l in new):
            continue
        missing.append((lineno, line))
    for lineno, line in missing:
        print(f"README.md@{rev}:{lineno}: not found: {line}")
    print(f"kept: {total - len(missing)} of {total} non-empty lines of README.md@{rev} found, "
          f"{len(missing)} missing")
    return 1 if missing else 0


def main():
    if len(sys.argv) == 2 and sys.argv[1] == "links":
        return check_links()
    if len(sys.argv) == 3 and sys.argv[1] == "kept":
        return check_kept(sys.argv[2])
    print(__doc__.strip(), file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
