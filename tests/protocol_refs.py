#!/usr/bin/env python3
"""protocol_refs.py — every citation of the contract resolves in it.

doc/PROTOCOL.md is the project's normative document. This test reads it,
collects what a citation may name — its section headings (§2.4, §6.1,
Appendix A.3), the transitions its headings declare (T1.4, T3.6 ...), and
the numbered items inside a section (§2.7.3 is item 3 of §2.7) — and then
reads every tracked source, script, help text, man page and document of the
tree for citations of the contract (the file name followed by a section
sign, "section", "Appendix" or a transition number) and for bare
transition numbers, failing on any that names nothing.
Prints "N passed, N failed"; exit 1 on a failure.
"""
import os
import re
import subprocess
import sys

top = os.environ.get("srcdir") or os.path.join(os.path.dirname(__file__), "..")
proto = os.path.join(top, "doc", "PROTOCOL.md")

sections, transitions = set(), set()
current = None
with open(proto, encoding="utf-8") as f:
    for line in f:
        m = re.match(r"(#+)\s+(.*)", line)
        if m:
            title = m.group(2)
            s = re.match(r"(?:Appendix\s+)?((?:[A-Z]|\d+)(?:\.\d+)*)\.?\s",
                         title + " ")
            if s:
                current = s.group(1)
                sections.add(current)
            for t in re.findall(r"\bT\d+\.\d+\b", title):
                transitions.add(t)
            continue
        item = re.match(r"(\d+)\.\s", line)
        if item and current:
            sections.add("%s.%s" % (current, item.group(1)))
        for d in re.findall(r"\*\*(D-\d+)\b", line):
            sections.add(d)

files = subprocess.run(["git", "-C", top, "ls-files"], capture_output=True,
                       text=True).stdout.split()
if not files:  # not a checkout (a dist tarball): walk the tree
    for root, dirs, names in os.walk(top):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        files += [os.path.relpath(os.path.join(root, n), top) for n in names]
skip = re.compile(r"^(fuzz/(corpus|regress)|tests/fixtures|tests/lua_diff"
                  r"|bindings/.*/(node_modules|_build|deps)/)|\.(png|jsonl)$")
cite = re.compile(r"PROTOCOL\.md,?\s+(?:§\s?|section\s+|Appendix\s+|appendix\s+)?"
                  r"([A-Z]?\d+(?:\.\d+)*|[A-Z](?![a-z]))")
bare = re.compile(r"(?<![\w.])T(\d+)\.(\d+)(?![\d])")

passed = failed = 0
for rel in sorted(files):
    if skip.search(rel):
        continue
    path = os.path.join(top, rel)
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except (UnicodeDecodeError, OSError):
        continue
    for n, line in enumerate(text.splitlines(), 1):
        for m in cite.finditer(line):
            ref = m.group(1)
            if ref in sections or ref in transitions or ref in ("L4",):
                passed += 1
            else:
                failed += 1
                print("%s:%d: 'PROTOCOL.md %s' names no heading of "
                      "doc/PROTOCOL.md" % (rel, n, ref), file=sys.stderr)
        for m in bare.finditer(line):
            t = "T%s.%s" % m.groups()
            if t in transitions:
                passed += 1
            else:
                failed += 1
                print("%s:%d: %s is not a transition of doc/PROTOCOL.md"
                      % (rel, n, t), file=sys.stderr)

if passed == 0:
    print("protocol_refs: no citation found: is %s the tree?" % top,
          file=sys.stderr)
    failed += 1
print("%d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
