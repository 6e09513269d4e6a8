#!/usr/bin/env python3
"""Writes the p2p hang sample: 4 pipeline ranks, NCCL-shaped JSON dumps.

    python3 make_p2p_sample.py OUTDIR

WRITTEN BY US in the layout of torch's `_dump_nccl_trace_json` (the keys of
the real gloo JSON dumps beside it, pos_hang_2ranks_json, PyTorch 2.11,
FlightRecorderDetail.hpp dump_json: keys sorted, pg_status numbers as
strings, no frames). Gloo records no send/recv in the flight recorder (a
4-rank gloo run of dist.send/recv on the GPU box, 2026-12-05, left only its
all_reduces), and NCCL needs a GPU a rank, so these are NCCL's records as
ProcessGroupNCCL writes them: profiling_name `nccl:send <rank>-><peer>` /
`nccl:recv <rank><-<peer>` (group ranks; ProcessGroupNCCL.cpp send/recv,
c10::str("nccl:send ", rank_, "->", dstRank)), p2p_seq_id counting the group's
p2p ops, collective_seq_id staying at the last collective.

Every rank runs 3 all_reduces, then stage pairs 0->1 and 2->3 exchange twice:
rank 2's second send waits (started), rank 3 never posted its second recv.
"""
import json
import os
import sys

T0 = 1796486211212303599


def record(rid, seq, p2p, name, state, is_p2p):
    return {
        "collective_seq_id": seq, "input_dtypes": ["BFloat16"], "input_sizes": [[8, 4096]], "is_p2p": is_p2p,
        "op_id": rid + 1, "output_dtypes": ["BFloat16"], "output_sizes": [[8, 4096]], "p2p_seq_id": p2p,
        "pg_id": 0, "process_group": ["0", "default_pg"], "profiling_name": name, "record_id": rid,
        "retired": state == "completed", "state": state, "thread_id": "140312877668160", "thread_name": "pt_main_thread",
        "time_created_ns": T0 + rid * 1000000,
        "time_discovered_completed_ns": T0 + rid * 1000000 + 500000 if state == "completed" else 0,
        "time_discovered_started_ns": T0 + rid * 1000000 + 100000 if state != "scheduled" else 0,
        "timeout_ms": 600000,
    }


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for rank in range(4):
        entries = [record(i, i + 1, 0, "nccl:all_reduce", "completed", False) for i in range(3)]
        peer = rank ^ 1
        name = f"nccl:send {rank}->{peer}" if rank % 2 == 0 else f"nccl:recv {rank}<-{peer}"
        rounds = [("completed",), ("completed",)]
        if rank == 2:
            rounds = [("completed",), ("started",)]
        if rank == 3:
            rounds = [("completed",)]
        for k, (state,) in enumerate(rounds):
            entries.append(record(len(entries), 3, k + 1, name, state, True))
        dump = {
            "comm_lib_version": "2.27.5",
            "entries": entries,
            "nccl_comm_state": {},
            "pg_config": {"0": {"desc": "default_pg", "name": "0", "ranks": "[0, 1, 2, 3]"}},
            "pg_status": {"0": {"last_completed_collective": "3", "last_enqueued_collective": "3",
                                "last_started_collective": "3"}},
            "version": "2.10",
        }
        with open(os.path.join(out, f"fr_trace_json_rank_{rank}"), "w") as f:
            json.dump(dump, f, sort_keys=True)


if __name__ == "__main__":
    main()
