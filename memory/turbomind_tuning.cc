// turbomind_tuning.cc: TurboMind's start-up GEMM tuning pass and the buffers it leaves.
//
// Sources (InternLM/lmdeploy, tags named):
//   v0.6.0 added the GEMM tuning (src/turbomind/models/llama/LlamaV2.cc, "[Gemm2] Tuning
//   sequence"); v0.6.2 runs it from LlamaBatch::tune() (LlamaBatch.cc), after the
//   constructor has built the SequenceManager/BlockManager (the cache, cache_max_entry_count of
//   the free memory) and LlamaBatch::AllocateBuffer. tune() drops the tuning sizes above
//   max_forward_token_num_ = max_prefill_token_num + max_batch_size (the constructor) and runs
//   model_->forwardUnified over each remaining size, the largest included (the default
//   generators reach 8,192 and 8,320: lmdeploy#3825's log). LlamaV2 builds its layers with
//   is_free_buffer_after_forward_ = false (LlamaV2.cc), so each layer buffer stays at its largest
//   size from the first pass on:
//   - UnifiedAttentionLayer::allocateBuffer (unified_attention_layer.cc): qkv_buf_ q_count x
//     (local heads + 2 local KV heads) x head_dim, qkv_buf_3_ q_count x local heads x head_dim,
//     tmp_kv_buf_ local KV heads x 2 x (k_count + MAX_CTA_S) x head_dim, in T;
//   - LlamaFfnLayer::allocateBuffer (LlamaFfnLayer.cc): gating and inter, 2 x tokens x
//     inter_size / tp, in T;
//   - LlamaBatch::AllocateBuffer (LlamaBatch.cc): context_decoder_input_buf_ and
//     context_decoder_output_buf_, max_forward_token_num_ x hidden in T each; logits_buf_ and
//     local_logits_buf_, max_batch_size x vocab_size_padded floats each; input_ids_buf_ and
//     token_ids_buf_, max_batch_size x session_len x (1 + 2) ints (the rest is a few ints a
//     sequence).
//   lmdeploy#2731 (RTX 3090, Qwen2.5-32B AWQ): a launch that started before 0.6.0 runs out of
//   memory at start-up "from 0.6.0 on" with --session-len 100, which these buffers explain: the
//   cache leaves 0.2 of the free memory, and the pass needs ~1.4 GiB over 8,320 tokens whatever
//   the session length. v0.7.0 on reorganised the buffers (core::Allocator from v0.8.0): not
//   read, said.
#include "memory/turbomind_tuning.h"

#include <algorithm>
#include <cctype>

#include "memory/memory_model.h"

namespace tpt::memory {

StatusOr<TurbomindTuning> TurbomindTuningPeak(const TurbomindTuningInput& in) {
  TurbomindTuning t;
  if (VersionBefore(in.version, {0, 6, 0})) {
    t.note = "TurboMind " + in.version + " runs no GEMM tuning pass at start-up (from 0.6.0)";
    return t;
  }
  if (!VersionBefore(in.version, {0, 7, 0})) {
    t.note = "TurboMind's GEMM tuning pass at start-up (from 0.6.0) allocates after the cache; its buffers were read "
             "for 0.6.x only, so the plan does not check them on " + in.version;
    return t;
  }
  if (in.hidden <= 0 || in.intermediate <= 0 || in.heads <= 0 || in.kv_heads <= 0 || in.head_dim <= 0 ||
      in.vocab <= 0) {
    return InvalidArgumentError("TurboMind tuning pass: the model's hidden size, MLP width, heads, KV heads, head_dim "
                                "and vocabulary are needed (give --model)");
  }
  if (in.tp < 1 || in.heads % in.tp != 0 || in.kv_heads % in.tp != 0) {
    return InvalidArgumentError("TurboMind tuning pass: tp must divide the attention and KV heads");
  }
  if (in.max_prefill_token_num < 0 || in.max_batch_size < 1) {
    return InvalidArgumentError("TurboMind tuning pass: max_prefill_token_num must be >= 0 and max_batch_size >= 1");
  }
  constexpr double kMaxCtaS = 64;  // MAX_CTA_S padding of tmp_kv_buf_ (small beside the rest)
  const double f = static_cast<double>(in.max_prefill_token_num + in.max_batch_size);
  const double b = static_cast<double>(in.max_batch_size);
  const double heads = static_cast<double>(in.heads) / in.tp, kv = static_cast<double>(in.kv_heads) / in.tp;
  const double d = in.head_dim, a = in.act_bytes;
  const double attention = f * (heads + 2 * kv) * d * a + f * heads * d * a + kv * 2 * (f + kMaxCtaS) * d * a;
  const double ffn = 2 * f * (static_cast<double>(in.intermediate) / in.tp) * a;
  const double batch = 2 * f * in.hidden * a + 2 * b * static_cast<double>(in.vocab) * 4 +
                       b * static_cast<double>(std::max<int64_t>(0, in.session_len)) * 3 * 4;
  t.runs = true;
  t.tokens = static_cast<int64_t>(f);
  t.bytes = attention + ffn + batch;
  t.note = "TurboMind " + in.version + "'s GEMM tuning pass at start-up runs a forward of " +
           std::to_string(t.tokens) + " tokens (max_prefill_token_num + max_batch_size) after the cache and keeps "
           "its buffers: attention " + FormatGiB(attention) + ", MLP " + FormatGiB(ffn) + ", LlamaBatch's " +
           FormatGiB(batch) + " (LlamaBatch::tune, unified_attention_layer.cc, LlamaFfnLayer.cc, v0.6.2)";
  return t;
}

int64_t LmdeployDefaultMaxBatchSize(std::string_view gpu_name) {
  std::string n(gpu_name);
  std::transform(n.begin(), n.end(), n.begin(), [](unsigned char c) { return std::tolower(c); });
  if (n.find("h100") != std::string::npos || n.find("h800") != std::string::npos) return 512;
  if (n.find("a100") != std::string::npos || n.find("a800") != std::string::npos) return 256;
  return 128;
}

}  // namespace tpt::memory
