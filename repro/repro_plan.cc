// repro_plan.cc: plans from JSON and flags, validation, and their description.
#include "repro/repro_plan.h"
#include "base/read_file.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <limits>
#include <set>
#include <sstream>
#include <type_traits>

#include "memory/memory_model.h"
#include "repro/plan_figures.h"
#include "repro/startup_servers.h"
#include "rules/vocabulary.h"

namespace tpt::repro {
namespace {

using nlohmann::json;

// A size field: a number of bytes or a size string ("94GiB").
Status ReadSize(const json& j, const char* key, const std::string& name, int64_t* out) {
  if (!j.contains(key) || j[key].is_null()) return OkStatus();
  const json& v = j[key];
  if (v.is_number()) {
    double d = v.get<double>();
    if (!std::isfinite(d) || d < 0 || d > 9.0e18) {
      return InvalidArgumentError(name + ": $." + key + " must be a byte count >= 0; got " + v.dump());
    }
    *out = static_cast<int64_t>(std::llround(d));
    return OkStatus();
  }
  if (v.is_string()) {
    auto s = ParseSize(v.get<std::string>());
    if (!s.ok()) return InvalidArgumentError(name + ": $." + key + ": " + s.status().message());
    *out = *s;
    return OkStatus();
  }
  return InvalidArgumentError(name + ": $." + key + " must be a number of bytes or a size like \"94GiB\"; got " + v.dump());
}

Status ReadSizeList(const json& j, const char* key, const std::string& name, std::vector<int64_t>* out) {
  if (!j.contains(key) || j[key].is_null()) return OkStatus();
  if (!j[key].is_array()) return InvalidArgumentError(name + ": $." + key + " must be an array of byte counts");
  out->clear();
  for (size_t i = 0; i < j[key].size(); ++i) {
    json one = {{"v", j[key][i]}};
    int64_t v = 0;
    Status s = ReadSize(one, "v", name + ": $." + key + "[" + std::to_string(i) + "]", &v);
    if (!s.ok()) return s;
    out->push_back(v);
  }
  return OkStatus();
}

template <typename T>
Status ReadNumber(const json& j, const char* key, const std::string& name, T* out) {
  if (!j.contains(key) || j[key].is_null()) return OkStatus();
  if (j[key].is_number()) {
    const double d = j[key].get<double>();
    // A count (tp, layers, ...) is whole: 2.5 ranks is an error, not 2.
    if constexpr (std::is_integral_v<T>) {
      if (!std::isfinite(d) || d != std::floor(d) || std::fabs(d) > 1e15) {
        return InvalidArgumentError(name + ": $." + key + " must be a whole number; got " + j[key].dump());
      }
    }
    *out = static_cast<T>(d);
    return OkStatus();
  }
  if (j[key].is_string()) {  // logs give numbers as text at times ("0.5")
    const std::string s = j[key].get<std::string>();
    char* end = nullptr;
    double d = std::strtod(s.c_str(), &end);
    const bool whole = !std::is_integral_v<T> || (std::isfinite(d) && d == std::floor(d) && std::fabs(d) <= 1e15);
    if (end != s.c_str() && *end == '\0' && whole) {
      *out = static_cast<T>(d);
      return OkStatus();
    }
  }
  return InvalidArgumentError(name + ": $." + key + " must be a number; got " + j[key].dump());
}

Status ReadString(const json& j, const char* key, const std::string& name, std::string* out) {
  if (!j.contains(key) || j[key].is_null()) return OkStatus();
  if (!j[key].is_string()) return InvalidArgumentError(name + ": $." + key + " must be a string; got " + j[key].dump());
  *out = j[key].get<std::string>();
  return OkStatus();
}

// Where a root cause says the server stopped (rules/taxonomy.json repro_step).
std::string StepOfRootCause(const std::string& id) {
  const RootCause* rc = FindRootCause(id);
  return rc == nullptr ? "" : rc->repro_step;
}

// Remedy flag -> plan parameter.
std::string ParamOfFlag(std::string flag) {
  while (!flag.empty() && flag[0] == '-') flag.erase(0, 1);
  for (char& c : flag) {
    if (c == '-') c = '_';
  }
  if (flag == "mem_fraction_static" || flag == "gpu_memory_utilization" || flag == "tp" || flag == "tp_size" ||
      flag == "max_total_tokens" || flag == "max_batch_prefill_tokens" || flag == "cache_max_entry_count" ||
      flag == "cuda_memory_fraction") {
    return flag == "tp_size" ? "tp" : flag;
  }
  if (flag == "kv_cache_free_gpu_memory_fraction") return "free_gpu_memory_fraction";  // trtllm-serve's name
  return "";
}

// The server's default capture list up to max_bs (SGLang: 1,2,4,8 then
// every 8; vLLM: 1,2,4 then every 8), for plans that give only the maximum.
std::vector<int> DefaultGraphBatchSizes(const std::string& framework, int max_bs) {
  std::vector<int> out;
  for (int b : {1, 2, 4}) {
    if (b <= max_bs) out.push_back(b);
  }
  const int step_from = framework == "vllm" ? 8 : 16;
  if (framework != "vllm" && max_bs >= 8) out.push_back(8);
  for (int b = step_from; b <= max_bs; b += 8) out.push_back(b);
  if (out.empty() || out.back() != max_bs) out.push_back(max_bs);
  return out;
}

// The names rules/repro_params.cc (BuildRepro) writes, next to ours.
Status ReadAliases(const json& j, const std::string& name, Plan* p) {
  if (p->root_cause.empty()) TPT_RETURN_IF_ERROR(ReadString(j, "scenario", name, &p->root_cause));
  if (p->card_total_bytes == 0) TPT_RETURN_IF_ERROR(ReadSize(j, "total_bytes", name, &p->card_total_bytes));
  if (p->weights_bytes == 0) TPT_RETURN_IF_ERROR(ReadSize(j, "weights_bytes_per_rank", name, &p->weights_bytes));
  int64_t avail = 0;
  TPT_RETURN_IF_ERROR(ReadSize(j, "avail_after_weights_bytes", name, &avail));
  if (avail > 0) {
    p->logged_free_after[kStepWeights] = avail;
    // "21.7 GiB left after weights" at 94 GiB free: the weights took the difference.
    if (p->weights_bytes == 0 && p->free_at_init_bytes > avail) p->weights_bytes = p->free_at_init_bytes - avail;
  }
  if (j.contains("custom_all_reduce") && j["custom_all_reduce"].is_boolean()) {
    p->custom_allreduce = j["custom_all_reduce"].get<bool>();
  }
  if (p->cuda_graph_bs.empty() && j.contains("cuda_graph_max_bs")) {
    int max_bs = 0;
    TPT_RETURN_IF_ERROR(ReadNumber(j, "cuda_graph_max_bs", name, &max_bs));
    if (max_bs > 0 && max_bs <= 4096) p->cuda_graph_bs = DefaultGraphBatchSizes(p->framework, max_bs);
  }
  if (j.contains("cuda_graph") && j["cuda_graph"].is_boolean() && !j["cuda_graph"].get<bool>()) p->cuda_graph_bs.clear();
  return OkStatus();
}

Status ParseBarePlan(const json& j, const std::string& name, Plan* p) {
  if (!j.is_object()) return InvalidArgumentError(name + ": a repro plan must be a JSON object");
  TPT_RETURN_IF_ERROR(ReadString(j, "framework", name, &p->framework));
  TPT_RETURN_IF_ERROR(ReadString(j, "version", name, &p->version));
  TPT_RETURN_IF_ERROR(ReadString(j, "root_cause", name, &p->root_cause));
  TPT_RETURN_IF_ERROR(ReadString(j, "gpu", name, &p->gpu));
  TPT_RETURN_IF_ERROR(ReadNumber(j, "tp", name, &p->tp));
  TPT_RETURN_IF_ERROR(ReadNumber(j, "pp", name, &p->pp));
  TPT_RETURN_IF_ERROR(ReadSize(j, "card_total_bytes", name, &p->card_total_bytes));
  TPT_RETURN_IF_ERROR(ReadSize(j, "free_at_init_bytes", name, &p->free_at_init_bytes));
  TPT_RETURN_IF_ERROR(ReadSizeList(j, "free_at_init_per_rank", name, &p->free_at_init_per_rank));
  TPT_RETURN_IF_ERROR(ReadSize(j, "weights_bytes", name, &p->weights_bytes));
  TPT_RETURN_IF_ERROR(ReadSizeList(j, "weights_per_rank", name, &p->weights_per_rank));
  TPT_RETURN_IF_ERROR(ReadNumber(j, "mem_fraction_static", name, &p->mem_fraction_static));
  TPT_RETURN_IF_ERROR(ReadNumber(j, "gpu_memory_utilization", name, &p->gpu_memory_utilization));
  TPT_RETURN_IF_ERROR(ReadSize(j, "kv_bytes_per_token", name, &p->kv_bytes_per_token));
  TPT_RETURN_IF_ERROR(ReadNumber(j, "max_total_tokens", name, &p->max_total_tokens));
  TPT_RETURN_IF_ERROR(ReadNumber(j, "context_length", name, &p->context_length));
  TPT_RETURN_IF_ERROR(ReadSize(j, "warmup_asked_bytes", name, &p->warmup_asked_bytes));
  TPT_RETURN_IF_ERROR(ReadSize(j, "warmup_free_bytes", name, &p->warmup_free_bytes));
  TPT_RETURN_IF_ERROR(ReadSize(j, "warmup_bytes", name, &p->warmup_bytes));
  TPT_RETURN_IF_ERROR(ReadNumber(j, "prefill_tokens", name, &p->prefill_tokens));
  TPT_RETURN_IF_ERROR(ReadNumber(j, "max_input_tokens", name, &p->max_input_tokens));
  TPT_RETURN_IF_ERROR(ReadNumber(j, "kv_blocks", name, &p->kv_blocks));
  TPT_RETURN_IF_ERROR(ReadSize(j, "kv_block_bytes", name, &p->kv_block_bytes));
  TPT_RETURN_IF_ERROR(ReadSize(j, "kv_estimate_bytes", name, &p->kv_estimate_bytes));
  TPT_RETURN_IF_ERROR(ReadSize(j, "free_at_creation_bytes", name, &p->free_at_creation_bytes));
  TPT_RETURN_IF_ERROR(ReadSize(j, "kv_available_bytes", name, &p->kv_available_bytes));
  TPT_RETURN_IF_ERROR(ReadNumber(j, "cuda_memory_fraction", name, &p->cuda_memory_fraction));
  TPT_RETURN_IF_ERROR(ReadNumber(j, "cache_max_entry_count", name, &p->cache_max_entry_count));
  TPT_RETURN_IF_ERROR(ReadNumber(j, "free_gpu_memory_fraction", name, &p->free_gpu_memory_fraction));
  TPT_RETURN_IF_ERROR(ReadNumber(j, "block_tokens", name, &p->block_tokens));
  TPT_RETURN_IF_ERROR(ReadString(j, "oom_source", name, &p->oom_source));
  if (j.contains("custom_allreduce") && !j["custom_allreduce"].is_null()) {
    if (!j["custom_allreduce"].is_boolean()) return InvalidArgumentError(name + ": $.custom_allreduce must be true or false");
    p->custom_allreduce = j["custom_allreduce"].get<bool>();
  }
  TPT_RETURN_IF_ERROR(ReadSize(j, "custom_allreduce_max_bytes", name, &p->custom_allreduce_max_bytes));
  if (j.contains("cuda_graph_bs") && !j["cuda_graph_bs"].is_null()) {
    const json& bs = j["cuda_graph_bs"];
    if (!bs.is_array()) return InvalidArgumentError(name + ": $.cuda_graph_bs must be an array of batch sizes");
    p->cuda_graph_bs.clear();
    for (const auto& b : bs) {
      if (!b.is_number_integer()) return InvalidArgumentError(name + ": $.cuda_graph_bs must hold integers; got " + b.dump());
      p->cuda_graph_bs.push_back(b.get<int>());
    }
  }
  TPT_RETURN_IF_ERROR(ReadNumber(j, "hidden_size", name, &p->hidden_size));
  TPT_RETURN_IF_ERROR(ReadNumber(j, "num_layers", name, &p->num_layers));
  TPT_RETURN_IF_ERROR(ReadAliases(j, name, p));
  TPT_RETURN_IF_ERROR(ReadString(j, "failed_step", name, &p->failed_step));
  TPT_RETURN_IF_ERROR(ReadString(j, "failure_message", name, &p->failure_message));
  if (j.contains("logged_free_after") && j["logged_free_after"].is_object()) {
    for (const auto& [step, v] : j["logged_free_after"].items()) {
      int64_t b = 0;
      json one = {{"v", v}};
      TPT_RETURN_IF_ERROR(ReadSize(one, "v", name + ": $.logged_free_after." + step, &b));
      p->logged_free_after[step] = b;
    }
  }
  if (j.contains("fix") && !j["fix"].is_null()) {
    if (!j["fix"].is_object()) return InvalidArgumentError(name + ": $.fix must be an object like {\"mem_fraction_static\": 0.77}");
    for (const auto& [k, v] : j["fix"].items()) {
      double d = 0;
      json one = {{"v", v}};
      TPT_RETURN_IF_ERROR(ReadNumber(one, "v", name + ": $.fix." + k, &d));
      p->fix[k] = d;
    }
  }
  return OkStatus();
}

// Fills what the diagnosis' repro object left out from the rest of the Analysis.
Status CompleteFromAnalysis(const json& a, const json& diag, const std::string& name, Plan* p) {
  const json run = a.value("run", json::object());
  if (p->framework.empty()) p->framework = run.value("framework", "");
  if (p->version.empty()) p->version = run.value("version", "");
  if (p->gpu.empty()) p->gpu = run.value("gpu", "");
  if (p->root_cause.empty()) p->root_cause = diag.value("id", a.value("root_cause", ""));
  if (!diag.value("repro", json::object()).contains("tp") && run.value("tp", 0) > 0) p->tp = run["tp"].get<int>();
  if (!diag.value("repro", json::object()).contains("pp") && run.value("pp", 0) > 0) p->pp = run["pp"].get<int>();
  const json config = run.value("config", json::object());
  if (p->mem_fraction_static == 0 && config.contains("mem_fraction_static")) {
    TPT_RETURN_IF_ERROR(ReadNumber(config, "mem_fraction_static", name + " (run.config)", &p->mem_fraction_static));
  }
  if (p->gpu_memory_utilization == 0 && config.contains("gpu_memory_utilization")) {
    TPT_RETURN_IF_ERROR(ReadNumber(config, "gpu_memory_utilization", name + " (run.config)", &p->gpu_memory_utilization));
  }
  for (const char* k : {"context_length", "max_model_len", "max_seq_len"}) {
    if (p->context_length == 0 && config.contains(k) && config[k].is_number()) {
      TPT_RETURN_IF_ERROR(ReadNumber(config, k, name + " (run.config)", &p->context_length));
    }
  }
  // Ledger: per-rank figures of the target model.
  if (a.contains("ledger") && a["ledger"].is_array()) {
    std::map<int, std::pair<double, double>> by_rank;  // rank -> (free_at_init, weights)
    for (const auto& row : a["ledger"]) {
      if (row.value("role", "target") != "target") continue;
      const int r = row.value("rank", -1);
      if (r < 0) continue;
      // Unknown ledger cells are null (rules/analysis.h): read as "not given".
      auto bytes = [&row](const char* k) {
        auto it = row.find(k);
        return it != row.end() && it->is_number() ? it->get<double>() : 0.0;
      };
      by_rank[r] = {bytes("free_at_init_bytes"), bytes("weights_bytes")};
      if (p->card_total_bytes == 0 && bytes("total_bytes") > 0) {
        p->card_total_bytes = static_cast<int64_t>(row["total_bytes"].get<double>());
      }
    }
    const int ranks = p->tp * p->pp;
    if (!by_rank.empty() && static_cast<int>(by_rank.size()) == ranks && by_rank.rbegin()->first == ranks - 1) {
      if (p->free_at_init_per_rank.empty() && by_rank.begin()->second.first > 0) {
        for (auto& [r, fw] : by_rank) p->free_at_init_per_rank.push_back(static_cast<int64_t>(fw.first));
      }
      if (p->weights_per_rank.empty() && by_rank.begin()->second.second > 0) {
        for (auto& [r, fw] : by_rank) p->weights_per_rank.push_back(static_cast<int64_t>(fw.second));
      }
    }
    if (p->free_at_init_bytes == 0 && !by_rank.empty()) p->free_at_init_bytes = static_cast<int64_t>(by_rank.begin()->second.first);
    if (p->weights_bytes == 0 && !by_rank.empty()) p->weights_bytes = static_cast<int64_t>(by_rank.begin()->second.second);
  }
  // A weights OOM's line: the process had (total - free) in use and asked for
  // `tried` more, so the weights reach at least that, less the context.
  const json figs = diag.value("figures", json::object());
  auto gib = [&figs](const char* k) { return figs.contains(k) && figs[k].is_number() ? figs[k].get<double>() : -1.0; };
  if (p->weights_bytes == 0 && p->weights_per_rank.empty() && StepOfRootCause(p->root_cause) == kStepWeights &&
      gib("total_gib") > 0 && gib("free_gib") >= 0 && gib("tried_gib") > 0) {
    const double in_use = (gib("total_gib") - gib("free_gib") + gib("tried_gib")) * double(kGiB);
    p->weights_bytes = std::max<int64_t>(kGiB, static_cast<int64_t>(in_use) - kContextAndNcclBytes);
    p->sources["weights_bytes"] = std::string(kFromLog) +
                                  ": the OOM line, in use + tried to allocate, less the context and NCCL (a lower bound)";
    if (p->card_total_bytes == 0) {
      p->card_total_bytes = static_cast<int64_t>(gib("total_gib") * double(kGiB));
      p->sources["card_total_bytes"] = std::string(kFromLog) + ": the OOM line's total capacity";
    }
  }
  // Remedy -> fix.
  if (p->fix.empty() && diag.contains("remedy") && diag["remedy"].is_array()) {
    for (const auto& r : diag["remedy"]) {
      const std::string param = ParamOfFlag(r.value("flag", ""));
      const std::string value = r.value("value", "");
      char* end = nullptr;
      const double d = std::strtod(value.c_str(), &end);
      if (!param.empty() && end != value.c_str() && *end == '\0') {
        p->fix[param] = d;
        break;
      }
    }
  }
  if (p->failed_step.empty()) p->failed_step = StepOfRootCause(p->root_cause);
  if (p->failure_message.empty() && diag.contains("evidence") && diag["evidence"].is_array() && !diag["evidence"].empty()) {
    p->failure_message = diag["evidence"][0].value("text", "");
  }
  return OkStatus();
}

StatusOr<Plan> PlanFromJsonImpl(const json& j, const std::string& name);

}  // namespace

// A field of the wrong type (a ledger row's "role" as a number, ...) made
// nlohmann::json throw out of repro (abort): it is a bad input like any other.
StatusOr<Plan> PlanFromJson(const json& j, const std::string& name) {
  try {
    return PlanFromJsonImpl(j, name);
  } catch (const json::exception& e) {
    return InvalidArgumentError(name + ": a field has the wrong type (" + e.what() +
                                "); pass analyze's JSON or a repro plan as they were written");
  }
}

namespace {

StatusOr<Plan> PlanFromJsonImpl(const json& j, const std::string& name) {
  Plan p;
  p.source = name;
  if (!j.is_object()) return InvalidArgumentError(name + ": expected a JSON object (analyze's JSON or a repro plan)");
  if (j.contains("diagnoses")) {
    if (!j["diagnoses"].is_array() || j["diagnoses"].empty()) {
      return InvalidArgumentError(name + ": the analysis has no diagnosis to reproduce (root_cause " +
                                  j.value("root_cause", std::string("?")) + "); pass a plan file or flags instead");
    }
    // The first cause with a plan; else the first diagnosis.
    const json* diag = &j["diagnoses"][0];
    for (const auto& d : j["diagnoses"]) {
      if (!d.value("consequence", false) && d.contains("repro") && d["repro"].is_object() && !d["repro"].empty()) {
        diag = &d;
        break;
      }
    }
    TPT_RETURN_IF_ERROR(ParseBarePlan(diag->value("repro", json::object()), name + " (diagnosis " +
                                      diag->value("id", std::string("?")) + ".repro)", &p));
    TPT_RETURN_IF_ERROR(CompleteFromAnalysis(j, *diag, name, &p));
  } else {
    TPT_RETURN_IF_ERROR(ParseBarePlan(j, name, &p));
    if (p.failed_step.empty()) p.failed_step = StepOfRootCause(p.root_cause);
    // A plan that names a KV size means it; 0 is not "unknown" (leave it out for that).
    if (j.contains("kv_bytes_per_token") && !j["kv_bytes_per_token"].is_null() && p.kv_bytes_per_token <= 0) {
      return InvalidArgumentError(name + ": $.kv_bytes_per_token must be > 0; got " + j["kv_bytes_per_token"].dump() +
                                  " (leave it out when the log printed no KV size)");
    }
  }
  // What the log did not print: from a dump, the GPU catalogue, the
  // server's default, or assumed and asked for (plan_figures.h).
  CompleteFigures(j.value("run", json::object()), j.contains("diagnoses"), &p);
  return p;
}

}  // namespace

StatusOr<Plan> LoadPlanFile(const std::string& path) {
  auto read = ReadSmallFile(path, 64u << 20, "a diagnosis or plan (analyze's --format json output or a plan)");
  if (!read.ok()) return read.status();
  const std::string& text = *read;
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    return InvalidArgumentError(path + ": not valid JSON; pass `tptriage analyze --format json` output or a plan "
                                       "(`tptriage plan --format json`), or LOG files");
  }
  return PlanFromJson(j, path);
}

