// fix.cc: the fix, its effect and its floor (see fix.h).
#include "report/fix.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>

#include "report/common.h"
#include "memory/memory_model.h"

namespace tpt::report {

namespace {

std::optional<double> Number(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return std::nullopt;
  double v = it->get<double>();
  return std::isfinite(v) ? std::optional<double>(v) : std::nullopt;
}

std::optional<double> Parse(const std::string& s) {
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (s.empty() || end == s.c_str()) return std::nullopt;
  return v;
}

// A figure in bytes: the repro plan's, the figures' bytes, or their GiB.
std::optional<double> Bytes(const Diagnosis& d, const char* repro_key, const char* figure, const char* gib) {
  if (auto v = Number(d.repro, repro_key)) return v;
  if (auto v = Number(d.figures, figure)) return v;
  if (auto v = Number(d.figures, gib)) return *v * memory::kGiB;
  return std::nullopt;
}

// The context length the run was configured with (SGLang context_length,
// vLLM max_model_len); nullopt when it used the model's default.
std::optional<double> ConfiguredContext(const Analysis& a) {
  for (const char* k : {"context_length", "max_model_len"}) {
    if (auto v = Number(a.run.config, k); v && *v > 0) return v;
  }
  return std::nullopt;
}

void FillRequests(FixEffect* e) {
  if (KnownBytes(e->kv_tokens) && KnownBytes(e->context_length) && e->context_length > 0)
    e->requests = std::floor(std::max(0.0, e->kv_tokens) / e->context_length);
}

std::string Fraction(double f) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%.2f", f);
  return buf;
}

// "25,600"
std::string Count(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f", v);
  std::string s = buf, out;
  size_t digits = s.size() - (s[0] == '-' ? 1 : 0);
  for (size_t i = 0; i < s.size(); ++i) {
    out += s[i];
    size_t left = s.size() - i - 1;
    if (s[i] != '-' && left > 0 && left % 3 == 0 && digits > 3) out += ',';
  }
  return out;
}

// SGLang: what --mem-fraction-static `f` gives, by the memory model.
FixEffect SglangEffect(const Analysis& a, const Diagnosis& d, double f) {
  FixEffect e;
  auto free_init = Bytes(d, "free_at_init_bytes", "free_at_init", "free_at_init_gib");
  auto avail = Bytes(d, "avail_after_weights_bytes", "avail", "avail_after_weights_gib");
  if (!free_init || !avail) return e;
  SglangAt at;
  if (!SglangPoolAt(a, *free_init, *avail, f, &at)) return e;
  e.kv_pool_bytes = std::max(0.0, at.rest_bytes);
  // Bytes a token from the log's own pool line, else from --model's config.
  auto cell = Number(d.figures, "cell_bytes");
  if (!cell || !(*cell > 0)) cell = Number(d.figures, "model_kv_bytes_per_token");
  if (cell && *cell > 0) {
    memory::SglangKvInput in;
    if (auto era = memory::SglangEraForVersion(a.run.version); era.ok()) in.era = *era;
    in.free_at_init_bytes = *free_init;
    in.avail_after_weights_bytes = *avail;
    in.mem_fraction_static = f;
    in.cell_bytes = static_cast<int64_t>(*cell);
    if (auto r = memory::SglangKvPool(in); r.ok()) e.kv_tokens = static_cast<double>(std::max<int64_t>(0, r->max_total_num_tokens));
  }
  if (auto ctx = ConfiguredContext(a)) {
    e.context_length = *ctx;
  } else if (auto mctx = Number(d.figures, "model_context_length"); mctx && *mctx > 0) {
    e.context_length = *mctx;
  }
  FillRequests(&e);
  return e;
}

// vLLM --max-model-len N: the pool stays as logged; one request may now be N long.
FixEffect VllmMaxLenEffect(const Analysis& a, const Diagnosis& d, double n) {
  FixEffect e;
  double pool = kUnknownBytes;
  for (const LedgerRow& r : a.ledger) {
    if (KnownBytes(r.kv_pool_bytes) && r.kv_pool_bytes > 0 && !(pool <= r.kv_pool_bytes)) pool = r.kv_pool_bytes;
  }
  if (!KnownBytes(pool)) {
    if (auto g = Number(d.figures, "kv_cache_gib"); g && *g > 0) pool = *g * memory::kGiB;
  }
  e.kv_pool_bytes = pool;
  if (auto t = Number(d.figures, "kv_tokens")) {
    e.kv_tokens = *t;
  } else if (auto t = Number(d.figures, "estimated_max_len")) {
    e.kv_tokens = *t;  // vLLM's own estimate of the tokens its pool holds
  }
  e.context_length = n;
  FillRequests(&e);
  return e;
}

// vLLM --gpu-memory-utilization u: the budget u x total less what the run's
// own figures charge against it (weights, activations, non-torch), by the
// memory model's VllmKvPool.
FixEffect VllmUtilEffect(const Analysis& a, const Diagnosis& d, double u) {
  FixEffect e;
  auto total = Bytes(d, "total_bytes", "total", "total_gib");
  auto non_kv = Number(d.figures, "non_kv_gib");
  auto weights = Number(d.figures, "weights_gib");
  // Only when the run loaded its weights and profiled: before that the
  // charge is not known (a startup check fails before anything is charged).
  if (!total || !non_kv || !weights || !(*total > 0) || !(*weights > 0) || *non_kv < *weights) return e;
  memory::VllmKvInput in;
  if (auto era = memory::VllmEraForVersion(a.run.version); era.ok()) in.era = *era;
  in.total_bytes = *total;
  in.gpu_memory_utilization = u;
  in.non_torch_bytes = *non_kv * memory::kGiB;  // what the logged budget charged, as one sum
  auto bpt = Number(d.figures, "bytes_per_token");
  in.bytes_per_token = bpt && *bpt > 0 ? static_cast<int64_t>(*bpt) : 1;
  auto r = memory::VllmKvPool(in);
  if (!r.ok()) return e;
  e.kv_pool_bytes = std::max(0.0, r->kv_bytes);
  if (bpt && *bpt > 0) e.kv_tokens = static_cast<double>(r->kv_tokens);
  if (auto ctx = ConfiguredContext(a)) e.context_length = *ctx;
  FillRequests(&e);
  return e;
}

// "max_model_len" -> "--max-model-len" where the run is vLLM's LLM class (its config's
// vllm_entrypoint, rules/entrypoint.h); any other flag as it is.
std::string ServeFlagOf(const Analysis& a, const std::string& flag) {
  if (a.run.framework != "vllm" || flag.empty() || flag[0] == '-' || !a.run.config.is_object()) return flag;
  auto it = a.run.config.find("vllm_entrypoint");
  if (it == a.run.config.end() || *it != "llm") return flag;
  std::string out = "--" + flag;
  for (char& c : out) c = c == '_' ? '-' : c;
  return out;
}

FixEffect EffectOf(const Analysis& a, const Diagnosis& d, const std::string& flag, const std::string& value) {
  auto v = Parse(value);
  if (!v) return {};
  if (a.run.framework == "sglang" && flag == "--mem-fraction-static" && *v > 0 && *v <= 1)
    return SglangEffect(a, d, *v);
  if (a.run.framework == "vllm" && flag == "--max-model-len" && *v > 0) return VllmMaxLenEffect(a, d, *v);
  if (a.run.framework == "vllm" && flag == "--gpu-memory-utilization" && *v > 0 && *v <= 1)
    return VllmUtilEffect(a, d, *v);
  return {};
}

}  // namespace


