#!/usr/bin/env python3
"""Mutation testing by hand: break the code on purpose, one small bug at a time,
and check that the tests named for it fail.

usage: tests/mutate.py [--tree DIR] [--only ID[,ID...]] [--list] [--keep-going]
                       [--table FILE] [--jobs N]

Each mutant of tests/mutants.json names a file, a text that occurs in it exactly
once, its replacement, the build targets the tests need and the CTest label
(and optional -R regex) of the tests expected to catch it. The script copies the
working tree (tracked and untracked files git does not ignore) to DIR (default:
tpt-mutants beside the repository; reused and refreshed when it is there),
configures it like .ci/test with ccache, builds every mutant's targets once and
runs each mutant's tests unmutated (they must pass: a test that already fails
kills nothing). Then for each mutant: apply it, build its targets incrementally,
run its tests, restore the file. Killed: the tests failed. Survived: they
passed. Not built: the mutant does not compile (fix the mutant, it is no test).

Prints a Markdown table (mutant, behaviour, label, result, seconds) and the
total time; --table FILE writes it there too. Exit 0 when every mutant is
killed. Slow (minutes a mutant on 2 cores): run by hand, not in CI.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run(cmd, cwd, log=None, env=None):
    r = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    if log is not None:
        log.write(f"$ {' '.join(cmd)}\n{r.stdout}\n")
        log.flush()
    return r


def copy_tree(tree):
    """The working tree as it is (committed or not) into `tree`; stale files removed."""
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, stdout=subprocess.PIPE,
                           check=True).stdout.decode().split("\0")
    files = [f for f in files if f and (ROOT / f).is_file()]
    tree.mkdir(parents=True, exist_ok=True)
    keep = set(files)
    for p in tree.rglob("*"):
        rel = p.relative_to(tree).as_posix()
        if rel.startswith("build/") or rel == "build":
            continue
        if p.is_file() and rel not in keep:
            p.unlink()
    for f in files:
        src, dst = ROOT / f, tree / f
        if dst.exists() and dst.read_bytes() == src.read_bytes():
            continue  # unchanged: keep its time stamp, so nothing rebuilds
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dst)
        os.utime(dst)


def ctest_cmd(m, build):
    cmd = ["ctest", "--test-dir", str(build), "-L", m["label"], "--stop-on-failure", "-j2"]
    if m.get("regex"):
        cmd += ["-R", m["regex"]]
    return cmd


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tree", default=str(ROOT.parent / "tpt-mutants"))
    ap.add_argument("--only", default="")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--table", default="")
    ap.add_argument("--jobs", default="2")
    args = ap.parse_args()

    mutants = json.loads((ROOT / "tests" / "mutants.json").read_text())["mutants"]
    if args.only:
        want = set(args.only.split(","))
        mutants = [m for m in mutants if m["id"] in want]
    ids = [m["id"] for m in mutants]
    if len(set(ids)) != len(ids):
        sys.exit("tests/mutants.json: ids repeat")
    for m in mutants:
        text = (ROOT / m["file"]).read_text()
        n = text.count(m["find"])
        if n != 1:
            sys.exit(f"{m['id']}: {m['file']} holds the text to find {n} times, not once: {m['find']!r}")
    if args.list:
        for m in mutants:
            print(f"{m['id']:5} {m['label']:8} {m['file']}: {m['behaviour']}")
        return 0

    t_all = time.time()
    tree = Path(args.tree).resolve()
    build = tree / "build"
    copy_tree(tree)
    env = dict(os.environ, CCACHE_BASEDIR=str(tree.parent), CCACHE_NOHASHDIR="1")
    log = open(tree / "mutate.log", "w")
    launcher = [f"-DCMAKE_{l}_COMPILER_LAUNCHER=ccache" for l in ("CXX", "C", "CUDA")] if shutil.which("ccache") else []
    r = run(["cmake", "-S", str(tree), "-B", str(build), "-DCMAKE_BUILD_TYPE=RelWithDebInfo", "-DTPT_STATIC=ON"] + launcher,
            tree, log, env)
    if r.returncode:
        sys.exit(f"cmake failed: see {tree}/mutate.log")
    targets = sorted({t for m in mutants for t in m["targets"]})
    print(f"building {len(targets)} targets in {build} ...", flush=True)
    r = run(["nice", "cmake", "--build", str(build), "-j", args.jobs, "--target"] + targets, tree, log, env)
    if r.returncode:
        sys.exit(f"the unmutated tree does not build: see {tree}/mutate.log")
    # The tests of every mutant pass on the unmutated tree.
    for m in mutants:
        r = run(ctest_cmd(m, build), tree, log, env)
        if r.returncode or "No tests were found" in r.stdout:
            sys.exit(f"{m['id']}: its tests fail or are missing on the unmutated tree: see {tree}/mutate.log")
    print(f"baseline ready in {time.time() - t_all:.0f} s", flush=True)

    rows = []
    for m in mutants:
        t0 = time.time()
        path = tree / m["file"]
        orig = path.read_text()
        path.write_text(orig.replace(m["find"], m["replace"], 1))
        try:
            b = run(["nice", "cmake", "--build", str(build), "-j", args.jobs, "--target"] + m["targets"], tree, log, env)
            if b.returncode:
                result = "not built"
            else:
                t = run(ctest_cmd(m, build), tree, log, env)
                result = "killed" if t.returncode else "SURVIVED"
                if t.returncode:
                    failed = re.findall(r"Test\s+#\d+: (\S+) .*?(?:\*\*\*|Not Run)", t.stdout)
                    m["by"] = ", ".join(failed)[:160]
        finally:
            path.write_text(orig)
        dt = time.time() - t0
        rows.append((m, result, dt))
        print(f"{m['id']:5} {result:9} {dt:6.0f} s  {m['behaviour']}", flush=True)
    total = time.time() - t_all

    out = ["| mutant | behaviour | file: change | label (-R) | result | caught by | s |", "|---|---|---|---|---|---|---|"]
    for m, result, dt in rows:
        change = f"`{m['file']}`: {m.get('what', '')}".replace("|", "\\|")
        lab = m["label"] + (f" (`{m['regex']}`)" if m.get("regex") else "")
        out.append(f"| {m['id']} | {m['behaviour']} | {change} | {lab.replace('|', chr(92) + '|')} | {result} | "
                   f"{m.get('by', '').replace('|', chr(92) + '|')} | {dt:.0f} |")
    killed = sum(1 for _, r, _ in rows if r == "killed")
    out.append("")
    out.append(f"{killed}/{len(rows)} killed, {total / 60:.1f} min in all (build of the copy included).")
    table = "\n".join(out) + "\n"
    print(table)
    if args.table:
        Path(args.table).write_text(table)
    return 0 if killed == len(rows) else 1


if __name__ == "__main__":
    sys.exit(main())
