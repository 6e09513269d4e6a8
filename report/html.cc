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
#include <cstdio>
#include <ostream>
#include <random>
#include <sstream>

#include "report/common.h"
#include "report/renderers.h"

namespace tpt::report {

namespace {

constexpr size_t kMaxEvidence = 30;
constexpr size_t kMaxRunSections = 100;

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

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
svg text{font:12px system-ui,sans-serif;fill:#1d2330} .run{margin-bottom:36px}
)";

struct Segment {
  const char* name;
  const char* color;
};
constexpr Segment kSegments[] = {
    {"weights", "#3b6fb6"}, {"reserved slice", "#8a94a6"}, {"KV pool", "#43a047"}, {"CUDA graphs", "#8e5cc2"},
    {"left", "#d7e9d8"},    {"shortfall", "#c62828"},
};

void WriteLegend(std::ostream& out) {
  out << "<div class=\"legend\">";
  for (const Segment& s : kSegments) out << "<span><i style=\"background:" << s.color << "\"></i>" << s.name << "</span>";
  out << "<span><i style=\"background:none;border-left:2px dashed #1d2330;width:0\"></i>free at init</span></div>\n";
}

void WriteLedgerSvg(const Analysis& a, std::ostream& out) {
  const double label_w = 110, bar_w = 640, row_h = 30, top = 8;
  double scale_max = 1;
  for (const LedgerRow& r : a.ledger) {
    double used = r.weights_bytes + r.reserved_bytes + r.kv_pool_bytes + r.graphs_bytes;
    scale_max = std::max({scale_max, r.free_at_init_bytes, r.total_bytes, used + std::max(0.0, r.left_bytes),
                          r.free_at_init_bytes - std::min(0.0, r.left_bytes)});
  }
  double px = bar_w / scale_max;
  double height = top + row_h * a.ledger.size() + 22;
  out << "<h3>Memory ledger per rank</h3>\n";
  WriteLegend(out);
  out << "<svg class=\"ledger\" role=\"img\" aria-label=\"memory ledger per rank\" width=\"" << Num(label_w + bar_w + 160)
      << "\" height=\"" << Num(height) << "\" xmlns=\"http://www.w3.org/2000/svg\">\n";
  for (size_t i = 0; i < a.ledger.size(); ++i) {
    const LedgerRow& r = a.ledger[i];
    double y = top + row_h * i;
    out << "<text x=\"0\" y=\"" << Num(y + 16) << "\">rank " << RankLabel(r.rank)
        << (r.role.empty() || r.role == "target" ? "" : " " + Esc(r.role)) << "</text>\n";
    if (r.total_bytes > 0) {
      out << "<rect x=\"" << Num(label_w) << "\" y=\"" << Num(y + 2) << "\" width=\"" << Num(r.total_bytes * px)
          << "\" height=\"20\" fill=\"none\" stroke=\"#d8dde6\"><title>total " << FormatBytes(r.total_bytes)
          << "</title></rect>\n";
    }
    double x = label_w;
    const double values[] = {r.weights_bytes, r.reserved_bytes, r.kv_pool_bytes, r.graphs_bytes,
                             std::max(0.0, r.left_bytes)};
    for (int s = 0; s < 5; ++s) {
      if (!(values[s] > 0)) continue;  // unknown (NaN) or nothing
      double w = values[s] * px;
      out << "<rect class=\"seg\" x=\"" << Num(x) << "\" y=\"" << Num(y + 4) << "\" width=\"" << Num(w)
          << "\" height=\"16\" fill=\"" << kSegments[s].color << "\"><title>rank " << RankLabel(r.rank) << " "
          << kSegments[s].name << ": " << FormatBytes(values[s]) << "</title></rect>\n";
      x += w;
    }
    double free_x = label_w + r.free_at_init_bytes * px;
    if (IsShort(r)) {
      out << "<rect class=\"shortfall\" x=\"" << Num(free_x) << "\" y=\"" << Num(y + 4) << "\" width=\""
          << Num(-r.left_bytes * px) << "\" height=\"16\" fill=\"#c62828\" fill-opacity=\"0.85\"><title>rank "
          << RankLabel(r.rank) << " shortfall: " << FormatBytes(-r.left_bytes) << "</title></rect>\n";
    }
    if (r.free_at_init_bytes > 0) {
      out << "<line x1=\"" << Num(free_x) << "\" x2=\"" << Num(free_x) << "\" y1=\"" << Num(y) << "\" y2=\""
          << Num(y + 24) << "\" stroke=\"#1d2330\" stroke-width=\"2\" stroke-dasharray=\"3,2\"><title>rank "
          << RankLabel(r.rank) << " free at init: " << FormatBytes(r.free_at_init_bytes) << "</title></line>\n";
    }
    std::string tail = IsShort(r) ? "short " + FormatBytes(-r.left_bytes) : "left " + FormatBytes(r.left_bytes);
    out << "<text x=\"" << Num(label_w + bar_w + 8) << "\" y=\"" << Num(y + 16) << "\""
        << (IsShort(r) ? " style=\"fill:#c62828;font-weight:600\"" : "") << ">" << tail << "</text>\n";
  }
  out << "<text x=\"" << Num(label_w) << "\" y=\"" << Num(height - 4) << "\" class=\"muted\">0</text>"
      << "<text x=\"" << Num(label_w + bar_w) << "\" y=\"" << Num(height - 4) << "\" text-anchor=\"end\">"
      << FormatBytes(scale_max) << "</text>\n</svg>\n";
  out << "<table><tr><th>rank</th><th>role</th><th>free at init</th><th>weights</th><th>reserved</th>"
         "<th>KV pool</th><th>graphs</th><th>left</th></tr>\n";
  for (const LedgerRow& r : a.ledger) {
    out << "<tr><td class=\"num\">" << RankLabel(r.rank) << "</td><td>" << Esc(r.role.empty() ? "target" : r.role)
        << "</td><td class=\"num\">" << FormatBytes(r.free_at_init_bytes) << "</td><td class=\"num\">"
        << FormatBytes(r.weights_bytes) << "</td><td class=\"num\">" << FormatBytes(r.reserved_bytes)
        << "</td><td class=\"num\">" << FormatBytes(r.kv_pool_bytes) << "</td><td class=\"num\">"
        << FormatBytes(r.graphs_bytes) << "</td><td class=\"num\""
        << (IsShort(r) ? " style=\"color:#c62828;font-weight:600\"" : "") << ">" << FormatBytes(r.left_bytes)
        << "</td></tr>\n";
  }
  out << "</table>\n";
}

void WriteTimelineSvg(const Analysis& a, std::ostream& out) {
  const RankState* first = FirstFailingRank(a);
  const double label_w = 70, cell_w = 92, row_h = 26, top = 24;
  double height = top + row_h * a.ranks.size() + 6;
  out << "<h3>Ranks and phases</h3>\n<svg class=\"timeline\" role=\"img\" aria-label=\"phase timeline per rank\" "
         "width=\""
      << Num(label_w + cell_w * kNumPhases + 240) << "\" height=\"" << Num(height)
      << "\" xmlns=\"http://www.w3.org/2000/svg\">\n";
  for (int p = 0; p < kNumPhases; ++p) {
    out << "<text x=\"" << Num(label_w + cell_w * p + cell_w / 2) << "\" y=\"14\" text-anchor=\"middle\">" << kPhases[p]
        << "</text>\n";
  }
  double t0 = 0;
  for (const RankState& r : a.ranks) {
    if (r.first_ts > 0 && (t0 == 0 || r.first_ts < t0)) t0 = r.first_ts;
  }
  for (size_t i = 0; i < a.ranks.size(); ++i) {
    const RankState& r = a.ranks[i];
    double y = top + row_h * i;
    out << "<text x=\"0\" y=\"" << Num(y + 15) << "\">" << (r.rank < 0 ? "no rank" : "rank " + RankLabel(r.rank))
        << "</text>\n";
    int last = PhaseIndex(r.last_phase);
    for (int p = 0; p < kNumPhases; ++p) {
      bool reached = false;
      for (const auto& ph : r.phases) reached |= (PhaseIndex(ph) == p);
      bool failed_here = p == last && !r.first_error.empty();
      const char* fill = failed_here ? "#c62828" : reached ? "#3b6fb6" : "#eef1f5";
      out << "<rect x=\"" << Num(label_w + cell_w * p + 2) << "\" y=\"" << Num(y + 2) << "\" width=\""
          << Num(cell_w - 4) << "\" height=\"18\" rx=\"3\" fill=\"" << fill << "\"><title>rank " << RankLabel(r.rank) << " "
          << kPhases[p] << (failed_here ? ": first error " + Esc(r.first_error) : reached ? ": reached" : ": not reached")
          << "</title></rect>\n";
      if (failed_here) {
        out << "<text x=\"" << Num(label_w + cell_w * p + cell_w / 2) << "\" y=\"" << Num(y + 15)
            << "\" text-anchor=\"middle\" style=\"fill:#fff;font-weight:700\">&#x2715;</text>\n";
      }
    }
    std::string note = r.first_error.empty() ? "stopped at " + r.last_phase : r.first_error;
    if (r.first_error_ts > 0 && t0 > 0) note += " at +" + Num(r.first_error_ts - t0) + " s";
    if (&r == first) note += "  \u2190 failed first";
    out << "<text x=\"" << Num(label_w + cell_w * kNumPhases + 8) << "\" y=\"" << Num(y + 15) << "\""
        << (&r == first ? " class=\"first-failed\" style=\"fill:#c62828;font-weight:600\"" : "") << ">" << Esc(note)
        << "</text>\n";
  }
  out << "</svg>\n";
}

const char* BadgeClass(const RunResult& run) {
  if (!run.error.empty()) return "error";
  switch (run.exit_code) {
    case kExitHealthy: return "healthy";
    case kExitDiagnosed: return "diagnosed";
    default: return "unknown";
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
  out << "<p class=\"verdict\">" << Esc(a.verdict.empty() ? a.root_cause : a.verdict) << "</p>\n<p class=\"muted\">"
      << Esc(RunSummary(a.run)) << (a.signature.empty() ? "" : " &middot; signature <code>" + Esc(a.signature) + "</code>")
      << "</p>\n";
  const Diagnosis* d = PrimaryDiagnosis(a);
  if (d != nullptr) {
    char conf[16];
    std::snprintf(conf, sizeof conf, "%.0f%%", d->confidence * 100);
    out << "<p><b>Root cause</b> <code>" << Esc(d->id) << "</code> (confidence " << conf << "): "
        << Esc(d->explanation.empty() ? d->title : d->explanation) << "</p>\n";
  }
  if (!a.ledger.empty()) WriteLedgerSvg(a, out);
  if (!a.ranks.empty()) WriteTimelineSvg(a, out);
  if (d != nullptr) {
    if (!d->evidence.empty()) {
      out << "<h3>Evidence</h3>\n<pre class=\"evidence\">";
      for (size_t i = 0; i < d->evidence.size() && i < kMaxEvidence; ++i) {
        const Evidence& e = d->evidence[i];
        out << Esc(EvidenceLocation(e)) << (e.rank >= 0 ? " rank " + std::to_string(e.rank) : "") << ": "
            << Esc(Truncate(e.text, 2000)) << "\n";
      }
      out << "</pre>\n";
    }
    if (!d->ruled_out.empty()) {
      out << "<h3>What it is NOT</h3>\n<ul>\n";
      for (const RuledOut& r : d->ruled_out) out << "<li><code>" << Esc(r.id) << "</code>: " << Esc(r.reason) << "</li>\n";
      out << "</ul>\n";
    }
    if (!d->remedy.empty()) {
      out << "<h3>Remedy</h3>\n<ul>\n";
      for (const Remedy& r : d->remedy) {
        out << "<li><code>" << Esc(r.flag + (r.value.empty() ? "" : " " + r.value)) << "</code>"
            << (r.direction.empty() ? "" : " (" + Esc(r.direction) + ")") << (r.why.empty() ? "" : ": " + Esc(r.why))
            << "</li>\n";
      }
      out << "</ul>\n";
    }
    std::string repro = ReproCommand(a, *d);
    if (!repro.empty()) out << "<h3>Reproduce on a GPU</h3>\n<pre>" << Esc(repro) << "</pre>\n";
  }
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
  for (const Group& g : report.groups) {
    double w = 120.0 * g.runs.size() / std::max<size_t>(1, most);
    out << "<tr><td><a href=\"#run-" << g.runs.front() << "\"><code>" << Esc(g.signature) << "</code></a></td>"
        << "<td class=\"num\"><svg width=\"160\" height=\"14\" xmlns=\"http://www.w3.org/2000/svg\"><rect width=\""
        << Num(w) << "\" height=\"12\" y=\"1\" fill=\"#c62828\"/><text x=\"" << Num(w + 4) << "\" y=\"11\">"
        << g.runs.size() << "</text></svg></td><td><code>" << Esc(g.root_cause) << "</code></td><td>" << Esc(g.title)
        << "</td><td><code>" << Esc(g.message) << "</code></td></tr>\n";
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
    if (report.many) WriteGroups(report, out);
    std::vector<size_t> order;
    if (report.many) {
      // The first run of each group, then the runs that are not in a group.
      std::vector<bool> listed(report.runs.size(), false);
      for (const Group& g : report.groups) {
        order.push_back(g.runs.front());
        listed[g.runs.front()] = true;
      }
      for (size_t i = 0; i < report.runs.size(); ++i) {
        if (!listed[i] && report.runs[i].analysis.signature.empty()) order.push_back(i);
      }
    } else {
      for (size_t i = 0; i < report.runs.size(); ++i) order.push_back(i);
    }
    size_t shown = 0;
    for (size_t i : order) {
      if (++shown > kMaxRunSections) break;
      WriteRun(report.runs[i], i, out);
    }
    // Marks the page as rendered (tests/html_check.sh reads it back from the
    // DOM): proves the script ran and counts the pictures drawn.
    out << "<script nonce=\"" << nonce << "\">\n"
        << "(function(){var n=document.querySelectorAll('svg').length;"
           "document.documentElement.setAttribute('data-tpt-rendered',String(n));"
           "document.querySelectorAll('table.groups tr').forEach(function(tr){tr.addEventListener('click',function(){"
           "var a=tr.querySelector('a');if(a)location.hash=a.getAttribute('href');});});})();\n"
        << "</script>\n</body></html>\n";
  }
};

}  // namespace

std::unique_ptr<Reporter> MakeHtmlReporter() { return std::make_unique<HtmlReporter>(); }

}  // namespace tpt::report
