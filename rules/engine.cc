// engine.cc: run the rules over one run's events and rank what they find.
#include "rules/engine.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include <re2/re2.h>

#include "rules/evidence_read.h"
#include "rules/ledger_from_events.h"
#include "rules/line_source.h"
#include "base/strings.h"
#include "rules/memory_calls.h"
#include "rules/prose.h"
#include "memory/server_flags.h"
#include "rules/run_index.h"
#include "rules/terminal.h"
#include "rules/vocabulary.h"

namespace tpt {

namespace {

struct Fired {
  const Rule* rule = nullptr;
  size_t rule_order = 0;
  size_t anchor = 0;
  std::map<std::string, Value> vars;  // lets, model outputs, after-lets
};

// Evaluates `rule` with `anchor` bound; the rule's names on success.
std::optional<std::map<std::string, Value>> Evaluate(const Rule& rule, const RunIndex& run, size_t anchor) {
  RunScope s(run, anchor);
  if (!EvaluateBody(rule, &s)) return std::nullopt;
  return s.vars();
}

Evidence ToEvidence(const Event& e) {
  Evidence ev;
  ev.file = e.file;
  ev.line = e.line;
  ev.rank = e.rank;
  ev.text = EvidenceText(e.text);  // whole: long dumps are shortened for display only (report/evidence.h)
  // An exception event's own line is its last line; the message is what matters.
  return ev;
}

double RoundFigure(double x) { return std::round(x * 1e4) / 1e4; }

nlohmann::json ValueToJson(const Value& v) {
  if (v.is_number()) return RoundFigure(v.number());
  if (v.is_bool()) return v.boolean();
  if (v.is_string()) return v.str();
  return nullptr;
}

// A scope holding only a finished rule's names, for templates.
class NamesScope : public Scope {
 public:
  NamesScope(const RunIndex& run, size_t anchor, const std::map<std::string, Value>& vars) : inner_(run, anchor) {
    for (const auto& [k, v] : vars) inner_.Set(k, v);
  }
  Value Lookup(std::string_view n) const override { return inner_.Lookup(n); }
  Value Call(std::string_view n, const std::vector<Value>& a) const override { return inner_.Call(n, a); }
  const Scope& scope() const { return *this; }

