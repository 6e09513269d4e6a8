// cmd_events.cc: `tptriage events LOG...`: the typed events of a run.
//
// Flags -> EventsConfig (validated here); parser/parser.h does the work. Events
// go to stdout as JSON Lines (one parser/event_json.h record each), a per-rank
// summary to stderr (or, with --summary, only the summary to stdout).
// Exit codes: 0 all inputs read, 1 some input could not be read, 2 usage
// error or nothing readable.
#include <sys/resource.h>

#include <algorithm>
#include <cstdlib>
#include <cstdio>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <vector>

#include <boost/program_options.hpp>

#include "base/strings.h"
#include "cli/args.h"
#include "cli/commands.h"
#include "cli/size_flag.h"
#include "parser/event_json.h"
#include "parser/format_set.h"
#include "parser/json_text.h"
#include "parser/parser.h"
#include "parser/rank_resolve.h"
#include "parser/record_writer.h"
#include "parser/values.h"
#include "rules/analyzer.h"
#include "rules/vocabulary.h"

namespace tpt::cli {

namespace {

namespace po = boost::program_options;

struct EventsConfig {
  std::vector<std::string> logs;
  std::vector<std::string> kinds;
  std::string formats_dir;
  bool no_builtin_formats = false;
  bool skip_bad_formats = false;
  ByteSize max_line_bytes{1 << 20};
  ByteSize buffer_bytes{1 << 20};
  RunByteSize max_input_bytes{kDefaultMaxExpandedBytes};
  bool summary_only = false;
};

// The kinds that mark a phase (parser/events.json `phase`), in the order a
// healthy server prints them.
const std::vector<std::string>& PhaseMarkers() {
  static const std::vector<std::string> kinds = [] {
    std::vector<std::string> out;
    for (const tpt::EventKind& k : tpt::EventKinds())
      if (!k.phase.empty()) out.push_back(k.kind);
    return out;
  }();
  return kinds;
}

struct RankSummary {
  uint64_t events = 0;
  std::optional<double> first_ts, last_ts;
  bool time_of_day = false;
  std::vector<std::string> phases;
  std::string last_kind;  // of the last event: the same kind again reaches no new phase
};

std::string FormatTs(const std::optional<double>& ts, bool tod) {
  if (!ts) return "-";
  char buf[64];
  if (tod) {
    int s = static_cast<int>(*ts);
    std::snprintf(buf, sizeof buf, "%02d:%02d:%02d", s / 3600 % 24, s / 60 % 60, s % 60);
  } else {
    std::time_t t = static_cast<std::time_t>(*ts);
    std::tm tm;
    gmtime_r(&t, &tm);
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  }
  return buf;
}

// Ranks are resolved run-wide (parser/rank_resolve.h) like `analyze` does,
// without holding the whole run: the first kRankWindow events wait until the
// run's layout (tp ranks per (dp, pp), server_args sizes) is known from them,
// later events are resolved as they arrive.
constexpr size_t kRankWindow = 10000;

class PrintSink : public EventSink {
 public:
  // Records go to stdout from a writer thread (parser/record_writer.h) when
  // the machine has cores to spare (4 or more hardware threads; the
  // environment's TPT_EVENTS_WRITER_THREAD=1 or 0 says so instead): the wall
  // time falls, the CPU time rises by the copies (bench/RESULTS.md). Else
  // they are written in place.
  PrintSink(bool print) : print_(print) {
    if (!print_) return;
    const char* env = std::getenv("TPT_EVENTS_WRITER_THREAD");
    const bool thread = env && *env ? std::string_view(env) != "0" : std::thread::hardware_concurrency() >= 4;
    if (!thread) return;
    try {
      writer_ = std::make_unique<RecordWriter>(stdout);
    } catch (const std::system_error&) {
      // No thread to be had: written in place.
    }
  }
  bool OnEvent(const Event& e) override {
    if (streaming_) {
      // The resolver sets who printed the event (its six rank numbers; a field
      // it reads is decoded as any reader decodes it): done on the parser's own
      // event, whose numbers are put back before it returns to the parser. A
      // copy of every event cost more than the resolving (3% of `events`).
      Event& ev = const_cast<Event&>(e);  // the parser's batch: not a const object
      const int rank = ev.rank, local_rank = ev.local_rank, dp = ev.dp_rank, pp = ev.pp_rank, tp = ev.tp_rank,
                ep = ev.ep_rank;
      resolver_.Observe(&ev);
      resolver_.Assign(&ev);
      Emit(ev);
      ev.rank = rank, ev.local_rank = local_rank, ev.dp_rank = dp, ev.pp_rank = pp, ev.tp_rank = tp, ev.ep_rank = ep;
      return true;
    }
    window_.push_back(e);
    resolver_.Observe(&window_.back());
    if (window_.size() >= kRankWindow) Flush();
    return true;
  }
  // Resolves and prints what the window holds; later events stream.
  void Flush() {
    ShareLineRanks(&window_);
    for (Event& c : window_) {
      resolver_.Assign(&c);
      Emit(c);
    }
    window_.clear();
    window_.shrink_to_fit();
    streaming_ = true;
  }
  // Writes the records not yet written; at the end of the run.
  void Finish() {
    Flush();
    if (writer_) writer_->Finish();
    WriteLines();
  }

