// tgi_model.cc: TGI's start-up memory arithmetic: the warm-up prefill of
// --max-batch-prefill-tokens, then KV blocks from the free memory that is left
// with the warm-up's peak still reserved, and the router's max_total_tokens check.
//
// Sources (huggingface/text-generation-inference, tags named):
//   server/text_generation_server/models/flash_causal_lm.py warmup():
//     v1.0.0: num_blocks = int(free // total_cache_size) + warm-up blocks, free =
//             max(0, free - (1 - MEMORY_FRACTION) x total) (no wiggle room);
//     v1.4.1..v2.2: the same x 0.95 ("Leave 5% for some wiggle room");
//     v2.3..v2.4.1: x TGI_WIGGLE_ROOM (models/globals.py: default 0.95 at v2.3.0/v2.3.1,
//             0.90 at v2.4.0/v2.4.1);
//     v3.0.0..: get_free_memory(device, MEMORY_FRACTION x TGI_WIGGLE_ROOM) =
//             max(0, free - (1 - fraction x wiggle) x total) (utils/import_utils.py);
//             TGI_WIGGLE_ROOM 0.95 (v3.0.0-v3.0.2), 0.93 (v3.1, v3.2), 0.90 (v3.3..v3.3.7).
//             (globals.py read at every tag from v2.3.0 to v3.3.7.)
//     total_cache_size = layers x BLOCK_SIZE x kv_heads x head_size x 2 x dtype;
//     BLOCK_SIZE (globals.py): 16 paged, 256 flashdecoding, 1 flashinfer, 64 ipex.
//     Its failure: "Not enough memory to handle {N} prefill tokens. You need to
//     decrease `--max-batch-prefill-tokens`" (an OOM inside the warm-up forward).
//   router/src/main.rs (v2.0.4): "`max_total_tokens` must be <= `max_batch_total_tokens`.
//     Given: {max_total_tokens} and {max_supported_batch_total_tokens}";
//   backends/v3/src/lib.rs (v3.3.6): V3Error::NotEnoughMemory "Not enough memory to
//     handle `max_total_tokens={0}`" when shard_max_total_tokens > the supported total.
//   utils/dist.py: MEMORY_FRACTION = CUDA_MEMORY_FRACTION (default 1.0).
#include <algorithm>
#include <cmath>

#include "memory/memory_model.h"

