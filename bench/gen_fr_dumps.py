#!/usr/bin/env python3
"""Writes a large set of flight-recorder dumps for the bounded-memory bench.

    python3 bench/gen_fr_dumps.py OUTDIR RANKS [RECORDS] [MISSING...]

One pickle per rank, OUTDIR/nccl_trace_rank_<r>, in the layout of the real
PyTorch 2.11 dumps of samples/hangs (torch/csrc/distributed/c10d/
FlightRecorder.hpp keys, FlightRecorderDetail.hpp dump_dict; protocol 2 as
torch's pickler writes): RECORDS all_reduce records per rank (default 2000,
TORCH_NCCL_TRACE_BUFFER_SIZE's usual size) in the default group, each with
its 9 frames; every rank scheduled collectives 1..RECORDS except the MISSING
ranks (default: rank 17 when RANKS > 17, else 1), which stop one short. The
dumps are generated, never committed (20 MB at 64 ranks, 320 MB at 1,024).
"""
import os
import pickle
import sys

FRAMES = [
    ("all_reduce", "/opt/torch/.venv/lib/python3.12/site-packages/torch/distributed/distributed_c10d.py", 3068),
    ("wrapper", "/opt/torch/.venv/lib/python3.12/site-packages/torch/distributed/c10d_logger.py", 83),
    ("train_step", "/srv/job/train.py", 212),
    ("main", "/srv/job/train.py", 340),
    ("_wrap", "/opt/torch/.venv/lib/python3.12/site-packages/torch/multiprocessing/spawn.py", 87),
    ("run", "/usr/lib/python3.12/multiprocessing/process.py", 108),
    ("_bootstrap", "/usr/lib/python3.12/multiprocessing/process.py", 314),
    ("_main", "/usr/lib/python3.12/multiprocessing/spawn.py", 135),
    ("<module>", "<string>", 1),
]


def record(i, seq):
    return {
        "record_id": i,
        "pg_id": 0,
        "process_group": ("0", "default_pg"),
        "collective_seq_id": seq,
        "p2p_seq_id": 0,
        "op_id": seq,
        "profiling_name": "nccl:all_reduce",
        "time_created_ns": 1796486211212303599 + seq * 1000000,
        "input_sizes": [[4096, 1024]],
        "input_dtypes": ["BFloat16"],
        "output_sizes": [[4096, 1024]],
        "output_dtypes": ["BFloat16"],
        "state": "completed",
        "time_discovered_started_ns": None,
        "time_discovered_completed_ns": None,
        "retired": True,
        "timeout_ms": 600000,
        "is_p2p": False,
        "thread_id": "139941178900800",
        "thread_name": "python3",
        "frames": [{"name": n, "filename": f, "line": l} for n, f, l in FRAMES],
    }


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    out, ranks = sys.argv[1], int(sys.argv[2])
    records = int(sys.argv[3]) if len(sys.argv) > 3 else 2000
    missing = {int(r) for r in sys.argv[4:]} or {17 if ranks > 17 else 1}
    os.makedirs(out, exist_ok=True)
    config = {"0": {"name": "0", "desc": "default_pg", "ranks": str(list(range(ranks)))}}
    for r in range(ranks):
        last = records - 1 if r in missing else records
        entries = [record(i, i + 1) for i in range(last)]
        dump = {
            "version": "2.10",
            "pg_config": config,
            "pg_status": {"0": {"last_enqueued_collective": last, "last_started_collective": last - 1,
                                "last_completed_collective": last - 1}},
            "comm_lib_version": "2.27.5",
            "entries": entries,
        }
        with open(os.path.join(out, f"nccl_trace_rank_{r}"), "wb") as f:
            pickle.dump(dump, f, protocol=2)


if __name__ == "__main__":
    main()
