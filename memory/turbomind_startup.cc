// turbomind_startup.cc: what TurboMind holds between its weights and its free-memory read.
//
// Sources (InternLM/lmdeploy, tags named). Order of a launch from a Hugging Face folder
// (lmdeploy/turbomind/turbomind.py v0.7.2, v0.9.2): the vision tower first for a VLM
// (lmdeploy/vl/engine.py ImageEncoder: load_vl_model, then torch.cuda.empty_cache, no
// forward, v0.7.2 and v0.9.2), then TurboMind's empty weights (create_shared_weights), the
// export that fills them (deploy/target_model/base.py export), processWeights
// (LlamaWeight::prepare) and createEngine: Context, LlamaV2, then LlamaBatch whose
// constructor builds the SequenceManager/BlockManager, which reads cudaMemGetInfo (the MIN
// over ranks: GetSyncFreeMemSize, BlockManager.cc v0.7.2; AllReduce kMin, LlamaBatch.cc
// v0.9.2) and takes size_t(free x cache_max_entry_count) / block_size blocks. The comm
// buffers (AllocCommBuffers) and LlamaBatch's own buffers come after the read.
//
// 1. LlamaV2's buffers before the read (v0.6.0 on): LlamaLinear's GEMM workspace, barriers
//    1 MiB + partials 32 MiB (kernels/gemm/gemm.h Gemm::kBarriersSize/kPartialsSize, v0.6.0-
//    v0.9.2; + 4096 x 128 B of tensor maps from v0.8.0, LlamaLinear.cu), and the attention
//    layer's split-k workspace made in its constructor: partial_O (kMaxWorkspaceTokens 4096 x
//    local heads x head_dim float), partial_M and partial_L (4096 x local heads float each),
//    barriers (4096 x local heads int) and split_cnt (4096 int) (unified_attention_layer.h/.cc
//    v0.7.2, v0.9.2). The sampling layers' buffers are max_batch_size scalars (small).
//
// 2. torch's cache after the export (v0.6.2 - v0.8.x). export_weight stages every tensor on
//    the current (first) GPU, `param.cuda().contiguous()`, copies it into each rank's
//    TurboMind tensor and drops it; nothing calls torch.cuda.empty_cache for a safetensors
//    checkpoint (only the meta reader's clean-up does: target_model/base.py v0.7.2), so the
//    caching allocator keeps the segments it grew, three kinds that cannot serve each other:
//    - the first layer's attention (Attn runs before Ffn, module.py Transformer): the reader
//      moves q, k, v, o to the GPU (policy.py to_cuda) and _reorder_and_merge's torch.cat
//      makes the merged qkv beside them: hidden x (2 q + 2 kv) + hidden x (q + 2 kv) elements,
//      in segments smaller than an MLP tensor;
//    - its MLP: w1, w2, w3 on the GPU whole, each padded by pad_out_dims/pad_in_dims, which is
//      torch.nn.functional.pad with a pad of 0 when the width needs none, and ATen's
//      constant_pad_nd returns `c_input.clone()` then (all_pads_non_positive), so three
//      copies beside the three held by the caller's tuple; save_split's `.contiguous()` of a
//      transposed split is one more a rank at a time (module.py Ffn._export v0.7.0-v0.8.0):
//      (6 + 1/tp) x hidden x intermediate elements;
//    - the embedding and the output head, vocab x hidden/tp each (Misc, padded to tp), yielded
//      after the first shard's layers (loader.py yields a shard's non-layer tensors at its
//      end), bigger than any MLP segment. A 4-bit checkpoint is unpacked to one
//    byte an element on the GPU (policy.py process_awq_gemm/get_u4_slices). lmdeploy#3570
//    ("perform torch.cuda.empty_cache() after conversion", v0.9.0, source_model/llama.py
//    readers) frees it: "the first GPU takes up more memory after startup". The read is the
//    minimum over ranks, so the first GPU's cache costs every rank.
//    v0.6.2 is the first release with this path (deploy/module.py, deploy/loader.py; its
//    Ffn._export pads, save_split and export_weight's `param.cuda().contiguous()` are the
//    0.7.0 code, read at v0.6.2 and v0.6.4); v0.6.0-v0.6.1 export through exporter.py, not
//    read (said). lmdeploy#2731 (0.6.x, RTX 3090): a Qwen2.5-32B AWQ that started before
//    0.6.0 runs out of memory at start-up from 0.6.0 on.
//
// 3. The weights' pool (v0.8.0 on). LlamaWeight allocates from core::Allocator{stream,
//    false}: a pool of its own whose release threshold is UINT64_MAX (core/allocator.cc
//    CudaMemPoolAllocator, v0.8.0, v0.9.2), so what prepare() frees stays counted as used.
//    LlamaFfnWeight::prepare (LlamaDenseWeight.cc v0.9.2; fuse_up_and_gate = true,
//    LlamaDenseWeight.h) allocates each layer's fused gate/up, interleaves into it and frees
//    the unfused pair; converting a 4-bit weight takes temporaries (interleave's u8 copies,
//    4 x hidden x intermediate bytes; convert_u4's uint16 copy of the fused weight, 4 x
//    hidden x intermediate bytes, after its transposed int4 copy). The pool's high-water is
//    one fused gate/up plus the largest temporaries (a 16-bit weight needs none: convert_fp
//    returns early outside fused MoE). Whether the next layer's fused weight reuses the pair
//    the last one freed (two blocks for one of twice their size) is the driver's choice, not
//    in the source: with no reuse every layer's pair stays (conversion_pool_upper_bytes).
//    Before v0.8.0 the conversion workspace came from the default pool before the Context
//    set its threshold (utils/allocator.h v0.7.2 sets UINT64_MAX when the engine is
//    created, after prepare), so it was returned at prepare's final synchronize.
#include "memory/turbomind_startup.h"