Status ApplyOverrides(const Overrides& o, Plan* p) {
  // A flag's figure is the user's; what was assumed is assumed again from it.
  auto flag = [p](const char* key, const char* name) {
    p->sources[key] = std::string(kFromFlag) + ": " + name;
    p->asked.erase(std::remove_if(p->asked.begin(), p->asked.end(),
                                  [&](const std::string& a) { return a.rfind(std::string(name) + " ", 0) == 0; }),
                   p->asked.end());
  };
  if (o.card_total_bytes) flag("card_total_bytes", "--target-gpu-mem");
  if (o.free_at_init_bytes) flag("free_at_init_bytes", "--free-at-init");
  if (o.weights_bytes) flag("weights_bytes", "--weights");
  if (o.mem_fraction_static) flag("mem_fraction_static", "--mem-fraction-static");
  if (o.gpu_memory_utilization) flag("gpu_memory_utilization", "--gpu-memory-utilization");
  if (o.kv_bytes_per_token) flag("kv_bytes_per_token", "--kv-bytes-per-token");
  const bool reassume = o.card_total_bytes || o.free_at_init_bytes || o.weights_bytes || o.framework || o.tp;
  if (o.tp) p->tp = *o.tp;
  if (o.pp) p->pp = *o.pp;
  if (o.num_layers) p->num_layers = *o.num_layers;
  if (o.hidden_size) p->hidden_size = *o.hidden_size;
  if (o.mem_fraction_static) p->mem_fraction_static = *o.mem_fraction_static;
  if (o.gpu_memory_utilization) p->gpu_memory_utilization = *o.gpu_memory_utilization;
  if (o.card_total_bytes) p->card_total_bytes = *o.card_total_bytes;
  if (o.free_at_init_bytes) {
    p->free_at_init_bytes = *o.free_at_init_bytes;
    p->free_at_init_per_rank.clear();
  }
  if (o.weights_bytes) {
    p->weights_bytes = *o.weights_bytes;
    p->weights_per_rank.clear();
  }
  // The log's free-memory figures belong to its free at init and weights:
  // compared with a replay of other numbers they would show false gaps.
  if (o.free_at_init_bytes || o.weights_bytes) p->logged_free_after.clear();
  if (o.kv_bytes_per_token) {
    p->kv_bytes_per_token = *o.kv_bytes_per_token;
    p->kv_bytes_per_token_assumed = false;
  }
  if (o.custom_allreduce_max_bytes) p->custom_allreduce_max_bytes = *o.custom_allreduce_max_bytes;
  if (o.custom_allreduce) p->custom_allreduce = *o.custom_allreduce;
  if (o.cuda_graph_bs) p->cuda_graph_bs = *o.cuda_graph_bs;
  if (o.framework) p->framework = *o.framework;
  if (o.warmup_bytes) {
    p->warmup_bytes = *o.warmup_bytes;
    flag("warmup_bytes", "--warmup-bytes");
  }
  if (o.fix_value) {
    if (p->fix.empty()) {
      p->fix[p->framework == "vllm" ? "gpu_memory_utilization" : "mem_fraction_static"] = *o.fix_value;
    } else {
      p->fix.begin()->second = *o.fix_value;
    }
  }
  if (reassume) {
    auto assumed = [p](const char* key) {
      auto it = p->sources.find(key);
      return it != p->sources.end() && it->second.rfind(kFromAssumed, 0) == 0;
    };
    if (assumed("card_total_bytes")) p->card_total_bytes = 0, p->card_total_assumed = false;
    if (assumed("free_at_init_bytes")) p->free_at_init_bytes = 0;
    if (assumed("weights_bytes")) p->weights_bytes = 0;
    for (auto it = p->sources.begin(); it != p->sources.end();) {
      it = it->second.rfind(kFromAssumed, 0) == 0 && it->first != "kv_bytes_per_token" ? p->sources.erase(it) : std::next(it);
    }
    p->asked.clear();
    CompleteFigures(nlohmann::json::object(), true, p);
  }
  return OkStatus();
}

