// findings.cc: loading, checking and evaluating finding rules (rules/findings/).
#include "rules/findings.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <unordered_map>

#include <re2/re2.h>

#include "base/strings.h"
#include "rules/generated_defs.h"
#include "memory/memory_model.h"
#include "rules/rule.h"

namespace tpt {

// rules/findings/*.json, embedded by rules/findings/embed_findings.cmake.
namespace generated {
extern const EmbeddedFile kFindingDefs[];
extern const size_t kNumFindingDefs;
}  // namespace generated

namespace {

using ojson = nlohmann::ordered_json;

bool IsSnake(const std::string& s) {
  return !s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_") == std::string::npos &&
         !std::isdigit(static_cast<unsigned char>(s[0]));
}

class Checker {
 public:
  explicit Checker(std::string file) : file_(std::move(file)) {}

  Status Error(const std::string& path, const std::string& why) const {
    return InvalidArgumentError(file_ + ": " + path + ": " + why +
                                " (the finding language: tptriage help finding-files)");
  }

  StatusOr<ExprPtr> Expr(const std::string& path, const ojson& j) const {
    if (!j.is_string()) return Error(path, "expected an expression string");
    auto e = ParseExpr(j.get<std::string>());
    if (!e.ok()) return Error(path, e.status().message());
    std::vector<std::string> vars, funcs;
    (*e)->Names(&vars, &funcs);
    for (const auto& f : funcs)
      if (!IsBuiltinFunction(f) && !RunScope::IsFunction(f) && !FindingScope::IsFunction(f))
        return Error(path, "unknown function '" + f + "'");
    for (const auto& v : vars)
      if (!Known(v))
        return Error(path, "unknown name '" + v + "' (define it in \"let\" above, or use anchor.<field>, "
                           "config.<key>, env.<NAME>)");
    return *e;
  }

  Status Template(const std::string& path, const std::string& text) const {
    for (size_t p = 0; (p = text.find('{', p)) != std::string::npos;) {
      size_t q = text.find('}', p);
      if (q == std::string::npos) return Error(path, "unclosed '{' in template");
      std::string name = text.substr(p + 1, q - p - 1);
      if (size_t colon = name.find(':'); colon != std::string::npos) {
        std::string fmt = name.substr(colon + 1);
        name.resize(colon);
        if (fmt.size() != 3 || fmt[0] != '.' || !std::isdigit(static_cast<unsigned char>(fmt[1])) || fmt[2] != 'f')
          return Error(path, "format '" + fmt + "' of {" + name + "} is not .Nf");
      }
      if (!Known(name)) return Error(path, "template uses '{" + name + "}' which the finding does not define");
      p = q + 1;
    }
    return OkStatus();
  }

  bool Known(const std::string& v) const {
    return defined_.count(v) || RunScope::IsVariable(v) || FindingScope::IsVariable(v);
  }

  std::set<std::string> defined_;

