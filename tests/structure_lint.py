#!/usr/bin/env python3
"""structure_lint.py SOURCE_DIR BUILD_DIR: the shape of the tree stays as the
structure review left it.

  1. No source file outside tests over 800 lines.
  2. No two object files of the tool that call each other: for every pair of
     objects A, B linked into tptriage's libraries, A may use symbols B defines
     or B may use A's, not both (a loop means two files that are one module in
     two halves). Read from the objects with `nm`, so it sees calls, not
     includes.
  3. No header include loop.
  4. No "issue N" / "task N" references in code or CMake (the code says why,
     not which ticket).
Exit 1 with every finding listed; 0 when the tree is clean.
"""
import os
import re
import subprocess
import sys
from collections import defaultdict

src, build = sys.argv[1], sys.argv[2]
problems = []

CODE_EXT = (".cc", ".h", ".cu", ".cuh")
SKIP_DIRS = {".git", "build", "third_party"}


def tracked_files():
    out = subprocess.run(["git", "-C", src, "ls-files"], capture_output=True, text=True)
    if out.returncode == 0 and out.stdout:
        return out.stdout.split()
    files = []
    for root, dirs, names in os.walk(src):
        dirs[:] = [d for d in dirs if d not in SKIP_DIRS and not d.startswith("build")]
        files += [os.path.relpath(os.path.join(root, n), src) for n in names]
    return files


def is_test(path):
    base = os.path.basename(path)
    return (path.startswith("tests/") or "_test" in base or base.startswith("test_")
            or "/fuzz/" in path or path.startswith("bench/"))


files = tracked_files()

# 1. size
for f in files:
    if f.endswith(CODE_EXT) and not is_test(f):
        with open(os.path.join(src, f), errors="replace") as fh:
            n = sum(1 for _ in fh)
        if n > 800:
            problems.append(f"{f}: {n} lines (over 800: split it along what it does)")

# 4. ticket references
ticket = re.compile(r"\b(issue|task)\s+\d+\b", re.I)  # "issue #123" of an upstream tracker is a citation
for f in files:
    if f.endswith(CODE_EXT) or os.path.basename(f) == "CMakeLists.txt" or f.endswith(".cmake"):
        with open(os.path.join(src, f), errors="replace") as fh:
            for i, line in enumerate(fh, 1):
                if ticket.search(line) and "github.com" not in line:
                    problems.append(f"{f}:{i}: refers to a ticket: {line.strip()[:100]}")

# 3. header include loops
inc = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
graph = defaultdict(set)
headers = {f for f in files if f.endswith((".h", ".cuh"))}
for h in headers:
    with open(os.path.join(src, h), errors="replace") as fh:
        for line in fh:
            m = inc.match(line)
            if m and m.group(1) in headers:
                graph[h].add(m.group(1))
state = {}


def visit(n, stack):
    state[n] = 1
    stack.append(n)
    for m in sorted(graph[n]):
        if state.get(m) == 1:
            problems.append("include loop: " + " -> ".join(stack[stack.index(m):] + [m]))
        elif m not in state:
            visit(m, stack)
    stack.pop()
    state[n] = 2


for h in sorted(headers):
    if h not in state:
        visit(h, [])

# 2. objects that call each other
objs = []
for root, dirs, names in os.walk(build):
    if any(x in root for x in ("/tests", "_test", "fuzz", "/bench", "/_deps", "/aarch64", "/cross")):
        continue
    if not re.search(r"/tpt_[a-z_]+\.dir(/|$)|/tptriage\.dir(/|$)", root):
        continue
    rel_dir = os.path.relpath(root, build)
    m = re.match(r"(.*?)/?CMakeFiles/[^/]+\.dir(?:/(.*))?$", rel_dir)
    if not m:
        continue
    for n in names:
        if n.endswith(".o") and "_test" not in n and not n.startswith("embed_"):
            # Only objects of sources that exist (a build dir keeps stale ones).
            source = os.path.join(src, m.group(1) or "", m.group(2) or "", n[:-2])
            if os.path.exists(source):
                objs.append(os.path.join(root, n))
if not objs:
    problems.append(f"no object files of the tool under {build}: build it first")
defined, undefined = {}, {}
for o in objs:
    r = subprocess.run(["nm", "-C", "--defined-only", "-g", o], capture_output=True, text=True)
    d = set()
    for line in r.stdout.splitlines():
        parts = line.split(" ", 2)
        # Only functions and data with a unique home: T/D/B/R; weak (W/V: inline,
        # templates) symbols live in every object that uses them.
        if len(parts) == 3 and parts[1] in "TDBR":
            d.add(parts[2])
    defined[o] = d
    r = subprocess.run(["nm", "-C", "--undefined-only", o], capture_output=True, text=True)
    undefined[o] = {line.split("U ", 1)[1] for line in r.stdout.splitlines() if " U " in line}
owner = {}
for o, syms in defined.items():
    for s in syms:
        owner.setdefault(s, o)
uses = defaultdict(set)
for o, syms in undefined.items():
    for s in syms:
        if s in owner and owner[s] != o:
            uses[o].add(owner[s])


def short(o):
    return os.path.relpath(o, build)


seen = set()
for a in sorted(uses):
    for b in sorted(uses[a]):
        if a in uses.get(b, ()) and (b, a) not in seen:
            seen.add((a, b))
            problems.append(f"{short(a)} and {short(b)} call each other")

print(f"structure_lint: {len(files)} files, {len(objs)} objects, {len(headers)} headers checked")
for p in problems:
    print("  " + p)
sys.exit(1 if problems else 0)
