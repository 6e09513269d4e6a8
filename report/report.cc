// report.cc: outcomes, grouping into a Report, and the format registry.
#include "report/report.h"

#include <algorithm>
#include <map>

#include "report/common.h"
#include "report/renderers.h"
#include "report/signature.h"

namespace tpt::report {

Report MakeReport(std::vector<RunResult> runs, bool many, std::string tool_version) {
  Report report;
  report.tool_version = std::move(tool_version);
  report.many = many;
  report.runs = std::move(runs);
  std::map<std::string, size_t> by_id;  // signature id -> index in groups
  for (size_t i = 0; i < report.runs.size(); ++i) {
    RunResult& run = report.runs[i];
    switch (run.exit_code) {
      case kExitHealthy: ++report.healthy; break;
      case kExitDiagnosed: ++report.diagnosed; break;
      case kExitUnclassified: ++report.unclassified; break;
      case kExitNoEvidence: ++report.no_evidence; break;
      default: ++report.errors; break;
    }
    if (!run.error.empty() || run.exit_code == kExitHealthy || run.exit_code == kExitNoEvidence) continue;
    Signature sig = ComputeSignature(run.analysis);
    if (sig.id.empty()) continue;
    run.analysis.signature = sig.id;
    auto [it, inserted] = by_id.emplace(sig.id, report.groups.size());
    if (inserted) {
      Group g;
      g.signature = sig.id;
      g.canonical = sig.canonical;
      g.root_cause = run.analysis.root_cause;
      g.message = sig.message;
      const Diagnosis* d = PrimaryDiagnosis(run.analysis);
      g.title = d != nullptr ? d->title : run.analysis.verdict;
      report.groups.push_back(std::move(g));
    }
    report.groups[it->second].runs.push_back(i);
  }
  // Most frequent failure first; ties keep first-seen order.
  std::stable_sort(report.groups.begin(), report.groups.end(),
                   [](const Group& a, const Group& b) { return a.runs.size() > b.runs.size(); });
  return report;
}

namespace {

struct FormatEntry {
  const char* name;
  Format format;
};

constexpr FormatEntry kFormats[] = {
    {"text", Format::kText},   {"json", Format::kJson},     {"markdown", Format::kMarkdown},
    {"junit", Format::kJunit}, {"sarif", Format::kSarif},   {"github", Format::kGithub},
    {"html", Format::kHtml},
};

}  // namespace

StatusOr<Format> ParseFormat(std::string_view name) {
  if (name == "md") return Format::kMarkdown;
  for (const auto& f : kFormats) {
    if (name == f.name) return f.format;
  }
  return InvalidArgumentError("unknown --format '" + std::string(name) +
                              "': use text, json, markdown, junit, sarif, github or html");
}

const char* FormatName(Format format) {
  for (const auto& f : kFormats) {
    if (f.format == format) return f.name;
  }
  return "?";
}

std::unique_ptr<Reporter> MakeReporter(Format format) {
  switch (format) {
    case Format::kText: return MakeTextReporter();
    case Format::kJson: return MakeJsonReporter();
    case Format::kMarkdown: return MakeMarkdownReporter();
    case Format::kJunit: return MakeJunitReporter();
    case Format::kSarif: return MakeSarifReporter();
    case Format::kGithub: return MakeGithubReporter();
    case Format::kHtml: return MakeHtmlReporter();
  }
  return MakeTextReporter();
}

}  // namespace tpt::report
