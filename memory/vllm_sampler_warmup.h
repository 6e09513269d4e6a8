// vllm_sampler_warmup.h: what vLLM V1's sampler warm-up after the KV cache needs, and the
// one case where it may need more than the profile that sized the pool held.
//
// From 0.8.0 (vllm#13776) gpu_worker.py compile_or_warm_up_model runs, after
// initialize_kv_cache and capture_model, `_dummy_run(min(max_num_seqs,
// max_num_batched_tokens))` and `_dummy_sampler_run` over its rows (0.8.1:218-228,
// 0.8.3:218-228, 0.9.2:269-288, 0.11.0:391-411). The profile that sized the pool ran the
// same `_dummy_sampler_run` (profile_run: `_dummy_run(max_num_tokens)` returns
// hidden_states[logit_indices], one row a dummy request, num_reqs = min(max_num_seqs,
// tokens): gpu_model_runner.py 0.8.1:1251-1310 and 1464-1466, 0.8.3:1373-1432 and 1543-1545,
// 0.11.0:2950-2975 and 3392-3397) with the same SamplingMetadata (temperature 0.5, top-p 0.9,
// top-k vocab - 1) through the same Sampler, whose TopKTopPSampler binds its path (sort or
// FlashInfer) once at construction (v1/sample/ops/topk_topp_sampler.py __init__). So the
// warm-up's sampler is the profile's, over as many rows, and its peak is at most the
// profile's activation peak; what it gets after the pool is that peak plus what the budget
// leaves outside it ((1 - util) x total before 0.9.1, free at init - util x total after),
// less the CUDA graphs captured in between (vllm_model.cc VllmKvPool).
//
// The exception: 0.8.x where FlashInfer older than 0.2.3 samples (the vllm/vllm-openai
// images; model_config.h kFlashInferProbs). flashinfer_sample (topk_topp_sampler.py
// 0.8.1:159-211, 0.8.3:259-312, 0.8.5:262-315) falls back when any row's rejection
// sampling fails (`if not success.all()`): top_k_renorm_prob and then top_p_renorm_prob each
// return a new float32 copy of the probabilities (FlashInfer 0.2.0-0.2.2 flashinfer/
// sampling.py: `renorm_probs = torch.empty_like(probs)`), the two alive together during the
// second: model-dtype logits, their float32 copy, the probabilities and two copies, 18 bytes
// a logit. The sample that succeeds holds one copy (top_k_top_p_sampling_from_probs's
// default filter_apply_order "top_k_first" renormalises into a new tensor first): 14. So
// the fallback holds 4 bytes a logit more than a profile that did not take it. (The plan
// prices FlashInfer's profile at 10, model_weights.cc, without top_k_first's copy; the
// check here rests on the difference, which does not.) Whether a row fails turns on the
// dummy logits: the 0.8.x dummy forward skips attention and returns its uninitialised
// output (flash_attn.py 0.8.1:232-234, 0.8.3:440-442, 0.8.5:507-509 "Profiling run.";
// attention/layer.py 0.8.1:185, 0.8.3:189 `torch.empty`), so the logits are whatever the
// recycled blocks held, NaN included, and NaN probabilities fail every round; 0.9.2 samples torch.rand_like
// instead ("may contain special values, like inf or nan", gpu_model_runner.py
// 0.9.2:2090-2093), and FlashInfer 0.2.3 on has no success flag. The profile and the
// warm-up run over different recycled blocks, so the warm-up can take the fallback the
// profile did not: no input says which.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "memory/launch_plan.h"

namespace tpt::memory {

struct VllmSamplerWarmup {
  int64_t requests = 0;     // min(max_num_seqs, max_num_batched_tokens)
  double estimate_bytes = 0;  // the sampler's estimate over those rows (VllmActivationPeakBytes)
  double need_bytes = 0;      // the estimate, at most the profile's activation peak (the same sampler)
  double high_bytes = 0;      // need, or with 0.8.x FlashInfer's fallback copies
  bool flashinfer = false;    // FlashInfer's sampler is the one priced (--vllm-flashinfer installed)
};

// The warm-up of a derived vLLM input (V1, 0.8.0 on, a model, max_num_seqs and
// max_num_batched_tokens known); nullopt otherwise. Under Model Runner V2 the profile's
// sampler is not the warm-up's (vllm_runner_v2.h): the estimate is not capped there.
std::optional<VllmSamplerWarmup> VllmSamplerWarmupOf(const PlanInput& derived);

// The bytes FlashInfer's 0.8.x fallback holds beyond a sample that succeeds: one float32
// copy of the probabilities a row, 0 where the fallback cannot run (another version or sampler).
double VllmFlashInferFallbackBytes(const PlanInput& derived, int64_t requests);

// "may fail" for a launch whose warm-up fits at its priced need but not with the fallback
// (VllmKvResult::sampler_warmup_may_fail): not fits, not certain, warmup_oom, the error
// saying both needs and what the pool and graphs leave.
void SayVllmSamplerWarmupMayFail(double need_bytes, double high_bytes, double left_bytes, int64_t requests, Plan& p);

// The sentence the FlashInfer `unknown:` line adds on 0.8.x ("" elsewhere): the warm-up's
// fallback and how much it adds.
std::string VllmFlashInferFallbackNote(const PlanInput& derived);

}  // namespace tpt::memory
