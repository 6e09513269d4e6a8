#!/usr/bin/env python3
# What a cold torch.compile charges inside vLLM V1's memory profile (memory/vllm_cold_compile.h),
# replayed without vLLM: utils/mem_utils.py memory_profiling (0.28.0) takes total_consumed = the
# free-memory drop since the snapshot and transient_peak_headroom = torch peak - allocated, around
# the first forward, which is where Dynamo and Inductor compile. This runs that window twice in two
# fresh processes sharing one empty Inductor/Triton cache directory: the first compiles cold, the
# second loads what the first wrote (warm). Prints, per run, the two charged figures in GiB and
# their sum; cold - warm is what the plan's range prices (up to 2.5 GiB a rank).
#
#   python3 bench/replays/torch_compile_cold_charge.py [LAYERS HIDDEN INTERMEDIATE TOKENS]
#   (default 8 5120 17408 2048: eight Qwen3-14B-sized MLP + attention-projection blocks, bf16,
#    vLLM's default 2,048 batched tokens; a minute or two, under 10 GiB)
import gc, json, os, subprocess, sys, tempfile


def child(layers, hidden, inter, tokens):
    import torch
    dev = torch.device("cuda")

    class Block(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.norm = torch.nn.RMSNorm(hidden)
            self.qkv = torch.nn.Linear(hidden, 3 * hidden, bias=False)
            self.o = torch.nn.Linear(hidden, hidden, bias=False)
            self.gate_up = torch.nn.Linear(hidden, 2 * inter, bias=False)
            self.down = torch.nn.Linear(inter, hidden, bias=False)

        def forward(self, x):
            h = self.norm(x)
            q, k, v = self.qkv(h).chunk(3, dim=-1)
            x = x + self.o(q * torch.sigmoid(k) + v)  # attention's projections, no attention op
            g, u = self.gate_up(self.norm(x)).chunk(2, dim=-1)
            return x + self.down(torch.nn.functional.silu(g) * u)

    model = torch.nn.Sequential(*[Block() for _ in range(layers)]).to(dev, torch.bfloat16).eval()
    x = torch.randn(tokens, hidden, device=dev, dtype=torch.bfloat16)
    compiled = torch.compile(model, dynamic=True)
    gc.collect(); torch.cuda.empty_cache(); torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    free0, total = torch.cuda.mem_get_info()
    reserved0 = torch.cuda.memory_reserved()
    with torch.inference_mode():
        y = compiled(x)
    torch.cuda.synchronize()
    del y
    gc.collect(); torch.cuda.empty_cache()
    free1, _ = torch.cuda.mem_get_info()
    stats = torch.cuda.memory_stats()
    peak, alloc = stats["allocated_bytes.all.peak"], stats["allocated_bytes.all.current"]
    consumed = free0 - free1
    headroom = peak - alloc
    non_torch = consumed - (torch.cuda.memory_reserved() - reserved0)
    g = 2.0 ** 30
    print(json.dumps(dict(total_consumed_gib=consumed / g, peak_headroom_gib=headroom / g,
                          non_torch_increase_gib=non_torch / g, charged_gib=(consumed + headroom) / g)))


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(*[int(a) for a in sys.argv[2:6]])
        return
    dims = sys.argv[1:5] if len(sys.argv) >= 5 else ["8", "5120", "17408", "2048"]
    import torch
    cache = tempfile.mkdtemp(prefix="tpt_inductor_")
    env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=cache, TRITON_CACHE_DIR=os.path.join(cache, "triton"))
    runs = {}
    for name in ("cold", "warm"):
        out = subprocess.run([sys.executable, __file__, "--child", *dims], env=env, capture_output=True, text=True)
        if out.returncode != 0:
            sys.exit(f"{name} run failed: {out.stderr[-2000:]}")
        runs[name] = json.loads(out.stdout.strip().splitlines()[-1])
    print(json.dumps(dict(torch=torch.__version__, gpu=torch.cuda.get_device_name(0), dims=dims, cache=cache,
                          cold=runs["cold"], warm=runs["warm"],
                          cold_minus_warm_gib=runs["cold"]["charged_gib"] - runs["warm"]["charged_gib"])))


if __name__ == "__main__":
    main()
