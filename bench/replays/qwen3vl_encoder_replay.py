#!/usr/bin/env python3
# vLLM V1's encoder profiling of Qwen3-VL (qwen3_vl.py + qwen2_5_vl.py's Qwen2_5_VisionAttention,
# read in the 0.13.0 and 0.20.2 sdists, 0.14.1-0.21.0 diffed), replayed in torch on one GPU at TP 1:
# the dummy image's float32 pixel values (P patches of 3 x 2 x 16 x 16), the bf16 cast
# _process_image_input keeps in a local through the tower (qwen3_vl.py 0.13.0:1421, 0.20.2:2086),
# Conv3dLayer's matmul patch embedding, the interpolated position embeddings the forward keeps
# through every layer (pos_embeds, 0.13.0:561, 0.20.2:800), the rotary cos/sin, then the blocks as
# Qwen3_VisionBlock runs them: x + attn(norm1(x)), x + mlp(norm2(x)), with the caller's loop
# variable holding each block's input. The attention (Qwen2_5_VisionAttention.forward): qkv's output
# kept by its local, q/k a strided view of it rotated by vllm_flash_attn's rotary kernel (one
# empty_like output; from 0.15 qk_reshaped.contiguous() copies the view first: 0.16.0
# qwen2_5_vl.py:378, upstream #32687 of 2026-01-21; absent in 0.13.0:382-389 and 0.14.1:383-390;
# 0.15 has no sdist on PyPI, not read, taken as 0.16), the
# attention, the context rearranged (a view for one item) and proj. The MLP: fc1, GELU(tanh), fc2.
# After the deepstack layers a postshuffle merger's output is kept to the end; the final merger
# and the torch.cat of its output with the deepstack outputs close the forward.
#
# The attention goes through torch SDPA: --backend fa (default) lays q/k/v out as vLLM's
# FLASH_ATTN backend does on an H100 (flash_attn_varlen_func over (b s) h d views, one X output
# and the float32 log-sum-exp) by forcing torch's flash kernel on the transposed views;
# --backend sdpa is vLLM's TORCH_SDPA wrapper (split per sequence, SDPA, torch.cat of the outputs).
# The rotary kernel is replayed with torch ops in row chunks into one empty_like output, so its
# temporaries stay under 1% of a tensor. Random bf16 weights; LAYERS is len(deepstack) + 1 by
# default (the deepstack mergers after the first layers, so the last layer runs with all their
# outputs held, as the full tower's layers after its last deepstack index do; the layer's peak
# repeats per layer). The peak allocated above the weights and the float32 pixels is compared
# with plan's formula for the same P and version (memory/vllm_mm_profile.cc: VllmV1EncoderProfile's
# encoder_peak less the float32 pixels, TP 1, one item: QwenVitLayerPeakFrom012's
# max(3X + 8X (0.13 on; 6X for 0.12), max(3X + 2M, 4X + M)) + the cast P x 1536 x 2 + the
# deepstack outputs (P/4 x out x 2 each) + pos_embeds X, for X = P x width x 2 B, M = P x mlp x 2 B),
# and with this file's reading of the source (source_gib: 3X + 6X before 0.15). Prints one JSON line.
#
#   python3 bench/replays/qwen3vl_encoder_replay.py [--model 4b,30b-a3b] [--versions 0.13.0,0.20.2]
#       [--backend fa|sdpa] [--layers N] [--formula-only] [P ...]     (P default 65536: the
#       16,384-token dummy image, 4096 x 4096 px, grid 1 x 256 x 256; P must be a multiple of 4)
import argparse, json, math, sys

GiB = float(1 << 30)
# The public config.json vision_config of each checkpoint (Qwen/Qwen3-VL-4B-Instruct,
# Qwen/Qwen3-VL-30B-A3B-Instruct): depth, hidden_size, intermediate_size, num_heads,
# out_hidden_size, deepstack_visual_indexes; both patch 16, merge 2, temporal 2, 2,304 positions,
# hidden_act gelu_pytorch_tanh.
MODELS = {
    "4b": dict(depth=24, width=1024, mlp=4096, heads=16, out=2560, deepstack=[5, 11, 17]),
    "30b-a3b": dict(depth=27, width=1152, mlp=4304, heads=16, out=2048, deepstack=[8, 16, 24]),
}
PATCH, MERGE, TEMPORAL, CHANNELS, POSITIONS = 16, 2, 2, 3, 2304
PATCH_ELEMS = CHANNELS * TEMPORAL * PATCH * PATCH  # 1,536 float32 values a patch