#include <algorithm>

#include "memory/memory_model.h"

namespace tpt::memory {

StatusOr<TurbomindHeld> TurbomindHeldBeforeRead(const TurbomindStartupInput& in) {
  if (in.layers <= 0 || in.hidden <= 0 || in.intermediate <= 0 || in.heads <= 0 || in.kv_heads <= 0 ||
      in.head_dim <= 0 || in.vocab <= 0) {
    return InvalidArgumentError("TurboMind start-up: the model's layers, hidden size, MLP width, heads, KV heads, "
                                "head_dim and vocabulary are needed (give --model)");
  }
  if (in.tp < 1 || in.heads % in.tp != 0) {
    return InvalidArgumentError("TurboMind start-up: tp must divide the attention heads");
  }
  if (!(in.elem_bytes > 0)) return InvalidArgumentError("TurboMind start-up: the element size must be > 0");
  TurbomindHeld h;
  const double hidden = in.hidden, inter = in.intermediate, tp = in.tp;
  const double local_heads = static_cast<double>(in.heads) / tp;
  constexpr double kMiB = 1024.0 * 1024.0;
  constexpr double kWorkspaceTokens = 4096;  // UnifiedAttentionLayer::kMaxWorkspaceTokens
  if (!VersionBefore(in.version, {0, 6, 0})) {
    const double gemm = 1 * kMiB + 32 * kMiB + (VersionBefore(in.version, {0, 8, 0}) ? 0.0 : 4096.0 * 128);
    const double attn = kWorkspaceTokens * local_heads * (in.head_dim + 2) * 4 +  // partial O, M, L
                        kWorkspaceTokens * local_heads * 4 + kWorkspaceTokens * 4;  // barriers, split_cnt
    h.engine_buffers_bytes = gemm + attn;
    h.notes.push_back("TurboMind's GEMM workspace (33 MiB) and attention split-k partials (4096 tokens x " +
                      std::to_string(static_cast<int>(local_heads)) + " heads) are made before its free-memory "
                      "read (gemm.h, unified_attention_layer.cc)");
  } else {
    h.notes.push_back("TurboMind before 0.6.0: what it allocates before its free-memory read was not read");
  }
  if (in.moe) {
    // MoeFfn's export (module.py MoeFfn) and MoeFfnWeight::prepare stage and convert experts
    // in a shape this file does not follow: said, not guessed.
    h.notes.push_back("TurboMind's staging and conversion of a MoE model's experts before its free-memory read "
                      "are not sized; only LlamaV2's buffers are counted");
    return h;
  }
  if (!VersionBefore(in.version, {0, 6, 0}) && VersionBefore(in.version, {0, 6, 2})) {
    h.notes.push_back("TurboMind " + in.version + " exports the weights through exporter.py, whose staging on the "
                      "first GPU was not read (from 0.6.2 torch keeps a layer's staging and the embedding's: "
                      "module.py, target_model/base.py)");
  }
  if (!VersionBefore(in.version, {0, 6, 2}) && VersionBefore(in.version, {0, 9, 0})) {
    const double staged = in.int4 ? 1.0 : in.elem_bytes;  // int4 unpacked to a byte an element
    const double q = static_cast<double>(in.heads) * in.head_dim, kv = static_cast<double>(in.kv_heads) * in.head_dim;
    const double attn = hidden * (2 * q + 2 * kv + q + 2 * kv) * staged;
    const double mlp = (6.0 + 1.0 / tp) * hidden * inter * staged;
    const double emb = static_cast<double>(in.vocab) * hidden / tp * in.elem_bytes;
    h.export_cache_bytes = attn + mlp + emb;
    h.notes.push_back("torch keeps the export's staging on the first GPU (no empty_cache before 0.9.0, "
                      "lmdeploy#3570): a layer's attention " + FormatGiB(attn) + ", its MLP " + FormatGiB(mlp) +
                      " (with the zero pads' clones) and the embedding " + FormatGiB(emb));
  }
  if (!VersionBefore(in.version, {0, 8, 0})) {
    // One layer's fused gate/up (int4: half a byte an element plus scales and zeros in 16 bits).
    const double fused = in.int4 ? 2 * hidden * inter * (0.5 + 2.0 * 2 / std::max(in.group_size, 1))
                                 : 2 * hidden * inter * in.elem_bytes;
    const double fused_rank = fused / tp;
    const double temps = in.int4 ? 4 * hidden * inter / tp : 0.0;  // u8 interleave / uint16 convert copies
    h.conversion_pool_bytes = fused_rank + temps;
    h.conversion_pool_upper_bytes = fused_rank * in.layers + temps;
    h.notes.push_back("TurboMind's weight pool never releases (core/allocator.cc): prepare's fused gate/up and " +
                      std::string(in.int4 ? "4-bit conversion temporaries " : "") + "stay reserved, " +
                      FormatGiB(h.conversion_pool_bytes) + " (up to " + FormatGiB(h.conversion_pool_upper_bytes) +
                      " if no layer reuses the last one's freed pair)");
  }
  return h;
}

}  // namespace tpt::memory
