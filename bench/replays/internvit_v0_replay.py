#!/usr/bin/env python3
# vLLM V0 0.6.5-0.7.0's profiling of InternVL (internvl.py extract_feature + intern_vit.py), replayed
# in torch on one GPU: T tiles of 448 px as float32 pixel values (the input mapper's ToTensor +
# Normalize), InternVisionEmbeddings (bf16 cast, conv, class token cat, position add), then LAYERS
# InternViT-6B layers as intern_vit.py 0.6.6 runs them with the attention whole on the rank
# (InternSdpaAttention: 25 heads do not divide by TP 8): vLLM's RMSNorm kernel for norm1/norm2 (a new
# tensor), qkv nn.Linear, chunk, q/k RMSNorm.forward_native in float32 (layernorm.py 0.6.6:37-73),
# F.scaled_dot_product_attention, proj, ls1 scale and residual add; the MLP split by TP (fc1 to
# 12800 / TP, GELU, fc2), ls2 and the add. The references Python keeps are kept: the embeddings
# (InternVisionModel.forward's hidden_states, the encoder's inputs_embeds), the loop's layer input,
# norm1's output (the caller's argument) and every local until forward returns. Random bf16 weights.
# Prints one JSON line: the peak allocated above the weights, in GiB and in units of
# u = T x 1025 x 3200 x 2 B, beside plan's 11u + pixels (memory/vllm_v0_internvl.cc) and the 15.73 GiB
# the InternVL3-78B launch logged at 208 tiles (holdout28). Runs with 208 tiles in ~16 GiB.
#   python3 bench/replays/internvit_v0_replay.py [TILES] [TP]
import json, sys, torch
import torch.nn.functional as F
dev = torch.device("cuda"); bf = torch.bfloat16; GiB = float(1 << 30)
TILES = int(sys.argv[1]) if len(sys.argv) > 1 else 208
TP = int(sys.argv[2]) if len(sys.argv) > 2 else 8
W, I, HEADS, PATCH, SIDE, LAYERS = 3200, 12800, 25, 14, 448, 3
D = W // HEADS
torch.manual_seed(0)
def w(*shape): return torch.randn(*shape, dtype=bf, device=dev) * 0.02
conv_w, conv_b = w(W, 3, PATCH, PATCH), torch.zeros(W, dtype=bf, device=dev)
cls, pos = w(1, 1, W), w(1, (SIDE // PATCH) ** 2 + 1, W)
layers = [dict(n1=torch.ones(W, dtype=bf, device=dev), qkv=w(3 * W, W), qn=torch.ones(W, dtype=bf, device=dev),
               kn=torch.ones(W, dtype=bf, device=dev), proj=(w(W, W), torch.zeros(W, dtype=bf, device=dev)),
               ls1=torch.ones(W, dtype=bf, device=dev), n2=torch.ones(W, dtype=bf, device=dev),
               fc1=(w(I // TP, W), torch.zeros(I // TP, dtype=bf, device=dev)),
               fc2=(w(W, I // TP), torch.zeros(W, dtype=bf, device=dev)), ls2=torch.ones(W, dtype=bf, device=dev))
          for _ in range(LAYERS)]

def rms_kernel(x, weight):  # vLLM's rms_norm op: out = empty_like(x)
    return F.rms_norm(x, (W,), weight, 1e-6)

def rms_native(x, weight):  # RMSNorm.forward_native, 0.6.6
    orig = x.dtype
    x = x.to(torch.float32)
    variance = x.pow(2).mean(dim=-1, keepdim=True)
    x = x * torch.rsqrt(variance + 1e-6)
    x = x.to(orig)
    return x * weight

def attn(x, L):  # InternSdpaAttention.forward
    B, N, C = x.shape
    qkv = F.linear(x, L["qkv"])
    q, k, v = qkv.chunk(3, dim=-1)
    q = q.view(B, N, HEADS, D); k = k.view(B, N, HEADS, D); v = v.view(B, N, HEADS, D)
    q = rms_native(q.flatten(-2, -1), L["qn"]).view(B, N, HEADS, D)
    k = rms_native(k.flatten(-2, -1), L["kn"]).view(B, N, HEADS, D)
    q = q.transpose(1, 2); k = k.transpose(1, 2); v = v.transpose(1, 2)
    x = F.scaled_dot_product_attention(q, k, v, scale=D ** -0.5)
    x = x.transpose(1, 2).reshape(B, N, -1)
    x = F.linear(x, *L["proj"])
    return x

def mlp(h, L):  # InternMLP.forward (fc2's all-reduce in place)
    h = F.linear(h, *L["fc1"])
    h = F.gelu(h)
    h = F.linear(h, *L["fc2"])
    return h

def layer(h, L):  # InternVisionEncoderLayer.forward
    h = h + attn(rms_kernel(h, L["n1"]), L) * L["ls1"]
    h = h + mlp(rms_kernel(h, L["n2"]), L) * L["ls2"]
    return h

def embed(pixels):
    p = F.conv2d(pixels.to(bf), conv_w, conv_b, stride=PATCH)
    B = p.shape[0]
    p = p.flatten(2).transpose(1, 2)
    e = torch.cat([cls.expand(B, 1, -1), p], dim=1)
    return e + pos

with torch.inference_mode():
    pixels = torch.randn(TILES, 3, SIDE, SIDE, dtype=torch.float32, device=dev)
    torch.cuda.synchronize(); torch.cuda.reset_peak_memory_stats()
    base = torch.cuda.memory_allocated()
    emb = embed(pixels)
    h = emb
    for L in layers:
        h = layer(h, L)
    torch.cuda.synchronize()
    peak = torch.cuda.max_memory_allocated() - base
u = TILES * 1025 * W * 2
pix = TILES * 3 * SIDE * SIDE * 4
print(json.dumps({"tiles": TILES, "tp": TP, "torch": torch.__version__, "gpu": torch.cuda.get_device_name(),
                  "sdpa_flash": torch.backends.cuda.flash_sdp_enabled(),
                  "peak_above_pixels_gib": round(peak / GiB, 3), "units_u": round(peak / u, 3),
                  "plan_gib_with_pixels": round((11 * u + pix) / GiB, 3),
                  "measured_gib_with_pixels": round((peak + pix) / GiB, 3),
                  "logged_gib_208_tiles": 15.73}))