def parse_version(text):
    try:
        parts = [int(p) for p in text.split(".")[:2]]
    except ValueError:
        parts = []
    if len(parts) != 2 or parts[0] != 0 or not 13 <= parts[1] <= 21:
        sys.exit(f"--versions: '{text}' is not a vLLM version this replay reads (0.13.0 to 0.21.x)")
    return parts[1]


def grid_for(patches):
    # Qwen2VLProcessingInfo.get_image_size_with_most_features (qwen2_vl.py 0.13.0:923): the
    # merged tokens factored into the closest pair, height <= width.
    if patches <= 0 or patches % (MERGE * MERGE):
        sys.exit(f"P {patches}: the patches of an image must be a positive multiple of {MERGE * MERGE}")
    tokens = patches // (MERGE * MERGE)
    d = next(d for d in range(math.isqrt(tokens), 0, -1) if tokens % d == 0)
    if tokens // d > 200 * d:  # the processor takes no image beyond 200:1
        sys.exit(f"P {patches}: {tokens} merged tokens factor only as {d} x {tokens // d}, beyond 200:1; "
                 "pick a P whose tokens factor closer (65536, 16384, 4096: squares)")
    return 1, MERGE * d, MERGE * (tokens // d)


def formulas(cfg, minor, P):
    e = 2
    X, M = P * cfg["width"] * e, P * cfg["mlp"] * e
    mlp = max(3 * X + 2 * M, 4 * X + M)
    cast = P * PATCH_ELEMS * e
    deepstack = (P // (MERGE * MERGE)) * cfg["out"] * len(cfg["deepstack"]) * e
    beside = cast + deepstack + X  # + pos_embeds
    plan_attn = 3 * X + (8 if minor >= 13 else 6) * X  # vllm_mm_profile.cc QwenVitLayerPeakFrom012
    source_attn = 3 * X + (8 if minor >= 15 else 6) * X  # the q/k copy: 0.16.0 read, 0.15 taken as 0.16
    return dict(formula=max(plan_attn, mlp) + beside, source=max(source_attn, mlp) + beside,
                X=X, M=M, attn_plan=plan_attn, attn_source=source_attn, mlp=mlp, cast=cast,
                deepstack=deepstack, pos_embeds=X)


def replay(torch, F, dev, cfg, minor, P, layers, backend):
    bf = torch.bfloat16
    W, I, H, OUT = cfg["width"], cfg["mlp"], cfg["heads"], cfg["out"]
    D = W // H
    n_ds = len(cfg["deepstack"])
    ds_index = list(range(min(n_ds, layers)))
    g = torch.Generator(device=dev).manual_seed(0)

    def rnd(*shape):
        return torch.randn(*shape, dtype=bf, device=dev, generator=g) * 0.02

    def ln(n):
        return (torch.ones(n, dtype=bf, device=dev), torch.zeros(n, dtype=bf, device=dev))

    patch_w, patch_b = rnd(W, CHANNELS, TEMPORAL, PATCH, PATCH), rnd(W)
    pos_table = rnd(POSITIONS, W)
    # get_rope(head_size=D, max_position=8192, partial_rotary_factor 0.5): a bf16 cache of
    # 8,192 x D/2 (cos then sin, D/4 each); rot_pos_emb gathers two positions a patch.
    cos_sin_cache = rnd(8192, D // 2)
    blocks = [dict(n1=ln(W), qkv=(rnd(3 * W, W), rnd(3 * W)), proj=(rnd(W, W), rnd(W)), n2=ln(W),
                   fc1=(rnd(I, W), rnd(I)), fc2=(rnd(W, I), rnd(W))) for _ in range(layers)]
    H4 = W * MERGE * MERGE

    def merger_w(post):
        return dict(norm=ln(H4 if post else W), fc1=(rnd(H4, H4), rnd(H4)), fc2=(rnd(OUT, H4), rnd(OUT)), post=post)

    ds_mergers = [merger_w(True) for _ in ds_index]
    final_merger = merger_w(False)
    t, h, w = grid_for(P)
    grid_side = int(POSITIONS ** 0.5)

    def patch_embed(x):  # Qwen3_VisionPatchEmbed + Conv3dLayer._forward_mulmat (conv.py 0.20.2:219)
        L = x.shape[0]
        x = x.view(L, -1, TEMPORAL, PATCH, PATCH)
        B, C, T_, H_, W_ = x.shape
        x = x.unfold(2, TEMPORAL, TEMPORAL).unfold(3, PATCH, PATCH).unfold(4, PATCH, PATCH)
        x = x.permute(0, 2, 3, 4, 1, 5, 6, 7).reshape(-1, PATCH_ELEMS)
        x = F.linear(x, patch_w.view(W, PATCH_ELEMS), patch_b)
        x = x.view(B, 1, 1, 1, W).permute(0, 4, 1, 2, 3)
        return x.view(L, W)

    def pos_interpolate():  # fast_pos_embed_interpolate, qwen3_vl.py 0.13.0:474 (0.20's Triton kernel writes X at once)
        h_idxs = torch.linspace(0, grid_side - 1, h, dtype=torch.float32, device=dev)
        w_idxs = torch.linspace(0, grid_side - 1, w, dtype=torch.float32, device=dev)
        h_floor, w_floor = h_idxs.to(torch.long), w_idxs.to(torch.long)
        h_ceil = torch.clamp(h_floor + 1, max=grid_side - 1)
        w_ceil = torch.clamp(w_floor + 1, max=grid_side - 1)
        dh, dw = h_idxs - h_floor, w_idxs - w_floor
        dh_grid, dw_grid = torch.meshgrid(dh, dw, indexing="ij")
        hf_grid, wf_grid = torch.meshgrid(h_floor, w_floor, indexing="ij")
        hc_grid, wc_grid = torch.meshgrid(h_ceil, w_ceil, indexing="ij")
        w11 = dh_grid * dw_grid
        w10 = dh_grid - w11
        w01 = dw_grid - w11
        w00 = 1 - dh_grid - w01
        h_grid = torch.stack([hf_grid, hf_grid, hc_grid, hc_grid])
        w_grid = torch.stack([wf_grid, wc_grid, wf_grid, wc_grid])
        indices = (h_grid * grid_side + w_grid).reshape(4, -1)
        weights = torch.stack([w00, w01, w10, w11], dim=0).reshape(4, -1, 1).to(dtype=bf)
        embeds = F.embedding(indices, pos_table)
        embeds *= weights
        combined = embeds.sum(dim=0)
        combined = combined.reshape(h // MERGE, MERGE, w // MERGE, MERGE, W)
        combined = combined.permute(0, 2, 1, 3, 4).reshape(1, -1, W)
        repeated = combined.expand(t, -1, -1).reshape(-1, W)
        return torch.cat([repeated], dim=0)

    def rot_pos_emb():  # rot_pos_ids (numpy in vLLM; the same order here in torch) + cos/sin gather
        hpos = torch.arange(h).view(h, 1).expand(h, w)
        wpos = torch.arange(w).view(1, w).expand(h, w)

        def order(p):
            return p.reshape(h // MERGE, MERGE, w // MERGE, MERGE).permute(0, 2, 1, 3).flatten()
        pos_ids = torch.stack([order(hpos), order(wpos)], dim=-1).repeat(t, 1).to(dev)
        cos, sin = cos_sin_cache[:max(h, w)].chunk(2, dim=-1)
        return cos[pos_ids].flatten(1), sin[pos_ids].flatten(1)

    def rotary(x, cos, sin):  # vllm_flash_attn ops/triton/rotary.py apply_rotary, not in place
        out = torch.empty_like(x)
        half = cos.shape[-1]
        for s0 in range(0, x.shape[1], 128):
            xs = x[:, s0:s0 + 128]
            c, s = cos[s0:s0 + 128, None, :], sin[s0:s0 + 128, None, :]
            x0, x1 = xs[..., :half], xs[..., half:2 * half]
            out[:, s0:s0 + 128, :, :half] = x0 * c - x1 * s
            out[:, s0:s0 + 128, :, half:2 * half] = x0 * s + x1 * c
            if 2 * half < x.shape[-1]:
                out[:, s0:s0 + 128, :, 2 * half:] = xs[..., 2 * half:]
        return out

    def attention(q, k, v, cu_seqlens):
        if backend == "fa":  # flash_attn_maxseqlen_wrapper: varlen over (b s) h d views, output (b s) h d
            qt, kt, vt = (z.transpose(1, 2) for z in (q, k, v))
            if dev.type == "cuda":
                from torch.nn.attention import SDPBackend, sdpa_kernel
                with sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION]):
                    o = F.scaled_dot_product_attention(qt, kt, vt, dropout_p=0.0)
            else:
                o = F.scaled_dot_product_attention(qt, kt, vt, dropout_p=0.0)
            o = o.transpose(1, 2)
            if not o.is_contiguous():  # FA writes (b s) h d; a kernel that did not adds a copy below
                marks["fa_layout_copy"] = True
            return o
        outputs = []  # torch_sdpa_wrapper (vit_attn_wrappers.py 0.13.0:87, 0.20.2:211)
        lens = (cu_seqlens[1:] - cu_seqlens[:-1]).tolist()
        for q_i, k_i, v_i in zip(torch.split(q, lens, dim=1), torch.split(k, lens, dim=1), torch.split(v, lens, dim=1)):
            q_i, k_i, v_i = (z.permute(0, 2, 1, 3) for z in (q_i, k_i, v_i))
            output_i = F.scaled_dot_product_attention(q_i, k_i, v_i, dropout_p=0.0)
            outputs.append(output_i.permute(0, 2, 1, 3))
        return torch.cat(outputs, dim=1)

    def attn(x, L, cos, sin, cu_seqlens):  # Qwen2_5_VisionAttention.forward
        x = F.linear(x, *L["qkv"])
        s, b, _ = x.shape
        qkv = x.view(s, b, 3, H, D).permute(1, 0, 2, 3, 4)
        qk, v = qkv[:, :, :2], qkv[:, :, 2]
        qk_reshaped = qk.permute(2, 0, 1, 3, 4).reshape(2 * b, s, H, D)
        if minor >= 15:
            qk_reshaped = qk_reshaped.contiguous()
        qk_rotated = rotary(qk_reshaped, cos, sin)
        qk_rotated = qk_rotated.view(2, b, s, H, D)
        q, k = qk_rotated.unbind(dim=0)
        context_layer = attention(q, k, v, cu_seqlens)
        context_layer = context_layer.permute(1, 0, 2, 3).reshape(s, b, H * D).contiguous()
        return F.linear(context_layer, *L["proj"])

    def mlp(x, L):  # Qwen3_VisionMLP.forward
        return F.linear(F.gelu(F.linear(x, *L["fc1"]), approximate="tanh"), *L["fc2"])

    def block(x, L, cos, sin, cu_seqlens):  # Qwen3_VisionBlock.forward
        x = x + attn(F.layer_norm(x, (W,), *L["n1"], eps=1e-6), L, cos, sin, cu_seqlens)
        x = x + mlp(F.layer_norm(x, (W,), *L["n2"], eps=1e-6), L)
        return x

    def merger(x, Mg):  # Qwen3_VisionPatchMerger.forward
        if Mg["post"]:
            x = F.layer_norm(x.view(-1, H4), (H4,), *Mg["norm"], eps=1e-6)
        else:
            x = F.layer_norm(x, (W,), *Mg["norm"], eps=1e-6).view(-1, H4)
        x_parallel = F.linear(x, *Mg["fc1"])
        x_parallel = F.gelu(x_parallel)
        return F.linear(x_parallel, *Mg["fc2"])

    marks = {"last": 0, "where": "start", "fa_layout_copy": False}

    def mark(where):
        if dev.type == "cuda":
            top = torch.cuda.max_memory_allocated()
            if top > marks["last"]:
                marks["last"], marks["where"] = top, where

    def visual(x):  # Qwen3_VisionTransformer.forward
        hidden_states = x.to(device=dev, dtype=bf)
        hidden_states = patch_embed(hidden_states)
        mark("patch embedding")
        pos_embeds = pos_interpolate()
        hidden_states = hidden_states + pos_embeds
        cos, sin = rot_pos_emb()
        cu_seqlens = torch.tensor([0] + [h * w * (i + 1) for i in range(t)], dtype=torch.int32, device=dev)
        mark("position embeddings")
        hidden_states = hidden_states.unsqueeze(1)
        deepstack_feature_lists = []
        for layer_num, L in enumerate(blocks):
            hidden_states = block(hidden_states, L, cos, sin, cu_seqlens)
            mark(f"layer {layer_num}")
            if layer_num in ds_index:
                deepstack_feature_lists.append(merger(hidden_states, ds_mergers[ds_index.index(layer_num)]))
                mark(f"deepstack merger after layer {layer_num}")
        hidden_states = merger(hidden_states, final_merger)
        hidden_states = torch.cat([hidden_states] + deepstack_feature_lists, dim=1)
        mark("merger and concatenation")
        return hidden_states

    if dev.type == "cuda":
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
    pixels = torch.rand(P, PATCH_ELEMS, dtype=torch.float32, device=dev)
    if dev.type == "cuda":
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        base = torch.cuda.memory_allocated()
        marks["last"] = base
    with torch.inference_mode():
        pixel_values = pixels.type(bf)  # _process_image_input's local, kept through self.visual
        out = visual(pixel_values)
        del pixel_values
    assert out.shape == (P // (MERGE * MERGE), OUT * (1 + len(ds_index))), tuple(out.shape)
    if dev.type != "cuda":
        return None, "not measured (CPU)", marks["fa_layout_copy"]
    torch.cuda.synchronize()
    return torch.cuda.max_memory_allocated() - base, marks["where"], marks["fa_layout_copy"]


def main():
    ap = argparse.ArgumentParser(description="Replay vLLM's Qwen3-VL encoder profiling on one GPU (TP 1).")
    ap.add_argument("patches", nargs="*", type=int,
                    help="patches of the dummy image (default 65536, the 16,384-token image)")
    ap.add_argument("--model", default="4b", help="comma list of " + ", ".join(MODELS))
    ap.add_argument("--versions", default="0.13.0,0.20.2", help="comma list of vLLM versions, 0.13.0 to 0.21.x")
    ap.add_argument("--backend", choices=["fa", "sdpa"], default="fa",
                    help="fa: FLASH_ATTN's layout (vLLM's default on an H100); sdpa: the TORCH_SDPA wrapper")
    ap.add_argument("--layers", type=int, default=0, help="blocks replayed (default: deepstack mergers + 1)")
    ap.add_argument("--formula-only", action="store_true", help="print the formulas, import no torch")
    a = ap.parse_args()
    models = [m.strip() for m in a.model.split(",") if m.strip()]
    for m in models:
        if m not in MODELS:
            sys.exit(f"--model: unknown '{m}' (one of {', '.join(MODELS)})")
    versions = [(v.strip(), parse_version(v.strip())) for v in a.versions.split(",") if v.strip()]
    sizes = a.patches or [65536]
    for P in sizes:
        grid_for(P)
    if a.layers < 0:
        sys.exit("--layers must be 0 (the default) or more")
    torch = F = None
    dev_name = "none"
    if not a.formula_only:
        import torch
        import torch.nn.functional as F
        dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        dev_name = torch.cuda.get_device_name() if dev.type == "cuda" else "cpu"
    runs = []
    for m in models:
        cfg = MODELS[m]
        layers = a.layers or len(cfg["deepstack"]) + 1
        for vtext, minor in versions:
            for P in sizes:
                f = formulas(cfg, minor, P)
                r = dict(model=m, version=vtext, patches=P, grid=list(grid_for(P)), formula_gib=f["formula"] / GiB,
                         source_gib=f["source"] / GiB,
                         terms_gib={k: f[k] / GiB for k in ("X", "M", "attn_plan", "attn_source", "mlp", "cast",
                                                            "deepstack", "pos_embeds")},
                         pixels_f32_gib=P * PATCH_ELEMS * 4 / GiB)
                if not a.formula_only:
                    peak, where, layout_copy = replay(torch, F, dev, cfg, minor, P, layers, a.backend)
                    r.update(peak_in=where, layers=layers, fa_layout_copy=layout_copy)
                    if peak is not None:
                        r.update(peak_gib=peak / GiB, ratio=peak / f["formula"], source_ratio=peak / f["source"])
                runs.append(r)
    print(json.dumps(dict(torch=torch.__version__ if torch else None, gpu=dev_name, backend=a.backend, runs=runs)))


if __name__ == "__main__":
    main()