 private:
  // The summary row of the event's producer: the rows of the last producers
  // seen are found by their numbers and host or file, without building the
  // row's name (most events come from a handful of ranks).
  RankSummary& SummaryOf(const Event& e) {
    const int rank = e.rank >= 0 ? e.rank : -1;
    const int local_rank = rank < 0 && e.local_rank >= 0 ? e.local_rank : -1;
    static const std::string kNone;
    const std::string& name = rank >= 0 ? e.host : local_rank >= 0 ? kNone : e.file;
    for (const Producer& p : producers_)
      if (p.rank == rank && p.local_rank == local_rank && p.name == name) return *p.summary;
    std::string who = rank >= 0 ? "rank " + std::to_string(rank)
                      : local_rank >= 0 ? "local_rank " + std::to_string(local_rank)
                                        : "rank ? (" + e.file + ")";
    if (rank >= 0 && !e.host.empty()) who += " @" + e.host;
    RankSummary* r = &ranks_[who];
    if (producers_.size() < 64) producers_.push_back({rank, local_rank, name, r});
    return *r;
  }
  void Emit(const Event& e) {
    RankSummary& r = SummaryOf(e);
    ++r.events;
    if (e.ts) {
      if (!r.first_ts) r.first_ts = e.ts;
      r.last_ts = e.ts;
      r.time_of_day = e.ts_is_time_of_day;
    }
    if (e.kind != r.last_kind) {
      r.last_kind = e.kind;
      for (const std::string& p : PhaseMarkers()) {
        if (e.kind == p && (r.phases.empty() || r.phases.back() != p)) {
          bool seen = false;
          for (const auto& q : r.phases) seen |= q == p;
          if (!seen) r.phases.push_back(p);
        }
      }
    }
    // No JSON object per event: written straight, byte-identical
    // (event_json.h), and handed to stdout 1 MiB at a time, here or by the
    // writer thread.
    if (writer_) {
      writer_->Add(e);
    } else if (print_) {
      AppendEventJsonLine(e, &lines_);
      if (lines_.size() >= (1 << 20)) WriteLines();
    }
  }
  // stdout is unbuffered while records are written (RunEvents): a block goes
  // to the descriptor without a copy into stdio's buffer. After a failed
  // write nothing more is tried; main's CheckStdout names the failure.
  void WriteLines() {
    if (!lines_.empty() && !std::ferror(stdout)) std::fwrite(lines_.data(), 1, lines_.size(), stdout);
    lines_.clear();
  }

 public:
  void PrintSummary(FILE* out) const {
    std::fprintf(out, "%-28s %8s  %-20s  %-20s  %s\n", "producer", "events", "first", "last", "phases reached");
    for (const auto& [who, r] : ranks_) {
      std::string phases;
      for (const auto& p : r.phases) phases += (phases.empty() ? "" : ",") + p;
      std::fprintf(out, "%-28s %8llu  %-20s  %-20s  %s\n", who.c_str(), static_cast<unsigned long long>(r.events),
                   FormatTs(r.first_ts, r.time_of_day).c_str(), FormatTs(r.last_ts, r.time_of_day).c_str(),
                   phases.empty() ? "-" : phases.c_str());
    }
  }

