// vllm_performance_mode.h: vLLM's --performance-mode (0.17.0 on), which changes the defaults
// the profiling run is sized by.
//
//   TPT_RETURN_IF_ERROR(VllmPerformanceModeOk(mode, framework, version));   // flag reading
//   ApplyVllmPerformanceMode(user, in, assumptions);                          // after the defaults
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "memory/launch_plan.h"

namespace tpt::memory {

// The flag's values (config/vllm.py 0.17.0 PerformanceMode: "balanced", "interactivity",
// "throughput"); vLLM's only (EngineArgs --performance-mode, engine/arg_utils.py 0.17.0
// l.1277; not in 0.16.0's arg_utils.py or config/vllm.py, so argparse refuses it there). An
// error names the flag and what to pass.
Status VllmPerformanceModeOk(const std::string& mode, const std::string& framework, const std::string& version);

// "throughput": EngineArgs._set_default_max_num_seqs_and_batched_tokens_args (arg_utils.py
// 0.17.0 l.2128-2132) doubles max_num_batched_tokens and max_num_seqs when each is left to
// the default ("If throughput mode is set, double max_num_batched_tokens and max_num_seqs"),
// before max_num_seqs is cut to max_num_batched_tokens; a value given stays. The profiling
// run and the sampler warm-up are sized by them. "interactivity" only changes the CUDA-graph
// capture sizes (config/vllm.py 0.17.0 l.1404: 1..32 one by one), which the plan's graph
// estimate does not follow: said. Call after the version's defaults are in `in`.
void ApplyVllmPerformanceMode(const PlanInput& user, PlanInput& in, std::vector<std::string>& assumptions);

}  // namespace tpt::memory
