#!/usr/bin/env python3
"""gen_volume_log.py: large logs of one high-volume line kind, for memory and
time benchmarks (bench/run_scale_bench.sh). Nothing generated is committed.

  bench/gen_volume_log.py KIND SIZE OUT      # SIZE: bytes, or 1G / 200M / 64K
  bench/gen_volume_log.py crashloop N OUT    # the founding log repeated N times

KIND is one of:
  nccl_info   NCCL_DEBUG=INFO channel lines of 8 ranks (node1:pid:tid [dev] NCCL INFO ...)
  nccl_warn   NCCL WARN lines of 8 ranks (an IB port flapping for hours)
  batch_stats SGLang decode-batch statistics of 8 TP ranks, timestamped
  warnings    vLLM shm_broadcast hang warnings and SGLang retractions, repeated
  tracebacks  per-request exceptions: vLLM ERROR line, traceback, HTTP 400
The founding log (samples/founding/...mfs050.log) is appended to every KIND,
so the run still ends in a known failure the analysis must find.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
FOUNDING = os.path.join(HERE, "..", "samples", "founding", "sglang-tp8-rtxpro6000-mfs050.log")


def block(kind, i):
    """About 64 KiB of lines of `kind`; `i` varies numbers between blocks."""
    out = []
    n = 0
    while n < 65536:
        r = len(out) % 8
        if kind == "nccl_info":
            line = f"node1:{1234 + r}:{1290 + r} [{r}] NCCL INFO Channel {len(out) % 32:02d}/0 : {r}[{r}] -> {(r + 1) % 8}[{(r + 1) % 8}] via P2P/CUMEM/read\n"
        elif kind == "nccl_warn":
            line = f"node1:{1234 + r}:{1290 + r} [{r}] NCCL WARN NET/IB : Got async event : port error\n"
        elif kind == "batch_stats":
            s = (i * 7 + len(out) // 8) % 60
            line = (f"[2025-10-14 10:{(i // 60) % 60:02d}:{s:02d} TP{r}] Decode batch. #running-req: {len(out) % 40}, "
                    f"#token: {3000 + len(out) % 997}, token usage: 0.05, gen throughput (token/s): 812.33, #queue-req: 0\n")
        elif kind == "warnings":
            if len(out) % 2:
                line = (f"(EngineCore_DP0 pid=120) INFO 10-02 09:01:30 [shm_broadcast.py:466] No available shared memory "
                        f"broadcast block found in 60 seconds. This typically happens when some processes are hanging.\n")
            else:
                line = f"[2025-10-02 09:40:11 TP{r}] KV cache pool is full. Retract requests. #retracted_reqs: 2, #new_token_ratio: 0.4122 -> 0.6010\n"
        elif kind == "tracebacks":
            line = ("ERROR 03-28 21:38:24 [serving_chat.py:201] Error in preprocessing prompt inputs\n"
                    "Traceback (most recent call last):\n"
                    '  File "/usr/local/lib/python3.12/dist-packages/vllm/entrypoints/openai/serving_chat.py", line 195, in create_chat_completion\n'
                    "    raise ValueError(\"This model's maximum context length is 4096 tokens.\")\n"
                    f"ValueError: This model's maximum context length is 4096 tokens. However, you requested {5000 + len(out)} tokens.\n"
                    f'INFO:     10.0.0.{r}:5555 - "POST /v1/chat/completions HTTP/1.1" 400 Bad Request\n')
        else:
            sys.exit(f"gen_volume_log.py: unknown kind {kind!r}; see --help")
        out.append(line)
        n += len(line)
    return "".join(out).encode()


def size_arg(s):
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(float(s[:-1]) * mult[s[-1].upper()]) if s[-1].upper() in mult else int(s)


def main():
    if len(sys.argv) != 4 or sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        sys.exit(0 if len(sys.argv) > 1 and sys.argv[1] in ("-h", "--help") else 2)
    kind, amount, out = sys.argv[1:]
    founding = open(FOUNDING, "rb").read()
    with open(out, "wb") as f:
        if kind == "crashloop":
            for _ in range(int(amount)):
                f.write(founding)
            return
        want = size_arg(amount)
        written, i = 0, 0
        while written < want:
            b = block(kind, i)
            f.write(b)
            written += len(b)
            i += 1
        f.write(founding)


if __name__ == "__main__":
    main()
