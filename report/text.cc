// text.cc: the person-facing rendering of `tptriage analyze`.
//
// One run: verdict, root cause in one sentence, the per-rank memory ledger
// (or the rank/phase timeline), evidence, what it is NOT, remedy, repro
// command, findings. Many runs: the groups with counts, then one line a run.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ostream>
#include <set>
#include <sstream>
#include <string>

#include "report/common.h"
#include "report/evidence.h"
#include "report/fix.h"
#include "report/renderers.h"

namespace tpt::report {

namespace {

constexpr size_t kMaxEvidence = 8;
constexpr size_t kMaxLine = 240;
constexpr size_t kWidth = 100;  // wrapped paragraphs (findings, reasons, evidence)

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
std::string Clean(std::string_view s) {
  std::string out = StripControls(s, /*keep_newlines=*/false);
  for (char& c : out) {
    if (c == '\t') c = ' ';
  }
  return out;
}

std::string OneLine(std::string_view s) { return Truncate(Clean(s), kMaxLine); }

// `first` then `text` whole, wrapped at spaces; continuation lines indented
// to `indent` columns.
void WriteWrapped(std::ostream& out, const std::string& first, std::string_view text, size_t indent) {
  size_t rest = kWidth > indent + 20 ? kWidth - indent : 20;
  size_t head = first.size() + 20 <= kWidth ? kWidth - first.size() : 20;
  std::vector<std::string> lines = Wrap(Clean(text), rest, head);
  out << first << lines.front() << "\n";
  for (size_t i = 1; i < lines.size(); ++i) out << std::string(indent, ' ') << lines[i] << "\n";
}

std::string Seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, s >= 100 ? "+%.0f s" : "+%.1f s", s);
  return buf;
}

// The three lines an engineer on call reads first: the verdict, the fix (with
// its effect and the floor) and how sure we are.
void WriteAnswer(const Analysis& a, const Diagnosis* d, std::ostream& out) {
  out << "Verdict: " << Clean(a.verdict.empty() ? a.root_cause : a.verdict) << "\n";
  std::string ranks = RankNote(a);
  if (!ranks.empty()) ranks = " · " + ranks;
  if (d == nullptr) {
    if (a.root_cause == "unknown") out << "Next step: read the lines below: no rule explains this failure, and they are where it shows\n";
    out << "Run: " << Clean(RunSummary(a.run)) << ranks << "\n";
    return;
  }
  auto plain = [](const std::string& x) { return Clean(x); };
  FixView fv = DescribeFix(a, *d);
  out << fv.label << ": " << FixSentence(fv, plain, plain) << "\n";
  if (const Remedy* n = FixOf(*d).next_step) {
    std::string line = RemedyCommand(*n);
    out << "Next step: " << Clean(line.empty() ? Advice(*n) : line) << (n->why.empty() ? "" : ": " + Clean(n->why))
        << "\n";
  }
  out << "Confidence: " << Percent(d->confidence) << " (" << d->id << ") · " << Clean(RunSummary(a.run)) << ranks
      << "\n";
}

// Rows that print the same, as one line labelled with their ranks.
struct Collapsed {
  std::string cells;
  std::vector<int> ranks;
};

template <typename Row, typename CellsFn>
std::vector<Collapsed> Collapse(const std::vector<Row>& rows, CellsFn cells) {
  std::vector<Collapsed> out;
  for (const Row& r : rows) {
    std::string c = cells(r);
    auto it = std::find_if(out.begin(), out.end(), [&](const Collapsed& x) { return x.cells == c; });
    if (it == out.end()) {
      out.push_back({c, {r.rank}});
    } else {
      it->ranks.push_back(r.rank);
    }
  }
  return out;
}

void WriteLedger(const Analysis& a, std::ostream& out) {
  out << "\nMemory ledger per rank (GiB):\n";
  out << "  ranks     role    free@init   weights  reserved   KV pool    graphs      left\n";
  for (const Collapsed& c : Collapse(a.ledger, [](const LedgerRow& r) {
         return Pad(r.role.empty() ? "target" : r.role, 6) + Pad(FormatGiB(r.free_at_init_bytes), 11, true) +
                Pad(FormatGiB(r.weights_bytes), 10, true) + Pad(FormatGiB(r.reserved_bytes), 10, true) +
                Pad(FormatGiB(r.kv_pool_bytes), 10, true) + Pad(FormatGiB(r.graphs_bytes), 10, true) +
                Pad(FormatGiB(r.left_bytes), 10, true) + (IsShort(r) ? "  SHORT" : "");
       })) {
    out << "  " << Pad(RankRanges(c.ranks), 8) << "  " << c.cells << "\n";
  }
}

