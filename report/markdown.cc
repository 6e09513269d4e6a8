// markdown.cc: GitHub-flavoured Markdown for $GITHUB_STEP_SUMMARY (1 MiB a
// step) and PR comments. Log text goes into code blocks or escaped cells.
#include <algorithm>
#include <cstdio>
#include <ostream>
#include <sstream>

#include "report/common.h"
#include "report/evidence.h"
#include "report/fix.h"
#include "report/renderers.h"

namespace tpt::report {

namespace {

constexpr size_t kMaxEvidence = 8;
constexpr size_t kMaxRunsListed = 200;

// Zero-width space: splits "@name", "#12" and "https://" so GitHub neither
// notifies, links an issue nor autolinks (the reader sees the same text).
constexpr std::string_view kZwsp = "&#8203;";

bool IsWordByte(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
         static_cast<unsigned char>(c) >= 0x80;
}

// Text for a table cell or a paragraph: HTML-escaped, no pipes or newlines,
// and log text can neither mention anyone, reference an issue nor autolink.
std::string Cell(std::string_view s, size_t max_bytes = 400) {
  std::string escaped = XmlEscape(Truncate(StripControls(s, false), max_bytes));
  std::string out;
  for (size_t i = 0; i < escaped.size(); ++i) {
    const char c = escaped[i];
    const char next = i + 1 < escaped.size() ? escaped[i + 1] : '\0';
    if (c == '&') {  // an entity XmlEscape wrote ("&#39;"): kept whole
      const size_t semi = escaped.find(';', i);
      const size_t end = semi == std::string::npos ? i : semi;
      out.append(escaped, i, end - i + 1);
      i = end;
    } else if ((c == '@' || c == '#') && IsWordByte(next)) {
      out += c;
      out += kZwsp;
    } else if (c == ':' && next == '/' && i + 2 < escaped.size() && escaped[i + 2] == '/') {
      out += kZwsp;  // scheme://: no autolink
      out += c;
    } else if (c == 'w' && escaped.compare(i, 4, "www.") == 0) {
      out += "www";
      out += kZwsp;
      i += 2;
    } else if (c == '|') {
      out += "\\|";
    } else if (c == '\n' || c == '\r') {
      out += ' ';
    } else if (c == '`' || c == '*' || c == '_' || c == '[' || c == ']' || c == '\\') {
      out += '\\';
      out += c;
    } else {
      out += c;
    }
  }
  return out;
}

// Prose (verdicts, reasons, findings) whole: escaped like a cell, never cut.
std::string Para(std::string_view s) { return Cell(s, 1 << 20); }

// An inline code span whose fence is longer than any backtick run inside.
std::string Code(std::string_view raw) {
  std::string s = ValidUtf8(Truncate(raw, 1000));
  for (char& c : s) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  size_t run = 0, longest = 0;
  for (char c : s) {
    run = (c == '`') ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  std::string fence(longest + 1, '`');
  bool pad = !s.empty() && (s.front() == '`' || s.back() == '`');
  return pad ? fence + " " + s + " " + fence : fence + s + fence;
}

// A code span in a table cell: GFM splits cells at '|' before it sees code
// spans, so each is escaped (and shown as '|' inside the span).
std::string CodeCell(std::string_view raw) {
  std::string code = Code(raw), out;
  for (char c : code) {
    if (c == '|') out += '\\';
    out += c;
  }
  return out;
}

// A fenced block that no line of the text can close.
std::string Fence(const std::string& body) {
  size_t run = 0, longest = 0;
  for (char c : body) {
    run = (c == '`') ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  return std::string(std::max<size_t>(3, longest + 1), '`');
}

void WriteLedger(const Analysis& a, std::ostream& out) {
  out << "\n**Memory ledger per rank**\n\n| ranks | role | free at init | weights | reserved | KV pool | graphs | left |\n"
      << "|---|---|---:|---:|---:|---:|---:|---:|\n";
  // Identical rows once, labelled with their ranks.
  std::vector<std::pair<std::string, std::vector<int>>> rows;
  for (const LedgerRow& r : a.ledger) {
    std::string cells = Cell(r.role.empty() ? "target" : r.role) + " | " + FormatBytes(r.free_at_init_bytes) + " | " +
                        FormatBytes(r.weights_bytes) + " | " + FormatBytes(r.reserved_bytes) + " | " +
                        FormatBytes(r.kv_pool_bytes) + " | " + FormatBytes(r.graphs_bytes) + " | " +
                        (IsShort(r) ? "**" + FormatBytes(r.left_bytes) + "** (short)" : FormatLeft(r.left_bytes));
    auto it = std::find_if(rows.begin(), rows.end(), [&](const auto& x) { return x.first == cells; });
    if (it == rows.end()) {
      rows.push_back({cells, {r.rank}});
    } else {
      it->second.push_back(r.rank);
    }
  }
  for (const auto& [cells, ranks] : rows) out << "| " << RankRanges(ranks) << " | " << cells << " |\n";
}

void WritePhases(const Analysis& a, std::ostream& out) {
  const RankState* first = ShownFirstRank(a);
  out << "\n**Ranks and phases**\n\n| ranks | phases reached | stopped at | first error |\n|---|---|---|---|\n";
  auto cells_of = [&](const RankState& r, const std::string& stop, bool is_first) {
    std::string phases;
    for (const auto& p : r.phases) phases += (phases.empty() ? "" : " → ") + p;
    return Cell(phases) + " | " + Cell(stop.empty() ? "?" : stop) + " | " + Cell(r.first_error) +
           (is_first ? " **(first)**" : "");
  };
  // The lines of no rank: a row for each thing that printed them (report/lanes.cc).
  std::vector<SourceLane> lanes = SourceLanes(a);
  if (lanes.empty()) lanes = RanklessLanes(a);
  for (const SourceLane& l : lanes) {
    out << "| " << Cell(l.label) << " | " << cells_of(l.state, l.phase, l.first && first != nullptr && first->rank < 0)
        << " |\n";
  }
  std::vector<std::pair<std::string, std::vector<int>>> rows;
  for (const RankState& r : a.ranks) {
    if (r.rank < 0) continue;
    std::string cells = cells_of(r, StoppedAt(r), &r == first);
    auto it = std::find_if(rows.begin(), rows.end(), [&](const auto& x) { return x.first == cells; });
    if (it == rows.end()) {
      rows.push_back({cells, {r.rank}});
    } else {
      it->second.push_back(r.rank);
    }
  }
  for (const auto& [cells, ranks] : rows) out << "| " << RankRanges(ranks) << " | " << cells << " |\n";
}

std::string Secs(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, s >= 100 ? "+%.0f s" : "+%.1f s", s);
  return buf;
}

// Hangs and runtime failures: each rank's first error and last line, in time.
void WriteRankTimeline(const Analysis& a, std::ostream& out) {
  const RankState* first = ShownFirstRank(a);
  TimeAxis ax = MakeTimeAxis(a);
  out << "\n**Ranks: first error and last line**" << (ax.ok ? " (seconds from the first timed line)" : "")
      << "\n\n| rank | first error | at | last line | at |\n|---|---|---|---|---|\n";
  auto when = [&](const Evidence& e, double ts, bool tod) {
    double t = ax.OfLine(e, ts, tod);
    return t >= 0 ? Secs(t) : std::string();
  };
  auto row = [&](const RankState& r, const std::string& who, bool is_first) {
    double last_ts = r.last_line_ts;
    bool last_tod = r.last_line_time_of_day;
    const Evidence& last = r.rank < 0 ? LaneLastLine(r, &last_ts, &last_tod) : r.last_evidence;
    out << "| " << Cell(who) << " | "
        << (r.first_error.empty() ? "none" : Code(r.first_error) + (is_first ? " **(first)**" : "") + " " +
                                                 Cell(r.first_error_evidence.text))
        << " | " << (r.first_error.empty() ? "" : when(r.first_error_evidence, r.first_error_ts, false)) << " | "
        << (!r.first_error.empty() && last.line == r.first_error_evidence.line &&
                    last.file == r.first_error_evidence.file
                ? std::string("(the same line)")
                : Cell(last.text))
        << " | " << when(last, last_ts, last_tod) << " |\n";
  };
  // The lines of no rank: a row for each thing that printed them (report/lanes.cc).
  std::vector<SourceLane> lanes = SourceLanes(a);
  if (lanes.empty()) lanes = RanklessLanes(a);
  for (const SourceLane& l : lanes) row(l.state, l.label, l.first && first != nullptr && first->rank < 0);
  for (const RankState& r : a.ranks) {
    if (r.rank >= 0) row(r, RankLabel(r.rank), &r == first);
  }
  std::vector<int> missing = MissingRanks(a);
  if (!missing.empty()) {
    out << "\n**Missing:** rank" << (missing.size() == 1 ? " " : "s ") << RankRanges(missing)
        << " printed no line: a rank the others wait for, or a log that was not collected.\n";
  }
}

// Flight-recorder dumps given: each hung group's lane per rank (ranks in the
// same place share a row), read against the stuck collective's seq.
void WriteCollectiveLanes(const Analysis& a, std::ostream& out) {
  for (const CollectiveLanes& l : a.collective_lanes) {
    out << "\n**Lanes of " << Para(LanesTitle(l)) << "**\n\n| ranks | | last | where |\n|---|---|---|---|\n";
    for (size_t i = 0; i < l.rows.size() && i < kMaxLaneRows; ++i) {
      const LaneRow& r = l.rows[i];
      const std::string mark = LaneMark(r);
      const bool marked = r.mark == "missing" || r.mark == "no_dump" || r.mark == "mismatch";
      out << "| " << Cell(r.ranks) << " | " << (marked ? "**" + Cell(mark) + "**" : Cell(mark)) << " | "
          << Cell(LaneAt(r)) << " | " << Cell(LaneWhere(r)) << " |\n";
    }
    if (l.rows.size() > kMaxLaneRows)
      out << "\n… and " << l.rows.size() - kMaxLaneRows << " more rows (`--format json` has them all)\n";
  }
}

void WriteRun(const RunResult& run, int heading, std::ostream& out) {
  std::string h(heading, '#');
  const Analysis& a = run.analysis;
  if (!run.error.empty()) {
    out << h << " " << Cell(run.name) << ": could not analyse\n\n" << Cell(run.error) << "\n\n";
    return;
  }
  const char* icon = run.exit_code == kExitHealthy ? "✅" : run.exit_code == kExitDiagnosed ? "❌" : "⚠️";
  out << h << " " << icon << " " << Cell(run.name) << ": `" << a.root_cause << "`\n\n";
  const Diagnosis* d = PrimaryDiagnosis(a);
  // The answer first: verdict, fix, confidence.
  out << "**" << Para(a.verdict.empty() ? a.root_cause : a.verdict) << "**\n\n";
  if (d != nullptr) {
    FixView fv = DescribeFix(a, *d);
    out << "**" << fv.label << ":** " << FixSentence(fv, Code, Para) << "\n\n";
    if (const Remedy* n = FixOf(*d).next_step) {
      std::string line = RemedyCommand(*n);
      out << "**Next step:** " << (line.empty() ? Cell(Advice(*n)) : Code(line)) << (n->why.empty() ? "" : ": " + Para(n->why))
          << "\n\n";
    }
    char conf[16];
    std::snprintf(conf, sizeof conf, "%.0f%%", d->confidence * 100);
    out << "Confidence " << conf << " (`" << d->id << "`) · ";
  } else if (a.root_cause == "unknown") {
    out << "**Next step:** read the lines below: no rule explains this failure, and they are where it shows.\n\n";
  }
  out << Cell(RunSummary(a.run));
  if (std::string note = RankNote(a); !note.empty()) out << " · " << note;
  if (!a.signature.empty()) out << " · signature `" << a.signature << "`";
  out << "\n";
  if (d != nullptr) {
    if (!d->evidence.empty()) {
      std::ostringstream body;
      size_t left_out = 0;
      for (const EvidenceRow& row : EvidenceRows(d->evidence, kMaxEvidence, &left_out)) {
        ShownEvidence shown = ShowEvidence(*row.line);
        std::string tail = shown.note + (shown.note.empty() ? "" : " ") + SameLineNote(row);
        std::string head = EvidenceHead(*row.line);
        // Wrapped at spaces, as the text report: a code block does not wrap.
        std::vector<std::string> lines = Wrap(StripControls(shown.text + (tail.empty() ? "" : " " + tail), false), 96,
                                              head.size() + 20 <= 100 ? 100 - head.size() : 20);
        body << head << lines.front() << "\n";
        for (size_t i = 1; i < lines.size(); ++i) body << "    " << lines[i] << "\n";
      }
      if (left_out > 0) body << "... and " << left_out << " more lines (--format json has them all)\n";
      std::string text = ValidUtf8(body.str());
      std::string fence = Fence(text);
      out << "\n<details><summary>Evidence</summary>\n\n" << fence << "text\n" << text << fence
          << "\n</details>\n";
    }
    if (!d->ruled_out.empty()) {
      out << "\n**What it is NOT**\n\n";
      for (const RuledOut& r : d->ruled_out) out << "- `" << r.id << "`: " << Para(r.reason) << "\n";
    }
  }
  if (MemoryExplains(a)) WriteLedger(a, out);
  if (!a.collective_lanes.empty()) {
    WriteCollectiveLanes(a, out);  // the dumps say where each rank stood
  } else if (!a.ranks.empty() && a.root_cause != "none") {
    if (PhasesExplain(a)) {
      WritePhases(a, out);
    } else {
      WriteRankTimeline(a, out);
    }
  }
  if (d != nullptr) {
    Fix fix = FixOf(*d);
    bool header = false;
    for (const Remedy& r : d->remedy) {
      if (&r == fix.recommended || (fix.recommended == nullptr && &r == fix.advice)) continue;  // the **Fix:** line
      if (&r == fix.next_step) continue;                                                          // the **Next step:** line
      if (!header) out << "\n**" << (fix.recommended != nullptr || fix.advice != nullptr ? "Also try" : "Remedy") << "**\n\n";
      header = true;
      std::string line = RemedyCommand(r);
      out << "- " << (line.empty() ? Cell(Advice(r)) : Code(line));
      if (!r.why.empty()) out << ": " << Para(r.why);
      out << "\n";
    }
    ReproLines repro = ReproFor(a, *d);
    if (!repro.gpu.empty()) {
      out << "\n**Reproduce on a GPU:** " << Code(repro.gpu) << " (without a GPU: " << Code(repro.dry_run) << ")\n";
    }
  }
  bool also = false;
  for (const Diagnosis* x : AlsoSeen(a)) {
    if (!also) out << "\n**Also seen**\n\n";
    also = true;
    out << "- `" << x->id << "`" << (x->consequence ? " (consequence)" : "") << ": " << Para(x->title) << "\n";
  }
  if (!a.warnings.empty()) {
    out << "\n**Warnings** (the analysis may be incomplete)\n\n";
    for (const std::string& w : a.warnings) out << "- ⚠️ " << Cell(w) << "\n";
  }
  if (!a.findings.empty()) {
    out << "\n**Findings**\n\n";
    for (const Finding& f : a.findings) {
      out << "- " << Cell(f.severity) << ": " << Para(f.title);
      if (!f.advice.empty()) out << ". " << Para(f.advice);
      out << "\n";
    }
  }
  out << "\n";
}

class MarkdownReporter : public Reporter {
 public:
  // As the text report: `cat summary.md` in a job replays no workflow command.
  void Write(const Report& report, std::ostream& out) const override {
    std::ostringstream text;
    WriteRaw(report, text);
    out << InertWorkflowCommands(text.str());
  }

 private:
  void WriteRaw(const Report& report, std::ostream& out) const {
    if (!report.many) {
      out << "## tptriage\n\n";
      for (const RunResult& run : report.runs) WriteRun(run, 3, out);
      return;
    }
    out << "## tptriage: " << report.runs.size() << " runs, " << report.groups.size() << " distinct failure"
        << (report.groups.size() == 1 ? "" : "s") << "\n\n";
    out << "| diagnosed | unexplained | healthy | unreadable |\n|---:|---:|---:|---:|\n| " << report.diagnosed
        << " | " << report.unclassified << " | " << report.healthy << " | " << report.errors << " |\n\n";
    if (std::vector<WarningLine> warnings = CollectWarnings(report); !warnings.empty()) {
      out << "### Warnings\n\n";
      size_t listed = 0;
      for (const WarningLine& w : warnings) {
        if (++listed > kMaxRunsListed) {
          out << "- … " << warnings.size() - kMaxRunsListed << " more\n";
          break;
        }
        out << "- ⚠️ " << Cell(w.runs.front())
            << (w.runs.size() > 1 ? " and " + std::to_string(w.runs.size() - 1) + " more run(s)" : "") << ": "
            << Cell(w.text) << "\n";
      }
      out << "\n";
    }
    if (!report.groups.empty()) {
      out << "### Groups\n\n| signature | runs | root cause | title | message template |\n"
          << "|---|---:|---|---|---|\n";
      for (const Group& g : report.groups) {
        out << "| `" << g.signature << "` | " << g.runs.size() << " | `" << g.root_cause << "` | "
            << Cell(g.title) << " | " << CodeCell(g.message) << " |\n";
      }
      out << "\n";
    }
    out << "### Runs\n\n| run | outcome | signature | verdict |\n|---|---|---|---|\n";
    size_t listed = 0;
    for (const RunResult& run : report.runs) {
      if (++listed > kMaxRunsListed) {
        out << "| … | " << report.runs.size() - kMaxRunsListed << " more runs | | |\n";
        break;
      }
      out << "| " << Cell(run.name) << " | "
          << (run.error.empty() ? "`" + run.analysis.root_cause + "`" : std::string("error")) << " | "
          << (run.analysis.signature.empty() ? "" : "`" + run.analysis.signature + "`") << " | "
          << Cell(run.error.empty() ? run.analysis.verdict : run.error) << " |\n";
    }
    out << "\n";
    // Details for the first run of each group only: the summary stays small.
    for (const Group& g : report.groups) {
      out << "<details><summary>Group <code>" << g.signature << "</code> (" << g.runs.size()
          << " runs), first run</summary>\n\n";
      WriteRun(report.runs[g.runs.front()], 4, out);
      out << "</details>\n\n";
    }
  }
};

}  // namespace

std::unique_ptr<Reporter> MakeMarkdownReporter() { return std::make_unique<MarkdownReporter>(); }

}  // namespace tpt::report
