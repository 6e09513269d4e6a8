// common.h: small helpers the renderers share (escaping, units, picking the
// primary diagnosis and the first failing rank, the repro command line).
//
// Log text is untrusted: it can hold invalid UTF-8, control characters and
// markup. Every renderer passes it through the escaper of its format here.
//
//   out << XmlEscape(evidence.text);        // junit, html
//   out << FormatBytes(row.kv_pool_bytes);  // "12.40 GiB"
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "rules/analysis.h"

namespace tpt::report {

struct Report;  // report/report.h

// Startup and serving phases in order (RankState::phases uses these names).
inline constexpr const char* kPhases[] = {"init",    "dist_init", "weights", "kv_pool",
                                          "graphs",  "ready",     "serving"};
inline constexpr int kNumPhases = 7;

// Index of `phase` in kPhases, or -1.
int PhaseIndex(std::string_view phase);

// Replaces every byte sequence that is not valid UTF-8 with U+FFFD.
std::string ValidUtf8(std::string_view s);

// Escapes &, <, >, " and ' and replaces characters XML 1.0 forbids (C0
// controls other than tab, newline, carriage return; U+FFFE, U+FFFF) and DEL
// with U+FFFD; the result is valid UTF-8. Safe for XML/HTML text and
// attribute values.
std::string XmlEscape(std::string_view s);

// Valid UTF-8 with every control character a viewer might act on replaced by
// a space: C0 (tab kept; newline and carriage return kept when
// `keep_newlines`), DEL, C1 (U+0080..U+009F, NEL among them) and the Unicode
// line and paragraph separators U+2028/U+2029.
std::string StripControls(std::string_view s, bool keep_newlines);

// The warnings of a report's runs (inputs read only in part, format files
// skipped, lines cut), each once with the runs that carry it, in the order
// first seen. Every format shows them: a report on cut logs must say so.
struct WarningLine {
  std::string text;
  std::vector<std::string> runs;
};
std::vector<WarningLine> CollectWarnings(const Report& report);

// Keeps the first `max_bytes` of `s` without cutting a UTF-8 sequence,
// adding "..." when cut.
std::string Truncate(std::string_view s, size_t max_bytes);

// "12.40 GiB" (or MiB below 1 GiB); negative values keep their sign.
std::string FormatBytes(double bytes);
// "12.40" in GiB, for tables with the unit in the header.
std::string FormatGiB(double bytes);

// The diagnosis to lead with: the first that is not a consequence, else the
// first, else nullptr.
const Diagnosis* PrimaryDiagnosis(const Analysis& a);

// The rank that failed first: the rank of the primary diagnosis' first
// evidence line if that rank has an error; else the earliest first_error_ts
// among numbered ranks with an error (untimed ones in rank order after the
// timed ones), then the rank-less lines (rank -1); nullptr if none.
const RankState* FirstFailingRank(const Analysis& a);

// "3", or "none" for lines that carry no rank (rank -1).
std::string RankLabel(int rank);

// "file:line" or "file" when the line is unknown.
std::string EvidenceLocation(const Evidence& e);

// "--mem-fraction-static 0.78 (decrease): why".
std::string RemedyLine(const Remedy& r);

// The `tptriage repro` command line for a diagnosis: repro.command when the
// rules gave one, else `tptriage repro LOG...` on the run's inputs (repro
// re-analyses them and replays the plan). Empty when the diagnosis has no
// repro plan.
std::string ReproCommand(const Analysis& a, const Diagnosis& d);

// One line describing what ran: "sglang 0.4.6, TP 8, NVIDIA H100 80GB HBM3".
std::string RunSummary(const RunInfo& run);

// Quotes an argument for a POSIX shell when it needs it.
std::string ShellQuote(std::string_view s);

}  // namespace tpt::report
