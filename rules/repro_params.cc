// repro_params.cc: the figures a diagnosis hands to `tptriage repro` (repro_params.h).
#include "rules/repro_params.h"

#include <cmath>
#include <optional>
#include <string_view>

#include "rules/expr.h"

namespace tpt {

namespace {

std::optional<bool> CustomAllReduceOn(const RunIndex& run) {
  auto truthy = [](const nlohmann::json& j) { return JsonToValue(j).Truthy() && JsonToValue(j).ToString() != "0" &&
                                                     JsonToValue(j).ToString() != "False" &&
                                                     JsonToValue(j).ToString() != "false"; };
  if (!run.OfKind("custom_ar_disabled").empty()) return false;
  if (run.config().contains("disable_custom_all_reduce") && truthy(run.config()["disable_custom_all_reduce"]))
    return false;
  if (!run.OfKind("custom_ar_enabled").empty()) return true;
  for (const char* name : {"SGLANG_FORCE_CUSTOM_AR_PCIE", "VLLM_FORCE_CUSTOM_AR"}) {
    auto it = run.env().find(name);
    if (it != run.env().end() && (it->second == "1" || it->second == "true" || it->second == "True")) return true;
  }
  if (run.config().contains("enable_custom_all_reduce") && truthy(run.config()["enable_custom_all_reduce"]))
    return true;
  return std::nullopt;
}

Value CallBuiltinOr(const Scope& s, std::string_view name, const std::vector<Value>& args) {
  Value out;
  if (CallBuiltin(name, args, &out)) return out;
  return s.Call(name, args);
}

}  // namespace

// The plan parameters `tptriage repro` reads back (repro/README.md).
nlohmann::json BuildRepro(const RunIndex& run, const Diagnosis& d) {
  RunScope s(run, RunScope::kNoAnchor);
  nlohmann::json r = nlohmann::json::object();
  r["scenario"] = d.id;
  r["framework"] = run.framework();
  if (!run.version().empty()) r["version"] = run.version();
  for (const char* k : {"tp", "pp", "dp", "ep"}) {
    Value v = s.Lookup(k);
    if (v.is_number()) r[k] = static_cast<int>(v.number());
  }
  if (!r.contains("tp") && !run.ranks().empty()) r["tp"] = static_cast<int>(run.ranks().size());
  if (!run.gpu().empty()) r["gpu"] = run.gpu();
  auto put = [&](const char* key, Value v) {
    if (!v.is_number()) return;
    // Byte counts are integers in JSON.
    std::string_view k(key);
    if (k.find("_bytes") != std::string_view::npos && k != "kv_bytes_per_token")
      r[key] = static_cast<int64_t>(std::llround(v.number()));
    else
      r[key] = v.number();
  };
  put("total_bytes", CallBuiltinOr(s, "coalesce", {s.Lookup("gpu_total_bytes"), s.Call("maxof", {"cuda_oom", "total_bytes"}),
                                                   s.Call("maxof", {"memory_profile", "total_bytes"})}));
  put("weights_bytes_per_rank", CallBuiltinOr(s, "coalesce", {s.Call("maxof", {"weights_load_end", "weights_bytes"}),
                                                              s.Call("maxof", {"memory_profile", "weights_bytes"})}));
  // Same order as the KV-pool rules: before the weights, else after / before distributed init.
  put("free_at_init_bytes", CallBuiltinOr(s, "coalesce", {s.Call("minof", {"weights_load_begin", "avail_bytes"}),
                                                          s.Call("minof", {"dist_init_end", "avail_bytes"}),
                                                          s.Call("minof", {"dist_init_begin", "avail_bytes"})}));
  put("avail_after_weights_bytes", s.Call("minof", {"weights_load_end", "avail_bytes"}));
  for (const char* k : {"mem_fraction_static", "gpu_memory_utilization"}) {
    Value v = s.Lookup(std::string("config.") + k);
    if (v.is_number()) r[k] = v.number();
  }
  Value tokens = s.Call("first", {"kv_pool_alloc", "tokens"});
  Value kv = s.Call("first", {"kv_pool_alloc", "kv_bytes"});
  if (kv.is_null()) {
    Value k = s.Call("first", {"kv_pool_alloc", "k_bytes"}), v = s.Call("first", {"kv_pool_alloc", "v_bytes"});
    if (k.is_number() && v.is_number()) kv = k.number() + v.number();
  }
  if (tokens.is_number() && kv.is_number() && tokens.number() > 0) r["kv_bytes_per_token"] = kv.number() / tokens.number();
  put("kv_bytes_per_token", s.Call("first", {"kv_pool_alloc", "bytes_per_token"}));  // printed as such (SGLang DSv4)
  // The warm-up and KV figures of TGI, LMDeploy and TensorRT-LLM (repro/startup_servers.cc):
  // the OOM line's ask and free memory, TGI's prefill batch and limits, LMDeploy's blocks
  // and ratio, TensorRT-LLM's estimate and the free memory when its cache was created.
  put("warmup_asked_bytes", s.Call("first", {"cuda_oom", "tried_bytes"}));
  put("warmup_free_bytes", s.Call("first", {"cuda_oom", "free_bytes"}));
  put("prefill_tokens", CallBuiltinOr(s, "coalesce", {s.Call("first", {"warmup_oom", "prefill_tokens"}),
                                                      s.Lookup("config.max_batch_prefill_tokens")}));
  for (const char* k : {"max_input_tokens", "max_total_tokens", "cache_max_entry_count", "free_gpu_memory_fraction"}) {
    Value v = s.Lookup(std::string("config.") + k);
    if (v.is_number()) r[k] = v.number();
  }
  for (const char* k : {"max_input_tokens", "max_total_tokens"}) {  // TGI's router warm-up span
    if (!r.contains(k)) put(k, s.Call("maxof", {"warmup_oom", k}));
  }
  if (!r.contains("free_gpu_memory_fraction")) put("free_gpu_memory_fraction", s.Call("first", {"memory_profile", "free_gpu_memory_fraction"}));
  put("kv_blocks", s.Call("first", {"kv_pool_alloc", "blocks"}));
  put("kv_block_bytes", s.Call("first", {"kv_pool_alloc", "block_bytes"}));
  // TensorRT-LLM's KV after the fraction: the PyTorch estimate, or the C++ runtime's "Allocate N bytes for k/v cache".
  put("kv_estimate_bytes", CallBuiltinOr(s, "coalesce", {s.Call("minof", {"memory_profile", "kv_estimate_bytes"}),
                                                         run.framework() == "trtllm" ? kv : Value()}));
  put("free_at_creation_bytes", s.Call("minof", {"memory_profile", "free_before_create_bytes"}));
  if (!r.contains("kv_bytes_per_token")) put("kv_bytes_per_token", s.Call("first", {"memory_profile", "kv_bytes_per_token"}));
  if (Value src = s.Call("first", {"cuda_oom", "source"}); src.is_string()) r["oom_source"] = src.ToString();
  if (auto car = CustomAllReduceOn(run)) r["custom_all_reduce"] = *car;
  Value bs = CallBuiltinOr(s, "coalesce", {s.Lookup("config.cuda_graph_max_bs"), s.Call("maxof", {"graph_capture_begin", "bs"}),
                                           s.Lookup("config.cuda_graph_bs")});
  if (bs.is_number()) r["cuda_graph_max_bs"] = static_cast<int>(bs.number());
  Value eager = CallBuiltinOr(s, "coalesce", {s.Lookup("config.disable_cuda_graph"), s.Lookup("config.enforce_eager")});
  if (!eager.is_null()) r["cuda_graph"] = !eager.Truthy();
  return r;
}

}  // namespace tpt
