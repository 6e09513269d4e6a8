// findings.h: findings beyond the crash, as data.
//
// A finding is something the on-call engineer should know about a run whether
// or not it crashed: custom all-reduce forced on PCIe, a kernel without an
// image for the GPU, an all-to-all backend that failed, the speculative draft's
// memory, what CUDA graphs cost, the serving throughput. Each is a rule file in
// rules/findings/<id>.json in the rule language (rules/README.md) evaluated
// after the diagnosis; a finding never changes root_cause or the exit code.
//
//   auto findings = tpt::FindingSet::LoadBuiltin();
//   tpt::RunIndex run(events);
//   std::vector<tpt::Finding> f = tpt::EvaluateFindings(run, *findings);
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "parser/event.h"
#include "base/status.h"
#include "rules/analysis.h"
#include "rules/expr.h"
#include "rules/rule_file.h"
#include "rules/run_index.h"

namespace tpt {

// A finding: the shared keys (rules/rule_file.h) plus its severity and advice.
struct FindingRule : RuleBody {
  std::string severity;
  ExprPtr warning_when;          // raises an "info" finding to "warning"
  std::vector<TextDef> advice;   // the texts whose `when` holds, joined by a space
};

class FindingSet {
 public:
  // rules/findings/*.json compiled into the binary.
  static StatusOr<FindingSet> LoadBuiltin();
  // Every *.json in `dir`.
  static StatusOr<FindingSet> LoadDir(const std::string& dir);
  static StatusOr<FindingSet> LoadTexts(const RuleFiles& files);

  const std::vector<FindingRule>& rules() const { return rules_; }

 private:
  std::vector<FindingRule> rules_;
};

// Parses one finding file; errors name `file`, the JSON path and the reason.
StatusOr<FindingRule> ParseFindingRule(const std::string& file, const std::string& text);

// Every finding whose condition holds, in rule-file order (one per rule: the
// first anchor that satisfies it; `matched_ranks` names all ranks that did).
std::vector<Finding> EvaluateFindings(const RunIndex& run, const FindingSet& set);

// EvaluateFindings into a->findings, plus "draft" ledger rows for a
// speculative draft model when the ledger has none
// (rules/ledger_from_events.h DraftLedger).
void AddFindings(const RunIndex& run, const FindingSet& set, Analysis* a);

// The scope finding expressions run in: RunScope, with anchor.rank of a
// rank-less traceback line taken from the "... hit an exception" header that
// opened it, and the variables matched_ranks ("3, 5") and matched_count
// (filled for templates). Functions: rules/functions.h, as for rules.
class FindingScope : public RunScope {
 public:
  FindingScope(const RunIndex& run, size_t anchor) : RunScope(run, anchor) {}
  Value Lookup(std::string_view name) const override;
  static bool IsVariable(std::string_view name);
};

}  // namespace tpt
