// analyzer.cc: parse + rules for one run.
#include "rules/analyzer.h"

#include "parser/format_set.h"
#include "rules/engine.h"
#include "rules/findings.h"

namespace tpt {

StatusOr<Analyzer> Analyzer::Create(const AnalyzerOptions& options) {
  Analyzer an;
  an.parse_ = options.parse;
  auto formats = options.formats_dir.empty() ? FormatSet::LoadBuiltin() : FormatSet::LoadDir(options.formats_dir);
  if (!formats.ok()) return formats.status();
  for (const auto& p : formats->problems()) an.load_warnings_.push_back("format file skipped: " + p);
  an.formats_ = std::make_shared<const FormatSet>(std::move(*formats));
  auto rules = options.rules_dir.empty() ? RuleSet::LoadBuiltin() : RuleSet::LoadDir(options.rules_dir);
  if (!rules.ok()) return rules.status();
  an.rules_ = std::make_shared<const RuleSet>(std::move(*rules));
  return an;
}

StatusOr<Analysis> Analyzer::Run(const std::vector<std::string>& inputs) const {
  auto run = ParseRunToMemory(inputs, *formats_, parse_);
  if (!run.ok()) return run.status();
  AnalyzeOptions opts;
  opts.inputs = inputs;
  opts.warnings = load_warnings_;
  opts.totals = &run->totals;
  for (const auto& in : run->inputs) {
    for (auto& w : InputWarnings(in, parse_)) opts.warnings.push_back(std::move(w));
  }
  Analysis a = Analyze(run->events, *rules_, opts);
  // Findings beyond the crash (rules/findings.h): never change root_cause.
  static const StatusOr<FindingSet> findings = FindingSet::LoadBuiltin();
  if (findings.ok()) AddFindings(run->events, *findings, &a);
  else a.warnings.push_back(findings.status().message());
  return a;
}

}  // namespace tpt
