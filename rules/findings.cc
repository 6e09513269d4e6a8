// findings.cc: the finding-only keys of rules/findings/*.json, and their evaluation.
#include "rules/findings.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>

#include "base/strings.h"
#include "rules/evidence_read.h"
#include "rules/functions.h"
#include "rules/generated_defs.h"
#include "rules/ledger_from_events.h"
#include "rules/rule.h"

namespace tpt {

namespace {

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

}  // namespace

// ---------------------------------------------------------------------------
// Scope.

bool FindingScope::IsVariable(std::string_view name) {
  return name == "matched_ranks" || name == "matched_count";
}

Value FindingScope::Lookup(std::string_view name) const {
  if (name == "anchor.rank") {
    int r = TracebackRank(*this);
    return r >= 0 ? Value(r) : Value();
  }
  return RunScope::Lookup(name);
}

// ---------------------------------------------------------------------------
// Loading.

StatusOr<FindingRule> ParseFindingRule(const std::string& file, const std::string& text) {
  RuleChecker c(file);
  auto parsed = c.ParseObject(text, FindingKeys());
  if (!parsed.ok()) return parsed.status();
  const RuleChecker::ojson& j = *parsed;
  for (const char* v : {"matched_ranks", "matched_count"}) c.Define(v);
  FindingRule r;
  TPT_RETURN_IF_ERROR(c.ParseBody(j, /*anchor_required=*/false, &r));
  auto sev = c.Str(j, "$", "severity", true);
  if (!sev.ok()) return sev.status();
  r.severity = *sev;
  if (r.severity != "warning" && r.severity != "info") return c.Error("$.severity", "expected \"warning\" or \"info\"");
  if (j.contains("warning_when")) {
    auto e = c.Expr("$.warning_when", j["warning_when"]);
    if (!e.ok()) return e.status();
    r.warning_when = *e;
  }
  TPT_RETURN_IF_ERROR(c.CheckTemplate("$.title", r.title));
  if (!j.contains("advice")) return c.Error("$", "missing required key \"advice\"");
  auto advice = c.Texts("$.advice", j["advice"]);
  if (!advice.ok()) return advice.status();
  r.advice = std::move(*advice);
  return r;
}

StatusOr<FindingSet> FindingSet::LoadTexts(const RuleFiles& files) {
  auto rules = ParseAll<FindingRule>(files, ParseFindingRule);
  if (!rules.ok()) return rules.status();
  FindingSet set;
  set.rules_ = std::move(*rules);
  return set;
}

StatusOr<FindingSet> FindingSet::LoadBuiltin() {
  return LoadTexts(EmbeddedFiles(generated::kFindingDefs, generated::kFindingDefsCount));
}

StatusOr<FindingSet> FindingSet::LoadDir(const std::string& dir) {
  auto files = ReadJsonDir(dir, "--findings " + dir, "finding");
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
  if (!EvaluateBody(r, &scope)) return std::nullopt;
  m.vars = scope.vars();
  return m;
}

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
    if (!std::all_of(r.requires_kinds.begin(), r.requires_kinds.end(),
                     [&](const std::string& k) { return !run.OfKind(k).empty(); }))
      continue;
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
    for (const auto& [name, value] : first.vars) {
      nlohmann::json v = FigureJson(value);
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

void AddFindings(const RunIndex& run, const FindingSet& set, Analysis* a) {
  for (Finding& f : EvaluateFindings(run, set)) a->findings.push_back(std::move(f));
  bool has_draft = std::any_of(a->ledger.begin(), a->ledger.end(), [](const LedgerRow& r) { return r.role == "draft"; });
  if (!has_draft)
    for (LedgerRow& row : DraftLedger(run)) a->ledger.push_back(std::move(row));
}

}  // namespace tpt
