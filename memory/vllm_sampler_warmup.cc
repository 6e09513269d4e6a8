// vllm_sampler_warmup.cc: vLLM V1's sampler warm-up after the KV cache (the source read is
// in vllm_sampler_warmup.h).
#include "memory/vllm_sampler_warmup.h"

#include <algorithm>

#include "memory/launch_plan_internal.h"
#include "memory/memory_model.h"
#include "memory/model_config.h"
#include "memory/vllm_runner_v2.h"

namespace tpt::memory {
namespace {

// FlashInfer's sampler is the point: --vllm-flashinfer installed on the versions whose
// default path takes it where installed (0.8.0-0.11.0; launch_plan_derive.cc fi_point).
bool FlashInferIsThePoint(const PlanInput& in) {
  if (in.vllm_flashinfer != true || !internal::FlashInferSamplerRuns(in)) return false;
  if (internal::VllmSamplerProfile(in, true) != VllmLogitsProfile::kSampler) return false;
  auto ver = ParseVersion(in.version);
  return ver.ok() && CompareVersions(*ver, {0, 8}) >= 0 && CompareVersions(*ver, {0, 11, 1}) < 0;
}

}  // namespace

double VllmFlashInferFallbackBytes(const PlanInput& derived, int64_t requests) {
  if (!derived.model || !FlashInferIsThePoint(derived) || !VersionBefore(derived.version, {0, 9})) return 0;
  // The fallback's peak (top_p_renorm_prob's copy beside top_k_renorm_prob's, 18 bytes a
  // logit) against the sample that succeeds (top_k_first's one copy, 14): one float32 copy
  // of the probabilities more than the profile held, whatever the priced figure.
  return 4.0 * static_cast<double>(requests) * static_cast<double>(derived.model->vocab);
}

std::optional<VllmSamplerWarmup> VllmSamplerWarmupOf(const PlanInput& in) {
  if (!in.model || !internal::IsVllmV1(in) || !in.max_num_seqs || !in.max_num_batched_tokens) return std::nullopt;
  auto ver = ParseVersion(in.version);
  if (!ver.ok() || CompareVersions(*ver, {0, 8}) < 0) return std::nullopt;
  VllmSamplerWarmup w;
  w.requests = std::min(*in.max_num_seqs, *in.max_num_batched_tokens);
  w.flashinfer = FlashInferIsThePoint(in);
  const VllmLogitsProfile profile =
      !w.flashinfer                       ? internal::VllmSamplerProfile(in, true)
      : VersionBefore(in.version, {0, 9}) ? VllmLogitsProfile::kFlashInferProbs
                                          : VllmLogitsProfile::kFlashInferSampler;
  w.estimate_bytes = VllmActivationPeakBytes(*in.model, in.tp, w.requests, w.requests, profile);
  w.need_bytes = w.estimate_bytes;
  // The profile ran this sampler over these rows and its peak sized the pool: the warm-up
  // cannot need more (vllm_sampler_warmup.h), except under Model Runner V2.
  if (in.activation_peak_bytes && *in.activation_peak_bytes > 0 && !VllmRunnerV2Default(in)) {
    w.need_bytes = std::min(w.need_bytes, *in.activation_peak_bytes);
  }
  w.high_bytes = w.need_bytes + VllmFlashInferFallbackBytes(in, w.requests);
  return w;
}

void SayVllmSamplerWarmupMayFail(double need_bytes, double high_bytes, double left_bytes, int64_t requests, Plan& p) {
  if (!p.fits) return;
  p.fits = false;
  p.outcome_certain = false;
  p.failure = "warmup_oom";
  p.figures["sampler_warmup_high_bytes"] = high_bytes;
  p.error = "the sampler's warm-up over " + std::to_string(requests) + " dummy requests after the KV cache and the CUDA "
            "graphs may run out of memory: FlashInfer's rejection sampler needs " + FormatGiB(need_bytes) + " as the "
            "profile measured it, and " + FormatGiB(high_bytes) + " where a dummy row's rejection fails and it "
            "renormalises the probabilities twice (one float32 copy more; vLLM 0.8.x, FlashInfer older than 0.2.3, the "
            "dummy logits uninitialised memory, NaN included); the pool and the graphs leave " + FormatGiB(left_bytes) +
            " (\"CUDA out of memory occurred when warming up sampler with " + std::to_string(requests) +
            " dummy requests\")";
}

std::string VllmFlashInferFallbackNote(const PlanInput& in) {
  if (!in.model || !in.max_num_seqs || !in.max_num_batched_tokens || !VersionBefore(in.version, {0, 9})) return "";
  PlanInput fi = in;
  fi.vllm_flashinfer = true;
  const int64_t rows = std::min(*in.max_num_seqs, *in.max_num_batched_tokens);
  const double more = VllmFlashInferFallbackBytes(fi, rows);
  if (more <= 0) return "";
  return "; with FlashInfer, the sampler's warm-up after the pool may take its fallback where a dummy row's rejection "
         "fails (the 0.8.x dummy logits are uninitialised memory, NaN included): it renormalises the probabilities "
         "twice, one float32 copy (" + FormatGiB(more) + ") more than the profile need have held (the range's "
         "FlashInfer end prices it)";
}

}  // namespace tpt::memory
