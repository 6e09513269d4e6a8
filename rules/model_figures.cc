// model_figures.cc: `analyze --model` fills what the log does not print from the model's files.
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "rules/model_figures.h"

namespace tpt::memory {
namespace {

bool IsMemoryDiagnosis(const std::string& id) {
  return id == "kv_pool_no_room" || id == "kv_pool_too_small" || id == "weights_oom" ||
         id == "startup_free_memory_short" || id == "cuda_graph_capture_oom" || id == "kv_pool_exhausted";
}

double Num(const nlohmann::json& config, const char* key, double fallback) {
  auto it = config.find(key);
  if (it != config.end() && it->is_number()) return it->get<double>();
  return fallback;
}

std::string Str(const nlohmann::json& config, const char* key) {
  auto it = config.find(key);
  return it != config.end() && it->is_string() ? it->get<std::string>() : "";
}

// SGLang kv_pool_no_room: the rule's remedy is the floor (the founding case: 0.77 leaves
// about 1,300 tokens, a server that starts and cannot serve). With the model's KV bytes
// per token the value that holds one request of the context length comes first, checked
// by planning the pool again with it; the floor stays second, with the pool it leaves.
void AddUsefulFraction(Diagnosis& d, int64_t cell, int64_t context, const std::string& version) {
  auto num = [&](const char* k) -> std::optional<double> {
    auto it = d.figures.find(k);
    if (it != d.figures.end() && it->is_number()) return it->get<double>();
    return std::nullopt;
  };
  auto free_gib = num("free_at_init_gib"), avail_gib = num("avail_after_weights_gib");
  if (!free_gib || !avail_gib || *free_gib <= 0 || cell <= 0 || context <= 0) return;
  SglangKvInput kv;
  if (auto era = SglangEraForVersion(version.empty() ? "0.5.9" : version); era.ok()) kv.era = *era;
  kv.free_at_init_bytes = *free_gib * kGiB;
  kv.avail_after_weights_bytes = std::max(*avail_gib * kGiB, 0.0);
  kv.cell_bytes = cell;
  const double floor_f = SglangMinMemFraction(kv.free_at_init_bytes, kv.avail_after_weights_bytes);
  int64_t floor_tokens = 0;
  if (floor_f <= 1) {
    kv.mem_fraction_static = floor_f;
    if (auto r = SglangKvPool(kv); r.ok() && !r->fails) floor_tokens = r->max_total_num_tokens;
  }
  const double useful = SglangMinMemFraction(kv.free_at_init_bytes, kv.avail_after_weights_bytes, cell, context);
  char buf[400];
  std::vector<Remedy> front;
  // The value that serves without the model (SGLang's headroom, rules/defs
  // kv_pool_no_room_sglang.json) already holds the context: it stays the Fix.
  double serving = 0;
  if (auto s = num("serving_mem_fraction_static")) serving = *s;
  if (useful <= 0.99 && serving >= useful) {
    d.figures["mem_fraction_for_context"] = useful;
  } else if (useful <= 0.99) {
    kv.mem_fraction_static = useful;
    auto r = SglangKvPool(kv);
    if (!r.ok() || r->fails || r->max_total_num_tokens < context) return;  // the same model must agree
    d.figures["mem_fraction_for_context"] = useful;
    d.figures["kv_tokens_at_useful_fraction"] = r->max_total_num_tokens;
    std::snprintf(buf, sizeof(buf),
                  "holds one %lld-token request (the context length): a pool of %lld tokens at %lld B per token "
                  "(the model's config), checked with the same model; %.2f is only the floor",
                  static_cast<long long>(context), static_cast<long long>(r->max_total_num_tokens),
                  static_cast<long long>(cell), floor_f);
    Remedy rem;
    rem.flag = "--mem-fraction-static";
    char v[16];
    std::snprintf(v, sizeof(v), "%.2f", useful);
    rem.value = v;
    rem.direction = "increase";
    rem.why = buf;
    front.push_back(rem);
  } else {
    const double need = static_cast<double>(context) * static_cast<double>(cell);
    std::snprintf(buf, sizeof(buf),
                  "no --mem-fraction-static holds one %lld-token request: it needs %.2f GiB of KV per rank and the "
                  "weights leave %.2f GiB; more GPUs split the weights and the KV heads (or shorten --context-length)",
                  static_cast<long long>(context), need / kGiB, *avail_gib);
    Remedy rem;
    rem.flag = "--tp-size";
    rem.direction = "increase";
    rem.why = buf;
    front.push_back(rem);
  }
  if (floor_tokens > 0) {
    d.figures["kv_tokens_at_floor"] = floor_tokens;
    char floor_value[16];
    std::snprintf(floor_value, sizeof(floor_value), "%.2f", floor_f);
    for (auto& rem : d.remedy) {
      if (rem.flag != "--mem-fraction-static" || rem.value != floor_value) continue;
      std::snprintf(buf, sizeof(buf), "the floor: the server starts with a pool of only %lld tokens; ",
                    static_cast<long long>(floor_tokens));
      rem.why = buf + rem.why;
    }
  }
  d.remedy.insert(d.remedy.begin(), front.begin(), front.end());
}

}  // namespace

bool AddModelFigures(const ModelConfig& m, Analysis* a) {
  Finding f;
  f.id = "model_figures";
  f.severity = "info";
  f.title = "Figures from the model's config (--model)";
  const std::string fw = a->run.framework == "sglang" ? "sglang" : "vllm";
  const int tp = a->run.tp > 0 ? a->run.tp : 1, pp = a->run.pp > 0 ? a->run.pp : 1;
  const nlohmann::json& config = a->run.config;
  if (Status s = CheckTensorParallel(m, tp, fw); !s.ok()) {
    f.advice = "The model (" + DescribeModel(m) + ") does not match this run: " + s.message();
    a->findings.push_back(f);
    return false;
  }
  Sharding sh;
  sh.framework = fw;
  sh.tp = tp;
  sh.pp = pp;
  sh.dp = a->run.dp > 0 ? a->run.dp : 1;
  sh.ep = a->run.ep > 0 ? a->run.ep : 1;
  auto w = WeightsPerRank(m, sh);
  if (!w.ok()) return false;
  KvDims dims = KvDimsOf(m, pp);
  std::string kv_dtype = Str(config, "kv_cache_dtype");
  auto elem = KvDtypeBytes(kv_dtype.empty() ? "auto" : kv_dtype, m.dtype_bytes == 2 ? "bf16" : "fp32");
  dims.dtype_bytes = elem.ok() ? *elem : 2;
  StatusOr<int64_t> cell = InvalidArgumentError("");
  if (fw == "sglang") {
    auto era = SglangEraForVersion(a->run.version.empty() ? "0.5.9" : a->run.version);
    if (era.ok()) cell = SglangCellBytes(dims, tp, *era);
  } else {
    cell = VllmBytesPerToken(dims, tp);
  }
  int64_t context = static_cast<int64_t>(Num(config, "context_length", Num(config, "max_model_len", 0)));
  if (context <= 0) context = m.max_position;

  f.figures["model"] = DescribeModel(m);
  f.figures["model_weights_gib"] = w->per_rank_bytes / kGiB;
  if (cell.ok()) f.figures["model_kv_bytes_per_token"] = *cell;
  if (context > 0) f.figures["model_context_length"] = context;
  char buf[256];
  std::snprintf(buf, sizeof(buf), "At tp %d%s the model's weights take %.2f GiB per rank (%s)", tp,
                pp > 1 ? (" pp " + std::to_string(pp)).c_str() : "", w->per_rank_bytes / kGiB, w->source.c_str());
  f.advice = buf;
  if (cell.ok()) f.advice += " and a token of KV cache " + std::to_string(*cell) + " bytes per rank";
  if (context > 0) {
    std::snprintf(buf, sizeof(buf), "; one %lld-token request needs %.2f GiB of KV", static_cast<long long>(context),
                  cell.ok() ? static_cast<double>(context) * static_cast<double>(*cell) / kGiB : 0.0);
    if (cell.ok()) f.advice += buf;
  }
  f.advice += ".";
  // Against what the log printed.
  double logged = 0;
  for (const auto& row : a->ledger) {
    if (row.role == "target" && row.weights_bytes > logged) logged = row.weights_bytes;
  }
  if (logged > 0) {
    const double diff = logged / w->per_rank_bytes - 1;
    f.figures["logged_weights_gib"] = logged / kGiB;
    if (std::abs(diff) > 0.10) {
      std::snprintf(buf, sizeof(buf),
                    " The log's weights (%.2f GiB per rank) differ from the model's by %+.0f%%: a different checkpoint, "
                    "a quantization the config does not state, or another process allocating while it loaded.",
                    logged / kGiB, diff * 100);
      f.advice += buf;
    } else {
      std::snprintf(buf, sizeof(buf), " The log's %.2f GiB agrees (%+.1f%%).", logged / kGiB, diff * 100);
      f.advice += buf;
    }
  }
  for (auto& d : a->diagnoses) {
    if (!IsMemoryDiagnosis(d.id)) continue;
    if (!d.figures.contains("weights_gib") || d.figures["weights_gib"].is_null()) {
      d.figures["model_weights_gib"] = w->per_rank_bytes / kGiB;
    }
    if (cell.ok() && (!d.figures.contains("kv_bytes_per_token") || d.figures["kv_bytes_per_token"].is_null())) {
      d.figures["model_kv_bytes_per_token"] = *cell;
    }
    if (context > 0 && !d.figures.contains("max_seq_len")) d.figures["model_context_length"] = context;
    if (fw == "sglang" && d.id == "kv_pool_no_room" && cell.ok() && context > 0) {
      AddUsefulFraction(d, *cell, context, a->run.version);
    }
  }
  a->findings.push_back(f);
  return true;
}

}  // namespace tpt::memory
