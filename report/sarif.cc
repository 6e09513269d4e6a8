// sarif.cc: SARIF 2.1.0 for code-scanning uploads. One SARIF run for the
// tool invocation; one result per diagnosis (and per finding) of every
// analysed run; ruleId is the root-cause or finding id; locations point at
// the log files with line numbers (a log is the artifact, not source code);
// partialFingerprints carry the failure signature so repeats dedupe.
#include <filesystem>
#include <map>
#include <ostream>

#include "report/common.h"
#include "report/renderers.h"

namespace tpt::report {

namespace {

constexpr size_t kMaxLocations = 20;  // GitHub accepts 1,000 a result

using nlohmann::json;

// A relative reference stays relative, normalised ("a/./b/../c" -> "a/c"),
// against the uriBaseId %SRCROOT% (GitHub resolves it against the checkout);
// an absolute path, or a relative one that climbs out of the working
// directory ("../x.log"), becomes a file: URI. Characters outside the URI
// unreserved/path set are percent-encoded.
std::string PathToUri(const std::string& raw, bool* relative) {
  std::string path = raw;
  if (raw != "-") {
    std::filesystem::path p = std::filesystem::path(raw).lexically_normal();
    if (p.is_relative() && !p.empty() && *p.begin() == "..") {
      std::error_code ec;
      std::filesystem::path abs = std::filesystem::absolute(p, ec);
      if (!ec) p = abs.lexically_normal();
    }
    path = p.string();
  }
  *relative = !path.starts_with("/");
  std::string out = path.starts_with("/") ? "file://" : "";
  static const char* kHex = "0123456789ABCDEF";
  for (unsigned char c : path) {
    bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
                c == '.' || c == '_' || c == '~' || c == '/' || c == '+' || c == '@' || c == '=';
    if (keep) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

json Location(const Evidence& e) {
  bool relative = false;
  json artifact = {{"uri", PathToUri(e.file.empty() ? "-" : e.file, &relative)}};
  if (relative) artifact["uriBaseId"] = "%SRCROOT%";
  json physical = {{"artifactLocation", std::move(artifact)}};
  if (e.line > 0) {
    physical["region"] = {{"startLine", e.line}, {"snippet", {{"text", ValidUtf8(Truncate(e.text, 1000))}}}};
  }
  json loc = {{"physicalLocation", std::move(physical)}};
  if (e.rank >= 0) loc["message"] = {{"text", "rank " + std::to_string(e.rank)}};
  return loc;
}

json Locations(const std::vector<Evidence>& evidence, const Analysis& a) {
  json locs = json::array();
  for (size_t i = 0; i < evidence.size() && i < kMaxLocations; ++i) locs.push_back(Location(evidence[i]));
  if (locs.empty()) {
    // A result without a place is still useful: point at the run's first input.
    Evidence e;
    e.file = a.run.inputs.empty() ? "-" : a.run.inputs.front();
    locs.push_back(Location(e));
  }
  return locs;
}

class SarifReporter : public Reporter {
 public:
  void Write(const Report& report, std::ostream& out) const override {
    json rules = json::array();
    std::map<std::string, size_t> rule_index;
    auto rule = [&](const std::string& id, const std::string& title, const std::string& help) {
      auto [it, inserted] = rule_index.emplace(id, rules.size());
      if (inserted) {
        rules.push_back({{"id", id},
                         {"name", id},
                         {"shortDescription", {{"text", title.empty() ? id : ValidUtf8(Truncate(title, 1000))}}},
                         {"help", {{"text", help.empty() ? id : ValidUtf8(Truncate(help, 2000))}}}});
      }
      return it->second;
    };
    json results = json::array();
    for (const RunResult& run : report.runs) {
      if (!run.error.empty()) continue;  // input errors go to invocations below
      const Analysis& a = run.analysis;
      const Diagnosis* primary = PrimaryDiagnosis(a);
      for (const Diagnosis& d : a.diagnoses) {
        std::string help;
        for (const Remedy& r : d.remedy) help += (help.empty() ? "" : "\n") + RemedyLine(r);
        size_t index = rule(d.id, d.title, help);
        std::string text = d.explanation.empty() ? d.title : d.explanation;
        if (report.many) text = "[" + run.name + "] " + text;
        json result = {{"ruleId", d.id},
                       {"ruleIndex", index},
                       {"level", &d == primary ? "error" : "warning"},
                       {"message", {{"text", ValidUtf8(text.empty() ? d.id : text)}}},
                       {"locations", Locations(d.evidence, a)},
                       {"properties",
                        {{"run", run.name}, {"rule", d.rule}, {"confidence", d.confidence},
                         {"consequence", d.consequence}}}};
        if (!a.signature.empty()) result["partialFingerprints"] = {{"tptriageSignature/v1", a.signature}};
        results.push_back(std::move(result));
      }
      if (a.diagnoses.empty() && run.exit_code == kExitUnclassified) {
        size_t index = rule("unknown", "A failure no rule explains", "");
        json result = {{"ruleId", "unknown"},
                       {"ruleIndex", index},
                       {"level", "error"},
                       {"message", {{"text", ValidUtf8(a.verdict.empty() ? "unexplained failure" : a.verdict)}}},
                       {"locations", Locations({}, a)}};
        if (const RankState* r = FirstFailingRank(a); r != nullptr && !r->first_error_evidence.file.empty()) {
          result["locations"] = Locations({r->first_error_evidence}, a);
        }
        if (!a.signature.empty()) result["partialFingerprints"] = {{"tptriageSignature/v1", a.signature}};
        results.push_back(std::move(result));
      }
      for (const Finding& f : a.findings) {
        size_t index = rule(f.id, f.title, f.advice);
        std::string text = f.title + (f.advice.empty() ? "" : ". " + f.advice);
        if (report.many) text = "[" + run.name + "] " + text;
        results.push_back({{"ruleId", f.id},
                           {"ruleIndex", index},
                           {"level", f.severity == "warning" ? "warning" : "note"},
                           {"message", {{"text", ValidUtf8(text.empty() ? f.id : text)}}},
                           {"locations", Locations(f.evidence, a)}});
      }
    }
    json notifications = json::array();
    for (const RunResult& run : report.runs) {
      if (run.error.empty()) continue;
      notifications.push_back({{"level", "error"}, {"message", {{"text", ValidUtf8(run.name + ": " + run.error)}}}});
    }
    // Inputs read only in part: the results above may be missing some.
    for (const WarningLine& w : CollectWarnings(report)) {
      std::string text = report.many ? "[" + w.runs.front() + "] " + w.text : w.text;
      notifications.push_back({{"level", "warning"}, {"message", {{"text", ValidUtf8(text)}}}});
    }
    json invocation = {{"executionSuccessful", report.errors == 0}};
    if (!notifications.empty()) invocation["toolExecutionNotifications"] = std::move(notifications);
    json doc = {
        {"$schema", "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"},
        {"version", "2.1.0"},
        {"runs",
         json::array({{{"tool",
                        {{"driver",
                          {{"name", "tptriage"},
                           {"version", report.tool_version.empty() ? "0" : report.tool_version},
                           {"rules", std::move(rules)}}}}},
                       {"invocations", json::array({std::move(invocation)})},
                       {"results", std::move(results)}}})}};
    out << doc.dump(2, ' ', false, json::error_handler_t::replace) << "\n";
  }
};

}  // namespace

std::unique_ptr<Reporter> MakeSarifReporter() { return std::make_unique<SarifReporter>(); }

}  // namespace tpt::report