bool SglangPoolAt(const Analysis& a, double free_at_init_bytes, double avail_after_weights_bytes, double f,
                  SglangAt* out) {
  if (!(free_at_init_bytes > 0) || !(avail_after_weights_bytes > 0) || !(f > 0 && f <= 1)) return false;
  memory::SglangKvInput in;
  if (auto era = memory::SglangEraForVersion(a.run.version); era.ok()) in.era = *era;
  in.free_at_init_bytes = free_at_init_bytes;
  in.avail_after_weights_bytes = avail_after_weights_bytes;
  in.mem_fraction_static = f;
  in.cell_bytes = 1;  // bytes, not tokens
  auto r = memory::SglangKvPool(in);
  if (!r.ok()) return false;
  out->reserved_bytes = r->reserved_bytes;
  out->rest_bytes = r->rest_bytes;
  return true;
}

FixView DescribeFix(const Analysis& a, const Diagnosis& d) {
  FixView v;
  Fix fix = FixOf(d);
  v.now = fix.now;
  if (fix.recommended == nullptr) {
    if (fix.advice != nullptr) {
      v.kind = FixView::kAdvice;
      const Remedy& r = *fix.advice;
      v.flag = r.flag;
      v.value = r.value;
      v.line = Advice(r);
      v.why = r.why;
      v.label = RemedyLabel(r);
    } else {
      v.kind = fix.refuted ? FixView::kRefuted : FixView::kNone;
      // No remedy is not a fix: what to do is read the evidence (issue #31: "Fix" only for fixes).
      if (v.kind == FixView::kNone) v.label = "Next step";
    }
    return v;
  }
  const Remedy& r = *fix.recommended;
  v.kind = FixView::kLine;
  v.label = RemedyLabel(r);
  v.flag = r.flag;
  v.value = r.value;
  v.line = RemedyCommand(r);
  if (v.line.empty()) {
    v.kind = FixView::kAdvice;  // no line to paste ("NCCL >= 2.19.3")
    v.line = Advice(r);
  }
  // A fix for vLLM's LLM(...) class names EngineArgs' field (rules/entrypoint.h):
  // its effect and the value in use are those of the serve flag of that field.
  const std::string flag = ServeFlagOf(a, r.flag);
  if (v.now.empty() && flag.size() > 2 && flag.compare(0, 2, "--") == 0) {
    // The value in use from the run's configuration when the figures lack it.
    std::string key = flag.substr(2);
    for (char& c : key) c = c == '-' ? '_' : c;
    if (auto now = Number(a.run.config, key.c_str())) {
      char buf[32];
      std::snprintf(buf, sizeof buf, *now == std::floor(*now) ? "%.0f" : "%.2f", *now);
      v.now = buf;
    }
  }
  v.why = r.why;
  v.effect = EffectOf(a, d, flag, r.value);
  if (fix.floor != nullptr) {
    v.floor = fix.floor->value;
    v.floor_why = fix.floor->why;
  } else if (a.run.framework == "sglang" && r.flag == "--mem-fraction-static") {
    // The smallest fraction with a positive pool, by the memory model.
    auto free_init = Bytes(d, "free_at_init_bytes", "free_at_init", "free_at_init_gib");
    auto avail = Bytes(d, "avail_after_weights_bytes", "avail", "avail_after_weights_gib");
    if (free_init && avail && *free_init > 0) {
      double f = memory::SglangMinMemFraction(*free_init, *avail);
      if (f > 0 && f <= 1) v.floor = Fraction(f);
    }
  }
  if (!v.floor.empty()) v.floor_effect = v.floor == v.value ? v.effect : EffectOf(a, d, flag, v.floor);
  return v;
}