// Plan text quoted in a message: printable ASCII, cut short.
static std::string Printable(const std::string& s) {
  std::string out;
  for (char c : s.substr(0, 64)) out += (c >= 0x20 && c < 0x7f) ? c : '?';
  return s.size() > 64 ? out + "..." : out;
}

Status ValidatePlan(const Plan& p) {
  const std::string where = p.source.empty() ? "plan" : p.source;
  auto bad = [&](const std::string& what) { return InvalidArgumentError(where + ": " + what); };
  if (!HasKvFormula(p.framework) && p.failed_step != kStepWeights && p.failed_step != kStepWarmup) {
    return bad("framework is '" + p.framework + "'; repro knows the memory formulas of sglang, vllm, tgi, lmdeploy and "
               "trtllm (--framework); other servers are replayed only up to their weights (weights_oom) or warm-up");
  }
  if ((p.failed_step == kStepWarmup && p.warmup_bytes <= 0) || (p.root_cause == "warmup_oom" && p.failed_step.empty())) {
    return bad("the warm-up's allocation is unknown: the log prints no CUDA out-of-memory line with its size "
               "(--warmup-bytes)");
  }
  if (p.tp < 1 || p.tp > 64 || p.pp < 1 || p.pp > 64) return bad("tp and pp must be 1..64 (--tp, --pp)");
  const int ranks = p.tp * p.pp;
  if (!p.free_at_init_per_rank.empty() && static_cast<int>(p.free_at_init_per_rank.size()) != ranks) {
    return bad("free_at_init_per_rank has " + std::to_string(p.free_at_init_per_rank.size()) + " entries for " +
               std::to_string(ranks) + " ranks");
  }
  if (!p.weights_per_rank.empty() && static_cast<int>(p.weights_per_rank.size()) != ranks) {
    return bad("weights_per_rank has " + std::to_string(p.weights_per_rank.size()) + " entries for " +
               std::to_string(ranks) + " ranks");
  }
  if (p.card_total_bytes <= 0) return bad("the original card's memory is unknown (--target-gpu-mem 96GiB)");
  if (p.free_at_init_bytes <= 0 && p.free_at_init_per_rank.empty()) {
    return bad("free memory at init is unknown (--free-at-init 94GiB)");
  }
  for (int r = 0; r < ranks; ++r) {
    if (FreeAtInit(p, r) > p.card_total_bytes) {
      return bad("rank " + std::to_string(r) + " free at init (" + FormatBytes(FreeAtInit(p, r)) +
                 ") exceeds the card's total (" + FormatBytes(p.card_total_bytes) + ")");
    }
  }
  if (p.weights_bytes <= 0 && p.weights_per_rank.empty()) return bad("per-rank weight bytes are unknown (--weights 72.3GiB)");
  if (p.framework == "sglang" && !(p.mem_fraction_static > 0 && p.mem_fraction_static <= 1)) {
    return bad("mem_fraction_static must be in (0, 1] (--mem-fraction-static)");
  }
  if (p.framework == "vllm" && !(p.gpu_memory_utilization > 0 && p.gpu_memory_utilization <= 1)) {
    return bad("gpu_memory_utilization must be in (0, 1] (--gpu-memory-utilization)");
  }
  if (p.kv_bytes_per_token <= 0) return bad("KV bytes per token are unknown (--kv-bytes-per-token)");
  if (p.custom_allreduce && (p.custom_allreduce_max_bytes < 16 || p.custom_allreduce_max_bytes > 1024 * kMiB)) {
    return bad("custom_allreduce_max_bytes must be 16 B .. 1 GiB");
  }
  for (int bs : p.cuda_graph_bs) {
    if (bs < 1 || bs > 4096) return bad("cuda graph batch sizes must be 1..4096; got " + std::to_string(bs));
  }
  if (p.hidden_size < 8 || p.hidden_size > 65536 || p.hidden_size % 8 != 0) {
    return bad("hidden_size must be a multiple of 8 in 8..65536 (--hidden-size)");
  }
  if (p.num_layers < 1 || p.num_layers > 1024) return bad("num_layers must be 1..1024 (--layers)");
  static constexpr const char* kSteps[] = {kStepContext, kStepComm,      kStepCustomAr, kStepBallast, kStepFreeAtInit,
                                           kStepWeights, kStepWarmup,    kStepKvFormula, kStepKvPool,  kStepGraphs};
  if (!p.failed_step.empty() &&
      std::find(std::begin(kSteps), std::end(kSteps), p.failed_step) == std::end(kSteps)) {
    std::string known;
    for (const char* s : kSteps) known += (known.empty() ? "" : ", ") + std::string(s);
    return bad("failed_step '" + Printable(p.failed_step) + "' is not a start-up step repro replays (" + known + ")");
  }
  for (const auto& [k, v] : p.fix) {
    if (k == "mem_fraction_static" || k == "gpu_memory_utilization" || k == "cache_max_entry_count" ||
        k == "free_gpu_memory_fraction" || k == "cuda_memory_fraction") {
      if (!(v > 0 && v <= 1)) return bad("fix " + k + " must be in (0, 1]");
    } else if (k == "max_batch_prefill_tokens") {
      if (!(v >= 1 && v <= 1e9 && v == std::floor(v))) return bad("fix max_batch_prefill_tokens must be a whole number >= 1");
    } else if (k == "tp") {
      if (!(v >= 1 && v <= 64 && v == std::floor(v))) return bad("fix tp must be a whole number of ranks, 1..64");
    } else if (k == "max_total_tokens") {
      if (!(v >= 1 && v <= 1e12 && v == std::floor(v))) return bad("fix max_total_tokens must be a whole number >= 1");
    } else {
      // Unknown keys would leave the fix run equal to the failing one and
      // report "the fix fails" about a remedy never tried.
      return bad("fix key '" + Printable(k) +
                 "' is not a setting repro can change; use mem_fraction_static, gpu_memory_utilization, tp, "
                 "max_total_tokens, max_batch_prefill_tokens, cache_max_entry_count, free_gpu_memory_fraction or "
                 "cuda_memory_fraction");
    }
  }
  return OkStatus();
}

