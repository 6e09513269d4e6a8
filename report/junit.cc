// junit.cc: JUnit XML, one testcase per run (Jenkins xunit junit-10.xsd
// shape, as read by GitHub test reporters, GitLab and Jenkins). A diagnosed
// or unexplained run is a <failure> whose message is the diagnosis; a run that
// could not be read is an <error>; a healthy run passes.
#include <ostream>
#include <sstream>

#include "report/common.h"
#include "report/renderers.h"

namespace tpt::report {

namespace {

constexpr size_t kMaxEvidence = 20;

std::string FailureBody(const RunResult& run) {
  const Analysis& a = run.analysis;
  std::ostringstream body;
  body << (a.verdict.empty() ? a.root_cause : a.verdict) << "\n";
  body << RunSummary(a.run) << "\n";
  if (!a.signature.empty()) body << "signature: " << a.signature << "\n";
  const Diagnosis* d = PrimaryDiagnosis(a);
  if (d == nullptr) return body.str();
  if (!d->explanation.empty()) body << "\n" << d->explanation << "\n";
  if (!d->evidence.empty()) {
    body << "\nevidence:\n";
    for (size_t i = 0; i < d->evidence.size() && i < kMaxEvidence; ++i) {
      const Evidence& e = d->evidence[i];
      body << "  " << EvidenceLocation(e) << (e.rank >= 0 ? " rank " + std::to_string(e.rank) : "") << ": "
           << Truncate(e.text, 500) << "\n";
    }
  }
  for (const RuledOut& r : d->ruled_out) body << "not " << r.id << ": " << r.reason << "\n";
  for (const Remedy& r : d->remedy) body << RemedyLine(r) << "\n";
  std::string repro = ReproCommand(a, *d);
  if (!repro.empty()) body << "reproduce: " << repro << "\n";
  return body.str();
}

class JunitReporter : public Reporter {
 public:
  void Write(const Report& report, std::ostream& out) const override {
    size_t failures = report.diagnosed + report.unclassified;
    out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
    out << "<testsuites name=\"tptriage\" tests=\"" << report.runs.size() << "\" failures=\"" << failures
        << "\" errors=\"" << report.errors << "\">\n";
    out << "  <testsuite name=\"tptriage analyze\" tests=\"" << report.runs.size() << "\" failures=\""
        << failures << "\" errors=\"" << report.errors << "\" skipped=\"0\">\n";
    out << "    <properties>\n      <property name=\"tptriage.version\" value=\""
        << XmlEscape(report.tool_version) << "\"/>\n      <property name=\"groups\" value=\""
        << report.groups.size() << "\"/>\n    </properties>\n";
    for (const RunResult& run : report.runs) {
      const Analysis& a = run.analysis;
      std::string classname = "tptriage." + (a.run.framework.empty() ? std::string("run") : a.run.framework);
      out << "    <testcase name=\"" << XmlEscape(run.name) << "\" classname=\"" << XmlEscape(classname)
          << "\">";
      if (!run.error.empty()) {
        out << "\n      <error type=\"input_error\" message=\"" << XmlEscape(Truncate(run.error, 1000))
            << "\">" << XmlEscape(run.error) << "</error>\n    ";
      } else if (run.exit_code != kExitHealthy) {
        const Diagnosis* d = PrimaryDiagnosis(a);
        std::string message = d != nullptr && !d->explanation.empty() ? d->explanation : a.verdict;
        if (message.empty()) message = a.root_cause;
        out << "\n      <failure type=\"" << XmlEscape(a.root_cause) << "\" message=\""
            << XmlEscape(Truncate(message, 1000)) << "\">" << XmlEscape(FailureBody(run)) << "</failure>\n    ";
      }
      if (run.error.empty() && !a.warnings.empty()) {
        // Inputs read only in part: shown beside the result by every JUnit viewer.
        std::string text;
        for (const std::string& w : a.warnings) text += "warning: " + w + "\n";
        out << (run.exit_code == kExitHealthy ? "\n      " : "  ") << "<system-err>" << XmlEscape(text)
            << "</system-err>\n    ";
      }
      out << "</testcase>\n";
    }
    out << "  </testsuite>\n</testsuites>\n";
  }
};

}  // namespace

std::unique_ptr<Reporter> MakeJunitReporter() { return std::make_unique<JunitReporter>(); }

}  // namespace tpt::report