 private:
  RunScope inner_;
};

// The startup phase a line of this kind belongs to (parser/events.json), or null.
const char* PhaseOf(const std::string& kind) {
  const EventKind* k = FindEventKind(kind);
  return k == nullptr || k->phase.empty() ? nullptr : k->phase.c_str();
}

// What a line means on a rank's time axis: "timeout", "error", "warning", or
// "" (not marked).
std::string MarkType(const Event& e) {
  if (e.kind.find("timeout") != std::string::npos || e.kind == "hang_warning") return "timeout";
  if (e.kind == "nccl_warn" || e.kind.find("warn") != std::string::npos) return "warning";
  if (!e.consequence && IsFailureKind(e.kind)) return "error";
  return "";
}

// Keeps the rank's last line, the first line of each phase and its first
// kMaxRankMarks warnings and errors, each with its time, for the reports'
// time axis (report/html.cc) and per-rank timeline (report/text.cc).
// `source`: what printed a rank-less line (rules/line_source.h), else null;
// the rank-less lines keep a phase's first line per source (each TGI shard's
// "Shard ready"), a rank its first line of each phase.
void AddMark(const Event& e, RankState* st, const LineSource* source) {
  st->last_evidence = ToEvidence(e);
  if (e.ts) {
    st->last_line_ts = *e.ts;
    st->last_line_time_of_day = e.ts_is_time_of_day;
  }
  RankMark m;
  if (e.ts) {
    m.ts = *e.ts;
    m.time_of_day = e.ts_is_time_of_day;
  }
  const char* ph = PhaseOf(e.kind);
  // A rank-less source's first line starts its lane, unless it is an error line
  // (TGI's router first speaks to report the warm-up's failure). Rank-less
  // phase marks stop at kMaxRanklessPhaseMarks (a log naming a new pid a line).
  constexpr size_t kMaxRanklessPhaseMarks = 96;
  bool room = source == nullptr || st->marks.size() < kMaxRanklessPhaseMarks;
  auto first_line = [&] {
    return source == nullptr ? st->marks.empty()
                             : room && e.kind != "error_line" &&
                                   std::none_of(st->marks.begin(), st->marks.end(), [&](const RankMark& x) {
                                     return x.source.label == source->label;
                                   });
  };
  if (ph == nullptr && MarkType(e).empty() && first_line()) ph = "init";  // the rank's (a rank-less source's) first line
  bool new_phase = ph != nullptr && room && std::none_of(st->marks.begin(), st->marks.end(), [&](const RankMark& x) {
                     return x.type == "phase" && x.label == ph && (source == nullptr || x.source.label == source->label);
                   });
  if (new_phase) {
    m.type = "phase";
    m.label = ph;
  } else {
    m.type = MarkType(e);
    if (m.type.empty()) return;
    size_t kept = std::count_if(st->marks.begin(), st->marks.end(), [](const RankMark& x) { return x.type != "phase"; });
    if (kept >= kMaxRankMarks) return;
    m.label = e.kind;
  }
  m.evidence = ToEvidence(e);
  if (source != nullptr) m.source = *source;
  st->marks.push_back(std::move(m));
}

// A ranked run's rank-less line of a phase (TensorRT-LLM's C++ runtime sizing
// the KV cache, untagged): a phase mark of the rank-less state, the first line
// of each phase, and nothing else of it (not its phases, events or last line).
// The reports place the rank-less failures after it in that phase.
void AddRanklessPhase(const Event& e, const LineSource& source, std::vector<RankMark>* marks) {
  const char* ph = PhaseOf(e.kind);
  if (ph == nullptr) return;
  RankMark m;
  if (e.ts) {
    m.ts = *e.ts;
    m.time_of_day = e.ts_is_time_of_day;
  }
  m.type = "phase";
  m.label = ph;
  m.evidence = ToEvidence(e);
  m.source = source;
  marks->push_back(std::move(m));
}

std::vector<RankState> BuildRanks(const RunIndex& run, bool several_inputs) {
  std::map<int, RankState> ranks;
  LineSources sources({run.framework(), several_inputs, !run.ranks().empty()});  // what printed each rank-less line
  std::vector<RankMark> rankless_phases;                 // a ranked run's, until its rank-less state starts
  const Event* previous = nullptr;
  for (const Event& e : run.events()) {
    if (previous != nullptr) sources.Saw(*previous);
    previous = &e;
    int r = e.rank;
    if (r < 0 && !run.ranks().empty() && !IsOwnFailure(e)) {  // rank-less lines of a ranked run
      if (const char* ph = PhaseOf(e.kind)) {  // its first line of each phase (what printed it: asked only then)
        auto it = ranks.find(-1);
        std::vector<RankMark>* marks = it != ranks.end() ? &it->second.marks : &rankless_phases;
        if (std::none_of(marks->begin(), marks->end(), [&](const RankMark& x) { return x.type == "phase" && x.label == ph; }))
          AddRanklessPhase(e, sources.Of(e), marks);
      }
      continue;
    }
    bool fresh = !ranks.count(r);
    RankState& st = ranks[r];
    if (fresh && r < 0) st.marks = std::move(rankless_phases);  // the phase lines before its first line
    st.rank = r;
    if (st.host.empty()) st.host = e.host;
    ++st.events;
    if (st.phases.empty()) st.phases.push_back("init");
    if (const char* ph = PhaseOf(e.kind); ph && std::find(st.phases.begin(), st.phases.end(), ph) == st.phases.end())
      st.phases.push_back(ph);
    if (e.ts && !e.ts_is_time_of_day) {
      if (st.first_ts == 0) st.first_ts = *e.ts;
      st.last_ts = *e.ts;
    }
    const LineSource* source = r < 0 ? &sources.Of(e) : nullptr;
    if (source != nullptr) st.last_source = *source;
    if (st.first_error.empty() && IsOwnFailure(e)) {
      st.first_error = e.kind;
      st.first_error_evidence = ToEvidence(e);
      if (source != nullptr) st.first_error_source = *source;
      if (e.ts && !e.ts_is_time_of_day) st.first_error_ts = *e.ts;
    }
    AddMark(e, &st, source);
  }
  std::vector<RankState> out;
  for (auto& [r, st] : ranks) {
    st.events += run.DroppedOfRank(r);  // events not kept in memory (parser.h ParsedRun)
    st.last_phase = st.phases.empty() ? "" : st.phases.back();
    if (r < 0 && !run.ranks().empty()) st.role = "launcher";
    out.push_back(std::move(st));
  }
  return out;
}

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

// A remedy that "increases" a flag must point above the value the run used
// (and "decrease" below it): --mem-fraction-static 0.85 (increase) when 0.88
// ran is refuted by the log itself. False for such a remedy; true when the
// flag's value in use is not printed or the value is not a number.
bool PointsPastValueInUse(const RunIndex& run, const Remedy& r) {
  if (r.direction != "increase" && r.direction != "decrease") return true;
  if (r.flag.rfind("--", 0) != 0) return true;
  std::string key = r.flag.substr(2);
  std::replace(key.begin(), key.end(), '-', '_');
  if (!run.config().contains(key)) return true;
  Value used = JsonToValue(run.config()[key]);
  char* end = nullptr;
  double want = std::strtod(r.value.c_str(), &end);
  if (!used.is_number() || r.value.empty() || end == r.value.c_str() || *end != '\0') return true;
  return r.direction == "increase" ? want > used.number() : want < used.number();
}

// Positive evidence of a run that got somewhere: a startup phase reached
// (engine.cc PhaseOf), or a line that only a running job prints (its
// configuration, an NCCL communicator set up, a rank assigned, a clean exit).
// A warning, an environment variable or a GPU name alone is not a run. Without
// it "no failure seen" is no evidence, not health (README.md, /etc/services,
// a metadata.json, random text, a results table naming an NCCL WARN).
bool GotSomewhere(const RunIndex& run) {
  for (const Event& e : run.events()) {
    const EventKind* k = FindEventKind(e.kind);  // parser/events.json phase / running
    if (PhaseOf(e.kind) != nullptr || (k != nullptr && k->running)) return true;
  }
  return false;
}

// A healthy run whose server stopped in order (parser/events.json
// server_stopped: uvicorn's "Shutting down" after SIGTERM or SIGINT) was
// stopped from outside: said with the line, since "why did it stop" is the
// question a user brings such a log with and the log cannot answer it.
std::string StoppedInOrder(const RunIndex& run) {
  const auto& stops = run.OfKind("server_stopped");
  if (stops.empty()) return "";
  const Event& e = run.events()[stops.front()];
  return "; the server stopped in order at " + e.file + ":" + std::to_string(e.line) +
         " (uvicorn's shutdown: it was asked to stop by SIGTERM or SIGINT: an orchestrator, `docker stop`, "
         "systemd, Ctrl-C, or its parent exiting). The log does not say who: if it was not you, look there "
         "(kubectl describe pod: Killing, liveness probe failed, OOMKilled; docker inspect .State; journalctl)";
}

Value CallBuiltinOr(const Scope& s, std::string_view name, const std::vector<Value>& args) {
  Value out;
  if (CallBuiltin(name, args, &out)) return out;
  return s.Call(name, args);
}

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

}  // namespace

Analysis Analyze(const std::vector<Event>& events, const RuleSet& rules, const AnalyzeOptions& options) {
  RunIndex run(events, options.totals);
  return Analyze(run, rules, options);
}

Analysis Analyze(const RunIndex& run, const RuleSet& rules, const AnalyzeOptions& options) {
  const std::vector<Event>& events = run.events();
  Analysis a;
  a.warnings = options.warnings;
  a.run.framework = run.framework();
  a.run.version = run.version();
  a.run.tp = run.ConfigInt("tp_size");
  a.run.pp = run.ConfigInt("pp_size");
  a.run.dp = run.ConfigInt("dp_size");
  a.run.ep = run.ConfigInt("ep_size");
  a.run.gpu = run.gpu();
  a.run.config = run.config();
  a.run.inputs = options.inputs;
  a.ranks = BuildRanks(run, a.run.inputs.size() > 1);
  a.ledger = BuildLedger(run);

  // What ended the run (rules/terminal.h), for picking anchors and ranking.
  const Terminals& term = run.Cached<Terminals>("terminals", [&] { return Terminals(run); });
  // Try every rule on its anchors, earliest first.
  std::vector<Fired> fired;
  for (size_t ri = 0; ri < rules.rules().size(); ++ri) {
    const Rule& rule = rules.rules()[ri];
    bool ok = true;
    for (const auto& k : rule.requires_kinds)
      if (run.OfKind(k).empty()) ok = false;
    if (!ok) continue;
    std::vector<size_t> anchors;
    for (const auto& k : rule.anchor_kinds) {
      const auto& idx = run.OfKind(k);
      anchors.insert(anchors.end(), idx.begin(), idx.end());
    }
    std::sort(anchors.begin(), anchors.end());
    if (anchors.size() > options.max_anchors_per_rule) anchors.resize(options.max_anchors_per_rule);
    // The first anchor that holds and is linked to what ended the run (a
    // warning the run went on after gives way to the same error that ended
    // it, later); else the first that holds.
    std::optional<Fired> unlinked;
    for (size_t anchor : anchors) {
      auto vars = Evaluate(rule, run, anchor);
      if (!vars) continue;
      if (!term.any() || term.Linked(anchor)) {
        fired.push_back({&rule, ri, anchor, std::move(*vars)});
        unlinked.reset();
        break;
      }
      if (!unlinked) unlinked = Fired{&rule, ri, anchor, std::move(*vars)};
    }
    if (unlinked) fired.push_back(std::move(*unlinked));
  }
  // Two events from one line (an NVLS WARN is also an NCCL error) are one
  // moment: the more specific rule (higher priority) explains it.
  auto same_line = [&](size_t a, size_t b) {
    return events[a].source == events[b].source && events[a].line == events[b].line;
  };
  std::stable_sort(fired.begin(), fired.end(), [&](const Fired& x, const Fired& y) {
    if (x.rule->tier != y.rule->tier) return x.rule->tier < y.rule->tier;
    if (x.anchor != y.anchor && !same_line(x.anchor, y.anchor)) return x.anchor < y.anchor;
    if (x.rule->priority != y.rule->priority) return x.rule->priority > y.rule->priority;
    return x.rule_order < y.rule_order;
  });

  std::set<std::string> seen_ids;
  std::map<std::string, size_t> anchor_of;  // diagnosis id -> its anchor event
  for (const Fired& f : fired) {
    if (!seen_ids.insert(f.rule->root_cause).second) continue;  // one diagnosis per root cause
    const Rule& rule = *f.rule;
    NamesScope scope(run, f.anchor, f.vars);
    Diagnosis d;
    d.id = rule.root_cause;
    d.rule = rule.id;
    d.confidence = rule.confidence;
    for (const auto& [when, value] : rule.confidences) {
      if (!when || when->Eval(scope).Truthy()) {
        d.confidence = value;
        break;
      }
    }
    d.title = rule.title;
    d.explanation = FillTemplate(rule.explanation, scope);
    for (const auto& [when, text] : rule.explanations) {
      if (!when || when->Eval(scope).Truthy()) {
        d.explanation = FillTemplate(text, scope);
        break;
      }
    }
    d.consequence = rule.tier == Tier::kConsequence;
    const Event& anchor = events[f.anchor];
    // The error named inside a person's sentence (rules/prose.h), not a line
    // the run printed: a report of it, at most a possibility.
    if (anchor.Get(kProseMention).boolean()) {
      d.confidence = std::min(d.confidence, kProseMentionConfidence);
      d.explanation += " (named in the report's own words at " + anchor.file + ":" +
                       std::to_string(anchor.line) + ", not in a line the run printed: the lines pasted with it do not show it)";
    }
    // A rule that names a suspect (`suspect_rank`) blames it, or no rank when it
    // cannot tell; otherwise the rank that printed the anchor.
    d.rank = anchor.rank;
    if (auto it = f.vars.find("suspect_rank"); it != f.vars.end())
      d.rank = it->second.is_number() && it->second.number() >= 0 ? static_cast<int>(it->second.number()) : -1;
    d.evidence.push_back(ToEvidence(anchor));
    std::set<size_t> quoted = {f.anchor};
    RunScope rank_scope(run, f.anchor);
    for (const EvidenceDef& ev : rule.evidence) {
      // The nearest such line before the anchor on its rank, else the first anywhere.
      // A suspect's own line (a figure of the rank it blames) comes first.
      const std::string& k = ev.kind;
      std::optional<size_t> pick, suspects, any;
      int who = d.rank >= 0 ? d.rank : anchor.rank;
      for (size_t i : run.OfKind(k)) {
        const Event& e = events[i];
        if (!ev.contains.empty() && Lower(FullText(e)).find(Lower(ev.contains)) == std::string::npos) continue;
        if (!any) any = i;
        bool same = who < 0 || e.rank < 0 || e.rank == who;
        if (same && i < f.anchor) pick = i;
        if (!suspects && who >= 0 && e.rank == who) suspects = i;
      }
      if (!pick) pick = suspects;
      if (!pick) pick = any;
      if (pick && quoted.insert(*pick).second) d.evidence.push_back(ToEvidence(events[*pick]));
    }
    // The same error on other ranks (one line each), so the reader sees how many died.
    std::set<int> ranks_quoted = {anchor.rank};
    for (size_t i : run.OfKind(anchor.kind)) {
      if (ranks_quoted.size() >= 8) break;
      if (events[i].rank >= 0 && ranks_quoted.insert(events[i].rank).second) d.evidence.push_back(ToEvidence(events[i]));
    }
    for (const auto& [k, v] : f.vars) {
      if (k.empty() || k[0] == '_' || v.is_null()) continue;
      bool bytes = k.size() > 6 && k.compare(k.size() - 6, 6, "_bytes") == 0 && v.is_number();
      d.figures[k] = bytes ? nlohmann::json(static_cast<int64_t>(std::llround(v.number()))) : ValueToJson(v);
    }
    for (const auto& ro : rule.ruled_out) {
      if (ro.when && !ro.when->Eval(scope).Truthy()) continue;
      d.ruled_out.push_back({ro.id, FillTemplate(ro.reason, scope)});
    }
    for (const auto& rem : rule.remedy) {
      if (rem.when && !rem.when->Eval(scope).Truthy()) continue;
      Remedy r{rem.flag, FillTemplate(rem.value, scope), rem.direction, FillTemplate(rem.why, scope),
               FillTemplate(rem.command, scope)};
      r.kind = rem.kind;
      if (!PointsPastValueInUse(run, r)) continue;
      // Worded for the run's server: TGI's --num-shard, not vLLM's --tensor-parallel-size;
      // none where that server has no flag for the knob (memory/server_flags.h).
      if (memory::SpellForServer(run.framework(), &r.flag, &r.value) == memory::Spelling::kNoSuchFlag) continue;
      d.remedy.push_back(std::move(r));
    }
    // A suspect other than the anchor's rank: quote its own last line before the
    // anchor, so the reader sees what it was doing when the others waited.
    bool suspect_quoted = false;
    for (const Evidence& ev : d.evidence) suspect_quoted |= ev.rank == d.rank;
    if (d.rank >= 0 && d.rank != anchor.rank && !suspect_quoted) {
      std::optional<size_t> last;
      for (size_t i = 0; i < events.size() && (i < f.anchor || !last); ++i)
        if (events[i].rank == d.rank) last = i;
      if (last && quoted.insert(*last).second) d.evidence.insert(d.evidence.begin() + 1, ToEvidence(events[*last]));
    }
    NoteFieldsRead(rule, events, &d);
    d.repro = BuildRepro(run, d);
    anchor_of[d.id] = f.anchor;
    a.diagnoses.push_back(std::move(d));
  }

  // A line its producer went on after is no cause of a later failure without
  // a link the vocabulary names: a finding. With nothing ended (a hang, a cut
  // log) a warning the run went on after is one, and so is a start-up error
  // (a failure line, not a figure such as the pool's size) after which its
  // producer went on to serve (answered requests, printed statistics): the
  // run outlived it. An error after which the run only
  // reached a later start-up phase stands (a hang or a cut log may follow
  // from it), and so does a request's error while serving (the server keeps
  // failing such requests: a pool too small for the context length).
  for (auto it = a.diagnoses.begin(); it != a.diagnoses.end();) {
    auto at = anchor_of.find(it->id);
    size_t anchor = at == anchor_of.end() ? 0 : at->second;
    bool survived = at != anchor_of.end() && term.Survived(anchor);
    bool unlinked = term.any() ? at != anchor_of.end() && !term.Linked(anchor)
                               : survived && (WarningLine(events, anchor) ||
                                             (term.ServedAfterStartup(anchor) &&
                                              (IsOwnFailure(events[anchor]) || SaysError(events, anchor))));
    if (!unlinked) {
      if (auto end = at == anchor_of.end() ? std::nullopt : term.EndOf(anchor)) it->explains = ToEvidence(events[*end]);
      ++it;
      continue;
    }
    Finding f;
    f.id = it->rule;
    f.severity = "warning";
    f.title = it->title + (WarningLine(events, anchor) ? " (a warning: the run went on after it, so not the cause of anything)"
                                                       : " (its process went on after it, so it is not what ended the run)");
    f.evidence = it->evidence;
    f.figures = it->figures;
    f.advice = it->explanation;
    a.findings.push_back(std::move(f));
    it = a.diagnoses.erase(it);
  }

  // Cause before surface (rules/taxonomy.json `outranks`): of two adjacent
  // root causes read from one run, the cause leads (an illegal address before
  // the graph capture it broke, a platform without P2P before the custom
  // all-reduce that needed it). A surface read by the rule written
  // for its being the cause (taxonomy `unless_rule`) keeps its place.
  auto outranks = [](const Diagnosis& x, const Diagnosis& y) {
    const RootCause* rc = FindRootCause(x.id);
    return rc != nullptr && std::any_of(rc->outranks.begin(), rc->outranks.end(), [&](const Outranks& o) {
             return o.id == y.id && (o.unless_rule.empty() || o.unless_rule != y.rule);
           });
  };
  for (size_t i = 0; i < a.diagnoses.size(); ++i) {
    for (size_t j = i + 1; j < a.diagnoses.size(); ++j) {
      if (!outranks(a.diagnoses[j], a.diagnoses[i]) || outranks(a.diagnoses[i], a.diagnoses[j])) continue;
      Diagnosis moved = std::move(a.diagnoses[j]);
      a.diagnoses.erase(a.diagnoses.begin() + j);
      a.diagnoses.insert(a.diagnoses.begin() + i, std::move(moved));
      j = i;  // look again from the new leader
    }
  }

  // A cause the primary diagnosis rules out with its own figures is not shown
  // beside it (startup_free_memory_short: "not kv_pool_no_room, the pool fits").
  if (!a.diagnoses.empty()) {
    std::set<std::string> refuted;
    for (const RuledOut& r : a.diagnoses.front().ruled_out) refuted.insert(r.id);
    a.diagnoses.erase(std::remove_if(a.diagnoses.begin() + 1, a.diagnoses.end(),
                                     [&](const Diagnosis& d) { return refuted.count(d.id) > 0; }),
                      a.diagnoses.end());
  }

  // A failure seen, for "unknown" rather than healthy: an own failure that is
  // no request's error the server answered and went on after, no Ctrl-C, no
  // warning the run survived and no start-up error it went on to serve after;
  // else a line that says ERROR after which its producer made no progress;
  // else a launcher's consequence line.
  std::optional<size_t> first_failure;
  for (size_t i = 0; i < events.size(); ++i) {
    bool survived_exception = events[i].kind == "exception" && term.Survived(i);
    if (IsOwnFailure(events[i]) && !survived_exception && !IgnorableException(run, i) &&
        !(WarningLine(events, i) && term.Survived(i)) && !term.ServedAfterStartup(i)) {
      first_failure = i;
      break;
    }
  }
  // Lines that say "error" which no rule reads and after which their
  // producer made no progress: quoted when nothing else explains the run.
  std::vector<size_t> error_lines;
  for (size_t i = 0; i < events.size() && error_lines.size() < 8; ++i) {
    if (!SaysError(events, i) || term.Survived(i)) continue;
    if (!error_lines.empty() && events[error_lines.back()].source == events[i].source &&
        events[error_lines.back()].line == events[i].line)
      continue;  // one line, two patterns
    error_lines.push_back(i);
  }
  if (!first_failure && !error_lines.empty()) first_failure = error_lines.front();
  if (!first_failure) {
    for (size_t i = 0; i < events.size(); ++i)
      if (events[i].consequence) {
        first_failure = i;
        break;
      }
  }
  // No rule explains it: quote what ended the run (its first terminal failure
  // that names an error), never another line.
  if (auto primary = term.Primary(); primary && a.diagnoses.empty()) first_failure = primary;

  if (!a.diagnoses.empty()) {
    const Diagnosis& d = a.diagnoses.front();
    a.root_cause = d.id;
    std::string where;
    if (d.rank >= 0) {
      // Ranks only: the launcher's lines (rank -1) are not a rank.
      where = " (rank " + std::to_string(d.rank);
      size_t failed = 0, ranks = 0;
      for (const auto& rs : a.ranks) {
        if (rs.rank < 0) continue;
        ++ranks;
        if (!rs.first_error.empty()) ++failed;
      }
      size_t world = std::max(ranks, static_cast<size_t>(run.WorldSize()));
      if (failed > 1) where += ", " + std::to_string(failed) + " of " + std::to_string(world) + " ranks failed";
      where += ")";
    }
    a.verdict = d.id + where + ": " + d.explanation;
    // Below kSureEnough the reading is a possibility, and the next reading is named.
    if (d.confidence < kSureEnough) {
      a.verdict = "Possible: " + a.verdict;
      if (a.diagnoses.size() > 1) a.verdict += " (runner-up: " + a.diagnoses[1].id + ")";
    }
  } else if (first_failure) {
    const Event& e = events[*first_failure];
    a.root_cause = "unknown";
    a.verdict = "unknown: a failure was seen but no rule explains it: " + e.kind +
                (e.rank >= 0 ? " on rank " + std::to_string(e.rank) : std::string()) + " at " + e.file + ":" +
                std::to_string(e.line) + ": " + e.text.substr(0, 200);
    if (error_lines.size() > 1 && e.kind == "error_line")
      a.verdict += " (" + std::to_string(error_lines.size() - 1) + " more error line(s): ranks[].first_error_evidence)";
    // Each producer's first unexplained error line is its first error, quoted.
    for (size_t i : error_lines) {
      const Event& x = events[i];
      for (RankState& rs : a.ranks) {
        if (rs.rank != x.rank || !rs.first_error.empty()) continue;
        rs.first_error = x.kind;
        rs.first_error_evidence = ToEvidence(x);
        if (x.ts && !x.ts_is_time_of_day) rs.first_error_ts = *x.ts;
      }
    }
  } else if (!GotSomewhere(run)) {
    a.root_cause = "no_evidence";
    a.verdict = run.events().empty()
                    ? "no evidence: no line of the input was understood (0 events: no server, engine, NCCL or torch "
                      "line): was the right file given? Without evidence this is not called healthy."
                    : "no evidence: " + std::to_string(run.total_events()) +
                          " line(s) understood, but none shows a run that got somewhere (no startup phase, no NCCL "
                          "communicator, no server configuration): was the whole log given? Without evidence this "
                          "is not called healthy.";
  } else {
    a.root_cause = "none";
    a.verdict = "healthy: no failure seen in " + std::to_string(run.total_events()) + " events" +
                (run.rank_count() == 0 ? std::string() : " from " + std::to_string(run.rank_count()) + " ranks") +
                StoppedInOrder(run);
  }
  return a;
}

int ExitCodeFor(const Analysis& a) {
  if (a.root_cause == "none") return kExitHealthy;
  if (a.root_cause == "no_evidence") return kExitNoEvidence;
  if (a.root_cause == "unknown") return kExitUnclassified;
  return kExitDiagnosed;
}

std::string RenderPlainText(const Analysis& a) {
  std::ostringstream o;
  o << a.verdict << "\n";
  if (!a.run.framework.empty())
    o << "run: " << a.run.framework << (a.run.version.empty() ? "" : " " + a.run.version)
      << (a.run.tp ? " tp=" + std::to_string(a.run.tp) : "") << "\n";
  for (const auto& d : a.diagnoses) {
    o << "\n" << (d.consequence ? "consequence " : "diagnosis ") << d.id << " [" << d.rule << ", confidence "
      << d.confidence << "]\n  " << d.explanation << "\n";
    for (const auto& e : d.evidence)
      o << "  evidence " << e.file << ":" << e.line << (e.rank >= 0 ? " rank " + std::to_string(e.rank) : "") << ": "
        << e.text << "\n";
    for (const auto& r : d.ruled_out) o << "  not " << r.id << ": " << r.reason << "\n";
    for (const auto& r : d.remedy)
      o << "  remedy " << r.flag << (r.value.empty() ? "" : " " + r.value) << " (" << r.direction << "): " << r.why
        << "\n";
  }
  for (const auto& w : a.warnings) o << "warning: " << w << "\n";
  return o.str();
}

}  // namespace tpt
