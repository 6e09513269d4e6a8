// terminal.h: what ended each process of a run, and whether a line is tied to
// that end (rules/diagnose.cc ranks diagnoses with it).
//
// A process is a producer of lines: its rank, else its input file (and its
// pid where a prefix names one: vLLM V1's `(EngineCore pid=N)` and
// `(APIServer pid=M)` are two processes of one file). It ended
// in a *terminal failure* when it printed a failure of its own (an exception,
// a fatal signal, the watchdog's abort, the server's fatal message, an
// engine-dead error, a line that says ERROR) and made no progress after it:
// no later phase line, no request served, no statistics line. A request's
// traceback the server survived, a Ctrl-C, a finalizer's ignored exception
// and a warning the run went on after end nothing.
//
// A line is *linked* to the run's end when
//   - its producer made no progress after it (it is, or comes before, that
//     producer's end: the same process, no sign of health between), or
//   - the vocabulary names the link (parser/events.json `leads_to`: a line of
//     that kind still explains a later failure of the kinds listed, e.g. free
//     memory that differs across ranks at start-up -> the KV pool sizing that
//     fails on the smallest one).
// A line its producer went on after is never the cause of a later failure
// without such a link: the engine shows it as a finding instead.
//
//   tpt::Terminals t(run);
//   if (t.any() && !t.Linked(anchor)) ...          // demote to a finding
//   std::optional<size_t> end = t.EndOf(anchor);   // the end it explains
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "rules/run_index.h"

namespace tpt {

class Terminals {
 public:
  explicit Terminals(const RunIndex& run);

  // Terminal failures in stream order (indices into run.events()).
  const std::vector<size_t>& ends() const { return ends_; }
  bool any() const { return !ends_.empty(); }
  bool IsEnd(size_t i) const;
  // The producer of events()[i] printed a phase line, served a request or a
  // statistics line after it.
  bool Survived(size_t i) const;
  // A start-up line (before serving) after which its producer went on to
  // serve (a request answered, a statistics line). A request's error while
  // serving is not one: the server keeps failing such requests.
  bool ServedAfterStartup(size_t i) const;
  // The line at i may explain the run's end (see above).
  bool Linked(size_t i) const;
  // The terminal failure the line at i leads to: its producer's first end at
  // or after it, else (a named link) the first end of a kind it leads to,
  // else the first end after it; nullopt when none follows.
  std::optional<size_t> EndOf(size_t i) const;
  // The run's end to quote when no rule explains it: the first terminal
  // failure that names an error (an exception's type and message, a CUDA or
  // NCCL error, a signal) in stream order, before the wrappers and launcher
  // lines that only say something failed; nullopt when nothing ended.
  std::optional<size_t> Primary() const;

 private:
  const RunIndex& run_;
  // The phase the line at i belongs to and the furthest its producer reached
  // after it (-1: none).
  std::pair<int, int> PhasesAround(size_t i) const;
  std::vector<size_t> ends_;
  std::vector<char> is_end_;
  // A producer's progress lines in stream order with the phase each shows
  // (parser/events.json phase order), and running maxima of that phase.
  struct Track {
    std::vector<size_t> at;
    std::vector<int> phase;
    std::vector<int> max_before;  // max phase of at[0..k]
    std::vector<int> max_after;   // max phase of at[k..]
    void Add(size_t i, int ph);
    void Finish();
    int ReachedBefore(size_t i) const;  // -1 when none
    int ReachedAfter(size_t i) const;   // -1 when none
  };
  // Tracks: a rank in one input stream, a rank's timed lines, a file (what a
  // rank-less line's producer is), a pid within a file (a rank-less line
  // with a pid: that process's progress and the file's pid-less progress
  // count, not another pid's), a file's pid-less lines.
  std::map<std::pair<int, int>, Track> by_rank_source_;
  std::map<int, Track> by_rank_timed_;
  std::map<std::string, Track> by_file_;
  std::map<std::pair<std::string, int>, Track> by_file_pid_;
  std::map<std::string, Track> by_file_no_pid_;
};

// A failure the run printed itself: not launcher noise, not a warning by
// nature (parser/events.json).
bool IsOwnFailure(const Event& e);

// A line printed as a warning: a warning kind, a WARNING/WARN level in its
// prefix, a component falling back on the same line, or a watchdog's state
// dump (field dump) whose producer's next watchdog line is a soft one.
bool WarningLine(const std::vector<Event>& events, size_t i);

// A line that says it is an error (an error level in its prefix or first
// word; parser/formats/generic.json error_message, error_level), unless it is
// a traceback's own exception line: the exception event on that line judges
// it (survived, or ignorable at exit).
bool SaysError(const std::vector<Event>& events, size_t i);

// A Python traceback that ends nothing: Ctrl-C, or one raised in a finalizer
// ("Exception ignored in:", outermost frame __del__).
bool IgnorableException(const RunIndex& run, size_t i);

}  // namespace tpt
