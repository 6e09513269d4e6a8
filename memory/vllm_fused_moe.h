// vllm_fused_moe.h: what vLLM's Triton fused-MoE path holds during one forward of the
// profiling run (fused_moe.py fused_experts_impl), by version: the intermediate caches
// over a chunk of tokens and, for fp8 weights with dynamic activation scales, the
// quantized activations and their per-token-group scales.
#pragma once

#include <cstdint>
#include <string_view>

#include "memory/model_config.h"

namespace tpt::memory {

// How fused_experts_impl lays out its caches over M = min(tokens, CHUNK_SIZE) tokens,
// top_k k, gate_up width N = 2 x moe_intermediate / tp and hidden K (the enum is in
// model_config.h, beside the profile it prices):
// - kSeparate: intermediate_cache1 (M, k, N), intermediate_cache2 (M x k, N / 2) and
//   intermediate_cache3 (M, k, K), three allocations (0.7.3 read);
// - kShared13: cache1 and cache3 share one buffer of M x k x max(N, K) (no data
//   dependency between them), beside cache2 (vllm#13625, merged 2025-02, after 0.7.3:
//   0.8.0 taken as the first release with it; read in 0.8.2, 0.8.5, 0.9.2, 0.10.1.1 and
//   0.11.0).
// kShared13 for the models that take fused_experts_impl from 0.8: unquantized and fp8
// experts (Fp8MoEMethod -> fused_experts unless VLLM_USE_DEEP_GEMM, off by default
// through 0.10 and on from 0.11.0 where deep_gemm is installed: that path is not read).
// Other experts (mxfp4, AWQ/GPTQ Marlin, compressed-tensors) run other kernels whose
// buffers are not read here: kSeparate, the generic estimate.
VllmMoeCaches VllmMoeCachesFor(std::string_view version, const ModelConfig& m);

// CHUNK_SIZE = envs.VLLM_FUSED_MOE_CHUNK_SIZE. envs.py's type annotation reads 64 * 1024, but
// the value read at run time is its environment_variables entry,
// `lambda: int(os.getenv("VLLM_FUSED_MOE_CHUNK_SIZE", "32768"))` (read in the envs.py that
// carries VLLM_ALL2ALL_BACKEND "naive" and VLLM_FLASHINFER_MOE_BACKEND, the 0.10 line, and in
// older copies); newer envs.py copies read str(16 * 1024), from a release not read here, so the
// plan keeps 32,768. Before 0.6.0 it was 65,536 (0.5.1-0.5.x) or no chunk at all (before
// 0.5.1): VllmFusedMoeChunkTokens (vllm_v0_reserved.h) says which; only the V0 allocator replay
// uses it, this estimate keeps 32,768. It matters above 32,768 tokens: a --max-num-batched-tokens that large, or
// the tokens data parallelism gathers (VllmDpMoeTokens).
constexpr int64_t kVllmFusedMoeChunkTokens = 32768;

// Bytes alive in fused_experts_impl at its second GEMM for `tokens` tokens at TP `tp`
// (the experts' width split by TP): the caches above, and with fp8 weights the quantized
// input of the chunk (moe_kernel_quantize_input -> per_token_group_quant_fp8: 1 byte an
// element + a float32 scale per 128, for the hidden states and for cache2). The sorted
// token ids, router logits and top-k tensors are a few bytes a token and left out.
double VllmFusedMoeBytes(const ModelConfig& m, int tp, int64_t tokens, VllmMoeCaches caches);

// Data parallelism (V1, --data-parallel-size > 1) on an MoE model: FusedMoE.forward_impl
// dispatches through the EP group's all2all manager before the experts and combines after
// them; the default backend (VLLM_ALL2ALL_BACKEND "naive", envs.py 0.10) is
// NaiveAll2AllManager, whose dispatch naive_multicast()s every DP rank's hidden states and
// router logits into buffers of sum-over-ranks rows (one broadcast per rank on the DP group)
// and whose combine all-reduces the experts' output over the DP group (all2all.py). In the
// profiling run every DP rank runs the same dummy batch, so the MoE layers see dp x tokens.
int64_t VllmDpMoeTokens(const ModelConfig& m, int dp, int64_t tokens);

// The gathered buffers alive beside the experts' caches: hidden states (rows x hidden) and
// router logits (rows x experts), in the model dtype.
double VllmDpMoeGatherBytes(const ModelConfig& m, int64_t rows);

}  // namespace tpt::memory
