#!/usr/bin/env python3
"""events_wall_ab.py: `tptriage events` on 64 MB of `gen_serving_log --ranks 8`,
wall clock and CPU, main against a branch written in place and with its writer
thread (TPT_EVENTS_WRITER_THREAD=0 / 1, parser/record_writer.h), for
bench/RESULTS.md (issue 33).

  bench/events_wall_ab.py build/bench/gen_serving_log OLD/tptriage NEW/tptriage [RUNS]

Each round runs A, B in place, B with the thread (RUNS rounds, default 7,
after one warm-up round); CPU is the child's user + system (getrusage). The
wall figure needs an idle core to mean anything: say the load. The log goes to
$TMPDIR and is removed."""
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time


def run(binary, log, thread):
    env = dict(os.environ, TPT_EVENTS_WRITER_THREAD=thread)
    before, t0 = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
    subprocess.run([binary, "events", log], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    t1, after = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
    return t1 - t0, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    gen, a, b = (os.path.abspath(p) for p in sys.argv[1:4])
    runs = int(sys.argv[4]) if len(sys.argv) > 4 else 7
    with tempfile.TemporaryDirectory() as tmp:
        log = os.path.join(tmp, "serving-64M.log")
        with open(log, "wb") as f:
            subprocess.run([gen, "--bytes", "64M", "--ranks", "8"], stdout=f, check=True)
        res = {"A": [], "B in place": [], "B writer thread": []}
        for i in range(runs + 1):
            r = {"A": run(a, log, "0"), "B in place": run(b, log, "0"), "B writer thread": run(b, log, "1")}
            if i > 0:
                for k, v in r.items():
                    res[k].append(v)
        mb = os.path.getsize(log) / 1e6
        print(f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {os.cpu_count()} cpus, "
              f"load {open('/proc/loadavg').read().split()[0]}, {runs} rounds")
        for k, v in res.items():
            w, c = statistics.median(x for x, _ in v), statistics.median(y for _, y in v)
            line = f"{k}: wall {w:.3f} s ({mb / w:.0f} MB/s), CPU {c:.3f} s ({mb / c:.0f} MB/s a core)"
            if k != "A":
                rw = [v[i][0] / res["A"][i][0] for i in range(runs)]
                rc = [v[i][1] / res["A"][i][1] for i in range(runs)]
                line += (f"; /A wall {statistics.median(rw):.3f} ({min(rw):.3f}-{max(rw):.3f}), "
                         f"CPU {statistics.median(rc):.3f} ({min(rc):.3f}-{max(rc):.3f})")
            print(line)


if __name__ == "__main__":
    main()
