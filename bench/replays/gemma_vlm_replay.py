#!/usr/bin/env python3
# TGI v3.3.x Gemma-3 warm-up at TP 2 (one rank), replayed in torch on the GPU: the vision tower's
# eager attention over 4096 patches (8 heads a rank), then the text prefill of 8000 tokens with its
# four dense masks (two bool, two float32) beside an eager decoder layer. No empty_cache between
# (TGI calls none before its free-memory read). Prints allocated peaks per phase and what the
# caching allocator still holds (reserved) at the end: sum of the phases or the larger one?
import json, torch
dev = torch.device("cuda"); GiB = float(1 << 30); bf = torch.bfloat16
torch.cuda.empty_cache(); torch.cuda.reset_peak_memory_stats()
base = torch.cuda.memory_allocated(); base_res = torch.cuda.memory_reserved()
out = {}
# vision tower: SigLIP so400m, hidden 1152, 16 heads (8 a rank), head_dim 72, 4096 patches
P, Hh, D, W = 4096, 8, 72, 1152
x = torch.randn(1, P, W, dtype=bf, device=dev)
q = torch.randn(1, Hh, P, D, dtype=bf, device=dev); k = torch.randn_like(q); v = torch.randn_like(q)
s = torch.matmul(q, k.transpose(-1, -2))            # bmm (bf16)
s = s * (D ** -0.5)                                   # the scaled copy
a = torch.softmax(s, dim=-1, dtype=torch.float32)     # float32 softmax
a = a.to(bf)                                          # its cast
o = torch.matmul(a, v)
del s, a, q, k, v
torch.cuda.synchronize()
out["vision_peak_alloc_gib"] = (torch.cuda.max_memory_allocated() - base) / GiB
out["vision_reserved_gib"] = (torch.cuda.memory_reserved() - base_res) / GiB
del o, x
torch.cuda.reset_peak_memory_stats(); base2 = torch.cuda.memory_allocated()
# text phase: 8000 tokens, hidden 5376, intermediate 21504 / 2, masks 8000^2
T, H, I = 8000, 5376, 21504 // 2
m1 = torch.ones(T, T, dtype=torch.bool, device=dev); m2 = torch.ones(T, T, dtype=torch.bool, device=dev)
f1 = torch.zeros(T, T, dtype=torch.float32, device=dev); f2 = torch.zeros(T, T, dtype=torch.float32, device=dev)
hs = [torch.randn(T, H, dtype=bf, device=dev) for _ in range(7)]
gu = torch.randn(T, 2 * I, dtype=bf, device=dev)
g = torch.nn.functional.gelu(gu[:, :I]); p = g * gu[:, I:]
torch.cuda.synchronize()
out["text_peak_alloc_gib"] = (torch.cuda.max_memory_allocated() - base2) / GiB
out["reserved_at_read_gib"] = (torch.cuda.memory_reserved() - base_res) / GiB
out["sum_of_phases_gib"] = out["vision_peak_alloc_gib"] + out["text_peak_alloc_gib"]
out["max_of_phases_gib"] = max(out["vision_peak_alloc_gib"], out["text_peak_alloc_gib"])
out["torch"] = torch.__version__
print(json.dumps(out))