 private:
  std::string file_;
};

StatusOr<std::string> Str(const Checker& c, const ojson& obj, const std::string& path, const char* key,
                          bool required) {
  if (!obj.contains(key)) {
    if (required) return c.Error(path, std::string("missing required key \"") + key + "\"");
    return std::string();
  }
  if (!obj[key].is_string()) return c.Error(path + "." + key, "expected a string");
  return obj[key].get<std::string>();
}

std::string FullText(const Event& e) {
  std::string t = e.text;
  for (const auto& l : e.extra_lines) t += "\n" + l;
  return t;
}

// RE2 patterns come from finding files; compiled once per thread, caseless.
const RE2* Pattern(const std::string& re) {
  thread_local std::unordered_map<std::string, std::unique_ptr<RE2>> cache;
  auto& slot = cache[re];
  if (!slot) {
    RE2::Options o;
    o.set_log_errors(false);
    o.set_case_sensitive(false);
    slot = std::make_unique<RE2>(re, o);
  }
  return slot->ok() ? slot.get() : nullptr;
}

Value Extract(const std::string& text, const std::string& re) {
  const RE2* p = Pattern(re);
  if (!p) return Value();
  re2::StringPiece whole, group;
  if (p->NumberOfCapturingGroups() == 0) {
    if (!RE2::PartialMatch(text, *p, &whole)) return Value();
    return std::string(whole);
  }
  // The first capture group that matched something.
  int n = p->NumberOfCapturingGroups() + 1;
  std::vector<re2::StringPiece> groups(n);
  if (!p->Match(text, 0, text.size(), RE2::UNANCHORED, groups.data(), n)) return Value();
  for (int i = 1; i < n; ++i)
    if (groups[i].data() != nullptr) return std::string(groups[i]);
  return std::string(groups[0]);
}

// Figures as JSON: whole numbers for big values, 4 decimals for small ones.
nlohmann::json FigureJson(const Value& v) {
  if (v.is_number()) {
    double d = v.number();
    if (!std::isfinite(d)) return nullptr;
    if (std::fabs(d) >= 1000) return std::round(d);
    return std::round(d * 10000) / 10000;
  }
  if (v.is_bool()) return v.boolean();
  if (v.is_string()) return v.str();
  return nullptr;
}

const std::set<std::string_view>& ExtraFunctions() {
  static const std::set<std::string_view> f = {
      "choose", "extract", "lower", "num", "concat", "find_text", "meanof", "meanof_nonzero", "sumof", "env_match",
      "rank_count_before", "rank_nth", "phase", "ceil_pow2", "gpu_interconnect", "gpu_sm"};
  return f;
}

// What a rank was doing when an event was printed (startup order of the
// servers, sglang-source.md §1.5): the last phase marker before it.
const char* PhaseAfter(const std::string& kind) {
  static const std::map<std::string, const char*> kAfter = {
      {"dist_init_begin", "distributed init"},    {"dist_init_end", "weight loading"},
      {"weights_load_begin", "weight loading"},   {"weights_load_end", "KV pool allocation"},
      {"memory_profile", "KV pool allocation"},   {"kv_pool_alloc", "KV pool allocation"},
      {"memory_pool_end", "backend init / warm-up"}, {"graph_capture_begin", "CUDA graph capture"},
      {"graph_capture_sizes", "CUDA graph capture"}, {"graph_capture_progress", "CUDA graph capture"},
      {"graph_capture_end", "warm-up"},           {"startup_complete", "serving"},
      {"batch_stats", "serving"},                 {"retraction", "serving"},
      {"http_access", "serving"}};
  auto it = kAfter.find(kind);
  return it == kAfter.end() ? nullptr : it->second;
}

}  // namespace

// ---------------------------------------------------------------------------
// Scope.

bool FindingScope::IsFunction(std::string_view name) { return ExtraFunctions().count(name) > 0; }

bool FindingScope::IsVariable(std::string_view name) {
  return name == "matched_ranks" || name == "matched_count";
}

int FindingScope::TracebackRank() const {
  if (anchor_ == RunScope::kNoAnchor) return -1;
  const auto& evs = run_.events();
  const Event& a = evs[anchor_];
  if (a.rank >= 0) return a.rank;
  // The last line of a traceback carries no prefix; the header that opened it
  // does ("[... TP3] Scheduler hit an exception: Traceback ..."). Look back a
  // traceback's length in the same file.
  constexpr uint64_t kMaxTracebackLines = 64;
  const auto& same_file = run_.OfSource(a.source);
  auto at = std::lower_bound(same_file.begin(), same_file.end(), anchor_);
  while (at != same_file.begin()) {
    const Event& e = evs[*--at];
    if (e.line + kMaxTracebackLines < a.line) break;
    if (e.rank >= 0 && (e.kind == "worker_exception" || e.kind == "exception")) return e.rank;
  }
  return -1;
}

int FindingScope::AnchorRank() const {
  if (int r = TracebackRank(); r >= 0) return r;
  return run_.ranks().empty() ? -1 : *run_.ranks().begin();
}

Value FindingScope::Lookup(std::string_view name) const {
  if (name == "anchor.rank") {
    int r = TracebackRank();
    return r >= 0 ? Value(r) : Value();
  }
  return base_.Lookup(name);
}

Value FindingScope::Call(std::string_view name, const std::vector<Value>& a) const {
  auto str = [&](size_t i) -> std::string { return i < a.size() && !a[i].is_null() ? a[i].ToString() : ""; };
  auto num = [&](size_t i) -> std::optional<double> {
    if (i < a.size() && a[i].is_number()) return a[i].number();
    return std::nullopt;
  };
  const auto& evs = run_.events();

  if (name == "choose") {
    if (a.size() != 3) return Value();
    return a[0].Truthy() ? a[1] : a[2];
  }
  if (name == "extract") {
    if (a.size() < 2 || a[0].is_null()) return Value();
    return Extract(a[0].ToString(), str(1));
  }
  if (name == "num") {
    if (a.empty() || a[0].is_null()) return Value();
    if (a[0].is_number()) return a[0];
    const std::string s = a[0].ToString();
    char* end = nullptr;
    double d = std::strtod(s.c_str(), &end);
    return end != s.c_str() && *end == '\0' ? Value(d) : Value();
  }
  if (name == "concat") {
    std::string out;
    for (const auto& v : a) {
      if (v.is_null()) return Value();
      out += v.ToString();
    }
    return out;
  }
  if (name == "lower") return a.empty() || a[0].is_null() ? Value() : Value(Lower(a[0].ToString()));
  if (name == "find_text") {
    // The same for every anchor: searched once per run.
    const std::string re = str(0);
    return run_.Cached<Value>("find_text\n" + re, [&] {
      for (const Event& e : evs) {
        Value v = Extract(FullText(e), re);
        if (!v.is_null()) return v;
      }
      return Value();
    });
  }
  if (name == "meanof" || name == "meanof_nonzero" || name == "sumof") {
    double sum = 0, n = 0;
    for (size_t i : run_.OfKind(str(0))) {
      FieldValue f = evs[i].Get(str(1));
      if (!f.present()) continue;
      Value v = JsonToValue(f.json());
      if (!v.is_number() || (name == "meanof_nonzero" && v.number() == 0)) continue;
      sum += v.number();
      ++n;
    }
    if (n == 0) return Value();
    return name == "sumof" ? sum : sum / n;
  }
  if (name == "env_match") {
    const RE2* p = Pattern(str(0));
    if (!p) return Value();
    for (const auto& [k, v] : run_.env()) {
      std::string lv = Lower(v);
      if (lv.empty() || lv == "0" || lv == "false" || lv == "no" || lv == "off") continue;
      if (RE2::PartialMatch(k, *p)) return k + "=" + v;
    }
    return Value();
  }
  if (name == "rank_count_before") {
    // Binary searches in the kind's events of the rank and the rank-less ones.
    int rank = AnchorRank();
    size_t limit = anchor_ == RunScope::kNoAnchor ? evs.size() : anchor_;
    const auto& by_rank = run_.Cached<std::map<int, std::vector<size_t>>>("of_kind_by_rank\n" + str(0), [&] {
      std::map<int, std::vector<size_t>> m;
      for (size_t i : run_.OfKind(str(0))) m[evs[i].rank < 0 ? -1 : evs[i].rank].push_back(i);
      return m;
    });
    auto before = [&](int r) -> double {
      auto it = by_rank.find(r);
      if (it == by_rank.end()) return 0;
      return static_cast<double>(std::lower_bound(it->second.begin(), it->second.end(), limit) - it->second.begin());
    };
    if (rank < 0) {
      double n = 0;
      for (const auto& [r, list] : by_rank) n += before(r);
      return n;
    }
    return before(rank) + before(-1);
  }
  if (name == "rank_nth") {
    int rank = AnchorRank();
    std::string field = str(1);
    double want = num(2).value_or(1);
    double n = 0;
    for (size_t i : run_.OfKind(str(0))) {
      const Event& e = evs[i];
      if (rank >= 0 && e.rank >= 0 && e.rank != rank) continue;
      FieldValue f = e.Get(field);
      if (!f.present()) continue;
      Value v = JsonToValue(f.json());
      if (v.is_null()) continue;
      if (++n == want) return v;
    }
    return Value();
  }
  if (name == "phase") {
    if (anchor_ == RunScope::kNoAnchor) return Value();
    // The last phase line before the anchor on its rank (or rank-less): binary
    // searches in the run's phase lines of each rank, listed once.
    int rank = evs[anchor_].rank;
    using Marks = std::map<int, std::vector<std::pair<size_t, const char*>>>;  // rank (-1: none) -> (index, phase)
    const Marks& marks = run_.Cached<Marks>("phase_marks", [&] {
      Marks m;
      for (size_t i = 0; i < evs.size(); ++i)
        if (const char* p = PhaseAfter(evs[i].kind)) m[evs[i].rank < 0 ? -1 : evs[i].rank].push_back({i, p});
      return m;
    });
    std::pair<size_t, const char*> best = {0, nullptr};
    auto last_before = [&](int r) {
      auto it = marks.find(r);
      if (it == marks.end()) return;
      auto at = std::lower_bound(it->second.begin(), it->second.end(), std::make_pair(anchor_, (const char*)nullptr));
      if (at != it->second.begin() && (!best.second || std::prev(at)->first > best.first)) best = *std::prev(at);
    };
    if (rank < 0) {
      for (const auto& [r, list] : marks) last_before(r);
    } else {
      last_before(rank);
      last_before(-1);
    }
    return best.second ? best.second : "startup";
  }
  if (name == "ceil_pow2") {
    auto x = num(0);
    if (!x || *x <= 0 || *x > 1e15) return Value();
    double p = 1;
    while (p < *x) p *= 2;
    return p;
  }
  if (name == "gpu_interconnect" || name == "gpu_sm") {
    if (run_.gpu().empty()) return Value();
    auto g = memory::FindGpu(run_.gpu());
    if (!g.ok()) return Value();
    if (name == "gpu_sm") return g->sm > 0 ? Value(g->sm) : Value();
    return g->interconnect.empty() ? Value() : Value(g->interconnect);
  }
  return base_.Call(name, a);
}

// ---------------------------------------------------------------------------
// Loading.

StatusOr<FindingRule> ParseFindingRule(const std::string& file, const std::string& text) {
  Checker c(file);
  ojson j = ojson::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return c.Error("$", "not valid JSON");
  if (!j.is_object()) return c.Error("$", "expected a JSON object");
  static const std::set<std::string> kKeys = {"schema", "id", "severity", "warning_when", "title", "description",
                                              "sources", "anchor", "let", "when", "evidence", "advice"};
  for (const auto& [k, v] : j.items())
    if (!kKeys.count(k)) return c.Error("$." + k, "unknown key");
  if (j.contains("schema") && j["schema"] != 1) return c.Error("$.schema", "only schema 1 is known");

  FindingRule r;
  r.source = file;
  auto id = Str(c, j, "$", "id", true);
  if (!id.ok()) return id.status();
  r.id = *id;
  if (!IsSnake(r.id)) return c.Error("$.id", "ids are lower_snake_case");
  auto sev = Str(c, j, "$", "severity", true);
  if (!sev.ok()) return sev.status();
  r.severity = *sev;
  if (r.severity != "warning" && r.severity != "info") return c.Error("$.severity", "expected \"warning\" or \"info\"");

  if (j.contains("anchor")) {
    const ojson& an = j["anchor"];
    ojson list = an.is_string() ? ojson::array({an}) : an;
    if (!list.is_array() || list.empty()) return c.Error("$.anchor", "expected an event kind or a non-empty array of them");
    for (size_t i = 0; i < list.size(); ++i) {
      if (!list[i].is_string()) return c.Error("$.anchor[" + std::to_string(i) + "]", "expected a string");
      std::string k = list[i].get<std::string>();
      if (!RunScope::IsKnownKind(k)) return c.Error("$.anchor", "unknown event kind '" + k + "' (tptriage help kinds)");
      r.anchor_kinds.push_back(k);
    }
  }
  if (j.contains("let")) {
    if (!j["let"].is_object()) return c.Error("$.let", "expected an object name -> expression");
    for (const auto& [name, ex] : j["let"].items()) {
      std::string path = "$.let." + name;
      if (!IsSnake(name)) return c.Error(path, "names are lower_snake_case");
      auto e = c.Expr(path, ex);
      if (!e.ok()) return e.status();
      r.lets.emplace_back(name, *e);
      c.defined_.insert(name);
    }
  }
  for (const char* key : {"when", "warning_when"}) {
    if (!j.contains(key)) continue;
    auto e = c.Expr(std::string("$.") + key, j[key]);
    if (!e.ok()) return e.status();
    (std::string(key) == "when" ? r.when : r.warning_when) = *e;
  }
  auto title = Str(c, j, "$", "title", true);
  if (!title.ok()) return title.status();
  r.title = *title;
  TPT_RETURN_IF_ERROR(c.Template("$.title", r.title));

  if (j.contains("evidence")) {
    if (!j["evidence"].is_array()) return c.Error("$.evidence", "expected an array of \"kind\" or \"kind/text\"");
    for (size_t i = 0; i < j["evidence"].size(); ++i) {
      std::string path = "$.evidence[" + std::to_string(i) + "]";
      if (!j["evidence"][i].is_string()) return c.Error(path, "expected a string");
      std::string s = j["evidence"][i].get<std::string>();
      EvidenceDef d;
      size_t slash = s.find('/');
      d.kind = s.substr(0, slash);
      if (slash != std::string::npos) d.contains = s.substr(slash + 1);
      if (!RunScope::IsKnownKind(d.kind)) return c.Error(path, "unknown event kind '" + d.kind + "'");
      r.evidence.push_back(std::move(d));
    }
  }
  if (!j.contains("advice")) return c.Error("$", "missing required key \"advice\"");
  ojson advice = j["advice"].is_string() ? ojson::array({ojson{{"text", j["advice"]}}}) : j["advice"];
  if (!advice.is_array() || advice.empty()) return c.Error("$.advice", "expected a string or an array of {text, when}");
  for (size_t i = 0; i < advice.size(); ++i) {
    std::string path = j["advice"].is_string() ? "$.advice" : "$.advice[" + std::to_string(i) + "]";
    if (!advice[i].is_object()) return c.Error(path, "expected {\"text\": ..., \"when\": ...}");
    for (const auto& [k, v] : advice[i].items())
      if (k != "text" && k != "when") return c.Error(path + "." + k, "unknown key");
    AdviceDef d;
    auto t = Str(c, advice[i], path, "text", true);
    if (!t.ok()) return t.status();
    d.text = *t;
    TPT_RETURN_IF_ERROR(c.Template(path + ".text", d.text));
    if (advice[i].contains("when")) {
      auto e = c.Expr(path + ".when", advice[i]["when"]);
      if (!e.ok()) return e.status();
      d.when = *e;
    }
    r.advice.push_back(std::move(d));
  }
  return r;
}

StatusOr<FindingSet> FindingSet::LoadTexts(const std::vector<std::pair<std::string, std::string>>& files) {
  FindingSet set;
  std::map<std::string, std::string> seen;  // id -> file
  for (const auto& [name, text] : files) {
    auto r = ParseFindingRule(name, text);
    if (!r.ok()) return r.status();
    auto [it, fresh] = seen.emplace(r->id, name);
    if (!fresh) return InvalidArgumentError(name + ": $.id: id '" + r->id + "' is also used by " + it->second);
    set.rules_.push_back(std::move(*r));
  }
  return set;
}

StatusOr<FindingSet> FindingSet::LoadBuiltin() {
  std::vector<std::pair<std::string, std::string>> files;
  for (size_t i = 0; i < generated::kNumFindingDefs; ++i)
    files.emplace_back(generated::kFindingDefs[i].name, generated::kFindingDefs[i].text);
  return LoadTexts(files);
}

StatusOr<FindingSet> FindingSet::LoadDir(const std::string& dir) {
  auto files = ReadJsonDir(dir, dir, "finding");
  if (!files.ok()) return files.status();
  return LoadTexts(*files);
}

// ---------------------------------------------------------------------------
// Evaluation.

namespace {

struct Match {
  size_t anchor;
  std::map<std::string, Value> vars;
  int rank = -1;  // the anchor's rank (a traceback's from its header)
};

std::optional<Match> TryAt(const RunIndex& run, const FindingRule& r, size_t anchor) {
  FindingScope scope(run, anchor);
  Match m{anchor, {}};
  if (Value r = scope.Lookup("anchor.rank"); r.is_number()) m.rank = static_cast<int>(r.number());
  for (const auto& [name, e] : r.lets) {
    Value v = e->Eval(scope);
    scope.Set(name, v);
    m.vars[name] = v;
  }
  if (r.when && !r.when->Eval(scope).Truthy()) return std::nullopt;
  return m;
}

Evidence ToEvidence(const Event& e) { return Evidence{e.file, e.line, e.rank, e.text}; }

std::vector<Evidence> Quote(const RunIndex& run, const FindingRule& r, size_t anchor) {
  std::vector<Evidence> out;
  std::set<size_t> used;
  const auto& evs = run.events();
  if (anchor != RunScope::kNoAnchor) {
    out.push_back(ToEvidence(evs[anchor]));
    used.insert(anchor);
  }
  int rank = anchor != RunScope::kNoAnchor ? evs[anchor].rank : -1;
  for (const auto& d : r.evidence) {
    std::optional<size_t> best;
    for (size_t i : run.OfKind(d.kind)) {
      if (used.count(i)) continue;
      if (!d.contains.empty() && Lower(FullText(evs[i])).find(Lower(d.contains)) == std::string::npos) continue;
      if (!best) best = i;
      if (rank < 0 || evs[i].rank == rank) {
        best = i;
        break;
      }
    }
    if (best) {
      out.push_back(ToEvidence(evs[*best]));
      used.insert(*best);
    }
  }
  return out;
}

}  // namespace

std::vector<Finding> EvaluateFindings(const RunIndex& run, const FindingSet& set) {
  std::vector<Finding> out;
  for (const FindingRule& r : set.rules()) {
    std::vector<Match> matches;
    if (r.anchor_kinds.empty()) {
      if (auto m = TryAt(run, r, RunScope::kNoAnchor)) matches.push_back(std::move(*m));
    } else {
      std::vector<size_t> anchors;
      for (const auto& k : r.anchor_kinds)
        for (size_t i : run.OfKind(k)) anchors.push_back(i);
      std::sort(anchors.begin(), anchors.end());
      anchors.erase(std::unique(anchors.begin(), anchors.end()), anchors.end());
      for (size_t i : anchors)
        if (auto m = TryAt(run, r, i)) matches.push_back(std::move(*m));
    }
    if (matches.empty()) continue;

    std::set<int> ranks;
    for (const auto& m : matches)
      if (m.rank >= 0) ranks.insert(m.rank);
    std::string rank_list;
    for (int rk : ranks) rank_list += (rank_list.empty() ? "" : ", ") + std::to_string(rk);

    const Match& first = matches.front();
    FindingScope scope(run, first.anchor);
    for (const auto& [k, v] : first.vars) scope.Set(k, v);
    scope.Set("matched_ranks", rank_list.empty() ? Value() : Value(rank_list));
    scope.Set("matched_count", static_cast<double>(matches.size()));

    Finding f;
    f.id = r.id;
    f.severity = r.severity;
    if (r.warning_when && r.warning_when->Eval(scope).Truthy()) f.severity = "warning";
    f.title = FillTemplate(r.title, scope);
    f.evidence = Quote(run, r, first.anchor);
    for (const auto& [name, e] : r.lets) {
      nlohmann::json v = FigureJson(first.vars.at(name));
      if (!v.is_null()) f.figures[name] = v;
    }
    if (!ranks.empty()) f.figures["ranks"] = std::vector<int>(ranks.begin(), ranks.end());
    for (const auto& d : r.advice) {
      if (d.when && !d.when->Eval(scope).Truthy()) continue;
      if (!f.advice.empty()) f.advice += ' ';
      f.advice += FillTemplate(d.text, scope);
    }
    out.push_back(std::move(f));
  }
  return out;
}

namespace {

bool DraftClass(const Event& e) {
  const RE2* p = Pattern("(Eagle|NextN|MTP|Draft|Medusa)");
  FieldValue model_class = e.Get("model_class");
  return model_class.present() && p && RE2::PartialMatch(JsonToValue(model_class.json()).ToString(), *p);
}

double Num(const Event& e, const char* key) {
  FieldValue f = e.Get(key);
  if (!f.present()) return -1;
  Value v = JsonToValue(f.json());
  return v.is_number() ? v.number() : -1;
}

// Ledger rows of a speculative draft model (sglang-source.md §1.5 step 6: the
// draft worker repeats weight load, pool and capture after the target on each
// rank; its lines are the second of each kind, or carry role=draft).
std::vector<LedgerRow> DraftLedger(const RunIndex& run) {
  RunScope scope(run, RunScope::kNoAnchor);
  Value algo = scope.Lookup("config.speculative_algorithm");
  bool speculative = algo.is_string() && !algo.str().empty() && Lower(algo.str()) != "none";
  struct PerRank {
    int loads_begun = 0, loads_done = 0, pools = 0, graphs = 0;
    bool draft = false;
    memory::RankMemory m;
  };
  std::map<int, PerRank> ranks;
  for (const Event& e : run.events()) {
    PerRank& pr = ranks[e.rank];
    bool draft_role = e.Get("role").string() == "draft";
    if (e.kind == "weights_load_begin") {
      if (++pr.loads_begun == 2 && speculative) pr.m.free_at_init_bytes = std::max(0.0, Num(e, "avail_bytes"));
    } else if (e.kind == "weights_load_end") {
      ++pr.loads_done;
      if ((pr.loads_done == 2 && speculative) || DraftClass(e)) {
        pr.draft = true;
        pr.m.weights_bytes = std::max(0.0, Num(e, "weights_bytes"));
      }
    } else if (e.kind == "kv_pool_alloc" && (Num(e, "k_bytes") >= 0 || Num(e, "kv_bytes") >= 0)) {
      ++pr.pools;
      if (pr.draft && (pr.pools >= 2 || draft_role) && pr.m.kv_pool_bytes == 0) {
        double kv = Num(e, "kv_bytes");
        if (kv < 0) kv = Num(e, "k_bytes") + std::max(0.0, Num(e, "v_bytes"));
        pr.m.kv_pool_bytes = kv;
      }
    } else if (e.kind == "graph_capture_end" && Num(e, "graph_bytes") >= 0) {
      ++pr.graphs;
      if (pr.draft && (draft_role || pr.graphs >= 2) && pr.m.graphs_bytes == 0) pr.m.graphs_bytes = Num(e, "graph_bytes");
    }
  }
  std::vector<memory::RankMemory> rows;
  for (auto& [rank, pr] : ranks) {
    if (!pr.draft) continue;
    pr.m.rank = rank;
    pr.m.role = "draft";
    pr.m.total_bytes = run.gpu_total_bytes();
    rows.push_back(pr.m);
  }
  return memory::BuildLedger(rows);
}

}  // namespace

void AddFindings(const std::vector<Event>& events, const FindingSet& set, Analysis* a) {
  RunIndex run(events);
  for (Finding& f : EvaluateFindings(run, set)) a->findings.push_back(std::move(f));
  bool has_draft = std::any_of(a->ledger.begin(), a->ledger.end(), [](const LedgerRow& r) { return r.role == "draft"; });
  if (!has_draft)
    for (LedgerRow& row : DraftLedger(run)) a->ledger.push_back(std::move(row));
}

}  // namespace tpt
