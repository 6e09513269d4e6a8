// diagnose.cc: rules tried on a run, and one diagnosis a rule that held (diagnose.h).
#include "rules/diagnose.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <set>

#include "base/strings.h"
#include "memory/server_flags.h"
#include "rules/evidence_read.h"
#include "rules/prose.h"
#include "rules/repro_params.h"
#include "rules/rule_file.h"

namespace tpt {

namespace {

// Evaluates `rule` with `anchor` bound; the rule's names on success.
std::optional<std::map<std::string, Value>> Evaluate(const Rule& rule, const RunIndex& run, size_t anchor) {
  RunScope s(run, anchor);
  if (!EvaluateBody(rule, &s)) return std::nullopt;
  return s.vars();
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

}  // namespace

std::vector<Fired> FireRules(const RunIndex& run, const RuleSet& rules, const Terminals& term, size_t max_anchors) {
  const std::vector<Event>& events = run.events();
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
    // Past the cap, the first ones and the last: a rule about how the run
    // ended (the last batch line before a silence) still sees its anchor.
    if (anchors.size() > max_anchors) {
      size_t last = anchors.back();
      anchors.resize(max_anchors > 1 ? max_anchors - 1 : max_anchors);
      if (max_anchors > 1) anchors.push_back(last);
    }
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
  return fired;
}

Diagnosis Diagnose(const RunIndex& run, const Fired& f) {
  const std::vector<Event>& events = run.events();
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
             FillTemplate(rem.command, scope), rem.kind};
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
      if (events[i].rank == d.rank && events[i].kind != "nccl_return_trace") last = i;  // the WARN, not its back-trace
    if (last && quoted.insert(*last).second) d.evidence.insert(d.evidence.begin() + 1, ToEvidence(events[*last]));
  }
  NoteFieldsRead(rule, events, &d);
  d.repro = BuildRepro(run, d);
  return d;
}

}  // namespace tpt