std::string FixEffectText(const FixEffect& e) {
  std::string out;
  if (KnownBytes(e.kv_pool_bytes)) out = "KV pool " + FormatBytes(e.kv_pool_bytes) + " a rank";
  if (KnownBytes(e.kv_tokens)) {
    out += (out.empty() ? "" : ", ") + Count(e.kv_tokens) + " tokens";
    if (KnownBytes(e.requests)) {
      out += " = " + Count(e.requests) + " request" + (e.requests == 1 ? "" : "s") + " of " +
             Count(e.context_length) + " tokens";
    }
  } else if (!out.empty()) {
    out += " (tokens unknown: add --model with the model's config.json for them)";
  }
  return out;
}

std::string FixSentence(const FixView& v, const Render& code, const Render& prose) {
  switch (v.kind) {
    case FixView::kNone: return "read the evidence lines below: no remedy is known for this cause, and they say where to look";
    case FixView::kRefuted: return "unknown: the remedy the rule computed contradicts the value in use; see the ledger";
    case FixView::kAdvice: return prose(v.line) + (v.why.empty() ? "" : ": " + prose(v.why));
    case FixView::kLine: break;
  }
  // "--mem-fraction-static 0.80 (now 0.50, floor 0.77) gives KV pool ...; at the floor: ...: why"
  std::string out = code(v.line);
  std::string paren;
  if (!v.now.empty()) paren = "now " + code(v.now);
  if (!v.floor.empty()) paren += (paren.empty() ? "" : ", ") + (v.floor == v.value ? std::string("the floor") : "floor " + code(v.floor));
  if (!paren.empty()) out += " (" + paren + ")";
  std::string effect = FixEffectText(v.effect);
  if (!effect.empty()) out += " gives " + prose(effect);
  if (!v.floor.empty() && v.floor != v.value) {
    std::string fe = FixEffectText(v.floor_effect);
    if (!fe.empty()) {
      out += "; the floor gives " + prose(fe);
    } else if (!v.floor_why.empty()) {
      out += "; floor: " + prose(v.floor_why);
    }
  }
  if (!v.why.empty()) out += ": " + prose(v.why);
  return out;
}

namespace {

nlohmann::json EffectJson(const FixEffect& e) {
  auto n = [](double x) { return KnownBytes(x) ? nlohmann::json(std::llround(x)) : nlohmann::json(nullptr); };
  return {{"kv_pool_bytes", n(e.kv_pool_bytes)},
          {"kv_tokens", n(e.kv_tokens)},
          {"context_length", n(e.context_length)},
          {"requests", n(e.requests)}};
}

}  // namespace

nlohmann::json FixJson(const FixView& v) {
  static const char* kKinds[] = {"line", "advice", "refuted", "none"};
  nlohmann::json j = {{"kind", kKinds[v.kind]}, {"line", v.line}, {"flag", v.flag},   {"value", v.value},
                      {"now", v.now},           {"why", v.why},   {"effect", EffectJson(v.effect)},
                      {"label", v.label}};
  if (v.floor.empty()) {
    j["floor"] = nullptr;
  } else {
    j["floor"] = {{"value", v.floor}, {"why", v.floor_why}, {"effect", EffectJson(v.floor_effect)}};
  }
  return j;
}

}  // namespace tpt::report
