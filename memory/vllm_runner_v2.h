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

// True when vLLM picks Model Runner V2 for this (derived) input by default: its release
// notes, 0.22.0 "oracle selection for Qwen3 dense by default", 0.25.0 "Model Runner V2 is now
// the default for all dense models (#44443)"; a MoE model keeps the legacy runner.
bool VllmRunnerV2Default(const PlanInput& derived);

// How far MRV2 moves the pool from the legacy runner's point, per rank.
struct VllmRunnerV2Spread {
  // Smaller: two logged MRV2 launches (0.26.0, 0.28.0) measured twice the legacy
  // estimate, which its source does not explain (read at 0.28.0: the same forward, a
  // lighter sampler; vllm_runner_v2.cc), while three Qwen3-14B 0.28.0 launches matched it.
  double smaller_bytes = 0;
  // Larger: no CUDA graphs in its budget (its profile_cudagraph_memory returned 0,
  // vllm#49224; the graphs are captured after the pool) and a sampler run without
  // top-k/top-p (the logits and their float32 copy, 6 bytes a logit, against the legacy
  // kernels' 14).
  double larger_bytes = 0;
};
VllmRunnerV2Spread VllmRunnerV2SpreadOf(const PlanInput& derived, double activation_peak_bytes,
                                        double cuda_graph_bytes);

// The `unknown:` line: which runner, and the spread above in GiB.
std::string VllmRunnerV2Unknown(const PlanInput& derived, const VllmRunnerV2Spread& s);

}  // namespace tpt::memory
