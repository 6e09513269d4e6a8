// launch_plan_vllm_hybrid.cc: plan's side of vLLM's hybrid KV cache groups (V1 from 0.10,
// v1/core/kv_cache_utils.py; the arithmetic is VllmKvPool's, vllm_model.cc): the layers of
// each kind, what a sliding layer and a mamba layer hold per request at this version, the
// assumption line that says which "GPU KV cache size" the version logs, and what
// --enable-prefix-caching would change for a mamba hybrid.
#include <cstdint>
#include <cstdio>
#include <string>

#include "memory/launch_plan_internal.h"
#include "memory/memory_model.h"
#include "memory/model_config.h"

namespace tpt::memory::internal {

void SetVllmHybridGroups(const PlanInput& in, const ModelConfig& m, VllmKvInput& kv, Plan& p) {
  if (m.SlidingLayers() == 0 && m.LinearLayers() == 0) return;
  // Sliding-window and mamba layers get their own groups; before 0.10 V1 priced every
  // layer as full attention.
  kv.full_layers = m.FullAttentionLayers();
  kv.sliding_layers = m.SlidingLayers();
  kv.mamba_layers = m.LinearLayers();
  kv.sliding_window = m.sliding_window;
  const int64_t batched = in.max_num_batched_tokens.value_or(8192);
  kv.max_num_batched_tokens = VllmSlidingReserveTokens(in.version, batched);
  // vLLM keeps the mamba state in the model dtype (--mamba-ssm-cache-dtype auto), but
  // Qwen3.5's recurrent state in its config's mamba_ssm_dtype (float32 in Qwen's configs):
  // qwen3_5.py read hf_text_config.mamba_ssm_dtype, and from vllm#34489 (2026-02-12)
  // models/config.py Qwen3_5ForConditionalGenerationConfig sets the cache dtype from it.
  const bool qwen35 = m.architecture.rfind("Qwen3_5", 0) == 0;
  const bool fp32_state = qwen35 && m.mamba_ssm_dtype == "float32";
  kv.mamba_bytes_per_request = MambaStateBytesPerRequest(m, in.tp, fp32_state ? 4 : 2);
  p.assumptions.push_back(
      "vLLM's hybrid KV cache groups: " + std::to_string(kv.full_layers) + " full, " +
      std::to_string(kv.sliding_layers) + " sliding-window (" + std::to_string(m.sliding_window) + "), " +
      std::to_string(kv.mamba_layers) + " mamba layers" +
      (kv.mamba_layers > 0 ? std::string(" (recurrent state in ") +
                                 (fp32_state ? "float32, the config's mamba_ssm_dtype" : "the model dtype") + ")"
                           : std::string()) +
      "; a request needs full layers for its length, sliding layers for the window - 1 + " +
      std::to_string(kv.max_num_batched_tokens) +
      (kv.max_num_batched_tokens != batched ? " in-flight tokens (2 batches of max_num_batched_tokens under async "
                                              "scheduling, 0.26 on)"
                                            : std::string(" tokens (max_num_batched_tokens)")) +
      ", mamba layers one state; " +
      (kv.kv_size_from_concurrency
           ? "the logged \"GPU KV cache size\" is max concurrency x max_model_len (vLLM 0.20.1 on, "
             "kv_cache_utils.py _report_kv_cache_config), the pool read as full attention is blocks // groups x "
             "block size (pool_tokens)"
           : "the logged \"GPU KV cache size\" is blocks // groups x block size (before 0.20.1)"));
}

void SayVllmMambaPrefixCaching(const VllmKvInput& kv, const VllmKvResult& r, Plan& p) {
  if (kv.mamba_layers == 0 || r.group_size <= 0 || r.max_concurrency <= 0 || !kv.max_model_len || p.kv_tokens <= 0) {
    return;
  }
  // With prefix caching a mamba group keeps 2 state pages a request (models/config.py
  // MambaModelConfig: mamba_cache_mode "align", vllm#30877, main 2026-01-23: 0.16 taken
  // as the first release with it, inferred; MambaSpec.max_memory_usage_bytes), so a
  // request needs one more block a mamba group (a v0.20.0 Qwen3.6-35B-A3B launch with it:
  // 147 blocks / (32 + 3 x 2) = 3.87x). vLLM 0.23's Qwen3.5-4B launch without the flag
  // shows one page; the plan takes prefix caching off for these models.
  const double per_request = static_cast<double>(r.num_blocks) / r.max_concurrency;
  const int64_t mamba_groups = (kv.mamba_layers + r.group_size - 1) / r.group_size;
  const double align = static_cast<double>(r.num_blocks) / (per_request + static_cast<double>(mamba_groups));
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.2fx", align);
  p.unknowns.push_back("with --enable-prefix-caching vLLM keeps two state pages a request in each of the " +
                       std::to_string(mamba_groups) + " mamba groups (mamba_cache_mode 'align'): maximum concurrency " +
                       buf +
                       (kv.kv_size_from_concurrency
                            ? ", a logged GPU KV cache size of " +
                                  WithCommas(static_cast<int64_t>(align * static_cast<double>(*kv.max_model_len))) +
                                  " tokens"
                            : std::string()) +
                       "; the plan takes prefix caching off for this hybrid model");
}

}  // namespace tpt::memory::internal