Plan WithFix(const Plan& plan) {
  Plan p = plan;
  for (const auto& [k, v] : plan.fix) {
    if (k == "mem_fraction_static") p.mem_fraction_static = v;
    if (k == "gpu_memory_utilization") p.gpu_memory_utilization = v;
    if (k == "tp") p.tp = static_cast<int>(v);
    if (k == "max_total_tokens") p.max_total_tokens = static_cast<int64_t>(v);
    if (k == "cache_max_entry_count") p.cache_max_entry_count = v;
    if (k == "free_gpu_memory_fraction") p.free_gpu_memory_fraction = v;
    if (k == "cuda_memory_fraction") p.cuda_memory_fraction = v;
    if (k == "max_batch_prefill_tokens" && p.prefill_tokens > 0) {
      // The warm-up's activations grow with its tokens (memory/tgi_model.cc).
      p.warmup_bytes = static_cast<int64_t>(std::llround(double(p.warmup_bytes) * v / double(p.prefill_tokens)));
      p.prefill_tokens = static_cast<int64_t>(v);
    }
  }
  p.fix.clear();
  return p;
}

json PlanToJson(const Plan& p) {
  json j = {{"framework", p.framework},
            {"version", p.version},
            {"root_cause", p.root_cause},
            {"gpu", p.gpu},
            {"tp", p.tp},
            {"pp", p.pp},
            {"card_total_bytes", p.card_total_bytes},
            {"free_at_init_bytes", p.free_at_init_bytes},
            {"weights_bytes", p.weights_bytes},
            {"mem_fraction_static", p.mem_fraction_static},
            {"gpu_memory_utilization", p.gpu_memory_utilization},
            {"kv_bytes_per_token", p.kv_bytes_per_token},
            {"kv_bytes_per_token_assumed", p.kv_bytes_per_token_assumed},
            {"max_total_tokens", p.max_total_tokens},
            {"context_length", p.context_length},
            {"custom_allreduce", p.custom_allreduce},
            {"custom_allreduce_max_bytes", p.custom_allreduce_max_bytes},
            {"cuda_graph_bs", p.cuda_graph_bs},
            {"hidden_size", p.hidden_size},
            {"num_layers", p.num_layers},
            {"warmup_bytes", p.warmup_bytes},
            {"prefill_tokens", p.prefill_tokens},
            {"cuda_memory_fraction", p.cuda_memory_fraction},
            {"cache_max_entry_count", p.cache_max_entry_count},
            {"free_gpu_memory_fraction", p.free_gpu_memory_fraction},
            {"kv_available_bytes", p.kv_available_bytes},
            {"block_tokens", p.block_tokens},
            {"failed_step", p.failed_step},
            {"failure_message", p.failure_message},
            {"logged_free_after", p.logged_free_after},
            {"fix", p.fix},
            {"asked", p.asked}};
  // Where each figure came from, as values (a key ending in _bytes holds bytes).
  j["sources"] = json::array();
  for (const auto& [k, v] : p.sources) j["sources"].push_back({{"figure", k}, {"source", v}});
  if (!p.free_at_init_per_rank.empty()) j["free_at_init_per_rank"] = p.free_at_init_per_rank;
  if (!p.weights_per_rank.empty()) j["weights_per_rank"] = p.weights_per_rank;
  return j;
}

