// vllm_runner_v2.h: vLLM's Model Runner V2 (v1/worker/gpu/model_runner.py), the default
// runner for Qwen3 dense models from 0.22.0 and for every dense model from 0.25.0, and what
// the plan can say about its KV pool: the plan prices the legacy runner (MRv1), whose
// profile it models; MRV2 profiles differently in both directions and nothing read in its
// source sizes the net, so the plan states a two-sided range instead of a second point.
//
//   if (VllmRunnerV2Default(derived)) p.unknowns.push_back(VllmRunnerV2Unknown(derived, a, g));
#pragma once

#include <string>

#include "memory/launch_plan.h"

namespace tpt::memory {

// True when vLLM picks Model Runner V2 for this (derived) input by default: 0.22.0-0.24.x by
// the release notes ("oracle selection for Qwen3 dense by default"); from 0.25.0 as
// config/vllm.py's use_v2_model_runner decides (read in the 0.25.0-0.28.0 sdists): every dense
// model that is not a hybrid (linear/mamba layers), quantized or not, at any TP or PP, and the
// MoE architectures its DEFAULT_V2_MODEL_RUNNER_ARCHITECTURES lists by version; other MoE
// models keep the legacy runner.
bool VllmRunnerV2Default(const PlanInput& derived);

// How far MRV2 moves the pool from the legacy runner's point, per rank.
struct VllmRunnerV2Spread {
  // Smaller: two logged MRV2 launches (0.26.0, 0.28.0) measured twice the legacy
  // estimate, which its source does not explain (read at 0.28.0: the same forward, a
  // lighter sampler; vllm_runner_v2.cc), while three Qwen3-14B 0.28.0 launches matched it.
  double smaller_bytes = 0;
  // Larger: no CUDA graphs in its budget (its profile_cudagraph_memory returns 0,
  // gpu/model_runner.py 0.25.0:680, 0.26.0:705, 0.27.0:749, 0.28.0:843; vllm#49224; the
  // graphs are captured after the pool) and MRV2's own profile instead of the legacy peak:
  // the forward, or the logits of min(tokens, seqs) rows alone (no float32 copy, no
  // top-k/top-p, no FlashInfer; kPerSequence), whichever is larger. A multimodal model keeps
  // the rough 8 bytes a logit (its held encoder items are not re-priced here).
  double larger_bytes = 0;
};
VllmRunnerV2Spread VllmRunnerV2SpreadOf(const PlanInput& derived, double activation_peak_bytes,
                                        double cuda_graph_bytes);

// Model Runner V2's per-request state held on the GPU from load_model() on, counted from
// 0.27.0 in the figure vLLM logs as "consumed memory (weights + non-torch)": gpu/sample/
// penalties.py PenaltiesState's output_bin_counts (max_num_seqs x vocab int32) and
// prompt_bin_mask (max_num_seqs x ceil(vocab / 32) int32), gpu/structured_outputs.py's
// grammar_bitmask (max_num_seqs x ceil(vocab / 32) int32), all torch.zeros on the device
// (read in 0.22.0, 0.25.0-0.28.0; all_token_ids is UVA host memory). 0.27.0's and 0.28.0's
// utils/mem_utils.py memory_profiling charges total_consumed (the free-memory drop since the
// init snapshot) plus the peak's headroom, so torch memory held before the profile is in the
// budget; 0.22.0-0.26.0 charge weights (load_model's allocations) + the peak increase + the
// non-torch increase (cuda used - torch reserved), none of which holds it. 0 elsewhere.
double VllmRunnerV2PersistentBytes(const PlanInput& derived);

// The `unknown:` line: which runner, and the spread above in GiB.
std::string VllmRunnerV2Unknown(const PlanInput& derived, const VllmRunnerV2Spread& s);

}  // namespace tpt::memory
