// exit_codes.h: the one table of analyze's exit codes. `--help`, `help
// analyze`, the man page and the README's table are written from it (the
// README's is checked against it by a test); the worst over many runs
// (--runs) and --fail-on read its order.
//
//   int code = report::WorstExitCode(runs);              // report.h
//   if (!report::FailsOn(code, "unknown")) code = kExitHealthy;
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace tpt::report {

struct ExitCode {
  int code;
  const char* outcome;  // "healthy", "failure", "error", "unknown", "no_evidence"
  const char* meaning;  // one line
};

// In the order the reports rank them, mildest first: a run that is healthy,
// then no evidence, a diagnosed failure, an unclassified one, an input error.
const std::vector<ExitCode>& ExitCodes();
// The rank of `code` in that order (0 mildest); unknown codes rank as errors.
int ExitSeverity(int code);
// --fail-on LEVEL (failure, unknown, error, never): does `code` fail? A level
// fails on its own outcome and anything more severe.
bool FailsOn(int code, std::string_view level);
// The help text: one line a code, then the --runs order and --fail-on.
std::string ExitCodesHelp();

}  // namespace tpt::report
