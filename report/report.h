// report.h: the records every renderer reads, and the Reporter interface.
//
// A Report holds one or many runs (each an Analysis from rules/, plus the
// run's name and exit code) and the groups of runs whose failures share a
// signature (report/signature.h). A Reporter renders the same Report as
// text, json, markdown, junit, sarif, github workflow commands or html, like
// Google Benchmark's ConsoleReporter/JSONReporter/CSVReporter. Report never
// re-parses a log: everything it prints comes from the Analysis values.
//
//   tpt::report::Report r = tpt::report::MakeReport(std::move(runs), /*many=*/true);
//   auto format = tpt::report::ParseFormat("sarif");
//   tpt::report::MakeReporter(*format)->Write(r, std::cout);
#pragma once

#include <iosfwd>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "rules/analysis.h"
#include "rules/engine.h"  // ExitCodeFor: the exit code of one Analysis

namespace tpt::report {

// One analysed run: a subdirectory or file of `--runs DIR`, or the inputs of
// a single `tptriage analyze LOG...`.
struct RunResult {
  std::string name;     // "run-0007" (the entry's name under --runs), or the first input
  Analysis analysis;    // analysis.signature is filled by MakeReport for failed runs
  int exit_code = kExitHealthy;  // analyze's exit code for this run alone
  std::string error;    // set when the run could not be analysed (exit_code kExitUsage)
};

// Runs whose failures share a signature (report/signature.h).
struct Group {
  std::string signature;     // 12 hex digits, stable across machines and days
  std::string canonical;     // the string hashed into `signature`, readable
  std::string root_cause;    // taxonomy id shared by the group
  std::string title;         // primary diagnosis title of the first run
  std::string message;       // normalised message template of the first failing rank
  std::vector<size_t> runs;  // indices into Report::runs, in run order
};

struct Report {
  std::string tool_version;
  bool many = false;              // from --runs: render runs[] and groups[]
  std::vector<RunResult> runs;
  std::vector<Group> groups;      // failed runs only; most runs first
  size_t healthy = 0, diagnosed = 0, unclassified = 0, errors = 0;
  size_t no_evidence = 0;  // runs whose input holds nothing understood (exit 4)
};

// Exit code of a set of runs: the worst of them, ranked
// input error (2) > unexplained failure (3) > diagnosed (1) > no evidence (4) > healthy (0).
int WorstExitCode(const std::vector<RunResult>& runs);

// Fills each failed run's signature, groups the runs and counts outcomes.
Report MakeReport(std::vector<RunResult> runs, bool many, std::string tool_version);

enum class Format { kText, kJson, kMarkdown, kJunit, kSarif, kGithub, kHtml };

// "text", "json", "markdown" (or "md"), "junit", "sarif", "github", "html".
StatusOr<Format> ParseFormat(std::string_view name);
const char* FormatName(Format format);

class Reporter {
 public:
  virtual ~Reporter() = default;
  // Writes the whole document for `report` to `out`.
  virtual void Write(const Report& report, std::ostream& out) const = 0;
};

std::unique_ptr<Reporter> MakeReporter(Format format);

// The JSON document of --format json: one run's Analysis, or for many runs
// {"schema_version":1, "tool", "summary", "runs":[...], "groups":[...]}.
nlohmann::json ReportToJson(const Report& report);

}  // namespace tpt::report