// Startup failures: which phase each rank reached and where it failed; the
// lines of no rank a row each by what printed them (report/lanes.cc), their X
// where the run was when their first error came.
void WritePhases(const Analysis& a, std::ostream& out) {
  const RankState* first = ShownFirstRank(a);
  std::vector<SourceLane> lanes = SourceLanes(a);
  if (lanes.empty()) lanes = RanklessLanes(a);
  size_t w = 8;  // the names' column: "0-7", "shard 1", "engine core"
  for (const SourceLane& l : lanes) w = std::max(w, l.label.size());
  out << "\nRanks and phases (# reached, X where its first error came):\n";
  out << "  " << Pad("ranks", w + 2);
  for (const std::string& p : Phases()) out << Pad(p, 10);
  out << "stopped at\n";
  auto cells_of = [&](const RankState& r, const std::string& stop, bool is_first) {
    std::string cells;
    int last = PhaseIndex(stop);
    for (int i = 0; i < static_cast<int>(Phases().size()); ++i) {
      bool reached = false;
      for (const auto& p : r.phases) reached |= (PhaseIndex(p) == i);
      std::string cell = reached ? "#" : ".";
      if (i == last && !r.first_error.empty()) cell = "X";
      cells += Pad(cell, 10);
    }
    cells += stop.empty() ? "?" : stop;
    if (!r.first_error.empty()) cells += "  " + r.first_error;
    if (is_first) cells += "  <- failed first";
    return cells;
  };
  for (const SourceLane& l : lanes) {
    bool is_first = l.first && first != nullptr && first->rank < 0;
    out << "  " << Pad(l.label, w) << "  " << cells_of(l.state, l.phase, is_first) << "\n";
  }
  std::vector<RankState> numbered;
  for (const RankState& r : a.ranks) {
    if (r.rank >= 0) numbered.push_back(r);
  }
  for (const Collapsed& c : Collapse(numbered, [&](const RankState& r) {
         return cells_of(r, StoppedAt(r), first != nullptr && first->rank == r.rank);
       })) {
    out << "  " << Pad(RankRanges(c.ranks), w) << "  " << c.cells << "\n";
  }
}