std::string DescribePlan(const Plan& p) {
  std::ostringstream o;
  char line[256];
  o << "plan (" << (p.source.empty() ? "flags" : p.source) << ")\n";
  o << "  server        " << p.framework << (p.version.empty() ? "" : " " + p.version) << ", TP=" << p.tp
    << " PP=" << p.pp << (p.gpu.empty() ? "" : ", original card " + p.gpu) << "\n";
  o << "  card          total " << FormatBytes(p.card_total_bytes)
    << (p.card_total_assumed ? " (not in the log: free at init; SGLang's formula does not use it)" : "")
    << ", free at init "
    << FormatBytes(p.free_at_init_bytes);
  if (!p.free_at_init_per_rank.empty()) o << " (per rank given)";
  o << "\n  weights       " << FormatBytes(p.weights_bytes) << " per rank"
    << (p.weights_per_rank.empty() ? "" : " (per rank given)") << "\n";
  if (p.framework == "vllm") {
    std::snprintf(line, sizeof line, "  formula       vLLM: KV = total x gpu_memory_utilization (%.3f) - used\n",
                  p.gpu_memory_utilization);
  } else if (IsStartupServer(p.framework)) {
    std::snprintf(line, sizeof line, "  formula       %s\n", StartupFormula(p).c_str());
  } else {
    std::snprintf(line, sizeof line,
                  "  formula       SGLang: rest = available - free_at_init x (1 - mem_fraction_static %.3f)\n",
                  p.mem_fraction_static);
  }
  o << line;
  o << "  KV            " << p.kv_bytes_per_token << " B per token"
    << (p.kv_bytes_per_token_assumed ? " (assumed: the log prints no KV size; the verdict does not depend on it, "
                                       "the fix run's token count does; --kv-bytes-per-token)"
                                     : "")
    << (p.max_total_tokens > 0 ? ", max_total_tokens " + std::to_string(p.max_total_tokens) : "") << "\n";
  if (p.warmup_bytes > 0) {
    o << "  warm-up       " << FormatBytes(p.warmup_bytes)
      << (p.framework == "lmdeploy" ? " of run-time buffers after the cache" : " asked by the warm-up forward")
      << (p.prefill_tokens > 0 ? " (" + std::to_string(p.prefill_tokens) + " prefill tokens)" : "") << "\n";
  }
  o << "  custom AR     " << (p.custom_allreduce ? "on, buffers " + FormatBytes(p.custom_allreduce_max_bytes) : "off")
    << "\n";
  o << "  CUDA graphs   ";
  if (p.cuda_graph_bs.empty()) {
    o << "none";
  } else {
    for (size_t i = 0; i < p.cuda_graph_bs.size(); ++i) o << (i ? "," : "bs ") << p.cuda_graph_bs[i];
    o << " (" << p.num_layers << " layers, hidden " << p.hidden_size << ", bf16)";
  }
  o << "\n  the log says  "
    << (p.failed_step.empty() ? "no failure recorded" : "failed at " + p.failed_step + ": " + p.failure_message) << "\n";
  if (!p.fix.empty()) {
    o << "  fix to check  ";
    for (const auto& [k, v] : p.fix) o << k << "=" << v << " ";
    o << "\n";
  }
  if (!p.sources.empty()) {
    o << "  where each figure came from:\n";
    for (const auto& [k, v] : p.sources) {
      o << "    " << k << std::string(k.size() < 24 ? 24 - k.size() : 1, ' ') << v << "\n";
    }
  }
  if (!p.asked.empty()) {
    o << "  figures no input gave (assumed; pass the flag to set them):\n";
    for (const auto& a : p.asked) o << "    " << a << "\n";
  }
  return o.str();
}

}  // namespace tpt::repro
