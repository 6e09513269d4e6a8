// common.h: small helpers the renderers share (escaping, units, picking the
// primary diagnosis and the first failing rank, the repro command line).
//
// Log text is untrusted: it can hold invalid UTF-8, control characters and
// markup. Every renderer passes it through the escaper of its format here.
//
//   out << XmlEscape(evidence.text);        // junit, html
//   out << FormatBytes(row.kv_pool_bytes);  // "12.40 GiB"
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "rules/analysis.h"
#include "rules/vocabulary.h"

namespace tpt::report {

struct Report;  // report/report.h

// Startup and serving phases in order (RankState::phases uses these names):
// Phases() and PhaseIndex() of rules/vocabulary.h.

// Replaces every byte sequence that is not valid UTF-8 with U+FFFD.
std::string ValidUtf8(std::string_view s);

// Escapes &, <, >, " and ' and replaces characters XML 1.0 forbids (C0
// controls other than tab, newline, carriage return; U+FFFE, U+FFFF) and DEL
// with U+FFFD; the result is valid UTF-8. Safe for XML/HTML text and
// attribute values.
std::string XmlEscape(std::string_view s);
// XmlEscape, with each command-line flag ("--mem-fraction-static") in a
// <span class="nw"> so a browser does not break it after a hyphen (html).
std::string XmlEscapeKeepFlags(std::string_view s);

// Valid UTF-8 with every control character a viewer might act on replaced by
// a space: C0 (tab kept; newline and carriage return kept when
// `keep_newlines`), DEL, C1 (U+0080..U+009F, NEL among them) and the Unicode
// line and paragraph separators U+2028/U+2029.
std::string StripControls(std::string_view s, bool keep_newlines);

// GitHub's runner reads a line of a job's stdout or stderr as a workflow
// command when, after leading blanks, it starts with "::" (::add-mask::,
// ::error::) or the legacy "##[". Such a line of `text` gets a backslash
// before the "::" / "##[" (inert, still readable); other lines are unchanged.
std::string InertWorkflowCommands(std::string_view text);
// True when `line` (one line, no '\n') would be read as a workflow command.
bool LooksLikeWorkflowCommand(std::string_view line);

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
// A ledger row's "left": FormatBytes, except that a remainder within the
// ledger's tolerance (the logged figures' own rounding) reads "0 GiB", so a
// healthy run never shows "left -5.1 MiB".
std::string FormatLeft(double left_bytes);

// The diagnosis to lead with: the first that is not a consequence, else the
// first, else nullptr.
const Diagnosis* PrimaryDiagnosis(const Analysis& a);

// Where a rank stopped: its last phase line's phase, or a later phase when
// one of its errors is raised inside it (parser/events.json phase_intrinsic:
// SGLang's "Not enough memory" sizes the KV pool after "Load weight end").
std::string StoppedAt(const RankState& r);

// "Also seen": the diagnoses after the primary, except another reading of the
// primary's own anchor line (a warm-up OOM is not also a runtime OOM; the
// JSON keeps every diagnosis).
std::vector<const Diagnosis*> AlsoSeen(const Analysis& a);

// The rank that failed first: the rank of the primary diagnosis' first
// evidence line if that rank has an error; else the earliest first_error_ts
// among numbered ranks with an error (untimed ones in rank order after the
// timed ones), then the rank-less lines (rank -1); nullptr if none.
const RankState* FirstFailingRank(const Analysis& a);

// For display: the first failing rank, or nullptr when the primary diagnosis
// blames a rank that logged no error (a hang's silent rank): the rank that
// merely timed out first is then not the one to look at.
const RankState* ShownFirstRank(const Analysis& a);
// "rank 3 failed first", "rank 2 blamed (no line of it in the log)", or "".
std::string RankNote(const Analysis& a);

// "3", or "none" for lines that carry no rank (rank -1).
std::string RankLabel(int rank);

// "file:line" or "file" when the line is unknown.
std::string EvidenceLocation(const Evidence& e);

// "--mem-fraction-static 0.78 (decrease): why".
// A remedy with no line to paste, in words: "NCCL >= 2.19.3", "lower
// --max-model-len", "nvidia-smi" (never "X (set)").
std::string Advice(const Remedy& r);
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

// ---- The answer first: what every renderer leads with. ----

// `text` cut at spaces into lines of at most `width` bytes (the first line at
// most `first_width`, when given); a word longer than its line gets a line of
// its own, whole (never cut, never "...").
std::vector<std::string> Wrap(std::string_view text, size_t width, size_t first_width = 0);

// A line a user can paste into a shell or a launch command: the rule's
// command when it gave one ("dmesg -T | grep -i xid"), `--flag value` for a
// server flag, `export NAME=value` / `unset NAME` for an environment
// variable; "" when the remedy is advice with no line to copy.
std::string RemedyCommand(const Remedy& r);

// The fix to lead with: the primary diagnosis' first remedy that has a value
// or a line to copy, the floor (a later remedy of the same flag with another
// value), and the value in use when the diagnosis' figures name the flag
// ("--mem-fraction-static" -> figures.mem_fraction_static).
struct Fix {
  const Remedy* recommended = nullptr;
  const Remedy* floor = nullptr;
  const Remedy* advice = nullptr;  // no line to copy: the first remedy its figures do not refute
  const Remedy* next_step = nullptr;  // a diagnostic (kind next_step) the fix led over: printed beside it
  bool refuted = false;            // some remedy was left out: its own figures refute it
  std::string now;  // "0.50", "" unknown
};
Fix FixOf(const Diagnosis& d);

// The lanes of a hung process group (Analysis::collective_lanes), in words
// every renderer shares (report/collective_lanes.cc); each escapes them its way.
// "process group 0 (default_pg), read against collective 4 (gloo:all_reduce [[4096]])"
std::string LanesTitle(const CollectiveLanes& l);
// "waits in it", "MISSING", "NO DUMP", "MISMATCH", "unknown (dump cut)", "".
std::string LaneMark(const LaneRow& r);
// "seq 4 gloo:all_reduce [[4096]] scheduled", "p2p seq 2 nccl:send 2->3 ...", "no record".
std::string LaneAt(const LaneRow& r);
// "stack: load_next_batch (m.py:16); called from worker (m.py:34)".
std::string LaneWhere(const LaneRow& r);
// The rows a terminal or page shows a group (the rest: --format json).
inline constexpr size_t kMaxLaneRows = 16;

// "0-3,5,7-8" for sorted, distinct ranks.
std::string RankRanges(std::vector<int> ranks);

// Ranks the run's layout expects (tp x pp, else the highest rank seen + 1)
// that printed nothing: the ones to look at in a hang.
std::vector<int> MissingRanks(const Analysis& a);

// The lines that carry no rank, split into lanes by what printed them, as
// each line names it (rules/line_source.h): a GPU's PCI bus id ("GPU
// 0000:81:00"), a TGI shard ("shard 0", its rank=N), a process the prefix
// names ("engine core", "API server"), torchrun's elastic agent or TGI's
// launcher ("launcher"), TGI's "router", LMDeploy's "TurboMind", SGLang's
// "main process", TensorRT-LLM's "C++ runtime", a process id ("pid 4021"),
// else the input file when there are several. Lines that name nothing share
// "other lines" (a run with no rank at all) or "no rank" (beside numbered
// ranks): never "launcher" unless a line says so, never a rank number.
// A lane holds the marks of its lines; its first error is its first error
// line; last_evidence only on the lane of the run's last rank-less line.
struct SourceLane {
  std::string label;  // what the lane is, as the log names it
  std::string what;   // a sentence for the hover
  RankState state;
  bool first = false;  // holds the rank-less lines' first error (the state ShownFirstRank may point at)
  // Where the run was when its first error came: the furthest phase any line
  // at or before it had reached (a rank's, or a rank-less phase line); with no
  // error, its own last phase. "" unknown. Never "init" by default.
  std::string phase;
};
// A run whose lines carry no rank (TGI's launcher output, LMDeploy, kernel Xid
// lines): its one rank-less state's lanes; one lane "all lines" when no line
// names anything. Empty when the run has numbered ranks or no rank-less lines.
std::vector<SourceLane> SourceLanes(const Analysis& a);
// A run with numbered ranks: the lanes of its rank-less lines (its launcher's,
// main process', engine core's failures); empty when it has none.
std::vector<SourceLane> RanklessLanes(const Analysis& a);
// The lane's last line: the run's last rank-less line on its lane, else its
// last mark (time and time-of-day in *ts, *tod).
const Evidence& LaneLastLine(const RankState& lane, double* ts, bool* tod);

// Some ledger row has a figure to draw (weights, reserved slice, KV pool or
// graphs): a chart of only "free at init" and unknowns says nothing.
bool LedgerDrawable(const Analysis& a);

// Memory explains the failure (a KV-pool, OOM or free-memory cause, a SHORT
// ledger row) or the run is healthy: the ledger is worth showing.
bool MemoryExplains(const Analysis& a);
// Phases explain the failure: a startup failure that stopped before `ready`
// and is not a hang or a runtime fault. Else the renderers show the per-rank
// timeline of first error and last line.
bool PhasesExplain(const Analysis& a);

// Times on one axis: seconds since the run's first timed mark. Logs that print
// only a time of day are put on the same axis as dated lines (UTC day
// seconds). `ok` is false when the run has no times at all.
struct TimeAxis {
  bool ok = false;
  bool time_of_day = false;
  double t0 = 0, t1 = 0;  // first and last time, in axis units
  double At(double ts, bool tod) const;  // seconds since t0
  // A line without a time takes the time of the last timed line before it in
  // the same file (any rank): seconds since t0, or -1 when none is known.
  double OfLine(const Evidence& e, double ts, bool tod) const;
  std::map<std::string, std::vector<std::pair<uint64_t, double>>> timed_lines;  // file -> (line, seconds), sorted
};
TimeAxis MakeTimeAxis(const Analysis& a);

// The waits that end in a timeout (a watchdog firing): from the run's last
// timed mark before a timeout to the timeout, when that is at least 30 s and
// a fifth of the run; overlapping waits merged. Seconds on `ax`.
struct Wait {
  double from = 0, to = 0;
};
std::vector<Wait> TimeoutWaits(const Analysis& a, const TimeAxis& ax);

// The repro command lines when `repro` can run this diagnosis (its plan code
// accepts the analysis), else both empty.
struct ReproLines {
  std::string gpu;      // tptriage repro LOG...
  std::string dry_run;  // the same with --dry-run: what it would run, no GPU needed
};
ReproLines ReproFor(const Analysis& a, const Diagnosis& d);

}  // namespace tpt::report
