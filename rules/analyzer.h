// analyzer.h: logs of one run -> Analysis, the whole of `tptriage analyze`
// behind one call (parse with the format set, run the rules and findings over
// one index of the run).
//
// Load the formats and rules once, then analyse any number of runs; Run() is
// const and may be called from several threads at once.
//
//   auto an = tpt::Analyzer::Create({.rules_dir = ""});   // built-in rules and formats
//   if (!an.ok()) Die(an.status());                       // bad --rules / --findings / --formats
//   auto a = an->Run({"rank0.log", "rank1.log.gz"});
//   if (!a.ok()) Die(a.status());                         // nothing readable
//   return tpt::ExitCodeFor(*a);
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "parser/parser.h"
#include "base/status.h"
#include "rules/analysis.h"
#include "rules/findings.h"
#include "rules/rule.h"

namespace tpt {

class FormatSet;

struct AnalyzerOptions {
  std::string rules_dir;    // rule files added to the built-in ones (rules/defs)
  std::string formats_dir;  // format files added to the built-in ones (parser/formats)
  std::string findings_dir;  // finding files added to the built-in ones (rules/findings)
  bool builtin_rules = true;     // false: rules_dir's files alone (--no-builtin-rules)
  bool builtin_formats = true;   // false: formats_dir's files alone (--no-builtin-formats)
  bool builtin_findings = true;  // false: findings_dir's files alone (--no-builtin-findings)
  bool skip_bad_formats = false;  // a bad file of formats_dir is skipped, not refused (--skip-bad-formats)
  ParseOptions parse;
};

// The format, rule and finding sets of --formats DIR / --rules DIR /
// --findings DIR: the built-in files plus DIR's *.json, a file of DIR
// replacing the built-in file of the same name; with `builtin` false, DIR's
// files alone; with no DIR, the built-in set.
// A format file of DIR that cannot be loaded refuses the set (the run would be
// read without that family, a changed verdict) unless `skip_bad`
// (--skip-bad-formats): then it is left out and named in problems().
StatusOr<FormatSet> LoadFormats(const std::string& dir, bool builtin, bool skip_bad = false);
StatusOr<RuleSet> LoadRules(const std::string& dir, bool builtin);
StatusOr<FindingSet> LoadFindings(const std::string& dir, bool builtin);

class Analyzer {
 public:
  static StatusOr<Analyzer> Create(const AnalyzerOptions& options);

  // Parses `inputs` (files, directories, "-", .gz) as one run and analyses it.
  // Error only when nothing could be read; per-input problems become warnings.
  StatusOr<Analysis> Run(const std::vector<std::string>& inputs) const;

  const RuleSet& rules() const { return *rules_; }
  const FindingSet& findings() const { return *findings_; }
  const std::vector<std::string>& load_warnings() const { return load_warnings_; }

 private:
  std::shared_ptr<const FormatSet> formats_;
  std::shared_ptr<const RuleSet> rules_;
  std::shared_ptr<const FindingSet> findings_;
  ParseOptions parse_;
  std::vector<std::string> load_warnings_;  // format files left out, with the reason
};

}  // namespace tpt
