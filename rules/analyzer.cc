// analyzer.cc: parse + rules for one run.
#include "rules/analyzer.h"

#include <filesystem>
#include <set>

#include "parser/format_set.h"
#include "rules/engine.h"
#include "rules/findings.h"
#include "rules/generated_defs.h"

namespace tpt {

namespace {

std::string BaseName(const std::string& path) { return std::filesystem::path(path).filename().string(); }

// Built-in (name, text) files and DIR's: DIR's file replaces the built-in one
// with the same base name; the rest of DIR's are added after.
std::vector<std::pair<std::string, std::string>> Overlay(std::vector<std::pair<std::string, std::string>> builtin,
                                                         const std::vector<std::pair<std::string, std::string>>& dir) {
  std::set<std::string> replaced;
  for (const auto& f : dir) replaced.insert(BaseName(f.first));
  std::vector<std::pair<std::string, std::string>> out;
  for (auto& f : builtin) {
    if (!replaced.count(BaseName(f.first))) out.push_back(std::move(f));
  }
  out.insert(out.end(), dir.begin(), dir.end());
  return out;
}

}  // namespace

StatusOr<FormatSet> LoadFormats(const std::string& dir, bool builtin) {
  if (dir.empty()) return FormatSet::LoadBuiltin();
  return FormatSet::LoadDir(dir, /*strict=*/false, /*with_builtin=*/builtin);
}

StatusOr<RuleSet> LoadRules(const std::string& dir, bool builtin) {
  if (dir.empty()) return RuleSet::LoadBuiltin();
  if (!builtin) return RuleSet::LoadDir(dir);
  auto extra = ReadJsonDir(dir, "--rules " + dir, "rule");
  if (!extra.ok()) return extra.status();
  std::vector<std::pair<std::string, std::string>> base;
  for (size_t i = 0; i < generated::kNumRuleDefs; ++i) base.emplace_back(generated::kRuleDefs[i].name, generated::kRuleDefs[i].text);
  return RuleSet::LoadTexts(Overlay(std::move(base), *extra));
}

StatusOr<Analyzer> Analyzer::Create(const AnalyzerOptions& options) {
  Analyzer an;
  an.parse_ = options.parse;
  auto formats = LoadFormats(options.formats_dir, options.builtin_formats);
  if (!formats.ok()) return formats.status();
  for (const auto& p : formats->problems()) an.load_warnings_.push_back("format file skipped: " + p);
  an.formats_ = std::make_shared<const FormatSet>(std::move(*formats));
  auto rules = LoadRules(options.rules_dir, options.builtin_rules);
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
