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

namespace {
// vllm serve's flags a plan's remedies name that are EngineArgs fields.
constexpr const char* kEngineArgFlags[] = {
    "gpu-memory-utilization", "tensor-parallel-size", "pipeline-parallel-size", "data-parallel-size",
    "max-model-len", "kv-cache-dtype", "quantization", "enforce-eager", "max-num-seqs", "max-num-batched-tokens",
    "limit-mm-per-prompt", "cpu-offload-gb", "swap-space", "block-size", "enable-prefix-caching",
    "enable-chunked-prefill", "compilation-config", "performance-mode", "enable-expert-parallel",
    "max-seq-len-to-capture", "cuda-graph-sizes"};

bool EngineArgFlag(const std::string& name) {
  for (const char* f : kEngineArgFlags) {
    if (name == f) return true;
  }
  return false;
}

std::string Field(std::string name) {
  std::replace(name.begin(), name.end(), '-', '_');
  return name;
}

// Each `--flag` of kEngineArgFlags in a sentence as the keyword.
std::string SpellSentence(const std::string& s) {
  std::string out;
  size_t i = 0;
  while (i < s.size()) {
    size_t at = s.find("--", i);
    if (at == std::string::npos) break;
    size_t end = at + 2;
    while (end < s.size() && (std::islower(static_cast<unsigned char>(s[end])) ||
                              std::isdigit(static_cast<unsigned char>(s[end])) || s[end] == '-')) {
      ++end;
    }
    const std::string name = s.substr(at + 2, end - at - 2);
    const bool before_ok = at == 0 || !std::isalnum(static_cast<unsigned char>(s[at - 1]));
    out += s.substr(i, at - i);
    out += before_ok && EngineArgFlag(name) ? Field(name) : s.substr(at, end - at);
    i = end;
  }
  return out + s.substr(std::min(i, s.size()));
}

bool Number(const std::string& v) {
  if (v.empty()) return false;
  for (char c : v) {
    if (!std::isdigit(static_cast<unsigned char>(c)) && c != '.' && c != '-') return false;
  }
  return true;
}

// `image=0,video=0` or a shell-quoted JSON dict: a Python dict.
std::string MmDict(std::string v) {
  if (v.size() >= 2 && v.front() == '\'' && v.back() == '\'') v = v.substr(1, v.size() - 2);
  if (!v.empty() && v.front() == '{') return v;
  std::string out = "{";
  size_t i = 0;
  while (i <= v.size()) {
    size_t comma = v.find(',', i);
    if (comma == std::string::npos) comma = v.size();
    const std::string item = v.substr(i, comma - i);
    const size_t eq = item.find('=');
    if (eq != std::string::npos) {
      out += (out.size() > 1 ? ", \"" : "\"") + item.substr(0, eq) + "\": " + item.substr(eq + 1);
    }
    i = comma + 1;
  }
  return out + "}";
}
}  // namespace

void SpellRemediesForLlmClass(std::vector<Remedy>& remedies) {
  for (Remedy& r : remedies) {
    r.why = SpellSentence(r.why);
    if (r.flag.rfind("--", 0) != 0 || !EngineArgFlag(r.flag.substr(2))) continue;
    const std::string name = r.flag.substr(2);
    r.flag = Field(name);
    if (name == "limit-mm-per-prompt") r.value = MmDict(r.value);
    else if (r.value.empty() && r.direction == "set") r.value = "True";
    else if (!r.value.empty() && !Number(r.value)) r.value = "\"" + r.value + "\"";
  }
}

}  // namespace tpt::memory
