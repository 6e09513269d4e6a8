// engine.cc: run the rules over one run's events and rank what they find.
#include "rules/engine.h"

#include <map>
#include <sstream>

#include "rules/diagnose.h"
#include "rules/entrypoint.h"
#include "rules/ledger_from_events.h"
#include "rules/rank_marks.h"
#include "rules/run_index.h"
#include "rules/terminal.h"
#include "rules/verdict.h"

namespace tpt {

Analysis Analyze(const std::vector<Event>& events, const RuleSet& rules, const AnalyzeOptions& options) {
  RunIndex run(events, options.totals);
  return Analyze(run, rules, options);
}

Analysis Analyze(const RunIndex& run, const RuleSet& rules, const AnalyzeOptions& options) {
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
  std::map<std::string, size_t> anchor_of;  // diagnosis id -> its anchor event
  for (const Fired& f : FireRules(run, rules, term, options.max_anchors_per_rule)) {
    if (anchor_of.count(f.rule->root_cause)) continue;  // one diagnosis per root cause
    anchor_of[f.rule->root_cause] = f.anchor;
    a.diagnoses.push_back(Diagnose(run, f));
  }
  SetAsideSurvived(run, term, anchor_of, &a);
  OrderCauseBeforeSurface(&a.diagnoses);
  DropRefutedByPrimary(&a.diagnoses);
  SpellForEntrypoint(run, &a);  // LLM(...) keywords where the log shows vLLM's class
  WriteVerdict(run, term, &a);
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