// Hangs and runtime failures: each rank's first error and last line, in the
// order the ranks failed (by time; by position in the log when it prints no
// times), the waits that ended in a timeout between them, then the ranks with
// no error and the ranks that logged nothing.
void WriteRankTimeline(const Analysis& a, std::ostream& out) {
  const RankState* first = ShownFirstRank(a);
  TimeAxis ax = MakeTimeAxis(a);
  struct Row {
    const RankState* r;
    double t;         // seconds on the axis, -1 unknown
    std::string who;  // "rank 3", or what printed a rank-less lane's lines
    bool first;       // the rank (or lane) that failed first
  };
  // The lines of no rank: a row for each thing that printed them (report/lanes.cc).
  std::vector<SourceLane> lanes = SourceLanes(a);
  if (lanes.empty()) lanes = RanklessLanes(a);
  std::vector<Row> rows;
  auto add = [&](const RankState& r, std::string who, bool is_first) {
    double t = r.first_error.empty() ? -1 : ax.OfLine(r.first_error_evidence, r.first_error_ts, false);
    rows.push_back({&r, t, std::move(who), is_first});
  };
  for (const SourceLane& l : lanes) add(l.state, l.label, l.first && first != nullptr && first->rank < 0);
  for (const RankState& r : a.ranks) {
    if (r.rank >= 0) add(r, "rank " + RankLabel(r.rank), &r == first);
  }
  size_t who_w = 9;
  for (const Row& row : rows) who_w = std::max(who_w, row.who.size() + 1);
  std::stable_sort(rows.begin(), rows.end(), [](const Row& x, const Row& y) {
    bool xe = !x.r->first_error.empty(), ye = !y.r->first_error.empty();
    if (xe != ye) return xe;  // the ranks with an error first
    if (!xe) return x.r->rank < y.r->rank;
    if ((x.t >= 0) != (y.t >= 0)) return x.t >= 0;  // timed before untimed
    const Evidence &ex = x.r->first_error_evidence, &ey = y.r->first_error_evidence;
    // Times apart by more than a second decide; else the log's order (lines of
    // one second, or a time only inherited from the line before).
    if (x.t >= 0 && std::abs(x.t - y.t) >= 1) return x.t < y.t;
    return ex.file != ey.file ? ex.file < ey.file : ex.line < ey.line;  // log order
  });
  out << "\nRanks: first error and last line, in the order they failed "
      << (ax.ok ? "(seconds from the first timed line)" : "(the log prints no times: in the order of its lines)")
      << ":\n";
  auto when = [&](const Evidence& e, double ts, bool tod) {
    double t = ax.OfLine(e, ts, tod);
    return t >= 0 ? Pad(Seconds(t), 9) + " " : std::string();
  };
  std::vector<Wait> waits = TimeoutWaits(a, ax);
  size_t next_wait = 0;
  int order = 0;
  // A line the Evidence block above already quotes whole (or names as the
  // same line of another rank) is shown by its first row here, not again.
  std::set<std::pair<std::string, uint64_t>> quoted;
  if (const Diagnosis* d = PrimaryDiagnosis(a); d != nullptr) {
    for (const EvidenceRow& row : EvidenceRows(d->evidence, kMaxEvidence)) {
      quoted.insert({row.line->file, row.line->line});
      for (const Evidence* e : row.same) quoted.insert({e->file, e->line});
    }
  }
  auto write_line = [&](const Evidence& e) {
    if (!quoted.count({e.file, e.line})) return WriteWrapped(out, std::string(17, ' '), ShownLine(e), 17);
    const std::string more = " ... (whole under Evidence)";
    std::vector<std::string> rows = Wrap(Clean(e.text), kWidth - 17 - more.size(), kWidth - 17 - more.size());
    out << std::string(17, ' ') << rows.front() << (rows.size() > 1 ? more : "") << "\n";
  };
  for (const Row& row : rows) {
    const RankState& r = *row.r;
    // A watchdog's wait that ended before this rank's error.
    while (next_wait < waits.size() && row.t >= 0 && waits[next_wait].to <= row.t + 1e-6 &&
           !r.first_error.empty()) {
      out << std::string(15, ' ') << "~ " << Seconds(waits[next_wait].to - waits[next_wait].from).substr(1)
          << " wait, then the timeout ~\n";
      ++next_wait;
    }
    std::string num = r.first_error.empty() ? "" : std::to_string(++order) + ".";
    std::string head = "  " + Pad(num, 3) + Pad(row.who, who_w) + " ";
    if (!r.first_error.empty()) {
      const Evidence& e = r.first_error_evidence;
      out << head << "error " << when(e, r.first_error_ts, false) << r.first_error << (row.first ? " (failed first)" : "") << "  "
          << Clean(EvidenceLocation(e)) << "\n";
      write_line(e);
    } else {
      out << head << "no error\n";
    }
    double last_ts = r.last_line_ts;
    bool last_tod = r.last_line_time_of_day;
    const Evidence* last = &r.last_evidence;
    if (r.rank < 0) last = &LaneLastLine(r, &last_ts, &last_tod);  // a lane: its last line, else its last mark
    if (!last->text.empty() && (last->line != r.first_error_evidence.line || last->file != r.first_error_evidence.file)) {
      out << std::string(15, ' ') << "last  " << when(*last, last_ts, last_tod) << Clean(EvidenceLocation(*last)) << "\n";
      write_line(*last);
    }
  }
  std::vector<int> missing = MissingRanks(a);
  if (!missing.empty()) {
    out << "     missing   rank" << (missing.size() == 1 ? " " : "s ") << RankRanges(missing)
        << ": no line of " << (missing.size() == 1 ? "it" : "theirs")
        << " in the log; a rank the others wait for (or whose log was not collected)\n";
  }
}

// Flight-recorder dumps given: each hung group's lane per rank (ranks in the
// same place share a row), read against the stuck collective's seq.
void WriteCollectiveLanes(const Analysis& a, std::ostream& out) {
  for (const CollectiveLanes& l : a.collective_lanes) {
    out << "\nLanes of " << Clean(LanesTitle(l)) << ", from the flight-recorder dumps:\n";
    size_t rw = 5, mw = 4, aw = 4;
    const size_t shown = std::min(l.rows.size(), kMaxLaneRows);
    for (size_t i = 0; i < shown; ++i) {
      rw = std::max(rw, std::min<size_t>(l.rows[i].ranks.size(), 24));
      mw = std::max(mw, LaneMark(l.rows[i]).size());
      aw = std::max(aw, std::min<size_t>(Clean(LaneAt(l.rows[i])).size(), 48));
    }
    out << "  " << Pad("ranks", rw) << "  " << Pad("", mw) << "  " << Pad("last", aw) << "  where\n";
    for (size_t i = 0; i < shown; ++i) {
      const LaneRow& r = l.rows[i];
      std::string ranks = Clean(r.ranks);
      if (ranks.size() > rw) {  // a long list of ranks on its own line
        out << "  " << ranks << "\n";
        ranks.clear();
      }
      const std::string where = Clean(LaneWhere(r));
      out << "  " << Pad(ranks, rw) << "  " << Pad(LaneMark(r), mw) << "  "
          << (where.empty() ? Clean(LaneAt(r)) : Pad(Clean(LaneAt(r)), aw) + "  " + where) << "\n";
    }
    if (l.rows.size() > shown)
      out << "  ... and " << l.rows.size() - shown << " more rows (--format json has them all)\n";
  }
}

