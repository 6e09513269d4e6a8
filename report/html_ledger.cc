// html_ledger.cc: the HTML page's memory ledger: a stacked bar per rank (or
// per group of ranks with the same figures), the failing rank highlighted and
// drawn again "with the fix", the card's total, and the ledger as a table.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "report/common.h"
#include "report/fix.h"
#include "report/html_parts.h"

namespace tpt::report {

std::string HtmlNum(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

namespace {

std::string Num(double v) { return HtmlNum(v); }
std::string Esc(std::string_view s) { return XmlEscape(s); }

struct Segment {
  const char* name;
  const char* color;
};
constexpr Segment kSegments[] = {
    {"weights", "#3b6fb6"}, {"reserved slice", "#8a94a6"}, {"KV pool", "#43a047"}, {"CUDA graphs", "#8e5cc2"},
    {"left", "#d7e9d8"},    {"shortfall", "#c62828"},
};

// The legend names only what some bar draws (a vLLM run has no reserved
// slice and, healthy, no shortfall).
void WriteLegend(const std::vector<LedgerRow>& rows, std::ostream& out) {
  bool drawn[6] = {}, free_line = false;
  for (const LedgerRow& r : rows) {
    const double values[] = {r.weights_bytes, r.reserved_bytes, r.kv_pool_bytes, r.graphs_bytes, r.left_bytes};
    for (int s = 0; s < 5; ++s) drawn[s] |= values[s] > 0;
    drawn[5] |= IsShort(r);
    free_line |= r.free_at_init_bytes > 0;
  }
  out << "<div class=\"legend\">";
  for (int s = 0; s < 6; ++s) {
    if (drawn[s]) out << "<span><i style=\"background:" << kSegments[s].color << "\"></i>" << kSegments[s].name << "</span>";
  }
  if (free_line) out << "<span><i style=\"background:none;border-left:2px dashed #1d2330;width:0\"></i>free at init</span>";
  out << "</div>\n";
}

// The fixed bar: the ledger row recomputed with the fix by SGLang's own
// formula (memory/); nullopt when the fix is not a fraction SGLang sizes
// its pool with, or the row lacks the figures.
std::optional<LedgerRow> WithFix(const Analysis& a, const Fix& fix, const LedgerRow& r) {
  if (fix.recommended == nullptr || a.run.framework != "sglang" || fix.recommended->flag != "--mem-fraction-static")
    return std::nullopt;
  char* end = nullptr;
  double f = std::strtod(fix.recommended->value.c_str(), &end);
  if (end == fix.recommended->value.c_str() || !(f > 0 && f <= 1)) return std::nullopt;
  if (!(r.free_at_init_bytes > 0) || !(r.weights_bytes > 0) || r.weights_bytes >= r.free_at_init_bytes)
    return std::nullopt;
  SglangAt kv;
  if (!SglangPoolAt(a, r.free_at_init_bytes, r.free_at_init_bytes - r.weights_bytes, f, &kv)) return std::nullopt;
  LedgerRow out = r;
  out.reserved_bytes = kv.reserved_bytes;
  out.kv_pool_bytes = std::max(0.0, kv.rest_bytes);
  out.graphs_bytes = 0;
  out.left_bytes = std::min(0.0, kv.rest_bytes);
  return out;
}

// One stacked bar: weights, reserved, KV pool, graphs, left; shortfall past
// the free-at-init line in red.
void WriteBar(const LedgerRow& r, double x0, double y, double px, const std::string& who, std::ostream& out) {
  double x = x0;
  const double values[] = {r.weights_bytes, r.reserved_bytes, r.kv_pool_bytes, r.graphs_bytes,
                           std::max(0.0, r.left_bytes)};
  for (int s = 0; s < 5; ++s) {
    if (!(values[s] > 0)) continue;
    double w = values[s] * px;
    out << "<rect class=\"seg\" x=\"" << Num(x) << "\" y=\"" << Num(y) << "\" width=\"" << Num(w)
        << "\" height=\"16\" fill=\"" << kSegments[s].color << "\"><title>" << Esc(who) << " " << kSegments[s].name
        << ": " << FormatBytes(values[s]) << "</title></rect>\n";
    x += w;
  }
  double free_x = x0 + r.free_at_init_bytes * px;
  if (IsShort(r)) {
    out << "<rect class=\"shortfall\" x=\"" << Num(free_x) << "\" y=\"" << Num(y) << "\" width=\""
        << Num(-r.left_bytes * px) << "\" height=\"16\" fill=\"#c62828\" fill-opacity=\"0.85\"><title>" << Esc(who)
        << " shortfall: " << FormatBytes(-r.left_bytes) << "</title></rect>\n";
  }
  if (r.free_at_init_bytes > 0) {
    out << "<line x1=\"" << Num(free_x) << "\" x2=\"" << Num(free_x) << "\" y1=\"" << Num(y - 3) << "\" y2=\""
        << Num(y + 19) << "\" stroke=\"#1d2330\" stroke-width=\"2\" stroke-dasharray=\"3,2\"><title>" << Esc(who)
        << " free at init: " << FormatBytes(r.free_at_init_bytes) << "</title></line>\n";
  }
}

}  // namespace

void WriteLedgerSvg(const Analysis& a, std::ostream& out) {
  // The row to highlight (and to draw "with the fix"): the shortest row when
  // some are short (the rank whose figures bind: SGLang sizes every rank's
  // pool from the minimum), the first failing rank's when it is as short or
  // nothing is short.
  const RankState* first = ShownFirstRank(a);
  int hot = first != nullptr ? first->rank : -2;
  const LedgerRow* shortest = nullptr;
  for (const LedgerRow& r : a.ledger) {
    if (IsShort(r) && (shortest == nullptr || r.left_bytes < shortest->left_bytes - kLedgerToleranceBytes))
      shortest = &r;
  }
  if (shortest != nullptr) {
    bool first_as_short = false;
    for (const LedgerRow& r : a.ledger) {
      first_as_short |= r.rank == hot && IsShort(r) && r.left_bytes <= shortest->left_bytes + kLedgerToleranceBytes;
    }
    if (!first_as_short) hot = shortest->rank;
  }
  Fix fix;
  if (const Diagnosis* d = PrimaryDiagnosis(a); d != nullptr) fix = FixOf(*d);
  const double label_w = 130, bar_w = 620, row_h = 30, top = 8;
  // The scale from the figures the log gave: an unknown one (NaN) counts 0,
  // never poisons the sum (the bar of a vLLM run with no free-at-init line
  // ran off the chart).
  auto k = [](double b) { return KnownBytes(b) ? b : 0.0; };
  double scale_max = 1;
  for (const LedgerRow& r : a.ledger) {
    double used = k(r.weights_bytes) + k(r.reserved_bytes) + k(r.kv_pool_bytes) + k(r.graphs_bytes);
    scale_max = std::max({scale_max, k(r.free_at_init_bytes), k(r.total_bytes), used + std::max(0.0, k(r.left_bytes)),
                          k(r.free_at_init_bytes) - std::min(0.0, k(r.left_bytes))});
  }
  double px = bar_w / scale_max;
  // Rows: each rank as logged; the failing rank also "with the fix".
  // Ranks with the same figures share one bar ("ranks 1-7"); the hot rank
  // keeps its own.
  struct Bar {
    LedgerRow row;
    std::string label;
    bool fixed = false;
    std::vector<int> ranks;
  };
  std::vector<Bar> bars;
  auto same = [](const LedgerRow& x, const LedgerRow& y) {
    auto eq = [](double p, double q) { return KnownBytes(p) ? p == q : !KnownBytes(q); };  // unknown is NaN
    return x.role == y.role && eq(x.free_at_init_bytes, y.free_at_init_bytes) && eq(x.weights_bytes, y.weights_bytes) &&
           eq(x.reserved_bytes, y.reserved_bytes) && eq(x.kv_pool_bytes, y.kv_pool_bytes) &&
           eq(x.graphs_bytes, y.graphs_bytes) && eq(x.left_bytes, y.left_bytes) && eq(x.total_bytes, y.total_bytes);
  };
  for (const LedgerRow& r : a.ledger) {
    std::string role = r.role.empty() || r.role == "target" ? "" : " " + r.role;
    bool is_hot = r.rank == hot && (r.role.empty() || r.role == "target");
    auto group = std::find_if(bars.begin(), bars.end(), [&](const Bar& b) {
      return !is_hot && !b.fixed && b.row.rank != hot && b.row.rank >= 0 && r.rank >= 0 && same(b.row, r);
    });
    if (group != bars.end()) {
      group->ranks.push_back(r.rank);
      group->label = "ranks " + RankRanges(group->ranks) + role;
      continue;
    }
    auto fixed = is_hot ? WithFix(a, fix, r) : std::nullopt;
    bars.push_back({r, "rank " + RankLabel(r.rank) + role + (fixed ? " as logged" : ""), false, {r.rank}});
    if (fixed) bars.push_back({*fixed, "with the fix (" + fix.recommended->value + ")", true, {}});
  }
  double height = top + row_h * bars.size() + 22;
  out << "<h3>Memory ledger per rank</h3>\n";
  std::vector<LedgerRow> drawn;
  for (const Bar& b : bars) drawn.push_back(b.row);
  WriteLegend(drawn, out);
  out << "<svg class=\"ledger\" role=\"img\" aria-label=\"memory ledger per rank\" width=\"" << Num(label_w + bar_w + 160)
      << "\" height=\"" << Num(height) << "\" xmlns=\"http://www.w3.org/2000/svg\">\n";
  double card = 0;
  for (const LedgerRow& r : a.ledger) card = std::max(card, r.total_bytes);
  for (size_t i = 0; i < bars.size(); ++i) {
    const Bar& b = bars[i];
    double y = top + row_h * i;
    bool is_hot = !b.fixed && b.row.rank == hot;
    if (is_hot) {
      out << "<rect class=\"hot\" x=\"0\" y=\"" << Num(y) << "\" width=\"" << Num(label_w + bar_w + 150)
          << "\" height=\"26\" fill=\"#fdecea\" rx=\"4\"/>\n";
    }
    out << "<text x=\"4\" y=\"" << Num(y + 16) << "\""
        << (is_hot ? " style=\"fill:#c62828;font-weight:700\"" : b.fixed ? " style=\"fill:#2e7d32;font-weight:600\"" : "")
        << ">" << Esc(b.label) << "</text>\n";
    WriteBar(b.row, label_w, y + 4, px, b.label, out);
    // What is left (or short); nothing when the log did not give it.
    std::string tail = IsShort(b.row)                ? "short " + FormatBytes(-b.row.left_bytes)
                       : b.fixed                     ? "KV pool " + FormatBytes(b.row.kv_pool_bytes)
                       : KnownBytes(b.row.left_bytes) ? "left " + FormatLeft(b.row.left_bytes)
                                                     : "";
    out << "<text x=\"" << Num(label_w + bar_w + 8) << "\" y=\"" << Num(y + 16) << "\""
        << (IsShort(b.row) ? " style=\"fill:#c62828;font-weight:600\"" : "") << ">" << tail << "</text>\n";
  }
  if (card > 0) {
    double x = label_w + card * px;
    out << "<line class=\"card\" x1=\"" << Num(x) << "\" x2=\"" << Num(x) << "\" y1=\"2\" y2=\"" << Num(height - 16)
        << "\" stroke=\"#1d2330\" stroke-width=\"1.5\"><title>the card's total: " << FormatBytes(card)
        << "</title></line>\n<text x=\"" << Num(x) << "\" y=\"" << Num(height - 4)
        << "\" text-anchor=\"middle\">card " << FormatBytes(card) << "</text>\n";
  }
  out << "<text x=\"" << Num(label_w) << "\" y=\"" << Num(height - 4) << "\" class=\"muted\">0</text>\n</svg>\n";
  if (!(card > 0)) {
    bool free_known = false;
    for (const LedgerRow& r : a.ledger) free_known |= KnownBytes(r.free_at_init_bytes) && r.free_at_init_bytes > 0;
    out << "<p class=\"muted card-unknown\">The log does not print the card's total memory: "
        << (free_known ? "each bar is drawn against the rank's free memory at init (the dashed line)."
                       : "the bars show what it printed, to one scale.")
        << "</p>\n";
  }
  out << "<details><summary>Ledger as a table</summary>\n<table><tr><th>ranks</th><th>role</th><th>free at init</th>"
         "<th>weights</th><th>reserved</th><th>KV pool</th><th>graphs</th><th>left</th></tr>\n";
  // Identical rows once, with their ranks (as in the text report).
  std::vector<std::pair<std::string, std::vector<int>>> rows;
  for (const LedgerRow& r : a.ledger) {
    std::string cells = "<td>" + Esc(r.role.empty() ? "target" : r.role) + "</td><td class=\"num\">" +
                        FormatBytes(r.free_at_init_bytes) + "</td><td class=\"num\">" + FormatBytes(r.weights_bytes) +
                        "</td><td class=\"num\">" + FormatBytes(r.reserved_bytes) + "</td><td class=\"num\">" +
                        FormatBytes(r.kv_pool_bytes) + "</td><td class=\"num\">" + FormatBytes(r.graphs_bytes) +
                        "</td><td class=\"num\"" +
                        (IsShort(r) ? " style=\"color:#c62828;font-weight:600\"" : "") + ">" +
                        FormatLeft(r.left_bytes) + "</td>";
    auto it = std::find_if(rows.begin(), rows.end(), [&](const auto& x) { return x.first == cells; });
    if (it == rows.end()) {
      rows.push_back({cells, {r.rank}});
    } else {
      it->second.push_back(r.rank);
    }
  }
  for (const auto& [cells, ranks] : rows) out << "<tr><td>" << RankRanges(ranks) << "</td>" << cells << "</tr>\n";
  out << "</table></details>\n";
}

// A ledger with nothing to draw (only the free memory at init, the card's
// total): the figures the log gave, in a sentence, not an empty chart.
void WriteLedgerKnown(const Analysis& a, std::ostream& out) {
  std::string known;
  for (const LedgerRow& r : a.ledger) {
    std::string row;
    if (KnownBytes(r.free_at_init_bytes) && r.free_at_init_bytes > 0) row = FormatBytes(r.free_at_init_bytes) + " free at init";
    if (KnownBytes(r.total_bytes) && r.total_bytes > 0)
      row += (row.empty() ? "" : " of ") + FormatBytes(r.total_bytes) + (row.empty() ? " on the card" : "");
    if (row.empty()) continue;
    known += (known.empty() ? "" : "; ") + (r.rank >= 0 ? "rank " + std::to_string(r.rank) + ": " : "") + row;
  }
  out << "<h3>Memory</h3>\n<p class=\"muted ledger-known\">"
      << (known.empty() ? "The log prints no memory figures to draw."
                        : "The log gives only " + Esc(known) + ": not how it was spent, so there is no ledger to draw.")
      << "</p>\n";
}
}  // namespace tpt::report
