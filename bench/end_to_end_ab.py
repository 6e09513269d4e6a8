#!/usr/bin/env python3
"""end_to_end_ab.py: the end-to-end lines of bench/RESULTS.md (issue 33), two
builds side by side: `events`, `events --summary`, `analyze` on 64 MB and
`analyze` on 256 MB of `gen_serving_log --ranks 8`, and lnav's count on the
64 MB log when lnav is installed.

  bench/end_to_end_ab.py build/bench/gen_serving_log OLD/tptriage NEW/tptriage [RUNS]

Each case runs A then B, RUNS times (default 5) after one warm-up pair; CPU is
the child's user + system time (getrusage), so a busy machine moves both
alike: quote the median of the per-pair ratios B/A. Logs go to $TMPDIR and
are removed. Output: one line per case (seconds, MB/s of input, B/A)."""
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def cpu(cmd):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    gen, a, b = (os.path.abspath(p) for p in sys.argv[1:4])
    runs = int(sys.argv[4]) if len(sys.argv) > 4 else 5
    tmp = tempfile.mkdtemp()
    try:
        logs = {}
        for size in ("64M", "256M"):
            logs[size] = os.path.join(tmp, f"serving-{size}.log")
            with open(logs[size], "wb") as f:
                subprocess.run([gen, "--bytes", size, "--ranks", "8"], stdout=f, check=True)
        model = open("/proc/cpuinfo").read().split("model name")[1].split("\n")[0].strip(": \t")
        print(f"{time.strftime('%Y-%m-%d')}, {model}, {os.cpu_count()} cpus, load {open('/proc/loadavg').read().split()[0]}")
        cases = [("events 64M", ["events", logs["64M"]]), ("events --summary 64M", ["events", "--summary", logs["64M"]]),
                 ("analyze 64M", ["analyze", logs["64M"]]), ("analyze 256M", ["analyze", logs["256M"]])]
        for name, args in cases:
            ta, tb, ratio = [], [], []
            for i in range(runs + 1):
                x, y = cpu([a] + args), cpu([b] + args)
                if i > 0:
                    ta.append(x), tb.append(y), ratio.append(y / x)
            mb = os.path.getsize(args[-1]) / 1e6
            ma, mb_ = statistics.median(ta), statistics.median(tb)
            print(f"{name}: A {ma:.3f} s ({mb / ma:.0f} MB/s), B {mb_:.3f} s ({mb / mb_:.0f} MB/s), "
                  f"B/A {statistics.median(ratio):.3f} ({min(ratio):.3f}-{max(ratio):.3f}), {runs} pairs")
        lnav = shutil.which("lnav")
        if lnav:
            tl = [cpu([lnav, "-n", "-c", ";SELECT count(*) FROM all_logs", logs["64M"]]) for _ in range(runs)]
            print(f"lnav count 64M: {statistics.median(tl):.3f} s")
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
