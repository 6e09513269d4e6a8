// html.cc: one self-contained page (inline CSS, inline SVG, one small inline
// script; no network: the Content-Security-Policy forbids every fetch).
//
// Per run: the verdict, a stacked bar per rank of the memory ledger (free at
// init, weights, reserved slice, KV pool, graphs, left; shortfall in red), the
// rank x phase timeline showing where each rank stopped and which failed
// first, the evidence lines, what it is not, the remedy and the repro command.
// Many runs: the groups with counts first. All log text goes through
// XmlEscape, so a log line holding <script> is shown, never run.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <ostream>
#include <random>
#include <set>
#include <sstream>

#include "report/common.h"
#include "report/evidence.h"
#include "report/fix.h"
#include "report/html_parts.h"
#include "report/renderers.h"

namespace tpt::report {

namespace {

constexpr size_t kMaxEvidence = 30;
// A --runs page stays small for hundreds of runs: a full section (folded) for
// the largest groups and the first runs nothing explained; every run is a
// short row of the runs table.
constexpr size_t kMaxGroupSections = 12;
constexpr size_t kMaxLoneSections = 10;

std::string Num(double v) { return HtmlNum(v); }

std::string Esc(std::string_view s) { return XmlEscape(s); }

constexpr const char* kStyle = R"(
:root{--fg:#1d2330;--muted:#5b6475;--line:#d8dde6;--bad:#c62828;--ok:#2e7d32;--warn:#b26a00}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);margin:24px auto;max-width:1040px;padding:0 16px}
h1{font-size:22px;margin:0 0 4px} h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid var(--line);padding-bottom:4px}
h3{font-size:15px;margin:18px 0 6px} .muted{color:var(--muted)} .verdict{font-size:16px;font-weight:600}
.badge{display:inline-block;padding:1px 8px;border-radius:10px;font-size:12px;font-weight:600;color:#fff;background:var(--muted)}
.badge.diagnosed{background:var(--bad)} .badge.unknown{background:var(--warn)} .badge.healthy{background:var(--ok)} .badge.error{background:#6a1b9a}
table{border-collapse:collapse;margin:6px 0} td,th{border:1px solid var(--line);padding:3px 8px;text-align:left;vertical-align:top}
th{background:#f3f5f8} td.num{text-align:right;font-variant-numeric:tabular-nums}
pre{background:#f6f8fa;border:1px solid var(--line);padding:8px;overflow-x:auto;white-space:pre-wrap;word-break:break-all;font-size:12.5px}
code{background:#f3f5f8;padding:0 3px;border-radius:3px}
.legend span{display:inline-block;margin-right:14px;font-size:12px} .legend i{display:inline-block;width:12px;height:12px;margin-right:4px;vertical-align:-2px}
svg text{font:12px system-ui,sans-serif;fill:#1d2330} svg text.halo{paint-order:stroke;stroke:#fff;stroke-width:3px} .run{margin-bottom:36px}
.answer{display:flex;gap:16px;align-items:flex-start;flex-wrap:wrap;margin:6px 0 10px}
.answer .what{flex:1 1 520px;min-width:320px} .answer .fix{flex:0 1 400px;min-width:280px}
.fix{border:2px solid var(--ok);border-radius:8px;padding:8px 12px;background:#f1f8f2}
.nw{white-space:nowrap} .fix h3{margin:0 0 4px;color:var(--ok)} .fix pre{margin:4px 0;background:#fff;white-space:pre-wrap;word-break:normal;overflow-wrap:anywhere}
.fix.none{border-color:var(--warn);background:#fff8ec} .fix.none h3{color:var(--warn)} .fix p{margin:4px 0}
pre.evidence{white-space:pre-wrap;word-break:normal;overflow-wrap:anywhere}
svg .lane-bg{fill:#f6f8fa} svg .lane.missing .lane-bg{fill:#fff;stroke:#c62828;stroke-dasharray:4,3}
details>summary{cursor:pointer}
)";


const char* PhaseColor(const std::string& phase) {
  static const char* kColors[] = {"#cfd8e3", "#b3c7e6", "#3b6fb6", "#43a047", "#8e5cc2", "#7cb342", "#a5d6a7"};
  int i = PhaseIndex(phase);
  return i < 0 ? "#cfd8e3" : kColors[i];
}

std::string Secs(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, s >= 100 || s == 0 ? "%.0f s" : "%.1f s", s);
  return buf;
}

// An axis tick: whole seconds without a decimal ("+15 s"), else one ("+2.5 s").
std::string Tick(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, s == std::floor(s) ? "%.0f s" : "%.1f s", s);
  return buf;
}

// A real time axis: one lane per rank (missing ranks as empty lanes), phases
// as spans, the first error marked, warnings and timeouts placed in time,
// long silences drawn; hovering any mark shows its log line.
void WriteTimeAxis(const Analysis& a, std::ostream& out) {
  const RankState* first = ShownFirstRank(a);
  TimeAxis ax = MakeTimeAxis(a);
  std::vector<int> missing = MissingRanks(a);
  struct Lane {
    const RankState* r;       // nullptr: a missing rank
    int rank;
    const RankState* origin;  // the state of a.ranks the lane's lines come from; a rank-less lane's only when it holds their first error
    std::string label, what;  // a rank-less run's lane: what its lines name
  };
  // A run whose lines carry no rank gets a lane per thing its lines name
  // (a GPU, a TGI shard, a process): never a rank number it did not print.
  // A ranked run's lines of no rank: a lane for each thing that printed them.
  std::vector<SourceLane> sources = SourceLanes(a);
  std::vector<SourceLane> rankless = sources.empty() ? RanklessLanes(a) : std::vector<SourceLane>{};
  const RankState* rankless_state = nullptr;
  for (const RankState& r : a.ranks) {
    if (r.rank < 0) rankless_state = &r;
  }
  std::vector<Lane> lanes;
  auto source_lane = [&](const SourceLane& s) {
    lanes.push_back({&s.state, s.state.rank, s.first ? rankless_state : nullptr, s.label, s.what});
  };
  if (!sources.empty()) {
    for (const SourceLane& s : sources) source_lane(s);
  } else {
    for (const SourceLane& s : rankless) source_lane(s);
    for (const RankState& r : a.ranks) {
      if (r.rank >= 0) lanes.push_back({&r, r.rank, &r, "", ""});
    }
    for (int m : missing) lanes.push_back({nullptr, m, nullptr, "", ""});
    std::stable_sort(lanes.begin(), lanes.end(), [](const Lane& x, const Lane& y) { return x.rank < y.rank; });
  }
  // The names' column as wide as the longest name (12 px bold: ~7.5 px a
  // character), with room for a first-error mark at +0 (radius 9).
  size_t longest = 8;
  for (const Lane& l : lanes) longest = std::max(longest, l.label.size());
  const double label_w = std::min(220.0, 26.0 + 7.5 * longest), plot_w = 760, lane_h = 26,
               top = 20;  // room above the lanes for the waits' labels
  // Without times, the lines are placed in the order the log holds them (one
  // slot each, by file and line): order is all a log without times tells.
  std::vector<std::pair<std::string, uint64_t>> order;
  if (!ax.ok) {
    for (const RankState& r : a.ranks) {
      for (const RankMark& m : r.marks) order.push_back({m.evidence.file, m.evidence.line});
      if (!r.last_evidence.text.empty()) order.push_back({r.last_evidence.file, r.last_evidence.line});
    }
    std::sort(order.begin(), order.end());
    order.erase(std::unique(order.begin(), order.end()), order.end());
  }
  auto Slot = [&](const Evidence& e) {
    auto it = std::lower_bound(order.begin(), order.end(), std::make_pair(e.file, e.line));
    return static_cast<double>(it - order.begin()) + 0.5;
  };
  double span = ax.ok ? std::max(ax.t1 - ax.t0, 1.0) : std::max<double>(1, order.size());
  auto X = [&](double t) { return label_w + plot_w * std::clamp(t / span, 0.0, 1.0); };
  auto XOf = [&](const RankMark& m, const RankState&) {
    if (ax.ok) {
      double t = ax.OfLine(m.evidence, m.ts, m.time_of_day);
      return X(t < 0 ? 0 : t);
    }
    return X(Slot(m.evidence));
  };
  double height = top + lane_h * lanes.size() + 30;
  out << "<h3>Timeline</h3>\n<p class=\"muted\">"
      << (!sources.empty() ? "The log's lines carry no rank: one lane per GPU, shard or process they name. " : "")
      << (ax.ok ? std::string(sources.empty() ? "One lane per rank; time" : "Time") + " from the run's first timed line. "
                : "The log prints no times: its lines are placed in the order the log holds them, left to right "
                  "(not to scale). ")
      << (!rankless.empty() ? "Lines of no rank: a lane for what printed them as the line names it (\"no rank\" when "
                              "it names nothing). "
                            : "")
      << "Hover a mark for its log line.</p>\n";
  out << "<svg class=\"timeline\" role=\"img\" aria-label=\"time axis per rank\" width=\"" << Num(label_w + plot_w + 40)
      << "\" height=\"" << Num(height) << "\" xmlns=\"http://www.w3.org/2000/svg\">\n";
  // Waits that ended in a timeout (a watchdog's 600 s), across every lane.
  std::vector<Wait> waits = TimeoutWaits(a, ax);
  for (const Wait& w : waits) {
    double x0 = X(w.from), x1 = X(w.to), h = lane_h * lanes.size();
    out << "<g class=\"wait\"><rect x=\"" << Num(x0) << "\" y=\"" << Num(top) << "\" width=\"" << Num(x1 - x0)
        << "\" height=\"" << Num(h) << "\" fill=\"#fff3e0\" stroke=\"#b26a00\" stroke-dasharray=\"6,4\"/>"
        << "<title>" << Secs(w.to - w.from) << " from the last line before it to the timeout</title></g>\n";
  }
  for (size_t i = 0; i < lanes.size(); ++i) {
    const Lane& l = lanes[i];
    double y = top + lane_h * i;
    // A lane of lines with no rank is named by what printed them (report/lanes.cc); the hover says how.
    std::string who = !l.label.empty() ? l.label : "rank " + RankLabel(l.rank);
    const std::string& what = l.what;
    bool hot = l.r != nullptr && l.origin != nullptr && l.origin == first && !l.r->first_error.empty();
    out << "<g class=\"lane" << (l.r == nullptr ? " missing" : "") << "\" data-rank=\"" << l.rank << "\""
        << (l.label.empty() ? "" : " data-lane=\"" + Esc(l.label) + "\"") << ">"
        << "<rect class=\"lane-bg\" x=\"" << Num(label_w) << "\" y=\"" << Num(y + 2) << "\" width=\"" << Num(plot_w)
        << "\" height=\"" << Num(lane_h - 6) << "\"/>"
        << "<text class=\"lane-name\" x=\"4\" y=\"" << Num(y + 16) << "\""
        << (hot ? " style=\"fill:#c62828;font-weight:700\"" : "") << ">"
        << (what.empty() ? "" : "<title>" + Esc(what) + "</title>") << Esc(who) << "</text>\n";
    if (l.r == nullptr) {
      out << "<text x=\"" << Num(label_w + 8) << "\" y=\"" << Num(y + 16)
          << "\" style=\"fill:#c62828\">no line from this rank in the log</text></g>\n";
      continue;
    }
    const RankState& r = *l.r;
    double end_t = ax.OfLine(r.last_evidence, r.last_line_ts, r.last_line_time_of_day);
    double end_x = ax.ok ? X(std::max(0.0, end_t)) : X(Slot(r.last_evidence));
    if (r.last_evidence.text.empty()) {  // a source lane without the run's last line: spans end at its last mark
      end_x = label_w;
      for (const RankMark& m : r.marks) end_x = std::max(end_x, XOf(m, r));
    }
    // Phase spans: from each phase's first line to the next phase's (or the last line).
    std::vector<const RankMark*> phases;
    for (const RankMark& m : r.marks) {
      if (m.type == "phase") phases.push_back(&m);
    }
    for (size_t p = 0; p < phases.size(); ++p) {
      double x0 = XOf(*phases[p], r);
      double x1 = p + 1 < phases.size() ? XOf(*phases[p + 1], r) : end_x;
      out << "<rect class=\"phase\" x=\"" << Num(x0) << "\" y=\"" << Num(y + 5) << "\" width=\""
          << Num(std::max(2.0, x1 - x0)) << "\" height=\"14\" fill=\"" << PhaseColor(phases[p]->label)
          << "\"><title>" << Esc(who) << " " << Esc(phases[p]->label) << " from "
          << Esc(EvidenceLocation(phases[p]->evidence)) << ": " << Esc(phases[p]->evidence.text)
          << "</title></rect>\n";
    }
    // Warnings, timeouts and errors; the run's first error larger.
    for (const RankMark& m : r.marks) {
      if (m.type == "phase") continue;
      double x = XOf(m, r);
      bool is_first = l.origin != nullptr && l.origin == first && m.evidence.line == r.first_error_evidence.line &&
                      m.evidence.file == r.first_error_evidence.file;
      double mt = ax.OfLine(m.evidence, m.ts, m.time_of_day);
      std::string title = who + " " + m.label + " at " + (mt >= 0 ? "+" + Secs(mt) + " " : "") +
                          EvidenceLocation(m.evidence) + ": " + m.evidence.text;
      out << "<g class=\"mark " << m.type << (is_first ? " first-error" : "") << "\"><title>" << Esc(title)
          << "</title>";
      if (is_first) {
        out << "<circle cx=\"" << Num(x) << "\" cy=\"" << Num(y + 12) << "\" r=\"9\" fill=\"#c62828\"/><text x=\""
            << Num(x) << "\" y=\"" << Num(y + 16) << "\" text-anchor=\"middle\" style=\"fill:#fff;font-weight:700\">"
            << "&#x2715;</text>";
        // The label left of the mark, or right of it when it would cover the lane's name.
        bool right = x - 12 - 70 < label_w;
        out << "<text x=\"" << Num(right ? x + 12 : x - 12) << "\" y=\"" << Num(y + 16) << "\" text-anchor=\""
            << (right ? "start" : "end") << "\" class=\"halo\" style=\"fill:#c62828;font-weight:700\">first error</text>";
      } else if (m.type == "error") {
        out << "<circle cx=\"" << Num(x) << "\" cy=\"" << Num(y + 12) << "\" r=\"5\" fill=\"#c62828\"/>";
      } else if (m.type == "timeout") {
        out << "<rect x=\"" << Num(x - 5) << "\" y=\"" << Num(y + 7) << "\" width=\"10\" height=\"10\" fill=\"#6a1b9a\""
            << " transform=\"rotate(45 " << Num(x) << " " << Num(y + 12) << ")\"/>";
      } else {
        out << "<path d=\"M" << Num(x) << " " << Num(y + 5) << " l6 12 h-12 z\" fill=\"#b26a00\"/>";
      }
      out << "</g>\n";
    }
    if (!r.last_evidence.text.empty()) {
      out << "<g class=\"mark last\"><title>" << Esc(who) << " last line, " << Esc(EvidenceLocation(r.last_evidence))
          << ": " << Esc(r.last_evidence.text) << "</title><line x1=\"" << Num(end_x) << "\" x2=\"" << Num(end_x)
          << "\" y1=\"" << Num(y + 3) << "\" y2=\"" << Num(y + 21) << "\" stroke=\"#1d2330\" stroke-width=\"2\"/></g>\n";
    }
    out << "</g>\n";
  }
  for (const Wait& w : waits) {
    out << "<text class=\"halo\" x=\"" << Num((X(w.from) + X(w.to)) / 2) << "\" y=\"" << Num(top - 5)
        << "\" text-anchor=\"middle\" style=\"fill:#b26a00;font-size:11px\">" << Secs(w.to - w.from)
        << " wait, then the timeout</text>\n";
  }
  // The axis.
  double ay = top + lane_h * lanes.size() + 4;
  out << "<line x1=\"" << Num(label_w) << "\" x2=\"" << Num(label_w + plot_w) << "\" y1=\"" << Num(ay) << "\" y2=\""
      << Num(ay) << "\" stroke=\"#5b6475\"/>\n";
  if (ax.ok) {
    const double steps[] = {1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 21600, 43200, 86400};
    double step = steps[0];
    for (double st : steps) {
      step = st;
      if (span / st <= 8) break;
    }
    for (double t = 0; t <= span + 1e-9; t += step) {
      out << "<line x1=\"" << Num(X(t)) << "\" x2=\"" << Num(X(t)) << "\" y1=\"" << Num(ay) << "\" y2=\""
          << Num(ay + 4) << "\" stroke=\"#5b6475\"/><text x=\"" << Num(X(t)) << "\" y=\"" << Num(ay + 16)
          << "\" text-anchor=\"middle\" class=\"muted\">+" << Tick(t) << "</text>\n";
    }
  } else {
    out << "<text x=\"" << Num(label_w) << "\" y=\"" << Num(ay + 16) << "\" class=\"muted\">earlier in the log</text>"
        << "<text x=\"" << Num(label_w + plot_w) << "\" y=\"" << Num(ay + 16)
        << "\" text-anchor=\"end\" class=\"muted\">later &#x2192;</text>\n";
  }
  out << "</svg>\n";
  // The legend names what the lanes show, nothing else.
  std::set<std::string> shown;
  bool any_last = false;
  for (const Lane& l : lanes) {
    if (l.r == nullptr) continue;
    for (const RankMark& m : l.r->marks) shown.insert(m.type == "phase" ? m.label : m.type);
    any_last |= !l.r->last_evidence.text.empty();
  }
  out << "<div class=\"legend\">";
  if (shown.count("error")) out << "<span><i style=\"background:#c62828;border-radius:6px\"></i>error</span>";
  if (shown.count("timeout")) out << "<span><i style=\"background:#6a1b9a\"></i>timeout</span>";
  if (shown.count("warning")) out << "<span><i style=\"background:#b26a00\"></i>warning</span>";
  if (any_last) out << "<span><i style=\"background:none;border-left:2px solid #1d2330;width:0\"></i>last line</span>";
  for (const std::string& p : Phases()) {
    if (!shown.count(p)) continue;
    out << "<span><i style=\"background:" << PhaseColor(p) << "\"></i>" << p << "</span>";
  }
  if (!waits.empty()) {
    out << "<span><i style=\"background:#fff3e0;border:1px dashed #b26a00\"></i>wait ending in a timeout</span>";
  }
  out << "</div>\n";
  if (!missing.empty()) {
    out << "<p><b>Missing:</b> rank" << (missing.size() == 1 ? " " : "s ") << RankRanges(missing)
        << " printed no line: a rank the others wait for, or a log that was not collected.</p>\n";
  }
}

const char* BadgeClass(const RunResult& run) {
  if (!run.error.empty()) return "error";
  switch (run.exit_code) {
    case kExitHealthy: return "healthy";
    case kExitDiagnosed: return "diagnosed";
    default: return "unknown";
  }
}

// The fix call-out beside the verdict: the line to copy, the value in use,
// its effect and the floor.
void WriteFixBox(const Analysis& a, const Diagnosis* d, std::ostream& out) {
  if (d == nullptr) {
    if (a.root_cause == "none") return;
    out << "<aside class=\"fix none\"><h3>Next step</h3><p>Read the lines below: no rule explains this failure, and "
           "they are where it shows.</p></aside>\n";
    return;
  }
  FixView v = DescribeFix(a, *d);
  if (v.kind != FixView::kLine) {
    out << "<aside class=\"fix none\"><h3>" << v.label << "</h3><p>";
    if (v.kind == FixView::kAdvice) {
      out << "<b>" << XmlEscapeKeepFlags(v.line) << "</b>" << (v.why.empty() ? "" : ": " + XmlEscapeKeepFlags(v.why));
    } else if (v.kind == FixView::kRefuted) {
      out << "Unknown: the remedy the rule computed contradicts the value in use.";
    } else {
      out << "Read the evidence lines below: no remedy is known for this cause, and they say where to look.";
    }
    out << "</p></aside>\n";
    return;
  }
  out << "<aside class=\"fix\"><h3>" << v.label << "</h3><pre class=\"copy\">" << XmlEscapeKeepFlags(v.line) << "</pre>";
  if (!v.now.empty()) out << "<p class=\"muted\">now " << Esc(v.now) << "</p>";
  if (std::string e = FixEffectText(v.effect); !e.empty()) out << "<p class=\"effect\"><b>Gives</b> " << XmlEscapeKeepFlags(e) << "</p>";
  if (!v.floor.empty()) {
    out << "<p><b>Floor</b> ";
    if (v.floor == v.value) {
      out << Esc(v.floor) << ": the smallest value that starts";
    } else {
      std::string fe = FixEffectText(v.floor_effect);
      out << Esc(v.floor)
          << (!fe.empty() ? " (" + XmlEscapeKeepFlags(fe) + ")" : v.floor_why.empty() ? "" : ": " + XmlEscapeKeepFlags(v.floor_why));
    }
    out << "</p>";
  }
  if (!v.why.empty()) out << "<p>" << XmlEscapeKeepFlags(v.why) << "</p>";
  out << "</aside>\n";
}

// Flight-recorder dumps given: each hung group's lane per rank, as a table.
void WriteCollectiveLanes(const Analysis& a, std::ostream& out) {
  for (const CollectiveLanes& l : a.collective_lanes) {
    out << "<h3>Lanes of " << Esc(LanesTitle(l)) << "</h3>\n<table class=\"lanes\"><tr><th>ranks</th><th></th>"
        << "<th>last</th><th>where</th></tr>\n";
    for (size_t i = 0; i < l.rows.size() && i < kMaxLaneRows; ++i) {
      const LaneRow& r = l.rows[i];
      const bool marked = r.mark == "missing" || r.mark == "no_dump" || r.mark == "mismatch";
      out << "<tr><td>" << Esc(r.ranks) << "</td><td>" << (marked ? "<b>" : "") << Esc(LaneMark(r))
          << (marked ? "</b>" : "") << "</td><td>" << Esc(LaneAt(r)) << "</td><td>" << Esc(LaneWhere(r)) << "</td></tr>\n";
    }
    out << "</table>\n";
    if (l.rows.size() > kMaxLaneRows)
      out << "<p class=\"muted\">... and " << l.rows.size() - kMaxLaneRows << " more rows (--format json has them all)</p>\n";
  }
}

void WriteRun(const RunResult& run, size_t index, std::ostream& out) {
  const Analysis& a = run.analysis;
  out << "<section class=\"run\" id=\"run-" << index << "\">\n<h2>" << Esc(run.name) << " <span class=\"badge "
      << BadgeClass(run) << "\">" << Esc(run.error.empty() ? a.root_cause : "unreadable") << "</span></h2>\n";
  if (!run.error.empty()) {
    out << "<p>" << Esc(run.error) << "</p>\n</section>\n";
    return;
  }
  const Diagnosis* d = PrimaryDiagnosis(a);
  out << "<div class=\"answer\"><div class=\"what\"><p class=\"verdict\">"
      << XmlEscapeKeepFlags(a.verdict.empty() ? a.root_cause : a.verdict) << "</p>\n<p class=\"muted\">";
  if (d != nullptr) {
    char conf[16];
    std::snprintf(conf, sizeof conf, "%.0f%%", d->confidence * 100);
    out << "confidence " << conf << " (<code>" << Esc(d->id) << "</code>) &middot; ";
  }
  out << Esc(RunSummary(a.run));
  if (std::string note = RankNote(a); !note.empty()) out << " &middot; " << Esc(note);
  out << (a.signature.empty() ? "" : " &middot; signature <code>" + Esc(a.signature) + "</code>") << "</p></div>\n";
  WriteFixBox(a, d, out);
  out << "</div>\n";
  if (d != nullptr) {
    if (!d->evidence.empty()) {
      out << "<h3>Evidence</h3>\n<pre class=\"evidence\">";
      size_t left_out = 0;
      for (const EvidenceRow& row : EvidenceRows(d->evidence, kMaxEvidence, &left_out)) {
        ShownEvidence shown = ShowEvidence(*row.line);
        std::string tail = shown.note + (shown.note.empty() || row.same.empty() ? "" : " ") + SameLineNote(row);
        out << Esc(EvidenceHead(*row.line)) << Esc(shown.text)
            << (tail.empty() ? "" : " <span class=\"muted\">" + Esc(tail) + "</span>") << "\n";
      }
      if (left_out > 0) out << "... and " << left_out << " more lines (--format json has them all)\n";
      out << "</pre>\n";
    }
    if (!d->ruled_out.empty()) {
      out << "<h3>What it is NOT</h3>\n<ul>\n";
      for (const RuledOut& r : d->ruled_out) out << "<li><code>" << Esc(r.id) << "</code>: " << Esc(r.reason) << "</li>\n";
      out << "</ul>\n";
    }
  }
  if (MemoryExplains(a)) {
    if (LedgerDrawable(a)) {
      WriteLedgerSvg(a, out);
    } else {
      WriteLedgerKnown(a, out);
    }
  }
  if (!a.ranks.empty()) WriteTimeAxis(a, out);
  WriteCollectiveLanes(a, out);
  if (d != nullptr) {
    Fix fix = FixOf(*d);
    bool header = false;
    for (const Remedy& r : d->remedy) {
      if (&r == fix.recommended || (fix.recommended == nullptr && &r == fix.advice)) continue;  // in the call-out
      if (!header) {
        out << "<h3>" << (fix.recommended != nullptr || fix.advice != nullptr ? "Also try" : "Remedy") << "</h3>\n<ul>\n";
      }
      header = true;
      std::string line = RemedyCommand(r);
      out << "<li>" << (&r == fix.next_step ? "Next step: " : "");
      if (!line.empty()) {
        out << "<code>" << XmlEscapeKeepFlags(line) << "</code>";
      } else {
        out << "<b>" << Esc(Advice(r)) << "</b>";
      }
      out << (r.why.empty() ? "" : ": " + Esc(r.why)) << "</li>\n";
    }
    if (header) out << "</ul>\n";
    ReproLines repro = ReproFor(a, *d);
    if (!repro.gpu.empty()) {
      out << "<h3>Reproduce on a GPU</h3>\n<pre>" << Esc(repro.gpu) << "</pre>\n<p class=\"muted\">Without a GPU, see "
          << "what it would run:</p><pre>" << Esc(repro.dry_run) << "</pre>\n";
    }
  }
  bool also = false;
  for (const Diagnosis* x : AlsoSeen(a)) {
    if (!also) out << "<h3>Also seen</h3>\n<ul>\n";
    also = true;
    out << "<li><code>" << Esc(x->id) << "</code>" << (x->consequence ? " (consequence)" : "") << ": "
        << Esc(x->title) << "</li>\n";
  }
  if (also) out << "</ul>\n";
  if (!a.findings.empty()) {
    out << "<h3>Findings</h3>\n<ul>\n";
    for (const Finding& f : a.findings) {
      out << "<li><b>" << Esc(f.severity) << "</b> " << Esc(f.title) << (f.advice.empty() ? "" : ". " + Esc(f.advice))
          << "</li>\n";
    }
    out << "</ul>\n";
  }
  out << "</section>\n";
}

// Inputs read only in part (truncated .gz, missing files, cut lines): first,
// so nobody reads the diagnosis below without knowing.
void WriteWarnings(const Report& report, std::ostream& out) {
  std::vector<WarningLine> warnings = CollectWarnings(report);
  if (warnings.empty()) return;
  out << "<h2>Warnings</h2>\n<ul class=\"warnings\">\n";
  for (const WarningLine& w : warnings) {
    out << "<li>";
    if (report.many) {
      out << "<b>" << Esc(w.runs.front()) << "</b>"
          << (w.runs.size() > 1 ? " and " + std::to_string(w.runs.size() - 1) + " more run(s)" : "") << ": ";
    }
    out << Esc(w.text) << "</li>\n";
  }
  out << "</ul>\n";
}

void WriteGroups(const Report& report, std::ostream& out) {
  out << "<h2>Groups</h2>\n<p>" << report.runs.size() << " runs: " << report.diagnosed << " diagnosed, "
      << report.unclassified << " unexplained, " << report.healthy << " healthy, " << report.errors
      << " unreadable.</p>\n";
  if (report.groups.empty()) return;
  size_t most = report.groups.front().runs.size();
  out << "<table class=\"groups\"><tr><th>signature</th><th>runs</th><th>root cause</th><th>title</th>"
         "<th>message template</th></tr>\n";
  for (size_t k = 0; k < report.groups.size(); ++k) {
    const Group& g = report.groups[k];
    // The groups with a section of their own link to it and get a bar; the
    // smaller ones (past kMaxGroupSections) link to their first run's row.
    bool full = k < kMaxGroupSections;
    out << "<tr><td><a href=\"#" << (full ? "run-" : "row-") << g.runs.front() << "\"><code>" << Esc(g.signature)
        << "</code></a></td><td class=\"num\">";
    if (full) {
      double w = 120.0 * g.runs.size() / std::max<size_t>(1, most);
      out << "<svg width=\"160\" height=\"14\" xmlns=\"http://www.w3.org/2000/svg\"><rect width=\"" << Num(w)
          << "\" height=\"12\" y=\"1\" fill=\"#c62828\"/><text x=\"" << Num(w + 4) << "\" y=\"11\">" << g.runs.size()
          << "</text></svg>";
    } else {
      out << g.runs.size();
    }
    // A smaller group's message is in its runs' rows (their verdicts).
    out << "</td><td><code>" << Esc(g.root_cause) << "</code></td><td>" << Esc(full ? g.title : Truncate(g.title, 100)) << "</td><td>";
    if (full) out << "<code>" << Esc(g.message) << "</code>";
    out << "</td></tr>\n";
  }
  out << "</table>\n";
}

class HtmlReporter : public Reporter {
 public:
  void Write(const Report& report, std::ostream& out) const override {
    // A fresh nonce a page: log text cannot guess it, so even a line that
    // slipped through escaping could not run.
    std::random_device rd;
    char nonce[33];
    std::snprintf(nonce, sizeof nonce, "%08x%08x%08x%08x", rd(), rd(), rd(), rd());
    out << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
        << "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
           "img-src data:; script-src 'nonce-"
        << nonce << "'\">\n<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\n<title>tptriage report</title>\n<style>"
        << kStyle << "</style></head>\n<body>\n<h1>tptriage report</h1>\n<p class=\"muted\">tptriage "
        << Esc(report.tool_version) << " &middot; " << report.runs.size() << " run" << (report.runs.size() == 1 ? "" : "s")
        << "</p>\n";
    WriteWarnings(report, out);
    if (report.many) {
      WriteGroups(report, out);
      // Details on demand: each group's first run folded (the first open),
      // runs that could not be read or were not explained after; the whole
      // list of runs is one compact table, folded too.
      bool first = true;
      size_t shown = 0, lone = 0, lone_shown = 0;
      for (const Group& g : report.groups) {
        if (++shown > kMaxGroupSections) break;
        out << "<details class=\"group\"" << (first ? " open" : "") << "><summary><code>" << Esc(g.signature)
            << "</code> &times;" << g.runs.size() << " &middot; <code>" << Esc(g.root_cause) << "</code>: "
            << Esc(g.title) << "</summary>\n";
        WriteRun(report.runs[g.runs.front()], g.runs.front(), out);
        out << "</details>\n";
        first = false;
      }
      for (size_t i = 0; i < report.runs.size(); ++i) {
        const RunResult& r = report.runs[i];
        if (!r.analysis.signature.empty() || r.exit_code == kExitHealthy) continue;
        if (++lone > kMaxLoneSections) continue;
        ++lone_shown;
        out << "<details class=\"group\"><summary>" << Esc(r.name) << " &middot; "
            << Esc(r.error.empty() ? r.analysis.root_cause : "unreadable") << "</summary>\n";
        WriteRun(r, i, out);
        out << "</details>\n";
      }
      size_t groups_left = report.groups.size() - std::min(report.groups.size(), kMaxGroupSections);
      if (groups_left > 0 || lone > lone_shown) {
        out << "<p class=\"muted more\">Not shown in full: ";
        if (groups_left > 0) out << groups_left << " smaller group" << (groups_left == 1 ? "" : "s");
        if (groups_left > 0 && lone > lone_shown) out << " and ";
        if (lone > lone_shown) out << lone - lone_shown << " more run" << (lone - lone_shown == 1 ? "" : "s") << " nothing explained";
        out << ". Each is a row of the table below; <code>tptriage analyze RUN</code> shows one in full.</p>\n";
      }
      // One short row a run: a run of a group points at its group (whose
      // section holds the verdict) with the rank that failed first; other runs
      // keep their own verdict, cut.
      out << "<details id=\"runs\"><summary>All " << report.runs.size()
          << " runs</summary>\n<table class=\"runs\"><tr><th>run</th><th>outcome</th><th>signature</th><th>verdict</th></tr>\n";
      std::set<std::string> in_full;  // signatures with a section above
      std::set<size_t> linked;        // rows the groups table links to
      for (size_t k = 0; k < report.groups.size(); ++k) {
        if (k < kMaxGroupSections) {
          in_full.insert(report.groups[k].signature);
        } else {
          linked.insert(report.groups[k].runs.front());
        }
      }
      for (size_t i = 0; i < report.runs.size(); ++i) {
        const RunResult& r = report.runs[i];
        const std::string& sig = r.analysis.signature;
        out << "<tr" << (linked.count(i) ? " id=\"row-" + std::to_string(i) + "\"" : "") << "><td>" << Esc(r.name) << "</td><td><span class=\"badge " << BadgeClass(r) << "\">"
            << Esc(r.error.empty() ? r.analysis.root_cause : "unreadable") << "</span></td><td>";
        if (!sig.empty()) out << "<code>" << Esc(sig) << "</code>";
        out << "</td><td>";
        if (!r.error.empty()) {
          out << Esc(Truncate(r.error, 160));
        } else if (in_full.count(sig)) {
          out << Esc(RankNote(r.analysis));
        } else {
          out << Esc(Truncate(r.analysis.verdict, 120));
        }
        out << "</td></tr>\n";
      }
      out << "</table></details>\n";
    } else {
      for (size_t i = 0; i < report.runs.size(); ++i) WriteRun(report.runs[i], i, out);
    }
    // Marks the page as rendered (tests/html_check.sh reads it back from the
    // DOM): proves the script ran and counts the pictures drawn.
    out << "<script nonce=\"" << nonce << "\">\n"
        << "(function(){var n=document.querySelectorAll('svg').length;"
           "var h=document.documentElement;h.setAttribute('data-tpt-rendered',String(n));"
           "h.setAttribute('data-tpt-height',String(h.scrollHeight));"
           // Read back by tests/html_check.sh: where the first fix call-out sits and
           // how many rank lanes the first time axis has.
           "var f=document.querySelector('.fix');if(f)h.setAttribute('data-tpt-fix-top',"
           "String(Math.round(f.getBoundingClientRect().top+window.scrollY)));"
           "var t=document.querySelector('svg.timeline');if(t)h.setAttribute('data-tpt-lanes',"
           "String(t.querySelectorAll('g.lane:not([data-rank=\"-1\"])').length));"
           "document.querySelectorAll('table.groups tr').forEach(function(tr){tr.addEventListener('click',function(){"
           "var a=tr.querySelector('a');if(a)location.hash=a.getAttribute('href');});});})();\n"
        << "</script>\n</body></html>\n";
  }
};

}  // namespace

std::unique_ptr<Reporter> MakeHtmlReporter() { return std::make_unique<HtmlReporter>(); }

}  // namespace tpt::report
