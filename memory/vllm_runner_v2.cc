// vllm_runner_v2.cc: see vllm_runner_v2.h.
//
// Sources (vLLM, read 2026-12-06): v1/worker/gpu/model_runner.py `_dummy_run` builds a dummy
// SchedulerOutput of min(num_tokens, max_num_reqs) requests and calls `execute_model(...,
// dummy_run=True, skip_attn_for_dummy_run=...)`; `_dummy_sampler_run` says "the sampler may
// skip top_k, top_p, and logprobs, using less GPU memory than what is possible during actual
// execution"; gpu/sample/sampler.py copies the logits to float32 and samples by Gumbel-max
// (gumbel.py: two small per-block buffers). vllm#49224: MRV2's profile_cudagraph_memory
// returned 0. Logged: two MRV2 launches of Qwen2.5-7B-Instruct-AWQ (0.26.0 on an RTX 4080,
// 0.28.0 on an L4; profile 2,048 tokens, 256 rows) report a 1.04 GiB activation peak where
// the legacy runner's estimate is 0.52 GiB, and their pools equal the budget less weights,
// that peak and non-torch memory, with no graphs (captured after: 0.48 and 0.53 GiB);
// vllm#50159 (0.26.0, Gemma-4-31B AWQ at TP 2) logged MRV2's pool 0.89 GiB larger than
// MRv1's for the same command. So the runner moves the pool both ways by up to about the
// activation peak, and the plan keeps MRv1's point with a two-sided range.
//
// The peak read again in vLLM 0.28.0's sdist (issue #31, task mrv2): nothing in MRV2's
// profile sizes the second 0.52 GiB. profile_run -> _dummy_run(max_num_tokens, skip_attn=True,
// is_profile=True): execute_model(dummy_run=True) builds InputBatch.make_dummy over the
// persistent input buffers, dispatch_cg_and_sync_dp(need_eager=is_profile) picks
// CUDAGraphMode.NONE and calls self.model(**inputs) with no attention metadata: the legacy
// runner's forward. _dummy_sampler_run computes the logits of min(tokens, max_num_seqs) rows
// and calls the sampler with no request added: apply_sampling_params returns the logits
// as they are (needs_logits_processing all false, no float32 copy), top_k/top_p are None,
// so gumbel_sample reads them in place (two per-1,024-column buffers, 12 bytes a block):
// less than the legacy runner's 14 bytes a logit. memory_profiling (utils/mem_utils.py)
// counts the free-memory drop since init plus the peak's headroom, the same for both
// runners. Three Qwen3-14B launches on 0.28.0 (MRV2 by default; samples/models/evidence.json)
// match the legacy point within 1.3%, so no version-wide MRV2 term is priced: the 1.04 GiB
// of the two Qwen2.5-7B-AWQ launches stays an unexplained miss (known_miss in the evidence),
// and the range's low end takes the profile at twice the estimate together with the
// weights' line at its top (both were over on those launches), said as such.
//
// Task optimistic17 (0.22.0, 0.25.0-0.28.0 sdists): what MRV2 holds on the GPU from
// load_model() on and 0.27's budget charges (VllmRunnerV2PersistentBytes): the Sampler's
// PenaltiesState (gpu/sample/penalties.py) output_bin_counts = torch.zeros(max_num_reqs,
// vocab_size, int32) and prompt_bin_mask = torch.zeros(max_num_reqs, cdiv(vocab_size, 32),
// int32), and StructuredOutputsWorker's grammar_bitmask (gpu/structured_outputs.py,
// max_num_logits = max_num_reqs x decode_query_len rows of cdiv(vocab_size, 32) int32);
// RequestState.all_token_ids is UVA (host) in 0.28.0. utils/mem_utils.py 0.27.0:317-326:
// non_kv_cache_memory = total_consumed (before_create.free - after_profile.free) +
// transient_peak_headroom; 0.26.0:311 still non_torch_increase + torch_peak_increase +
// weights_memory, which count no torch tensor allocated outside load_model before the profile.
#include "memory/vllm_runner_v2.h"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "memory/memory_model.h"
#include "memory/model_config.h"

