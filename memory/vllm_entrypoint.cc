// vllm_entrypoint.cc: vLLM V1's profiling-run defaults by entry point, release and card (the
// tables read are cited in the header).
#include "memory/vllm_entrypoint.h"

#include <algorithm>
#include <cctype>
#include <vector>

#include "memory/memory_model.h"

namespace tpt::memory {

Status VllmEntrypointOk(const std::string& entry, const std::string& framework) {
  if (framework != "vllm") {
    return InvalidArgumentError("--vllm-entrypoint applies to vllm only (its `vllm serve` or offline `LLM(...)`)");
  }
  if (entry != "serve" && entry != "llm") {
    return InvalidArgumentError("--vllm-entrypoint '" + entry +
                                "': expected serve (vllm serve, the OpenAI server) or llm (the offline LLM class)");
  }
  return OkStatus();
}

VllmV1BatchDefaults VllmV1Defaults(const std::string& version, double total_bytes, const std::string& gpu_name,
                                   bool llm_class) {
  std::string gpu = gpu_name;
  std::transform(gpu.begin(), gpu.end(), gpu.begin(), [](unsigned char c) { return std::tolower(c); });
  auto v = ParseVersion(version);
  auto at_least = [&](const std::vector<int>& w) { return !v.ok() || CompareVersions(*v, w) >= 0; };
  const bool by_memory = at_least({0, 8, 5});
  const bool a100_out = at_least({0, 9});
  const bool named_row = at_least({0, 7, 0}) && !by_memory;  // 0.7.0-0.8.4: cards named H100/H200
  const bool h100_named = named_row && (gpu.find("h100") != std::string::npos || gpu.find("h200") != std::string::npos);
  const bool top_row = at_least({0, 28}) && total_bytes >= 160 * kGiB;
  const bool big = top_row || (by_memory && total_bytes >= 70 * kGiB && !(a100_out && gpu.find("a100") != std::string::npos));
  const bool large = big || h100_named;
  VllmV1BatchDefaults d;
  const int64_t serve = top_row ? 16384 : large ? 8192 : 2048;
  const int64_t llm = large ? 16384 : 8192;
  d.batched_tokens = llm_class ? llm : serve;
  // max_num_seqs: 1024 on every card before 0.8.4 (EngineArgs.__post_init__), by name at 0.8.4,
  // by memory from 0.8.5; the same for both contexts.
  const bool early = v.ok() && CompareVersions(*v, {0, 8, 4}) < 0;
  d.max_num_seqs = early || large ? 1024 : 256;
  const std::string row = top_row     ? "V1 on a card of 160 GiB or more (0.28.0 on)"
                          : big       ? "V1 on a card of 70 GiB or more"
                          : h100_named ? "V1 on a card named H100/H200 (vllm#12369)"
                                       : "V1 below 70 GiB";
  if (llm_class) {
    d.why = row + ", the offline LLM class (--vllm-entrypoint llm: UsageContext.LLM_CLASS, engine/arg_utils.py; " +
            "vllm serve takes " + std::to_string(serve) + ")";
  } else {
    d.why = row + ", vllm serve (--vllm-entrypoint serve, the default); the offline LLM class profiles " +
            std::to_string(llm) + ": pass --vllm-entrypoint llm";
  }
  return d;
}

}  // namespace tpt::memory
