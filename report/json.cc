// json.cc: the machine interface. One run: the Analysis itself
// (schema_version 1, keys as in rules/analysis.h). Many runs:
//   {"schema_version":1, "tool":{...}, "summary":{...},
//    "runs":[{"name","exit_code","error","analysis"}],
//    "groups":[{"signature","canonical","root_cause","title","message","count","runs":[names]}]}
#include <ostream>

#include "report/common.h"
#include "report/fix.h"
#include "report/renderers.h"

namespace tpt::report {

namespace {

class JsonReporter : public Reporter {
 public:
  void Write(const Report& report, std::ostream& out) const override {
    // Log text may hold invalid UTF-8: replace it rather than throw.
    out << ReportToJson(report).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  }
};

// The Analysis and, when it has a primary diagnosis, the fix to lead with
// (report/fix.h): the line, the value in use, its effect and the floor.
nlohmann::json AnalysisJson(const Analysis& a) {
  nlohmann::json j = a;
  if (const Diagnosis* d = PrimaryDiagnosis(a); d != nullptr) {
    j["fix"] = FixJson(DescribeFix(a, *d));
    // The diagnostic step printed beside the fix (text's and markdown's "Next step:" line).
    if (const Remedy* n = FixOf(*d).next_step) {
      const std::string line = RemedyCommand(*n);
      j["next_step"] = {{"flag", n->flag}, {"line", line.empty() ? Advice(*n) : line}, {"why", n->why}};
    }
  }
  return j;
}

}  // namespace

nlohmann::json ReportToJson(const Report& report) {
  if (!report.many && report.runs.size() == 1 && report.runs[0].error.empty()) {
    return AnalysisJson(report.runs[0].analysis);
  }
  nlohmann::json doc;
  doc["schema_version"] = kSchemaVersion;
  doc["tool"] = {{"name", "tptriage"}, {"version", report.tool_version}};
  doc["summary"] = {{"runs", report.runs.size()},           {"diagnosed", report.diagnosed},
                    {"unclassified", report.unclassified}, {"no_evidence", report.no_evidence},  {"healthy", report.healthy},
                    {"errors", report.errors},              {"groups", report.groups.size()},
                    {"exit_code", WorstExitCode(report.runs)}};
  nlohmann::json runs = nlohmann::json::array();
  for (const RunResult& r : report.runs) {
    nlohmann::json j = {{"name", r.name}, {"exit_code", r.exit_code}};
    if (!r.error.empty()) {
      j["error"] = r.error;
    } else {
      j["analysis"] = AnalysisJson(r.analysis);
    }
    runs.push_back(std::move(j));
  }
  doc["runs"] = std::move(runs);
  nlohmann::json groups = nlohmann::json::array();
  for (const Group& g : report.groups) {
    nlohmann::json names = nlohmann::json::array();
    for (size_t i : g.runs) names.push_back(report.runs[i].name);
    groups.push_back({{"signature", g.signature},
                      {"canonical", g.canonical},
                      {"root_cause", g.root_cause},
                      {"title", g.title},
                      {"message", g.message},
                      {"count", g.runs.size()},
                      {"runs", std::move(names)}});
  }
  doc["groups"] = std::move(groups);
  return doc;
}

std::unique_ptr<Reporter> MakeJsonReporter() { return std::make_unique<JsonReporter>(); }

}  // namespace tpt::report
