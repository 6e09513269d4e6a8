// vllm_performance_mode.cc: vLLM's --performance-mode and the defaults it changes
// (sources in the header).
#include "memory/vllm_performance_mode.h"

#include "memory/memory_model.h"

namespace tpt::memory {

Status VllmPerformanceModeOk(const std::string& mode, const std::string& framework, const std::string& version) {
  if (framework != "vllm") return InvalidArgumentError("--performance-mode is vLLM's (0.17.0 on)");
  if (mode != "balanced" && mode != "interactivity" && mode != "throughput") {
    return InvalidArgumentError("--performance-mode '" + mode + "': vLLM takes balanced, interactivity or throughput");
  }
  if (VersionBefore(version, {0, 17, 0})) {
    return InvalidArgumentError("--performance-mode: vLLM " + version +
                                " has no such flag (it came with 0.17.0); drop it or pass --server-version 0.17.0 or "
                                "later");
  }
  return OkStatus();
}

void ApplyVllmPerformanceMode(const PlanInput& user, PlanInput& in, std::vector<std::string>& assumptions) {
  if (in.vllm_performance_mode == "interactivity") {
    assumptions.push_back("--performance-mode interactivity: CUDA graphs of batch sizes 1-32 one by one (config/vllm.py "
                          "0.17.0); the plan's graph estimate does not follow the sizes");
    return;
  }
  if (in.vllm_performance_mode != "throughput") return;
  std::string what;
  if (!user.max_num_batched_tokens && in.max_num_batched_tokens) {
    in.max_num_batched_tokens = *in.max_num_batched_tokens * 2;
    what = "max_num_batched_tokens " + std::to_string(*in.max_num_batched_tokens);
  }
  if (!user.max_num_seqs && in.max_num_seqs) {
    in.max_num_seqs = *in.max_num_seqs * 2;
    what += (what.empty() ? "" : ", ") + std::string("max_num_seqs ") + std::to_string(*in.max_num_seqs);
  }
  if (what.empty()) return;
  assumptions.push_back("--performance-mode throughput doubles the defaults not given (engine/arg_utils.py 0.17.0): " +
                        what);
}

}  // namespace tpt::memory
