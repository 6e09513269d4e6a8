#!/usr/bin/env python3
"""readme_examples.py README TPTRIAGE: every example command in the README runs.

Each fenced block whose lines call `tptriage` is run as one bash script in a
scratch folder where `samples/` is the repository's samples (so commands that
write files, and later commands that read them, work as the README shows),
with `tptriage` on PATH being the built binary. A command must not exit 2
(usage or input error: the example is wrong); 0, 1, 3 and 4 are outcomes.

```console blocks show output: after a `$ COMMAND` line, the shown lines must
appear in the command's real output, in order; a line `...` stands for any
number of lines, and a line ending in ` ...` is the start of the real line. So
the README cannot drift from what the tool prints.

```yaml blocks that use the Action (`uses: OWNER/tptriage@`) are the tested
workflow file docs/examples/triage.yml (actionlint checks it): a block whose
first line names that file must be the file, byte for byte; any other such
block must be a run of its lines (indentation aside).

Lines ending in `# needs a GPU` are not run. Set-up blocks (`.ci/setup`,
`cmake`), install blocks (`pip`, `tar`, `uses:`) and YAML are not run here:
the set-up commands are what CI runs, and packaging/ has its own tests.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

SKIP_WORDS = (".ci/setup", "cmake ", "pip ", "tar ", "uvx ", "curl ", "sudo ", "dpkg ")


def blocks(text):
    """(lang, start line number, [lines]) of every fenced block."""
    out, lang, start, cur = [], None, 0, None
    for n, line in enumerate(text.splitlines(), 1):
        m = re.match(r"^```(\w*)\s*$", line)
        if m and cur is None:
            lang, start, cur = m.group(1), n, []
        elif line.startswith("```") and cur is not None:
            out.append((lang, start, cur))
            cur = None
        elif cur is not None:
            cur.append(line)
    return out


def commands(lines):
    """Shell commands (continuation lines joined) that call tptriage."""
    out, cur = [], ""
    for line in lines:
        cur = cur + line.rstrip("\\").rstrip() + " " if line.endswith("\\") else cur + line
        if line.endswith("\\"):
            continue
        if "tptriage" in cur and not cur.lstrip().startswith("#"):
            out.append(cur.strip())
        cur = ""
    return out


def run(cmd, cwd, env):
    p = subprocess.run(["bash", "-c", "set -o pipefail; " + cmd], cwd=cwd, env=env, capture_output=True, text=True,
                       timeout=120)
    return p.returncode, p.stdout + p.stderr


def shown_matches(shown, actual):
    """Shown lines appear in order in actual; '...' skips any lines."""
    lines = actual.splitlines()
    i = 0
    skip = False
    def same(have, want):
        want = want.rstrip()
        if want.endswith(" ..."):  # a shown line cut short: a prefix of the real one
            return have.startswith(want[:-4])
        return have.rstrip() == want

    for want in shown:
        if want.strip() == "...":
            skip = True
            continue
        while i < len(lines) and not same(lines[i], want):
            if not skip:
                return f"expected {want!r}, got {lines[i]!r}"
            i += 1
        if i == len(lines):
            return f"expected {want!r}: not in the output"
        i += 1
        skip = False
    return None


def workflow_failures(repo, text):
    """README yaml blocks that use the Action vs. the tested workflow file."""
    path = os.path.join(repo, "docs", "examples", "triage.yml")
    try:
        wanted = open(path, encoding="utf-8").read()
    except OSError as e:
        return [f"{path}: {e.strerror}"]
    def dedent(lines):
        cut = min((len(l) - len(l.lstrip()) for l in lines if l.strip()), default=0)
        return [l[cut:] for l in lines]
    have = wanted.splitlines()
    out, seen = [], 0
    for lang, start, lines in blocks(text):
        if lang not in ("yaml", "yml") or not any("tptriage@" in l for l in lines):
            continue
        seen += 1
        if lines and lines[0].startswith("# docs/examples/triage.yml"):
            if "\n".join(lines) + "\n" != wanted:
                diff = next((f"line {i + 1}: README {a!r}, file {b!r}" for i, (a, b) in
                             enumerate(zip(lines + [""] * len(have), have + [""] * len(lines))) if a != b), "")
                out.append(f"README.md:{start}: the workflow block differs from docs/examples/triage.yml ({diff})")
            continue
        want = dedent(lines)
        if not any(dedent(have[i:i + len(lines)]) == want for i in range(len(have) - len(lines) + 1)):
            out.append(f"README.md:{start}: this Action snippet is not a run of lines of docs/examples/triage.yml")
    if seen == 0:
        out.append("README.md: no yaml block uses the Action (tptriage@)")
    return out


def main(argv):
    if len(argv) != 3:
        print(__doc__.splitlines()[0], file=sys.stderr)
        return 2
    readme, binary = os.path.abspath(argv[1]), os.path.abspath(argv[2])
    repo = os.path.dirname(readme)
    text = open(readme, encoding="utf-8").read()
    bindir = tempfile.mkdtemp()
    os.symlink(binary, os.path.join(bindir, "tptriage"))
    env = dict(os.environ, PATH=bindir + os.pathsep + os.environ.get("PATH", ""), NO_COLOR="1")
    failures, ran, skipped = workflow_failures(repo, text), 0, 0
    for lang, start, lines in blocks(text):
        if lang in ("yaml", "yml", "json"):
            continue
        scratch = tempfile.mkdtemp()
        os.symlink(os.path.join(repo, "samples"), os.path.join(scratch, "samples"))
        if lang == "console":
            cmd, shown = None, []
            pairs = []
            for line in lines:
                if line.startswith("$ "):
                    if cmd:
                        pairs.append((cmd, shown))
                    cmd, shown = line[2:], []
                elif cmd is not None:
                    shown.append(line)
            if cmd:
                pairs.append((cmd, shown))
            for cmd, shown in pairs:
                ran += 1
                rc, out = run(cmd, scratch, env)
                why = "exit 2 (usage or input error)" if rc == 2 else shown_matches(shown, out)
                if why:
                    failures.append(f"README.md:{start}: $ {cmd}\n  {why}\n  output:\n    " +
                                    "\n    ".join(out.splitlines()[:15]))
            continue
        for cmd in commands(lines):
            if any(w in cmd for w in SKIP_WORDS):
                continue
            if cmd.endswith("# needs a GPU"):
                skipped += 1
                continue
            ran += 1
            rc, out = run(cmd, scratch, env)
            if rc == 2 or rc > 4 or rc < 0:
                failures.append(f"README.md:{start}: {cmd}\n  exit {rc}\n    " + "\n    ".join(out.splitlines()[-8:]))
        shutil.rmtree(scratch, ignore_errors=True)
    for f in failures:
        print("FAIL " + f)
    print(f"readme examples: {ran} run, {skipped} need a GPU (not run), {len(failures)} failed")
    return 1 if failures or ran == 0 else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