namespace tpt::memory {

// From 0.25.0 the oracle is read in the sdists (task launches26): VllmConfig.use_v2_model_runner
// (config/vllm.py 0.27.0:577-623, 0.28.0:615-673) takes MRV2 when _is_default_v2_model_runner_model
// (0.25.0:559-575, 0.26.0:607-623, 0.27.0:637-658, 0.28.0:691-712) says so and no feature of
// _get_v2_model_runner_unsupported_features is on (none a plan input: ngram speculation, dual
// batch overlap, elastic EP, custom logits processors, prompt embeds, sequence parallelism, PP
// under external_launcher). That predicate: a generate model, not attention-free, and
// `is_default_v2_architecture or not is_moe`, a hybrid (linear/mamba layers) only where its
// architecture is listed (0.27 on; 0.25-0.26 never). Quantization and pipeline parallelism do
// not send a model back to the legacy runner. DEFAULT_V2_MODEL_RUNNER_ARCHITECTURES (MoE models
// that default to MRV2) grows by version: 0.25.0 DeepseekV2, Qwen2Moe, GraniteMoe; 0.26.0 +
// Inkling (both), LongcatFlashNgram; 0.27.0 + KimiK3; 0.28.0 + DeepseekV4 (CUDA).
namespace {
bool ListedArchitecture(const std::string& arch, const std::vector<int>& v) {
  static const std::pair<const char*, std::vector<int>> kListed[] = {
      {"DeepseekV2ForCausalLM", {0, 25}},         {"Qwen2MoeForCausalLM", {0, 25}},
      {"GraniteMoeForCausalLM", {0, 25}},         {"InklingForCausalLM", {0, 26}},
      {"InklingForConditionalGeneration", {0, 26}}, {"LongcatFlashNgramForCausalLM", {0, 26}},
      {"KimiK3ForConditionalGeneration", {0, 27}}, {"DeepseekV4ForCausalLM", {0, 28}},
  };
  for (const auto& [name, from] : kListed) {
    if (arch == name && CompareVersions(v, from) >= 0) return true;
  }
  return false;
}
}  // namespace

bool VllmRunnerV2Default(const PlanInput& in) {
  if (in.framework != "vllm" || !in.model) return false;
  auto ver = ParseVersion(in.version);
  if (!ver.ok()) return false;
  const ModelConfig& m = *in.model;
  if (CompareVersions(*ver, {0, 25}) < 0) {
    // 0.22-0.24: the release notes only ("oracle selection for Qwen3 dense by default").
    return CompareVersions(*ver, {0, 22}) >= 0 && !m.IsMoe() && m.model_type == "qwen3";
  }
  const bool listed = ListedArchitecture(m.architecture, *ver);
  if (m.LinearLayers() > 0 && (!listed || CompareVersions(*ver, {0, 27}) < 0)) return false;  // is_hybrid
  return listed || !m.IsMoe();
}

VllmRunnerV2Spread VllmRunnerV2SpreadOf(const PlanInput& in, double activation_peak_bytes, double cuda_graph_bytes) {
  VllmRunnerV2Spread s;
  s.smaller_bytes = std::max(activation_peak_bytes, 0.0);
  const double rows = static_cast<double>(in.max_num_seqs.value_or(0));
  const double vocab = in.model ? static_cast<double>(in.model->vocab) : 0.0;
  double lighter = 8.0 * rows * vocab;
  if (in.model && in.model->vision_params == 0 && in.max_num_seqs && in.max_num_batched_tokens) {
    // MRV2's own profile (0.27.0, task launches26): profile_run -> _dummy_run(max_num_tokens,
    // is_profile=True) runs the forward, then _dummy_sampler_run computes min(tokens, seqs) rows
    // of logits and samples them; with no request added, apply_sampling_params returns the
    // logits as they are (gpu/sample/sampler.py 0.27.0:155-156) and sample() leaves FlashInfer
    // off for top_k and top_p None (0.27.0:237-248): the logits alone, in the model dtype,
    // gathered at TP > 1 (kPerSequence). The pool is larger by the legacy peak less that one.
    const double mrv2_peak = VllmActivationPeakBytes(*in.model, in.tp, *in.max_num_batched_tokens, *in.max_num_seqs,
                                                     VllmLogitsProfile::kPerSequence);
    lighter = std::max(activation_peak_bytes - mrv2_peak, 0.0);
  }
  s.larger_bytes = std::max(cuda_graph_bytes, 0.0) + lighter;
  return s;
}

double VllmRunnerV2PersistentBytes(const PlanInput& in) {
  if (!VllmRunnerV2Default(in) || !in.max_num_seqs) return 0;
  auto ver = ParseVersion(in.version);
  if (!ver.ok() || CompareVersions(*ver, {0, 27}) < 0) return 0;
  const double rows = static_cast<double>(*in.max_num_seqs);
  const double vocab = static_cast<double>(in.model->vocab);
  const double masks = 2.0 * std::ceil(vocab / 32.0);  // prompt_bin_mask, grammar_bitmask
  return 4.0 * rows * (vocab + masks);
}

std::string VllmRunnerV2Unknown(const PlanInput& in, const VllmRunnerV2Spread& s) {
  return "vLLM " + in.version +
         " runs this model on Model Runner V2 by default (Qwen3 dense from 0.22.0; from 0.25.0 every dense, "
         "non-hybrid model, quantized or not, at any TP or PP, and the MoE architectures config/vllm.py lists); the "
         "point above is the legacy runner's (set VLLM_USE_V2_MODEL_RUNNER=0 to get it). "
         "Its profile runs the legacy runner's forward and a lighter sampler (v1/worker/gpu/model_runner.py 0.27.0, "
         "0.28.0), "
         "yet two logged 0.26/0.28 launches of Qwen2.5-7B-AWQ measured twice the legacy estimate while three Qwen3-14B "
         "0.28 launches matched it: that peak is not explained, so it is a range, not a point; MRV2 leaves its CUDA graphs and top-k/top-p out of "
         "the budget (vllm#49224; vllm#50159 logged its pool 0.89 GiB larger than the legacy runner's): the KV pool "
         "can be " + FormatGiB(s.smaller_bytes) + " a rank smaller (the range's low end adds the weights' line at its top) to " +
         FormatGiB(s.larger_bytes) + " larger than planned (the range below)";
}

}  // namespace tpt::memory
