#!/usr/bin/env python3
# vLLM V1's encoder profiling of Gemma-3 (gemma3_mm.py + siglip.py, 0.10.1.1 / 0.11.0), replayed in
# torch on the GPU at TP 1: N float32 dummy images of 896 px, the patch embedding over their bf16
# cast, the SigLIP encoder layers as siglip.py runs them (LayerNorm, qkv_proj, chunk, attention
# through torch SDPA, out_proj, residual add in place; LayerNorm, fc1, GELU(tanh), fc2, add in
# place), with the references siglip.py keeps: the embeddings (SiglipVisionTransformer.forward's local
# and SiglipEncoder.forward's hidden_states_pool) and each layer's input (the loop's variable). Random
# bf16 weights; the peak allocated above the weights and the pixels is compared with plan's formula
# (memory/vllm_mm_profile.cc: max(4X + 4X, 4X + 2M, 5X + M) for X = P x 1152 x 2 B, M = P x 4304 x
# 2 B). Prints one JSON line.
import json, sys, torch
import torch.nn.functional as F
dev = torch.device("cuda"); bf = torch.bfloat16; GiB = float(1 << 30)
W, I, HEADS, LAYERS, PATCH, SIDE = 1152, 4304, 16, 3, 14, 896
torch.manual_seed(0)
def lin(i, o): return (torch.randn(o, i, dtype=bf, device=dev) * 0.02, torch.zeros(o, dtype=bf, device=dev))
conv_w = torch.randn(W, 3, PATCH, PATCH, dtype=bf, device=dev) * 0.02
pos = torch.randn(1, (SIDE // PATCH) ** 2, W, dtype=bf, device=dev) * 0.02
layers = [dict(ln1=(torch.ones(W, dtype=bf, device=dev), torch.zeros(W, dtype=bf, device=dev)),
               qkv=lin(W, 3 * W), out=lin(W, W),
               ln2=(torch.ones(W, dtype=bf, device=dev), torch.zeros(W, dtype=bf, device=dev)),
               fc1=lin(W, I), fc2=lin(I, W)) for _ in range(LAYERS)]

def layer(h, L):
    residual = h
    n1 = F.layer_norm(h, (W,), *L["ln1"])          # held by self_attn's argument until it returns
    qkv = F.linear(n1, *L["qkv"])
    q, k, v = qkv.chunk(3, dim=-1)
    b, p, _ = q.shape
    q, k, v = (t.view(b, p, HEADS, W // HEADS).transpose(1, 2) for t in (q, k, v))
    o = F.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(b, p, W)
    a = F.linear(o, *L["out"])                      # qkv and o stay referenced until forward returns
    del n1, q, k, v, qkv, o
    a += residual
    residual = a
    n2 = F.layer_norm(a, (W,), *L["ln2"])           # the layer's variable keeps it through mlp()
    m = F.linear(n2, *L["fc1"])
    m = F.gelu(m, approximate="tanh")
    m = F.linear(m, *L["fc2"])
    del n2
    m += residual
    return m

out = []
for n in [int(a) for a in (sys.argv[1:] or ["8", "32"])]:
    torch.cuda.synchronize(); torch.cuda.empty_cache(); torch.cuda.reset_peak_memory_stats()
    pixels = torch.rand(n, 3, SIDE, SIDE, dtype=torch.float32, device=dev)
    base = torch.cuda.memory_allocated()
    with torch.no_grad():
        e = F.conv2d(pixels.to(bf), conv_w, stride=PATCH)        # the cast is a temporary
        h = e.flatten(2).transpose(1, 2)
        h += pos
        pool = [h]                                               # hidden_states_pool
        for L in layers:
            h = layer(h, L)
    torch.cuda.synchronize()
    P = n * (SIDE // PATCH) ** 2
    X, M = P * W * 2, P * I * 2
    formula = max(8 * X, 4 * X + 2 * M, 5 * X + M)
    peak = torch.cuda.max_memory_allocated() - base
    out.append(dict(images=n, patches=P, peak_above_pixels_gib=peak / GiB, formula_gib=formula / GiB,
                    ratio=peak / formula, pixels_f32_gib=pixels.numel() * 4 / GiB))
    del pixels, e, h, pool
print(json.dumps(dict(torch=torch.__version__, gpu=torch.cuda.get_device_name(), runs=out)))
