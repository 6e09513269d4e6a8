#!/usr/bin/env python3
"""Regenerate the founding-case example in README.md from what the tool prints.

usage: tests/update_readme_example.py BUILD/tptriage [--check]

Takes `tptriage analyze samples/founding/sglang-tp8-rtxpro6000-mfs050.log` and
writes its first three lines, "What it is NOT", the ledger and the repro lines
into the README's ```console block that starts with `$ tptriage analyze LOG`.
--check exits 1 (changing nothing) when the README differs from the tool's
output, or when the block is not there (CTest: readme_founding_example).
"""
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LOG = "samples/founding/sglang-tp8-rtxpro6000-mfs050.log"
MARK = f"tptriage analyze {LOG}"  # the block's first line, after "$ "


def section(lines, title):
    i = lines.index(title)
    j = i + 1
    while j < len(lines) and lines[j] != "":
        j += 1
    return lines[i:j]


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    env = dict(os.environ, NO_COLOR="1", COLUMNS="100")
    out = subprocess.run([sys.argv[1], "analyze", LOG], cwd=ROOT, capture_output=True, text=True, env=env).stdout
    lines = out.split("\n")
    ex = [f"$ {MARK}"] + lines[:3] + ["..."]
    for title in ("What it is NOT:", "Memory ledger per rank (GiB):"):
        if title in lines:
            ex += section(lines, title) + [""]
    repro = [l for l in lines if l.startswith("Reproduce on a GPU")]
    if repro:
        ex = ex[:-1] + ["..."] + section(lines, repro[0])
    block = "```console\n" + "\n".join(ex).rstrip("\n") + "\n```\n"
    readme = ROOT / "README.md"
    text = readme.read_text()
    a = text.find(f"```console\n$ {MARK}\n")
    if a < 0:
        print(f"README.md: no ```console block starting with `$ {MARK}`", file=sys.stderr)
        return 1
    b = text.index("```\n", a + 4) + 4
    new = text[:a] + block + text[b:]
    if "--check" in sys.argv:
        if new != text:
            print("README.md: the founding example differs from the tool's output; run "
                  "tests/update_readme_example.py build/tptriage", file=sys.stderr)
            return 1
        return 0
    readme.write_text(new)
    return 0


if __name__ == "__main__":
    sys.exit(main())