 private:
  bool print_;
  bool streaming_ = false;
  std::unique_ptr<RecordWriter> writer_;
  JsonOut lines_;  // records not yet written, without a writer thread (its room reused)
  std::vector<Event> window_;
  RankResolver resolver_;
  std::map<std::string, RankSummary> ranks_;  // map nodes: their addresses stay
  struct Producer {
    int rank, local_rank;  // -1 where the row's name does not use them
    std::string name;      // host (by rank) or file (neither rank known)
    RankSummary* summary;
  };
  std::vector<Producer> producers_;
};

}  // namespace

int RunEvents(const Args& args) {
  EventsConfig cfg;
  std::vector<std::string> kinds_raw;
  po::options_description desc("options");
  desc.add_options()("help,h", "show this help")(
      "kinds", po::value(&kinds_raw)->composing(), "keep only these event kinds: a,b,c (tptriage help kinds)")(
      "formats", po::value(&cfg.formats_dir), "add the format files of DIR to the built-in ones (one named like a built-in file replaces it)")(
      "max-line-bytes", po::value(&cfg.max_line_bytes)->default_value(cfg.max_line_bytes, "1M"),
      "match only the first SIZE bytes of a longer line (4096, 64K, 1M, 1GiB)")(
      "max-input-bytes", po::value(&cfg.max_input_bytes)->default_value(cfg.max_input_bytes, "16G"),
      "stop decompressing (gzip, xz, zstd, archives) after SIZE expanded bytes in one run; the rest is warned of and the run is not called healthy (64M, 16G)")(
      "buffer-bytes", po::value(&cfg.buffer_bytes)->default_value(cfg.buffer_bytes, "1M"),
      "largest read buffer per input (grown as needed; 4096, 64K, 1M, 1GiB)")(
      "summary", po::bool_switch(&cfg.summary_only), "print only the per-rank summary, on stdout")(
      "no-builtin-formats", po::bool_switch(&cfg.no_builtin_formats), "use only the formats of --formats DIR")(
      "skip-bad-formats", po::bool_switch(&cfg.skip_bad_formats),
      "leave out a --formats file that does not load (warned) instead of refusing the run");
  if (auto code = ParseCommandLine(args, desc, "events", &cfg.logs)) return *code;
  if (cfg.logs.empty()) {
    if (!StdinIsPiped()) return UsageError("events", "no LOG given (files, directories, .gz, or - for stdin)");
    cfg.logs.push_back("-");
  }
  cfg.kinds = SplitList(kinds_raw);

  auto formats = LoadFormats(cfg.formats_dir, !cfg.no_builtin_formats, cfg.skip_bad_formats);
  if (!formats.ok()) {
    std::fprintf(stderr, "tptriage events: %s\n", formats.status().message().c_str());
    return 2;
  }
  for (const auto& p : formats->problems()) std::fprintf(stderr, "tptriage events: warning: format file skipped: %s\n", p.c_str());
  if (const std::string bad = UnknownKinds(cfg.kinds, *formats); !bad.empty()) return UsageError("events", bad);

  ParseOptions opts;
  opts.max_line_bytes = cfg.max_line_bytes.bytes;
  opts.buffer_bytes = cfg.buffer_bytes.bytes;
  opts.max_input_bytes = cfg.max_input_bytes.bytes;
  opts.kinds = cfg.kinds;
  // Events stream in merged order only among inputs open together: open as
  // many as the descriptor limit allows (keeping some for everything else);
  // past that they are read a group at a time (parser.h max_open_inputs).
  if (struct rlimit rl; getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur > 128)
    opts.max_open_inputs = std::max<size_t>(opts.max_open_inputs, static_cast<size_t>(rl.rlim_cur) - 64);
  // Records go out in 1 MiB blocks of their own (PrintSink::WriteLines, or
  // the writer thread: parser/record_writer.h); the summary alone is buffered.
  static char out_buf[1 << 16];
  if (cfg.summary_only) {
    std::setvbuf(stdout, out_buf, _IOFBF, sizeof out_buf);
  } else {
    std::setvbuf(stdout, nullptr, _IONBF, 0);
  }
  PrintSink sink(!cfg.summary_only);
  std::vector<InputReport> reports;
  Status s = ParseRun(cfg.logs, *formats, opts, &sink, &reports);
  sink.Finish();
  std::fflush(stdout);
  bool some_failed = false;
  if (reports.size() > opts.max_open_inputs)
    std::fprintf(stderr,
                 "tptriage events: warning: %zu inputs, more than may be open at once (ulimit -n): read %zu at a time, "
                 "events are in time order within each group of inputs (analyze merges them all)\n",
                 reports.size(), opts.max_open_inputs);
  for (const auto& r : reports) {
    if (!r.error.empty()) {
      some_failed = true;
      std::fprintf(stderr, "tptriage events: %s\n", r.error.c_str());
    }
    if (r.long_lines > 0) std::fprintf(stderr, "tptriage events: %s\n", LongLineWarning(r, opts).c_str());
  }
  if (!s.ok()) {
    std::fprintf(stderr, "tptriage events: %s\n", s.message().c_str());
    return 2;
  }
  sink.PrintSummary(cfg.summary_only ? stdout : stderr);
  return some_failed ? 1 : 0;
}

}  // namespace tpt::cli
