#!/usr/bin/env python3
"""make_runs.py: writes the sample CI runs under samples/runs/ci/ (checked in).

Six runs of one CI job, for the grouping tests of `tptriage analyze --runs`:
  - three repeats of one SGLang startup failure (the KV pool has no room on
    one rank, "Not enough memory"), differing in every number, timestamp,
    path, failing rank and TP size;
  - two near-repeats of a different failure (an NCCL all-reduce that hangs
    while serving: one rank never joins it, the torch watchdog of every other
    rank fires), differing the same way and in the rank that hangs;
  - one healthy run.
One run is a single file, the others are directories (one log a run), as CI
artifacts come. Expected: 2 groups (3 + 2 runs) and 1 healthy run.

Run from anywhere: python3 samples/runs/make_runs.py
"""
import os

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "ci")


def ts(day, h, m, s):
    return f"2026-03-{day:02d} {h:02d}:{m:02d}:{s:02d}"


def prefix(t, rank=None):
    return f"[{t} TP{rank}] " if rank is not None else f"[{t}] "


def server_args(model, tp, mfs, port):
    return (f"server_args=ServerArgs(model_path='{model}', tokenizer_path='{model}', dtype='auto', "
            f"kv_cache_dtype='auto', mem_fraction_static={mfs}, max_running_requests=None, "
            f"chunked_prefill_size=8192, tp_size={tp}, port={port}, cuda_graph_max_bs=160, "
            f"disable_cuda_graph=False, disable_custom_all_reduce=False)")


def startup(lines, day, h, m, model, tp, mfs, port, free, weights, kv=None, bad=None, bad_free=None):
    """SGLang startup up to the KV pool; rank `bad` sees `bad_free` GB free."""
    t = ts(day, h, m, 1)
    lines.append(prefix(t) + server_args(model, tp, mfs, port))
    for r in range(tp):
        lines.append(prefix(ts(day, h, m, 5), r) + "Init torch distributed begin.")
    for r in range(tp):
        lines.append(prefix(ts(day, h, m, 6), r) + "sglang is using nccl==2.21.5")
    for r in range(tp):
        lines.append(prefix(ts(day, h, m, 7), r) + "Init torch distributed ends. mem usage=0.62 GB")
    for r in range(tp):
        f = bad_free if r == bad else free
        lines.append(prefix(ts(day, h, m, 7), r) + f"Load weight begin. avail mem={f:.2f} GB")
    for r in range(tp):
        f = (bad_free if r == bad else free) - weights
        lines.append(prefix(ts(day, h, m + 1, 40), r) +
                     f"Load weight end. type=LlamaForCausalLM, dtype=torch.bfloat16, avail mem={f:.2f} GB, "
                     f"mem usage={weights:.2f} GB.")


def not_enough_memory(lines, day, h, m, rank, mfs, pid, site):
    t = ts(day, h, m + 1, 41)
    lines.append(prefix(t, rank) + "Scheduler hit an exception: Traceback (most recent call last):")
    lines.append(f'  File "{site}/sglang/srt/managers/scheduler.py", line 2304, in run_scheduler_process')
    lines.append("    scheduler = Scheduler(server_args, port_args, gpu_id, tp_rank, dp_rank)")
    lines.append(f'  File "{site}/sglang/srt/model_executor/model_runner.py", line 887, in init_memory_pool')
    lines.append("    raise RuntimeError(")
    lines.append(f"RuntimeError: Not enough memory. Please try to increase --mem-fraction-static. "
                 f"Current value: {mfs}")
    lines.append("")
    lines.append(prefix(ts(day, h, m + 1, 42)) + "Received sigquit from a child process. It usually means the child failed.")
    lines.append(f"Killed (pid {pid})")


def ready(lines, day, h, m, tp, tokens, k_gb, pool_avail, graph_avail, port):
    for r in range(tp):
        lines.append(prefix(ts(day, h, m + 1, 41), r) +
                     f"KV Cache is allocated. #tokens: {tokens}, K size: {k_gb:.2f} GB, V size: {k_gb:.2f} GB")
    for r in range(tp):
        lines.append(prefix(ts(day, h, m + 1, 41), r) + f"Memory pool end. avail mem={pool_avail:.2f} GB")
    lines.append(prefix(ts(day, h, m + 1, 41), 0) +
                 f"Capture cuda graph begin. This can take up to several minutes. avail mem={pool_avail - 0.05:.2f} GB")
    lines.append(prefix(ts(day, h, m + 1, 55), 0) +
                 f"Capture cuda graph end. Time elapsed: 13.71 s. avail mem={graph_avail:.2f} GB. "
                 f"mem usage={pool_avail - 0.05 - graph_avail:.2f} GB.")
    lines.append(prefix(ts(day, h, m + 1, 56), 0) +
                 f"max_total_num_tokens={tokens}, chunked_prefill_size=8192, max_prefill_tokens=16384, "
                 f"max_running_requests=4096, context_len=131072")
    lines.append(prefix(ts(day, h, m + 1, 57)) + f"INFO:     Uvicorn running on http://0.0.0.0:{port} (Press CTRL+C to quit)")
    lines.append(prefix(ts(day, h, m + 1, 59)) + "The server is fired up and ready to roll!")


