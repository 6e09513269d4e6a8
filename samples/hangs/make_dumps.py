#!/usr/bin/env python3
"""Writes real PyTorch flight-recorder dumps of hung and desynced jobs.

Run where PyTorch >= 2.8 is installed (no GPU needed: the gloo backend records
into the generic FlightRecorder<c10::Event>, torch/csrc/distributed/c10d/
FlightRecorder.hpp, and torch._C._distributed_c10d._dump_fr_trace /
_dump_fr_trace_json dump it in the same format ProcessGroupNCCL's
TORCH_NCCL_DUMP_ON_TIMEOUT writes to TORCH_NCCL_DEBUG_INFO_TEMP_FILE + rank).

    python3 make_dumps.py OUTDIR

Every rank runs 3 all_reduces that complete, then the case diverges; each rank
waits 3 s, writes its dump (pickle: <case>/nccl_trace_rank_<r>; JSON where the
case asks: <case>/fr_trace_json_rank_<r>) and a faulthandler dump of its
threads (<case>/stacks_rank_<r>.txt), then exits without waiting.
"""
import datetime
import faulthandler
import os
import sys
import threading
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

CASES = {
    # name: (world, missing ranks, desync rank, json too)
    "hang-2ranks": (2, {1}, None, True),
    "hang-8ranks": (8, {3, 6}, None, False),
    "desync-4ranks": (4, set(), 2, False),
}


def load_next_batch(seconds):
    """The place a missing rank is stuck: data loading, never reaching the collective."""
    time.sleep(seconds)


def dump(rank, outdir, want_json):
    c10d = torch._C._distributed_c10d
    with open(os.path.join(outdir, f"nccl_trace_rank_{rank}"), "wb") as f:
        f.write(c10d._dump_fr_trace())
    if want_json:
        raw = c10d._dump_fr_trace_json()
        with open(os.path.join(outdir, f"fr_trace_json_rank_{rank}"), "wb") as f:
            f.write(raw if isinstance(raw, bytes) else raw.encode())
    with open(os.path.join(outdir, f"stacks_rank_{rank}.txt"), "w") as f:
        faulthandler.dump_traceback(file=f, all_threads=True)


def worker(rank, world, case, outdir, port):
    _, missing, desync, want_json = CASES[case]
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=world, timeout=datetime.timedelta(seconds=60))
    t = torch.ones(4096)
    for _ in range(3):
        dist.all_reduce(t)
    timer = threading.Timer(3.0, lambda: (dump(rank, outdir, want_json), os._exit(0)))
    timer.start()
    if rank in missing:
        load_next_batch(30)
    elif desync is not None and rank == desync:
        out = [torch.empty(4096) for _ in range(world)]
        dist.all_gather(out, t, async_op=True)
        time.sleep(30)
    else:
        dist.all_reduce(t, async_op=True)
        time.sleep(30)


def main():
    root = sys.argv[1]
    port = 29600
    for case, (world, _, _, _) in CASES.items():
        outdir = os.path.join(root, case)
        os.makedirs(outdir, exist_ok=True)
        port += 1
        mp.start_processes(worker, args=(world, case, outdir, port), nprocs=world, join=True, start_method="spawn")
        print(case, sorted(os.listdir(outdir)), flush=True)


if __name__ == "__main__":
    main()
