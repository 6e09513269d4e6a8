#!/usr/bin/env python3
"""Replay of TGI's warm-up prefill with torch only (no TGI install), to measure what the
CUDA caching allocator holds when TGI reads the free memory after it.

Question it settles (tptriage issue #31, helper "tgi"): the plan prices TGI's warm-up peak
as TGI's eager decoder layer (7 x T x hidden + 4 x T x intermediate/tp, the MLP's product,
flash_llama_modeling.py) plus, before v3, the prefill logits and log_softmax's copy
(flash_causal_lm.py generate_token, v2.0.0/v2.2.0); TGI reads torch.cuda.mem_get_info after
torch.cuda.synchronize() with no empty_cache. Three logged launches hold more than that sum
(1.87 GiB on the 2.2.0 A10G launch, 1.64 GiB on the 2.0.0 A100 one, 0.38 GiB a rank on
3.0.1 TP 2). If the replay's "held at read" equals the formula, the allocator is not the gap
(it is outside PyTorch: CUDA context, kernels); if it is larger, the difference is the
allocator's segments (fragmentation), which the plan should price.

Op order follows TGI's source (FlashLlamaLayer.forward / LlamaMLP.forward, FastRMSNorm's
CUDA path returning new tensors, generate_token's prefill branch). Differences, each
transient and small: attention is SDPA per request (TGI: flash-attn varlen), rotary is
skipped, the norm is computed in 1024-row chunks into a new tensor (TGI: one fused
kernel), one layer's weights are reused for every layer (same shapes, same allocation
pattern), AWQ (3.0.1) is replaced by fp16 dense weights of the same output shapes, and
TP 2 runs one rank's shapes without the all-reduce (in place in TGI).

Run: python3 tgi_warmup_replay.py   (about a minute on an H100/H200; needs ~20 GiB)
"""
import gc
import sys

import torch
import torch.nn.functional as F

GiB = float(1 << 30)
dev = torch.device("cuda")

CASES = [
    # name, layers, hidden, heads, kv_heads, head_dim, intermediate, vocab (per rank),
    # request lengths, max_total_tokens, block size, dtype, prefill logits, log_softmax copy
    dict(name="llama31-8b tgi 2.2.0 (A10G launch)", layers=32, h=4096, heads=32, kv=8, d=128, inter=14336,
         vocab=128256, reqs=[4095, 50], max_total=4096, block=16, dtype=torch.bfloat16, logits=True, copy=True),
    dict(name="mistral-7b tgi 2.0.0 (A100 launch, 32k prefill)", layers=32, h=4096, heads=32, kv=8, d=128,
         inter=14336, vocab=32000, reqs=[8000, 8000, 8000, 8000, 768], max_total=8512, block=16,
         dtype=torch.bfloat16, logits=True, copy=True),
    dict(name="llama-70b tgi 3.0.1 one rank of TP 2 (3090 launch)", layers=80, h=8192, heads=32, kv=4, d=128,
         inter=14336, vocab=64128, reqs=[4096], max_total=4097, block=1, dtype=torch.float16, logits=False,
         copy=False),
]


def flash_only():
    """SDPA's flash (or memory-efficient) kernel only: no len x len score matrix."""
    try:
        from torch.nn.attention import SDPBackend, sdpa_kernel
        return sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION])
    except ImportError:
        return torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=False, enable_mem_efficient=True)


def rms_norm_new(x, w, eps=1e-5):
    """A new normed tensor (like dropout_add_ln_fwd's output), temporaries kept small."""
    out = torch.empty_like(x)
    for i in range(0, x.shape[0], 1024):
        xs = x[i:i + 1024].float()
        out[i:i + 1024] = (xs * torch.rsqrt(xs.pow(2).mean(-1, keepdim=True) + eps)).to(x.dtype) * w
    return out


def add_rms_norm(hidden, residual, w):
    """FastRMSNorm CUDA path: res = hidden + residual (new), normed (new); res = hidden
    when residual is None."""
    res = hidden if residual is None else hidden + residual
    return rms_norm_new(res, w), res


