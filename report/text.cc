// text.cc: the person-facing rendering of `tptriage analyze`.
//
// One run: verdict, root cause in one sentence, the per-rank memory ledger
// (or the rank/phase timeline), evidence, what it is NOT, remedy, repro
// command, findings. Many runs: the groups with counts, then one line a run.
#include <cstdio>
#include <ostream>
#include <string>

#include "report/common.h"
#include "report/renderers.h"

namespace tpt::report {

namespace {

constexpr size_t kMaxEvidence = 8;
constexpr size_t kMaxLine = 240;

std::string Pad(std::string s, size_t width, bool right = false) {
  if (s.size() >= width) return s;
  return right ? std::string(width - s.size(), ' ') + s : s + std::string(width - s.size(), ' ');
}

std::string Percent(double fraction) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%.0f%%", fraction * 100);
  return buf;
}

// Log text on one terminal line: valid UTF-8, no control characters (C1's
// U+009B is a CSI to some terminals; U+2028 breaks the line in others).
std::string OneLine(std::string_view s) {
  std::string out = StripControls(s, /*keep_newlines=*/false);
  for (char& c : out) {
    if (c == '\t') c = ' ';
  }
  return Truncate(out, kMaxLine);
}

void WriteLedger(const Analysis& a, std::ostream& out) {
  out << "\nMemory ledger per rank (GiB):\n";
  out << "  rank  role    free@init   weights  reserved   KV pool    graphs      left\n";
  for (const LedgerRow& r : a.ledger) {
    out << "  " << Pad(RankLabel(r.rank), 4, true) << "  "
        << Pad(r.role.empty() ? "target" : r.role, 6) << Pad(FormatGiB(r.free_at_init_bytes), 11, true)
        << Pad(FormatGiB(r.weights_bytes), 10, true) << Pad(FormatGiB(r.reserved_bytes), 10, true)
        << Pad(FormatGiB(r.kv_pool_bytes), 10, true) << Pad(FormatGiB(r.graphs_bytes), 10, true)
        << Pad(FormatGiB(r.left_bytes), 10, true) << (IsShort(r) ? "  SHORT" : "") << "\n";
  }
}

void WriteTimeline(const Analysis& a, std::ostream& out) {
  const RankState* first = FirstFailingRank(a);
  out << "\nRanks and phases (# reached, X where its first error came):\n";
  out << "  rank  ";
  for (const char* p : kPhases) out << Pad(p, 10);
  out << "stopped at\n";
  for (const RankState& r : a.ranks) {
    out << "  " << Pad(r.role == "launcher" ? "main" : RankLabel(r.rank), 4, true) << "  ";
    int last = PhaseIndex(r.last_phase);
    for (int i = 0; i < kNumPhases; ++i) {
      bool reached = false;
      for (const auto& p : r.phases) reached |= (PhaseIndex(p) == i);
      std::string cell = reached ? "#" : ".";
      if (i == last && !r.first_error.empty()) cell = "X";
      out << Pad(cell, 10);
    }
    out << (r.last_phase.empty() ? "?" : r.last_phase);
    if (!r.first_error.empty()) out << "  " << r.first_error;
    if (&r == first) out << "  <- failed first";
    out << "\n";
  }
}

void WriteDiagnosis(const Analysis& a, const Diagnosis& d, std::ostream& out) {
  if (!d.evidence.empty()) {
    out << "\nEvidence:\n";
    for (size_t i = 0; i < d.evidence.size() && i < kMaxEvidence; ++i) {
      const Evidence& e = d.evidence[i];
      out << "  " << EvidenceLocation(e);
      if (e.rank >= 0) out << " rank " << e.rank;
      out << ": " << OneLine(e.text) << "\n";
    }
    if (d.evidence.size() > kMaxEvidence) {
      out << "  ... and " << d.evidence.size() - kMaxEvidence << " more lines\n";
    }
  }
  if (!d.ruled_out.empty()) {
    out << "\nWhat it is NOT:\n";
    for (const RuledOut& r : d.ruled_out) out << "  - " << r.id << ": " << OneLine(r.reason) << "\n";
  }
  if (!d.remedy.empty()) {
    out << "\nRemedy:\n";
    for (const Remedy& r : d.remedy) out << "  " << OneLine(RemedyLine(r)) << "\n";
  }
  std::string repro = ReproCommand(a, d);
  if (!repro.empty()) out << "\nReproduce on a GPU:\n  " << ValidUtf8(repro) << "\n";
}

void WriteRun(const RunResult& run, std::ostream& out) {
  const Analysis& a = run.analysis;
  if (!run.error.empty()) {
    out << "ERROR: " << OneLine(run.error) << "\n";
    return;
  }
  out << "Verdict: " << OneLine(a.verdict.empty() ? a.root_cause : a.verdict) << "\n";
  out << "Run: " << OneLine(RunSummary(a.run)) << "\n";
  const Diagnosis* primary = PrimaryDiagnosis(a);
  if (primary != nullptr) {
    out << "\nRoot cause [" << primary->id << ", confidence " << Percent(primary->confidence)
        << "]: " << OneLine(primary->explanation.empty() ? primary->title : primary->explanation) << "\n";
  } else if (a.root_cause == "unknown") {
    out << "\nRoot cause: a failure is visible but no rule explains it.\n";
  }
  if (!a.ledger.empty()) WriteLedger(a, out);
  if (!a.ranks.empty() && (a.ledger.empty() || FirstFailingRank(a) != nullptr)) WriteTimeline(a, out);
  if (primary != nullptr) WriteDiagnosis(a, *primary, out);
  bool header = false;
  for (const Diagnosis& d : a.diagnoses) {
    if (&d == primary) continue;
    if (!header) out << "\nAlso seen:\n";
    header = true;
    out << "  - " << d.id << (d.consequence ? " (consequence)" : "") << ": " << OneLine(d.title) << "\n";
  }
  if (!a.findings.empty()) {
    out << "\nFindings:\n";
    for (const Finding& f : a.findings) {
      out << "  [" << f.severity << "] " << OneLine(f.title);
      if (!f.advice.empty()) out << " -- " << OneLine(f.advice);
      out << "\n";
    }
  }
  for (const std::string& w : a.warnings) out << "warning: " << OneLine(w) << "\n";
}

class TextReporter : public Reporter {
 public:
  void Write(const Report& report, std::ostream& out) const override {
    if (!report.many) {
      for (const RunResult& run : report.runs) WriteRun(run, out);
      return;
    }
    out << report.runs.size() << " runs: " << report.diagnosed << " diagnosed, " << report.unclassified
        << " unexplained, " << report.healthy << " healthy, "
        << (report.no_evidence ? std::to_string(report.no_evidence) + " with no evidence, " : std::string())
        << report.errors << " unreadable; "
        << report.groups.size() << " distinct failure" << (report.groups.size() == 1 ? "" : "s") << "\n";
    if (!report.groups.empty()) {
      out << "\nGroups (same signature = same failure):\n";
      for (const Group& g : report.groups) {
        out << "  " << g.signature << "  x" << g.runs.size() << "  " << g.root_cause << ": "
            << OneLine(g.title) << "\n";
        out << "                message: " << OneLine(g.message) << "\n";
        out << "                runs:";
        for (size_t i : g.runs) out << " " << OneLine(report.runs[i].name);
        out << "\n";
      }
    }
    out << "\nRuns:\n";
    for (const RunResult& run : report.runs) {
      out << "  " << Pad(OneLine(run.name), 24) << " ";
      if (!run.error.empty()) {
        out << "error: " << OneLine(run.error) << "\n";
        continue;
      }
      out << Pad(run.analysis.root_cause, 26) << " "
          << Pad(run.analysis.signature.empty() ? "-" : run.analysis.signature, 13)
          << OneLine(run.analysis.verdict) << "\n";
      // Inputs read only in part: the verdict above may rest on what was cut.
      for (const std::string& w : run.analysis.warnings) out << "    warning: " << OneLine(w) << "\n";
    }
  }
};

}  // namespace

std::unique_ptr<Reporter> MakeTextReporter() { return std::make_unique<TextReporter>(); }

}  // namespace tpt::report
