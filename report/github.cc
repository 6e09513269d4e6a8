// github.cc: GitHub Actions workflow commands.
//
//   ::error file=logs/rank3.log,line=812,title=kv_pool_no_room::KV pool ...
//
// GitHub shows at most 10 error and 10 warning annotations a step (50 a
// job); past that they are dropped silently. So: one error per failure (per
// group when many runs), warnings for findings, and whatever is over the
// limit summed up in one notice. Message data escapes %, \r, \n; property
// values also escape : and , (actions/toolkit command.ts).
#include <ostream>
#include <string>
#include <vector>

#include "report/common.h"
#include "report/renderers.h"

namespace tpt::report {

std::string GithubEscapeData(std::string_view s) {
  std::string out;
  // Raw controls would reach the annotation and the job log as they are.
  for (char c : StripControls(s, /*keep_newlines=*/true)) {
    switch (c) {
      case '%': out += "%25"; break;
      case '\r': out += "%0D"; break;
      case '\n': out += "%0A"; break;
      default: out += c;
    }
  }
  return out;
}

std::string GithubEscapeProperty(std::string_view s) {
  std::string out;
  for (char c : GithubEscapeData(s)) {
    switch (c) {
      case ':': out += "%3A"; break;
      case ',': out += "%2C"; break;
      default: out += c;
    }
  }
  return out;
}

namespace {

struct Annotation {
  std::string file;
  uint64_t line = 0;
  std::string title;
  std::string message;
};

std::string Command(const char* level, const Annotation& a) {
  std::string props;
  auto add = [&](const char* key, const std::string& value) {
    if (value.empty()) return;
    props += (props.empty() ? " " : ",") + std::string(key) + "=" + GithubEscapeProperty(value);
  };
  add("file", a.file);
  if (a.line > 0) add("line", std::to_string(a.line));
  add("title", Truncate(a.title, 200));
  return "::" + std::string(level) + props + "::" + GithubEscapeData(Truncate(a.message, 4000));
}

// Where a failure points: the primary diagnosis' first evidence line, else
// the first failing rank's first error.
void PlaceOf(const Analysis& a, Annotation* out) {
  const Diagnosis* d = PrimaryDiagnosis(a);
  const Evidence* e = nullptr;
  if (d != nullptr && !d->evidence.empty()) e = &d->evidence.front();
  const RankState* r = FirstFailingRank(a);
  if (e == nullptr && r != nullptr && !r->first_error_evidence.file.empty()) e = &r->first_error_evidence;
  if (e != nullptr) {
    out->file = e->file;
    out->line = e->line;
  }
}

Annotation FailureAnnotation(const RunResult& run, size_t count) {
  const Analysis& a = run.analysis;
  Annotation ann;
  PlaceOf(a, &ann);
  const Diagnosis* d = PrimaryDiagnosis(a);
  ann.title = "tptriage: " + a.root_cause;
  if (count > 1) ann.title += " (" + std::to_string(count) + " runs)";
  std::string msg = d != nullptr && !d->explanation.empty() ? d->explanation : a.verdict;
  if (msg.empty()) msg = a.root_cause;
  msg = "[" + run.name + "] " + msg;
  if (d != nullptr) {
    for (const Remedy& r : d->remedy) msg += "\n" + RemedyLine(r);
    std::string repro = ReproCommand(a, *d);
    if (!repro.empty()) msg += "\nReproduce: " + repro;
  }
  if (!a.signature.empty()) msg += "\nSignature: " + a.signature;
  ann.message = std::move(msg);
  return ann;
}

class GithubReporter : public Reporter {
 public:
  void Write(const Report& report, std::ostream& out) const override {
    std::vector<Annotation> errors, warnings;
    if (report.many) {
      for (const Group& g : report.groups) errors.push_back(FailureAnnotation(report.runs[g.runs.front()], g.runs.size()));
    } else {
      for (const RunResult& run : report.runs) {
        if (run.error.empty() && run.exit_code != kExitHealthy) errors.push_back(FailureAnnotation(run, 1));
      }
    }
    // Inputs read only in part come first: the errors above may rest on them.
    for (const WarningLine& w : CollectWarnings(report)) {
      Annotation ann;
      ann.title = "tptriage: the analysis may be incomplete";
      ann.message = (report.many ? "[" + w.runs.front() +
                                       (w.runs.size() > 1 ? " +" + std::to_string(w.runs.size() - 1) + " more" : "") +
                                       "] "
                                 : std::string()) +
                    w.text;
      warnings.push_back(std::move(ann));
    }
    for (const RunResult& run : report.runs) {
      if (!run.error.empty()) {
        errors.push_back({"", 0, "tptriage: could not analyse " + run.name, run.error});
        continue;
      }
      for (const Finding& f : run.analysis.findings) {
        if (f.severity != "warning") continue;
        Annotation ann;
        if (!f.evidence.empty()) {
          ann.file = f.evidence.front().file;
          ann.line = f.evidence.front().line;
        }
        ann.title = "tptriage finding: " + f.id;
        ann.message = "[" + run.name + "] " + f.title + (f.advice.empty() ? "" : ". " + f.advice);
        warnings.push_back(std::move(ann));
      }
    }
    size_t shown_errors = std::min<size_t>(errors.size(), kGithubMaxErrors);
    size_t shown_warnings = std::min<size_t>(warnings.size(), kGithubMaxWarnings);
    for (size_t i = 0; i < shown_errors; ++i) out << Command("error", errors[i]) << "\n";
    for (size_t i = 0; i < shown_warnings; ++i) out << Command("warning", warnings[i]) << "\n";
    size_t hidden_errors = errors.size() - shown_errors, hidden_warnings = warnings.size() - shown_warnings;
    if (hidden_errors + hidden_warnings > 0) {
      Annotation rest;
      rest.title = "tptriage: more results than GitHub annotates";
      rest.message = std::to_string(hidden_errors) + " more error(s) and " + std::to_string(hidden_warnings) +
                     " more warning(s) not annotated (GitHub shows 10 of each a step); see the step summary "
                     "(--format markdown) or the SARIF upload.";
      out << Command("notice", rest) << "\n";
    }
    // A plain closing line for the log itself.
    out << "tptriage: " << report.runs.size() << " run(s): " << report.diagnosed << " diagnosed, "
        << report.unclassified << " unexplained, " << report.healthy << " healthy, " << report.errors
        << " unreadable; " << report.groups.size() << " distinct failure(s)\n";
  }
};

}  // namespace

std::unique_ptr<Reporter> MakeGithubReporter() { return std::make_unique<GithubReporter>(); }

}  // namespace tpt::report