class Layer:
    def __init__(self, c):
        h, q, kv, d, i = c["h"], c["heads"], c["kv"], c["d"], c["inter"]
        dt = c["dtype"]
        self.c = c
        self.wqkv = torch.randn((q + 2 * kv) * d, h, device=dev, dtype=dt) * 0.01
        self.wo = torch.randn(h, q * d, device=dev, dtype=dt) * 0.01
        self.wgu = torch.randn(2 * i, h, device=dev, dtype=dt) * 0.01
        self.wd = torch.randn(h, i, device=dev, dtype=dt) * 0.01
        self.n1 = torch.ones(h, device=dev, dtype=dt)
        self.n2 = torch.ones(h, device=dev, dtype=dt)

    def attn(self, x, kcache, vcache, slots, cu):
        c = self.c
        q_, kv, d = c["heads"], c["kv"], c["d"]
        qkv = x @ self.wqkv.T
        q = qkv[:, : q_ * d].view(-1, q_, d)
        k = qkv[:, q_ * d: (q_ + kv) * d].view(-1, kv, d)
        v = qkv[:, (q_ + kv) * d:].view(-1, kv, d)
        kcache.view(-1, kv, d)[slots] = k  # reshape_and_cache
        vcache.view(-1, kv, d)[slots] = v
        out = torch.empty_like(q)  # flash-attn varlen's output
        rep = q_ // kv
        with flash_only():
            for s, e in zip(cu[:-1], cu[1:]):
                qs = q[s:e].transpose(0, 1).unsqueeze(0)
                # GQA by an explicit copy (transient, len x heads x d): enable_gqa is not in
                # every torch, and the math fallback would materialise len x len scores.
                ks = k[s:e].repeat_interleave(rep, dim=1).transpose(0, 1).unsqueeze(0)
                vs = v[s:e].repeat_interleave(rep, dim=1).transpose(0, 1).unsqueeze(0)
                o = F.scaled_dot_product_attention(qs, ks, vs, is_causal=True)
                out[s:e] = o.squeeze(0).transpose(0, 1)
                del o, ks, vs, qs
        return out.view(-1, q_ * d) @ self.wo.T

    def mlp(self, x):
        i = self.c["inter"]
        gate_up_states = x @ self.wgu.T
        gate_up_states = gate_up_states.view(-1, 2, i)
        return (F.silu(gate_up_states[:, 0]) * gate_up_states[:, 1]) @ self.wd.T

    def forward(self, hidden_states, residual, kcache, vcache, slots, cu):
        # FlashLlamaLayer.forward: every local stays alive until the return.
        normed_hidden_states, res = add_rms_norm(hidden_states, residual, self.n1)
        attn_output = self.attn(normed_hidden_states, kcache, vcache, slots, cu)
        normed_attn_res_output, attn_res = add_rms_norm(attn_output, res, self.n2)
        mlp_output = self.mlp(normed_attn_res_output)
        return mlp_output, attn_res


def formula(c):
    T = sum(c["reqs"])
    e = torch.tensor([], dtype=c["dtype"]).element_size()
    layer = T * e * (7 * c["h"] + 4 * c["inter"])
    vllm = T * e * (3 * c["h"] + 3 * c["inter"])
    logits = T * c["vocab"] * e * (2 if c["copy"] else 1) if c["logits"] else 0
    return layer, vllm, logits


