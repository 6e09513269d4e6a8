// exit_codes.cc: the exit-code table (exit_codes.h).
#include "report/exit_codes.h"

#include <algorithm>
#include <sstream>

#include "rules/analysis.h"

namespace tpt::report {

const std::vector<ExitCode>& ExitCodes() {
  static const std::vector<ExitCode> codes = {
      {kExitHealthy, "healthy", "healthy: no failure seen, the whole input read, and the run got somewhere"},
      {kExitNoEvidence, "no_evidence", "no evidence (root_cause: no_evidence): nothing in the input reads as a server run"},
      {kExitDiagnosed, "failure", "failure diagnosed"},
      {kExitUnclassified, "unknown", "failure seen but not classified (root_cause: unknown)"},
      {kExitUsage, "error", "usage or input error (bad flag, nothing readable)"},
  };
  return codes;
}

int ExitSeverity(int code) {
  const auto& t = ExitCodes();
  for (size_t i = 0; i < t.size(); ++i)
    if (t[i].code == code) return static_cast<int>(i);
  return static_cast<int>(t.size()) - 1;
}

bool FailsOn(int code, std::string_view level) {
  if (level == "never") return false;
  // error: an input or usage error only; unknown: that, and a run the tool
  // could not classify (unknown, no evidence); failure (the default): anything
  // but healthy, so no evidence is never a pass by default.
  if (level == "error") return ExitSeverity(code) >= ExitSeverity(kExitUsage);
  if (level == "unknown") return code == kExitUnclassified || code == kExitNoEvidence || FailsOn(code, "error");
  return code != kExitHealthy;
}

std::string ExitCodesHelp() {
  std::ostringstream s;
  std::vector<ExitCode> by_code = ExitCodes();
  std::sort(by_code.begin(), by_code.end(), [](const ExitCode& a, const ExitCode& b) { return a.code < b.code; });
  for (const ExitCode& e : by_code) s << e.code << "  " << e.meaning << "\n";
  s << "With --runs, the worst over all runs (";
  const auto& t = ExitCodes();
  for (size_t i = t.size(); i-- > 0;) s << t[i].code << (i ? " > " : "");
  s << "). --fail-on changes which\noutcomes fail: failure (default: every code but 0), unknown (3, 4 and 2), error (only 2),\n"
       "never (always 0 unless the command itself could not run).";
  return s.str();
}

}  // namespace tpt::report
