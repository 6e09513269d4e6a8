#!/usr/bin/env python3
"""Check the founding-case example in README.md; propose, never write, a new one.

usage: tests/update_readme_example.py BUILD/tptriage [--check] [--readme FILE]

Takes `tptriage analyze samples/founding/sglang-tp8-rtxpro6000-mfs050.log`,
cuts the same excerpt the README shows (its first three lines, "What it is NOT",
the ledger and the repro lines) and compares it with the README's ```console
block that starts with `$ tptriage analyze LOG`.

The block is kept by hand. Both the block and the tool's output must also hold
FACTS: the founding case's verdict and figures, worked out by hand from the log
(94.0 GiB free at init, 21.7 GiB after the weights, --mem-fraction-static 0.50:
reserved (1 - 0.50) x 94.0 = 47.0 GiB, rest 21.7 - 47.0 = -25.3 GiB, floor
1 - 21.7 / 94.0 = 0.769 -> 0.77; the fix keeps SGLang's 14.5 GiB headroom:
1 - 14.5 / 94.0 = 0.845 -> 0.84, pool 21.7 - 0.16 x 94.0 = 6.66 GiB), not
from the tool. So a bug that changes the
answer fails here even if someone pastes the new output into the README.

Without --check it prints the unified diff from the README's block to the
tool's excerpt, for a person to review and apply by hand; it writes nothing.
--check exits 1 when the two differ, when a fact is missing from either, or
when the block is not there (CTest: readme_founding_example). --readme FILE
reads another copy of the README (the negative control,
readme_founding_example_can_fail, gives it a wrong block).
"""
import difflib
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LOG = "samples/founding/sglang-tp8-rtxpro6000-mfs050.log"
MARK = f"tptriage analyze {LOG}"  # the block's first line, after "$ "

# (regex, what it pins). Hand-derived; change only with the README's text.
FACTS = [
    (r"^Verdict: kv_pool_no_room \(rank 0, 8 of 8 ranks failed\)", "the root cause, and every rank failed"),
    (r"only 21\.7 GiB is free", "avail after weights, from the log"),
    (r"keeps 47\.0 GiB back \(\(1 - 0\.50\) x 94\.0 GiB", "reserved = (1 - f) x free at init"),
    (r"KV pool gets -25\.3 GiB", "rest = 21.7 - 47.0"),
    (r"must be at least 0\.77", "floor = ceil2(1 - 21.7 / 94.0)"),
    (r"^Fix: --mem-fraction-static 0\.84 \(now 0\.50, floor 0\.77\)",
     "the fix value: the largest f with (1 - f) x 94.0 GiB >= SGLang's 14.5 GiB headroom (f <= 0.845)"),
    (r"gives KV pool 6\.66 GiB a rank", "pool at the fix: 21.7 - (1 - 0.84) x 94.0"),
    (r"the floor gives KV pool 81\.9 MiB a rank", "pool at the floor: 21.7 GiB - 0.23 x 94.0 GiB, with the log's unrounded inputs"),
    (r"^  0-7 +target +94\.00 +72\.30 +47\.00 +0\.00 +0\.00 +-25\.30 +SHORT$", "the ledger: every rank short by 25.3 GiB"),
    (r"custom all-reduce allocates ~24 MiB a rank", "the suspect ruled out with its number"),
]


def section(lines, title):
    i = lines.index(title)
    j = i + 1
    while j < len(lines) and lines[j] != "":
        j += 1
    return lines[i:j]


def excerpt(binary):
    env = dict(os.environ, NO_COLOR="1", COLUMNS="100")
    out = subprocess.run([binary, "analyze", LOG], cwd=ROOT, capture_output=True, text=True, env=env).stdout
    lines = out.split("\n")
    ex = [f"$ {MARK}"] + lines[:3] + ["..."]
    for title in ("What it is NOT:", "Memory ledger per rank (GiB):"):
        if title in lines:
            ex += section(lines, title) + [""]
    repro = [l for l in lines if l.startswith("Reproduce on a GPU")]
    if repro:
        ex = ex[:-1] + ["..."] + section(lines, repro[0])
    return "\n".join(ex).rstrip("\n") + "\n"


def missing_facts(text):
    return [f"{what}: /{rx}/" for rx, what in FACTS if not re.search(rx, text, re.M)]


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    tool = excerpt(sys.argv[1])
    readme_path = ROOT / "README.md"
    if "--readme" in sys.argv:
        readme_path = Path(sys.argv[sys.argv.index("--readme") + 1])
    text = readme_path.read_text()
    a = text.find(f"```console\n$ {MARK}\n")
    if a < 0:
        print(f"README.md: no ```console block starting with `$ {MARK}`", file=sys.stderr)
        return 1
    a += len("```console\n")
    readme = text[a:text.index("```\n", a)]
    status = 0
    for where, body in (("README.md's founding block", readme), ("the tool's output", tool)):
        for m in missing_facts(body):
            print(f"{where}: a founding-case fact is missing: {m}", file=sys.stderr)
            status = 1
    diff = list(difflib.unified_diff(readme.splitlines(True), tool.splitlines(True), "README.md (kept by hand)",
                                     "tptriage analyze (proposed)"))
    if diff:
        sys.stdout.writelines(diff)
        if "--check" in sys.argv:
            print("README.md: the founding example differs from the tool's output (diff above): if the change is "
                  "right, edit the README by hand and say why in the commit", file=sys.stderr)
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