@torch.inference_mode()
def run(c):
    torch.manual_seed(0)
    T = sum(c["reqs"])
    dt = c["dtype"]
    layer = Layer(c)
    emb = torch.randn(c["vocab"], c["h"], device=dev, dtype=dt) * 0.01
    lm_head = torch.randn(c["vocab"], c["h"], device=dev, dtype=dt) * 0.01
    norm_w = torch.ones(c["h"], device=dev, dtype=dt)
    # Warm-up KV: each request ceil((max_total - 1) / block) blocks (from_pb), every layer.
    blocks = sum((c["max_total"] - 1 + c["block"] - 1) // c["block"] for _ in c["reqs"])
    caches = [(torch.empty(blocks * c["block"], c["kv"], c["d"], device=dev, dtype=dt),
               torch.empty(blocks * c["block"], c["kv"], c["d"], device=dev, dtype=dt)) for _ in range(c["layers"])]
    slots, cu, base = [], [0], 0
    per_req = (c["max_total"] - 1 + c["block"] - 1) // c["block"] * c["block"]
    for n in c["reqs"]:
        slots.append(torch.arange(base, base + n))
        base += per_req
        cu.append(cu[-1] + n)
    slots = torch.cat(slots).to(dev)
    input_ids = torch.randint(0, c["vocab"], (T,), device=dev)
    last = torch.tensor(cu[1:], device=dev) - 1

    # flash_causal_lm.py warmup: empty_cache before; the read after synchronize, no empty_cache.
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    free0 = torch.cuda.mem_get_info()[0]
    reserved0 = torch.cuda.memory_reserved()
    alloc0 = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()

    def model_forward(inputs_embeds):
        # FlashLlamaModel.forward: the loop's hidden_states/residual, the final norm; its
        # locals are freed when it returns.
        hidden_states, residual = inputs_embeds, None
        for i in range(c["layers"]):
            hidden_states, residual = layer.forward(hidden_states, residual, caches[i][0], caches[i][1], slots, cu)
        hidden_states, _ = add_rms_norm(hidden_states, residual, norm_w)
        return hidden_states

    def causal_lm_forward():
        # FlashLlamaForCausalLM.forward: inputs_embeds is its local until it returns.
        inputs_embeds = emb[input_ids]
        hidden_states = model_forward(inputs_embeds)
        if not c["logits"]:
            hidden_states = hidden_states[last]  # prefill_head_indices: one token a request
        return hidden_states @ lm_head.T

    out = causal_lm_forward()
    torch.cuda.synchronize()
    fwd_peak = torch.cuda.max_memory_allocated() - alloc0
    fwd_reserved = torch.cuda.memory_reserved() - reserved0
    # next_token_chooser on one row a request (repetition penalty, temperature, top-k, top-p, log_softmax).
    nl = out[last] if c["logits"] else out
    scores = nl.float()
    ids = input_ids[:64].unsqueeze(0).expand(len(c["reqs"]), -1)
    sc = torch.gather(scores, 1, ids)
    scores.scatter_(1, ids, torch.where(sc < 0, sc * 1.2, sc / 1.2))
    scores = scores / 0.9
    kth = torch.topk(scores, 10, dim=-1).values[:, -1:]
    scores = scores.masked_fill(scores < kth, -float("inf"))
    sorted_logits, sorted_idx = torch.sort(scores, descending=False)
    probs = sorted_logits.softmax(-1).cumsum(-1)
    scores = scores.scatter(1, sorted_idx, sorted_logits.masked_fill(probs <= 0.1, -float("inf")))
    logprobs = torch.log_softmax(scores, -1)
    next_ids = scores.argmax(-1)
    torch.topk(logprobs, k=20, dim=-1)  # batch_top_tokens
    if c["logits"]:
        # generate_token (v2.0.0, v2.2.0): torch.log_softmax(out, -1), then gather, then tolist.
        prefill_logprobs_tensor = torch.log_softmax(out, -1) if c["copy"] else torch.log_softmax(out, -1, out=out)
        idx = torch.roll(input_ids, -1).view(-1, 1)
        torch.gather(prefill_logprobs_tensor, 1, idx).view(-1).tolist()
        del prefill_logprobs_tensor
    next_ids.tolist()
    del out, nl, scores, sorted_logits, sorted_idx, probs, logprobs
    torch.cuda.synchronize()
    free1 = torch.cuda.mem_get_info()[0]
    held = free0 - free1
    reserved = torch.cuda.memory_reserved() - reserved0
    peak = torch.cuda.max_memory_allocated() - alloc0
    layer_f, vllm_f, logits_f = formula(c)
    print(f"{c['name']}: T={T}, {len(c['reqs'])} request(s)")
    print(f"  plan: TGI layer {layer_f / GiB:.3f} + logits {logits_f / GiB:.3f} = {(layer_f + logits_f) / GiB:.3f} GiB"
          f" (vLLM's fused estimate {vllm_f / GiB:.3f})")
    print(f"  forward + lm_head: peak allocated {fwd_peak / GiB:.3f} GiB, reserved {fwd_reserved / GiB:.3f} GiB")
    print(f"  at the read: held (mem_get_info drop) {held / GiB:.3f} GiB, reserved {reserved / GiB:.3f} GiB, "
          f"peak allocated {peak / GiB:.3f} GiB")
    print(f"  reserved - plan = {(reserved - layer_f - logits_f) / GiB:+.3f} GiB; "
          f"held - reserved (outside the allocator) = {(held - reserved) / GiB:+.3f} GiB")
    sys.stdout.flush()
    del layer, emb, lm_head, caches, slots, input_ids, last, norm_w
    gc.collect()
    torch.cuda.empty_cache()


def main():
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name()}, "
          f"total {torch.cuda.get_device_properties(0).total_memory / GiB:.2f} GiB")
    for c in CASES:
        run(c)


if __name__ == "__main__":
    main()