namespace tpt::memory {
double TgiDefaultWiggleRoom(std::string_view version) {
  if (VersionBefore(version, {1, 4, 1})) return 1.0;
  if (VersionBefore(version, {2, 4, 0})) return 0.95;
  if (VersionBefore(version, {3, 0, 0})) return 0.90;
  if (VersionBefore(version, {3, 1, 0})) return 0.95;
  if (VersionBefore(version, {3, 3, 0})) return 0.93;
  return 0.90;
}

StatusOr<ServerKv> TgiKvBlocks(const TgiKvInput& in) {
  if (!(in.total_bytes > 0)) return InvalidArgumentError("TGI KV: the card's total memory must be > 0");
  if (!(in.free_after_warmup_bytes >= 0)) return InvalidArgumentError("TGI KV: free memory after the warm-up must be >= 0");
  if (!(in.cuda_memory_fraction > 0 && in.cuda_memory_fraction <= 1)) {
    return InvalidArgumentError("TGI KV: cuda_memory_fraction must be in (0, 1]");
  }
  const double wiggle = in.wiggle_room > 0 ? in.wiggle_room : TgiDefaultWiggleRoom(in.version);
  if (!(wiggle > 0 && wiggle <= 1)) return InvalidArgumentError("TGI KV: TGI_WIGGLE_ROOM must be in (0, 1)");
  if (in.bytes_per_token <= 0 || in.block_size < 1) {
    return InvalidArgumentError("TGI KV: KV bytes per token and the block size must be > 0");
  }
  ServerKv r;
  const double f = in.cuda_memory_fraction;
  if (VersionBefore(in.version, {3, 0, 0})) {
    r.usable_bytes = std::max(0.0, in.free_after_warmup_bytes - (1 - f) * in.total_bytes) * wiggle;
  } else {
    r.usable_bytes = std::max(0.0, in.free_after_warmup_bytes - (1 - f * wiggle) * in.total_bytes);
  }
  const double block_bytes = static_cast<double>(in.bytes_per_token) * in.block_size;
  r.num_blocks = static_cast<int64_t>(std::floor(r.usable_bytes / block_bytes)) + std::max<int64_t>(0, in.warmup_blocks);
  r.kv_tokens = r.num_blocks * in.block_size;
  r.kv_bytes = static_cast<double>(r.num_blocks) * block_bytes;
  if (in.max_total_tokens > 0 && in.max_total_tokens > r.kv_tokens) {
    r.fails = true;
    r.error = VersionBefore(in.version, {3, 0, 0})
                  ? "`max_total_tokens` must be <= `max_batch_total_tokens`. Given: " + std::to_string(in.max_total_tokens) +
                        " and " + std::to_string(r.kv_tokens)
                  : "Not enough memory to handle `max_total_tokens=" + std::to_string(in.max_total_tokens) + "`";
  }
  return r;
}

int64_t TgiWarmupBlocks(int64_t prefill_tokens, int64_t max_input_tokens, int64_t max_total_tokens, int block_size,
                        int64_t max_blocks_per_request) {
  if (prefill_tokens <= 0 || max_input_tokens <= 0 || max_total_tokens <= 1 || block_size < 1) return 0;
  int64_t blocks = 0;
  int64_t per_request = (max_total_tokens - 1 + block_size - 1) / block_size;
  if (max_blocks_per_request > 0) per_request = std::min(per_request, max_blocks_per_request);
  for (int64_t n = 0; n < prefill_tokens; n += std::min(max_input_tokens, prefill_tokens - n)) blocks += per_request;
  return blocks;
}

// BaseFlashMistral (models/flash_mistral.py v1.1.0..v2.0.4; FlashMixtral, FlashStarcoder2
// and FlashQwen2 derive from it by v2.0.0): when the config has a sliding_window,
// set_sliding_window(window, ceil(window / BLOCK_SIZE)) and FlashMistralBatch.from_pb
// caps each request's blocks ("Needed blocks can not go over SLIDING_WINDOW_BLOCKS"), the
// warm-up's included. v2.1.0 folded the batch into flash_causal_lm.py without the cap.
int64_t TgiWarmupBlockCap(std::string_view version, std::string_view model_type, int sliding_window) {
  if (sliding_window <= 0 || VersionBefore(version, {1, 1, 0}) || !VersionBefore(version, {2, 1, 0})) return 0;
  if (model_type != "mistral" && model_type != "mixtral" && model_type != "starcoder2" && model_type != "qwen2") return 0;
  return (sliding_window + 15) / 16;
}

int64_t TgiPrefillThatFits(int64_t prefill_tokens, double asked_bytes, double free_bytes) {
  if (prefill_tokens <= 0 || !(asked_bytes > 0) || !(free_bytes > 0)) return 0;
  const double raw = static_cast<double>(prefill_tokens) * free_bytes / asked_bytes;
  const int64_t step = raw >= 1024 ? 1024 : 16;
  return std::min<int64_t>(prefill_tokens, static_cast<int64_t>(std::floor(raw / step)) * step);
}

// TGI's eager decoder layer (dense models, CUDA): FlashLlamaLayer.forward
// (models/custom_modeling/flash_llama_modeling.py v2.0.0, v2.2.0, v3.0.1; MistralLayer in
// flash_mistral_modeling.py v2.0.0 is the same) keeps its input hidden_states and residual
// (the caller's loop still holds them), normed_hidden_states and res (FastRMSNorm's CUDA
// path, dropout_layer_norm.dropout_add_ln_fwd, returns both as new tensors:
// layers/layernorm.py v2.2.0, v3.0.1), attn_output, normed_attn_res_output and attn_res:
// 7 x T x hidden alive while the MLP runs. LlamaMLP.forward computes
// `self.down_proj(self.act(gate_up_states[:, 0]) * gate_up_states[:, 1])` unfused: the
// gate_up output (2 x T x I), the activation's output and the product (T x I each) are
// alive at the product, 4 x T x I against the 3 of vLLM's fused SiluAndMul. For hidden >
// 8192 the norm falls back to the in-place torch path (hidden_states += residual; residual
// = hidden_states), so res and attn_res are the inputs themselves: 5 x T x hidden.
// Peak: the product's (7h + 4I) exceeds the down projection's (8h + 3I) whenever I > h.
double TgiDenseLayerPeakBytes(int64_t tokens, int64_t hidden, double intermediate_per_rank, double elem_bytes) {
  if (tokens <= 0 || hidden <= 0 || !(intermediate_per_rank > 0) || !(elem_bytes > 0)) return 0;
  const double copies = hidden > 8192 ? 5 : 7;
  return static_cast<double>(tokens) * elem_bytes * (copies * static_cast<double>(hidden) + 4 * intermediate_per_rank);
}

// A 4-bit AWQ checkpoint's linears (CUDA) run the llm-awq GEMM from v1.1.0 (WQLinear,
// utils/layers.py v1.1.0 l.26 and l.332; layers/linear.py v2.1.1 l.221-223) to v2.1.x; from
// v2.2.0 an AWQ checkpoint goes to Marlin on sm 8.0 and up (can_use_gptq_marlin accepts
// quant_method "awq", layers/marlin.py v2.2.0 l.171-184, called from layers/gptq/__init__.py
// l.139-144), and the llm-awq kernel's m16n8k16 MMA needs sm 8.0 anyway. WQLinear.forward
// (utils/awq/quantize/qmodule.py v1.1.0-v2.0.2, layers/awq/quantize/qmodule.py v2.0.4-v2.1.1,
// l.46) calls gemm_forward_cuda(x, qweight, scales, qzeros, 8), and that kernel
// (awq/kernels/csrc/quantization/gemm_cuda_gen.cu gemm_forward_cuda at huggingface/llm-awq
// bd1dc2d5, what server/Makefile-awq builds at v1.4.1-v2.1.1; earlier tags build mit-han-lab's
// f084f40b, which the fork changes only in the stream, per the Makefile's comment) allocates
// torch::empty({split_k_iters, M, OC}) in the input's dtype, writes one partial product per
// split and returns `_out_feats.sum(0)`: eight outputs of T x OC, then the sum's, alive
// together. In the eager layer the gate_up GEMM (OC = 2 x intermediate per shard) then holds
// the layer's 7 (5) x T x hidden beside 18 x T x intermediate; the down projection 8 (6) x
// hidden + 3 x intermediate plus eight partials of T x hidden. Their blocks stay cached to the
// warm-up's read (tgi_warmup_held.cc).
bool TgiAwqSplitKGemm(std::string_view version) {
  return !version.empty() && !VersionBefore(version, {1, 1, 0}) && VersionBefore(version, {2, 2, 0});
}

double TgiAwqLayerPeakBytes(int64_t tokens, int64_t hidden, double intermediate_per_rank, double elem_bytes) {
  if (tokens <= 0 || hidden <= 0 || !(intermediate_per_rank > 0) || !(elem_bytes > 0)) return 0;
  const double copies = hidden > 8192 ? 5 : 7, h = static_cast<double>(hidden), inter = intermediate_per_rank;
  const double gate_up = copies * h + 18 * inter, down = (copies + 1 + 8) * h + 3 * inter;
  return static_cast<double>(tokens) * elem_bytes * std::max(gate_up, down);
}

// The router's warm-up requests ask for prefill_logprobs (router/client/src/client.rs
// v0.9.3-v2.0.0, router/client/src/v3/client.rs v2.2.0, backends/v3/src/client/
// grpc_client.rs v3.0.1). From v3.0.0 the server drops the request's flag unless the
// launcher passed --enable-prefill-logprobs (REQUEST_LOGPROBS, models/globals.py v3.0.0;
// FlashCausalLMBatch.from_pb: `if not REQUEST_LOGPROBS: r.prefill_logprobs = False`,
// flash_causal_lm.py v3.0.1; launcher/src/main.rs v3.0.1: "Logprobs in the prompt are
// deactivated by default because they consume a large amount of VRAM"). Without them
// prefill_head_indices keeps one token a request, and the lm_head's T x vocab logits and
// log_softmax over them are never computed in the warm-up.
bool TgiPrefillLogprobsByDefault(std::string_view version) { return VersionBefore(version, {3, 0, 0}); }

// From v2.3.0 the launcher defaults to flashinfer (launcher/src/main.rs resolve_attention
// v2.3.0-v3.3.7, head_dim 64/128/256; TgiLauncherAttention). FlashCausalLM.__init__
// (flash_causal_lm.py v2.3.0, v2.4.0, v3.0.1; the same at v2.3.1, v2.4.1) builds
// create_prefill_state, create_prefill_with_paged_kv_state and create_decode_state after
// the model's weights; they share get_workspace()'s 128 MiB float workspace
// (layers/attention/flashinfer.py v3.0.1), and each flashinfer 0.1.x wrapper
// (server/Makefile-flashinfer: flashinfer 0.1.6) allocates an 8 MiB integer workspace on
// the device. All of it is held when the warm-up reads the free memory.
double TgiAttentionWorkspaceBytes(std::string_view version) {
  if (VersionBefore(version, {2, 3, 0})) return 0;
  constexpr double kMiB = 1024.0 * 1024.0;
  return 128 * kMiB + 3 * 8 * kMiB;
}

// flash_causal_lm.py warmup: `except Exception as e: raise RuntimeError(f"Not enough
// memory to handle ...")` at v0.9.3 through v1.1.0; `except torch.cuda.OutOfMemoryError`
// from v1.1.1.
bool TgiWarmupReportsEveryError(std::string_view version) { return VersionBefore(version, {1, 1, 1}); }

}  // namespace tpt::memory
