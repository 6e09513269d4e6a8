// engine.h: events of one run -> Analysis (root cause, diagnoses, ranks, ledger).
//
// Every rule is tried on its anchor events in stream order; the first anchor
// that satisfies the rule gives a diagnosis. Diagnoses are ranked so the
// earliest cause comes first: causes before symptoms (watchdog timeouts,
// generic crashes) before consequences (launcher sigquit, ChildFailedError,
// EngineDeadError); within a tier the earlier anchor wins, then priority.
// No rule firing gives "none" when no failure event was seen and "unknown"
// when one was.
//
//   auto rules = tpt::RuleSet::LoadBuiltin();
//   tpt::Analysis a = tpt::Analyze(run.events, *rules, {.inputs = paths});
//   return tpt::ExitCodeFor(a);
#pragma once

#include <string>
#include <vector>

#include "parser/event.h"
#include "parser/parser.h"
#include "rules/analysis.h"
#include "rules/rule.h"
#include "rules/run_index.h"

namespace tpt {

struct AnalyzeOptions {
  std::vector<std::string> inputs;    // paths analysed (RunInfo::inputs)
  std::vector<std::string> warnings;  // per-input read problems to carry into the Analysis
  size_t max_anchors_per_rule = 256;  // anchors tried per rule (a log can hold thousands of timeouts)
  // What the run held beyond `events` when only part was kept (ParsedRun::totals).
  const RunTotals* totals = nullptr;
};

Analysis Analyze(const std::vector<Event>& events, const RuleSet& rules, const AnalyzeOptions& options = {});
// The same over a run already indexed (options.totals is not read: the index
// holds them), so that findings can use the one index too.
Analysis Analyze(const RunIndex& run, const RuleSet& rules, const AnalyzeOptions& options = {});

// kExitHealthy, kExitDiagnosed or kExitUnclassified (rules/analysis.h).
int ExitCodeFor(const Analysis& a);

// A short plain-text rendering (the report/ renderers are the full ones).
std::string RenderPlainText(const Analysis& a);

}  // namespace tpt