void WriteDiagnosis(const Analysis& a, const Diagnosis& d, std::ostream& out) {
  if (!d.evidence.empty()) {
    out << "\nEvidence:\n";
    size_t left_out = 0;
    for (const EvidenceRow& row : EvidenceRows(d.evidence, kMaxEvidence, &left_out)) {
      ShownEvidence shown = ShowEvidence(*row.line);
      std::string tail = shown.note + (shown.note.empty() ? "" : " ") + SameLineNote(row);
      WriteWrapped(out, "  " + Clean(EvidenceHead(*row.line)), shown.text + (tail.empty() ? "" : " " + tail), 6);
    }
    if (left_out > 0) out << "  ... and " << left_out << " more lines (--format json has them all)\n";
  }
  if (!d.ruled_out.empty()) {
    out << "\nWhat it is NOT:\n";
    for (const RuledOut& r : d.ruled_out) WriteWrapped(out, "  - " + r.id + ": ", r.reason, 6);
  }
}

void WriteRemedies(const Analysis& a, const Diagnosis& d, std::ostream& out) {
  Fix fix = FixOf(d);
  bool header = false;
  for (const Remedy& r : d.remedy) {
    if (&r == fix.recommended || (fix.recommended == nullptr && &r == fix.advice)) continue;  // on the Fix: line
    if (&r == fix.next_step) continue;                                                          // on the Next step: line
    if (!header) out << "\n" << (fix.recommended != nullptr || fix.advice != nullptr ? "Also try:" : "Remedy:") << "\n";
    header = true;
    std::string line = RemedyCommand(r);
    if (line.empty()) {
      WriteWrapped(out, "  - " + Clean(Advice(r)) + ": ", r.why, 6);
    } else {
      out << "  " << Clean(line) << "\n";
      if (!r.why.empty()) WriteWrapped(out, "      ", r.why, 6);
    }
  }
  ReproLines repro = ReproFor(a, d);
  if (!repro.gpu.empty()) {
    out << "\nReproduce on a GPU (or see what it would run, no GPU needed):\n  " << Clean(repro.gpu) << "\n  "
        << Clean(repro.dry_run) << "\n";
  }
}

void WriteRun(const RunResult& run, std::ostream& out) {
  const Analysis& a = run.analysis;
  if (!run.error.empty()) {
    out << "ERROR: " << OneLine(run.error) << "\n";
    return;
  }
  const Diagnosis* primary = PrimaryDiagnosis(a);
  WriteAnswer(a, primary, out);
  if (primary != nullptr) WriteDiagnosis(a, *primary, out);
  if (MemoryExplains(a)) WriteLedger(a, out);
  if (!a.collective_lanes.empty()) {
    // The dumps say where each rank stood: its lane, not its last dump record as a line.
    WriteCollectiveLanes(a, out);
  } else if (!a.ranks.empty() && a.root_cause != "none") {
    if (PhasesExplain(a)) {
      WritePhases(a, out);
    } else {
      WriteRankTimeline(a, out);
    }
  }
  if (primary != nullptr) WriteRemedies(a, *primary, out);
  bool header = false;
  for (const Diagnosis* d : AlsoSeen(a)) {
    if (!header) out << "\nAlso seen:\n";
    header = true;
    WriteWrapped(out, "  - " + d->id + (d->consequence ? " (consequence)" : "") + ": ", d->title, 6);
  }
  if (!a.findings.empty()) {
    out << "\nFindings:\n";
    for (const Finding& f : a.findings) {
      WriteWrapped(out, "  [" + f.severity + "] ", f.title + (f.advice.empty() ? "" : ". " + f.advice), 4);
    }
  }
  for (const std::string& w : a.warnings) out << "warning: " << OneLine(w) << "\n";
}


class TextReporter : public Reporter {
 public:
  // Log text and file names never start a line GitHub's runner would read as
  // a workflow command (the report may be printed in a job).
  void Write(const Report& report, std::ostream& out) const override {
    std::ostringstream text;
    WriteRaw(report, text);
    out << InertWorkflowCommands(text.str());
  }

 private:
  void WriteRaw(const Report& report, std::ostream& out) const {
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