def serving(lines, day, h, m, n):
    for i in range(n):
        lines.append(prefix(ts(day, h, m + 2, i), 0) +
                     f"Decode batch. #running-req: {8 + i}, #token: {1200 + 37 * i}, token usage: 0.0{i % 9}, "
                     f"cuda graph: True, gen throughput (token/s): {310.5 + i:.2f}, #queue-req: 0")


def watchdog(lines, day, h, m, tp, stuck, seq, numel, pid, addr):
    """Rank `stuck` never joins all-reduce `seq`: the watchdog of every other
    rank fires (torch prints it per rank); the stuck rank logs no timeout."""
    waiting = [r for r in range(tp) if r != stuck]
    for rank in waiting:
        t = f"E03{day:02d} {h:02d}:{m + 9:02d}:1{rank}.{addr % 1000000:06d}123"
        lines.append(f"[rank{rank}]:[{t} ProcessGroupNCCL.cpp:616] [Rank {rank}] Watchdog caught collective operation "
                     f"timeout: WorkNCCL(SeqNum={seq}, OpType=ALLREDUCE, NumelIn={numel}, NumelOut={numel}, "
                     f"Timeout(ms)=600000) ran for 6000{rank}{seq % 10} milliseconds before timing out.")
        lines.append(f"[rank{rank}]:[{t} ProcessGroupNCCL.cpp:1664] [PG 0 (default_pg) Rank {rank}] Exception (either an "
                     "error or timeout) detected by watchdog at work: {}, last enqueued NCCL work: {}, last completed "
                     "NCCL work: {}.".format(seq, seq, seq - 1))
    rank = waiting[0]
    lines.append("terminate called after throwing an instance of 'c10::DistBackendError'")
    lines.append(f"  what():  [PG 0 (default_pg) Rank {rank}] Process group watchdog thread terminated with exception: "
                 f"[Rank {rank}] Watchdog caught collective operation timeout: WorkNCCL(SeqNum={seq}, OpType=ALLREDUCE, "
                 f"NumelIn={numel}, NumelOut={numel}, Timeout(ms)=600000) ran for 6000{rank}{seq % 10} milliseconds "
                 "before timing out.")
    lines.append("Exception raised from checkTimeout at ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:618 "
                 "(most recent call first):")
    lines.append(f"frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x96 (0x{addr:x} in "
                 "/usr/local/lib/python3.10/dist-packages/torch/lib/libc10.so)")
    lines.append(prefix(ts(day, h, m + 9, 30)) + "Received sigquit from a child process. It usually means the child failed.")


def write(path, lines):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def main():
    site = ["/usr/local/lib/python3.10/dist-packages", "/opt/conda/lib/python3.11/site-packages",
            "/home/ci/.venv/lib/python3.10/site-packages"]
    # Three repeats of the KV-pool-no-room startup failure.
    repeats = [  # (run, day, hour, min, model, tp, mfs, port, free, weights, bad, bad_free, pid)
        ("job-1187", 1, 9, 12, "/models/Llama-3.3-70B-Instruct", 4, 0.88, 30000, 78.50, 33.21, 2, 39.10, 40411),
        ("job-1203", 4, 22, 47, "/mnt/weights/llama70b", 4, 0.87, 31000, 78.60, 33.21, 0, 38.45, 1822),
        ("job-1240.log", 9, 3, 5, "/data/hf/meta-llama/Llama-3.3-70B-Instruct", 8, 0.88, 30010, 78.52, 16.61, 5,
         21.70, 77311),
    ]
    for i, (run, day, h, m, model, tp, mfs, port, free, weights, bad, bad_free, pid) in enumerate(repeats):
        lines = []
        startup(lines, day, h, m, model, tp, mfs, port, free, weights, bad=bad, bad_free=bad_free)
        not_enough_memory(lines, day, h, m, bad, mfs, pid, site[i])
        path = os.path.join(OUT, run) if run.endswith(".log") else os.path.join(OUT, run, "server.log")
        write(path, lines)
    # Two near-repeats of the serving-time all-reduce hang.
    hangs = [  # (run, day, hour, min, tp, stuck rank, seq, numel, pid, addr)
        ("job-1191", 2, 14, 20, 8, 3, 9141, 1048576, 5120, 0x7F3B6D41DF86),
        ("job-1222", 6, 1, 33, 8, 6, 20417, 2097152, 902, 0x7FA0124ADF86),
    ]
    for run, day, h, m, tp, rank, seq, numel, pid, addr in hangs:
        lines = []
        startup(lines, day, h, m, "/models/Qwen2-72B-Instruct", tp, 0.85, 30000, 78.50, 17.80)
        ready(lines, day, h, m, tp, 1510208, 22.10, 11.90, 10.80, 30000)
        serving(lines, day, h, m, 5)
        watchdog(lines, day, h, m, tp, rank, seq, numel, pid, addr)
        write(os.path.join(OUT, run, "server.log"), lines)
    # One healthy run.
    lines = []
    startup(lines, 3, 11, 0, "/models/Llama-3.3-70B-Instruct", 4, 0.88, 30000, 78.50, 33.21)
    ready(lines, 3, 11, 0, 4, 603520, 17.40, 10.20, 9.15, 30000)
    serving(lines, 3, 11, 0, 6)
    write(os.path.join(OUT, "job-1195", "server.log"), lines)


if __name__ == "__main__":
    main()
