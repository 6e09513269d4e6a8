// cmd_log.cc: `tptriage log LOG...`: the run's lines as one merged view.
//
// What users open lnav for: every line the parser understood, from every rank
// and file, merged by time, launcher wrappers stripped (docker, kubectl, srun,
// torchrun prefixes), each tagged with its rank (the one the analysis gave
// it: an NCCL line's process mapped to its communicator rank) and kind; traceback bodies
// kept under their line. `--raw` shows every line of the inputs as written
// (the ones the parser did not understand too), each after the lines of its
// file before it. The diagnosis' evidence lines are marked `>`; with `-C N`
// only they are shown, with N lines of the merged view around each.
// `--kinds` and `--rank` filter. The artefacts given beside the logs
// (`log LOG... DUMPS...`) are in the same view, tagged with their rank:
// each flight-recorder record at its `time_created_ns` (when the rank
// enqueued the collective: torch's FlightRecorder.hpp; time_discovered_* are
// not used, as only NCCL sets them), among the log lines; what carries no
// time (a dump's head and pg_status, a record without time_created_ns, py-spy,
// faulthandler and gdb stacks, an NCCL RAS report but its monitor lines) after
// the last line, under a rule: they were taken when the job hung.
// On a terminal the output goes through
// $PAGER (else `less -R -F -X`), like git does; into a pipe or file it is
// plain text.
//
// Memory is bounded whatever the input's size: the parser streams the merged
// events (ParseRun) and the view writes each line as it comes, keeping only
// the last N lines for -C N.
//
// Exit codes: 0 shown, 2 usage error or nothing readable.
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <boost/program_options.hpp>

#include "base/strings.h"
#include "cli/args.h"
#include "cli/commands.h"
#include "cli/progress.h"
#include "parser/format_set.h"
#include "parser/parser.h"
#include "parser/reader.h"
#include "report/common.h"
#include "rules/analyzer.h"

namespace tpt::cli {

namespace {

namespace po = boost::program_options;

struct LogConfig {
  std::vector<std::string> logs;
  std::vector<std::string> kinds;   // keep only these kinds (empty = all)
  std::vector<int> ranks;           // keep only these ranks; -1 = lines with no rank
  int context = -1;                 // -C N: evidence lines with N lines around; -1 = every line
  bool pager = true;
  bool raw = false;                 // every line of the inputs, as written
  std::string formats_dir;
  bool skip_bad_formats = false;
  std::string progress = "auto";  // the first pass's progress line (cli/progress.h)
};

// Text for a terminal: valid UTF-8 is kept, control bytes become spaces.
std::string Printable(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    unsigned char u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7F) c = ' ';
  }
  return out;
}

// "+12.3s" from the run's first timed line; time-of-day lines on the same
// axis as dated ones (UTC day seconds) when the run has any, as the reports
// do (`time_of_day` comes from the analysis: the view streams, so it cannot
// look ahead), and a time-of-day line on the day of a dated start (a dump's
// records beside a log that prints no date). The events come merged by
// time, so the first timed one starts the clock.
class Clock {
 public:
  Clock(bool time_of_day, std::optional<double> t0) : tod_(time_of_day) {
    if (t0) t0_ = *t0, any_ = true;
  }
  // Every event passes here, shown or filtered out, so a filtered view keeps
  // the run's axis (a watchdog at +599 s stays at +599 s under --kinds).
  void See(const Event& e) {
    if (e.ts && !any_) t0_ = Norm(e), any_ = true;
  }
  std::string Of(const Event& e) {
    if (!e.ts) return std::string(9, ' ');  // as wide as "%+8.1fs"
    See(e);
    double t = Norm(e);
    char buf[32];
    std::snprintf(buf, sizeof buf, "%+8.1fs", t - t0_);
    return buf;
  }

 private:
  double Norm(const Event& e) const {
    if (!e.ts_is_time_of_day) return tod_ ? std::fmod(*e.ts, 86400.0) : *e.ts;
    // A time of day against a dated start: on that start's day.
    return any_ && !tod_ && t0_ >= 86400.0 ? std::floor(t0_ / 86400.0) * 86400.0 + *e.ts : *e.ts;
  }
  bool tod_ = false, any_ = false;
  double t0_ = 0;
};

// The rank the analysis gave the line: its own, else its process's (an NCCL
// line `host:pid:tid [dev]` names the device, not the rank; the analysis
// mapped the process to its rank from its ncclCommInitRank line, which may
// come later in the file).
using ProcessRanks = std::map<std::pair<std::string, int>, int>;
int RankOf(const Event& e, const ProcessRanks& process_ranks) {
  if (e.rank >= 0 || e.pid < 0) return e.rank;
  auto it = process_ranks.find({e.host, e.pid});
  return it == process_ranks.end() ? -1 : it->second;
}

std::string RankTag(const Event& e, const ProcessRanks& process_ranks) {
  if (int r = RankOf(e, process_ranks); r >= 0) return "r" + std::to_string(r);
  if (e.local_rank >= 0) return "l" + std::to_string(e.local_rank);
  return "-";
}

// The program a shell command line would run (its first word) is on PATH or
// is an executable path.
bool ProgramExists(const std::string& cmd) {
  size_t b = cmd.find_first_not_of(" \t");
  if (b == std::string::npos) return false;
  std::string prog = cmd.substr(b, cmd.find_first_of(" \t", b) - b);
  if (prog.find('/') != std::string::npos) return access(prog.c_str(), X_OK) == 0;
  const char* path = std::getenv("PATH");
  std::string dirs = path != nullptr ? path : "/usr/bin:/bin";
  for (size_t pos = 0; pos <= dirs.size();) {
    size_t end = dirs.find(':', pos);
    if (end == std::string::npos) end = dirs.size();
    std::string dir = dirs.substr(pos, end - pos);
    if (!dir.empty() && access((dir + "/" + prog).c_str(), X_OK) == 0) return true;
    pos = end + 1;
  }
  return false;
}

// Where the view goes: $PAGER (else less) when stdout is a terminal. A pager
// that cannot start (an image without less) is said on stderr, and the view
// is printed plainly: never nothing.
class Output {
 public:
  explicit Output(bool page) {
    if (!page || !isatty(STDOUT_FILENO)) return;
    const char* pager = std::getenv("PAGER");
    std::string cmd = pager != nullptr && *pager != '\0' ? pager : "less -R -F -X";
    if (cmd == "cat") return;
    if (!ProgramExists(cmd)) {
      std::fprintf(stderr, "tptriage log: the pager '%s' cannot start (not found): printing plainly; set PAGER or "
                           "pass --no-pager\n", cmd.c_str());
      return;
    }
    pipe_ = popen(cmd.c_str(), "w");
  }
  ~Output() {
    if (pipe_ == nullptr) return;
    const int status = pclose(pipe_);
    if (WIFEXITED(status) && (WEXITSTATUS(status) == 126 || WEXITSTATUS(status) == 127))
      std::fprintf(stderr, "tptriage log: the pager could not run (exit %d); try --no-pager\n", WEXITSTATUS(status));
  }
  void Write(const std::string& s) {
    std::fwrite(s.data(), 1, s.size(), pipe_ != nullptr ? pipe_ : stdout);
  }

 private:
  FILE* pipe_ = nullptr;
};

// The lines of one input as written, read forward as the view needs them
// (--raw): each is opened once, when its first event comes.
class RawFile {
 public:
  explicit RawFile(const std::string& path) {
    auto in = OpenInput(path);
    if (!in.ok()) return;
    input_ = std::move(*in);
    reader_ = std::make_unique<BlockReader>(input_.source.get(), 1 << 16, 1 << 20);
  }
  uint64_t line() const { return line_; }  // lines handed out so far
  // The next line, without its newline; false at the end.
  bool Next(std::string* out) {
    while (pos_ >= block_.size()) {
      if (reader_ == nullptr) return false;
      Block b;
      auto more = reader_->Next(&b);
      if (!more.ok() || !*more) {
        reader_.reset();
        return false;
      }
      block_.assign(b.text);
      pos_ = 0;
    }
    size_t nl = block_.find('\n', pos_);
    if (nl == std::string::npos) nl = block_.size();
    out->assign(block_, pos_, nl - pos_);
    if (!out->empty() && out->back() == '\r') out->pop_back();
    pos_ = nl + 1;
    ++line_;
    return true;
  }

 private:
  OpenedInput input_;
  std::unique_ptr<BlockReader> reader_;
  std::string block_;
  size_t pos_ = 0;
  uint64_t line_ = 0;
};

// An event of an artefact read beside the logs (a flight-recorder dump, a
// stack dump, an NCCL RAS report: parser/flight_recorder.h, stack_dump.h,
// nccl_ras.h) rather than a log line: never a line of --raw's text.
bool FromArtefact(const Event& e) { return e.family == "torch_fr" || e.family == "stacks" || e.family == "nccl_ras"; }

// Heads the untimed artefacts' lines at the end of the view.
const char kUntimedRule[] =
    "-- without a time: dump heads, records without time_created_ns, stack dumps, NCCL RAS reports "
    "(taken when the job hung) --\n";

// The width of a line's head ("> +12.3s r0    kind                 "), blank:
// where a line the parser did not understand, or a traceback line, starts.
const std::string kBlankHead(39, ' ');

// Writes the view as the merged events stream in: filters, evidence marks,
// -C context from a ring of the last N lines, --raw's unparsed lines.
class View : public EventSink {
 public:
  View(const LogConfig& cfg, const std::set<std::pair<std::string, uint64_t>>& evidence,
       const ProcessRanks& process_ranks, bool time_of_day, std::optional<double> t0, Output* out)
      : cfg_(cfg), evidence_(evidence), process_ranks_(process_ranks), clock_(time_of_day, t0), out_(out) {}

  bool OnEvent(const Event& e) override {
    clock_.See(e);
    bool filtered = !cfg_.kinds.empty() || !cfg_.ranks.empty();
    if (!Kept(e)) {
      if (cfg_.raw && !filtered) Drain(e.file, e.line);  // (a kind filter drops unparsed lines too)
      return true;
    }
    if (FromArtefact(e)) {  // each its own line (a dump's head and pg_status share line 0)
      std::string line = Head(e) + Printable(e.text) + "\n";
      for (const std::string& x : e.extra_lines) line += kBlankHead + Printable(x) + "\n";
      const bool is_evidence = evidence_.count({e.file, e.line}) > 0;
      if (!e.ts) {
        untimed_.push_back({std::move(line), is_evidence});  // after the last line (Finish)
      } else {
        Emit(line, is_evidence);
      }
      return true;
    }
    if (e.file == last_file_ && e.line == last_line_) return true;  // one view line a source line
    last_file_ = e.file;
    last_line_ = e.line;
    if (cfg_.raw) {
      if (!filtered) Drain(e.file, e.line - 1);
      RawFile& f = Raw(e.file);
      std::string text = Printable(e.text);
      std::string raw;
      if (f.line() < e.line) {
        while (f.line() < e.line && f.Next(&raw)) {
        }
        if (f.line() == e.line) text = Printable(raw);
      }
      // The traceback body follows as the file's next lines (the next event
      // of this file, or Finish, drains them), so no line is shown twice.
      Emit(Head(e) + text + "\n", evidence_.count({e.file, e.line}) > 0);
      return true;
    }
    std::string line = Head(e) + Printable(e.text) + "\n";
    for (const std::string& x : e.extra_lines) line += kBlankHead + Printable(x) + "\n";
    Emit(line, evidence_.count({e.file, e.line}) > 0);
    return true;
  }

  // --raw: what is left of every file after its last event, and every line of an input
  // no line of which was understood (no event opened it); then the artefacts' lines that
  // carry no time, under a rule.
  void Finish(const std::vector<InputReport>& inputs) {
    if (cfg_.raw && cfg_.kinds.empty() && cfg_.ranks.empty()) {
      for (auto& [path, f] : raw_) Drain(path, UINT64_MAX);
      for (const InputReport& in : inputs) {
        if (in.events == 0 && in.error.empty() && !in.empty && raw_.find(in.path) == raw_.end()) {
          Drain(in.path, UINT64_MAX);
        }
      }
    }
    if (untimed_.empty()) return;
    Emit(kUntimedRule, false);
    for (const auto& [line, is_evidence] : untimed_) Emit(line, is_evidence);
  }
  size_t shown() const { return shown_; }

 private:
  bool Kept(const Event& e) const {
    if (!cfg_.kinds.empty() && std::find(cfg_.kinds.begin(), cfg_.kinds.end(), e.kind) == cfg_.kinds.end())
      return false;
    if (!cfg_.ranks.empty() &&
        std::find(cfg_.ranks.begin(), cfg_.ranks.end(), RankOf(e, process_ranks_)) == cfg_.ranks.end())
      return false;
    return true;
  }

  std::string Head(const Event& e) {
    char head[96];
    std::snprintf(head, sizeof head, "%s %s %-5s %-20s ", evidence_.count({e.file, e.line}) ? ">" : " ",
                  clock_.Of(e).c_str(), RankTag(e, process_ranks_).c_str(), e.kind.c_str());
    return head;
  }

  RawFile& Raw(const std::string& path) {
    auto it = raw_.find(path);
    if (it == raw_.end()) it = raw_.emplace(path, std::make_unique<RawFile>(path)).first;
    return *it->second;
  }

  // --raw: the lines of `path` up to `through` that no event claimed.
  void Drain(const std::string& path, uint64_t through) {
    RawFile& f = Raw(path);
    std::string raw;
    while (f.line() < through && f.Next(&raw)) {
      Emit(kBlankHead + Printable(raw) + "\n", false);
    }
  }

  // Every line of the view passes here: shown at once, or (with -C N) kept
  // in a ring of N until an evidence line calls it, then N lines after.
  void Emit(const std::string& line, bool is_evidence) {
    if (cfg_.context < 0) {
      Write(line);
      return;
    }
    if (is_evidence) {
      if (skipped_ && shown_ > 0) out_->Write("--\n");
      skipped_ = false;
      for (const std::string& l : ring_) Write(l);
      ring_.clear();
      Write(line);
      after_ = cfg_.context;
      return;
    }
    if (after_ > 0) {
      --after_;
      Write(line);
      return;
    }
    ring_.push_back(line);
    if (ring_.size() > static_cast<size_t>(cfg_.context)) {
      ring_.pop_front();
      skipped_ = true;
    }
  }

  void Write(const std::string& s) {
    out_->Write(s);
    ++shown_;
  }

  const LogConfig& cfg_;
  const std::set<std::pair<std::string, uint64_t>>& evidence_;
  const ProcessRanks& process_ranks_;
  Clock clock_;
  Output* out_;
  std::map<std::string, std::unique_ptr<RawFile>> raw_;
  std::deque<std::string> ring_;
  // The artefacts' untimed lines (bounded: a dump gives a summary a rank,
  // parser/flight_recorder.h kKeepRecords; a stack dump a few threads).
  std::vector<std::pair<std::string, bool>> untimed_;
  int after_ = 0;
  bool skipped_ = false;
  size_t shown_ = 0;
  std::string last_file_;
  uint64_t last_line_ = 0;
};

// Stdin is read twice (analysis and view): kept in a temporary file.
std::string SpoolStdin() {
  char path[] = "/tmp/tptriage-log-XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0) return "";
  std::ofstream out(path, std::ios::binary);
  close(fd);
  out << std::cin.rdbuf();
  return path;
}

}  // namespace

int RunLog(const Args& args) {
  LogConfig cfg;
  bool no_pager = false;
  std::vector<std::string> kinds_raw, ranks_raw;
  po::options_description desc("options");
  desc.add_options()("help,h", "show this help")(
      "context,C", po::value(&cfg.context), "show only the evidence lines, with N lines of the merged view around each")(
      "kinds", po::value(&kinds_raw)->composing(), "keep only these event kinds: a,b,c (tptriage help kinds)")(
      "rank", po::value(&ranks_raw)->composing(), "keep only these ranks: 0,3 (launcher: lines with no rank)")(
      "raw", po::bool_switch(&cfg.raw), "every line of the inputs as written, the ones not understood too")(
      "no-pager", po::bool_switch(&no_pager), "never page, even on a terminal")(
      "progress", po::value(&cfg.progress)->default_value("auto"),
      "a line on stderr while the first pass (the analysis) reads a long run: auto | always | never (auto: on a terminal, after 2 s)")(
      "formats", po::value(&cfg.formats_dir), "load format files from DIR instead of the built-in ones")(
      "skip-bad-formats", po::bool_switch(&cfg.skip_bad_formats),
      "leave out a --formats file that does not load (warned) instead of refusing the run");
  if (auto code = ParseCommandLine(args, desc, "log", &cfg.logs)) return *code;
  if (cfg.logs.empty()) {
    if (!StdinIsPiped()) return UsageError("log", "no LOG given (files, directories, .gz, or - for stdin)");
    cfg.logs.push_back("-");
  }
  if (cfg.context < -1 || (cfg.context > 1000)) {
    std::fprintf(stderr, "tptriage log: -C %d: expected 0..1000 lines of context\n", cfg.context);
    return kExitUsage;
  }
  const std::optional<ProgressLine::When> progress_when = ProgressLine::ParseWhen(cfg.progress);
  if (!progress_when) return UsageError("log", "--progress '" + cfg.progress + "': expected auto, always or never");
  cfg.pager = !no_pager;
  cfg.kinds = SplitList(kinds_raw);
  for (const std::string& r : SplitList(ranks_raw)) {
    if (r == "launcher" || r == "none" || r == "-1") {
      cfg.ranks.push_back(-1);
      continue;
    }
    char* end = nullptr;
    long v = std::strtol(r.c_str(), &end, 10);
    if (end == r.c_str() || *end != '\0' || v < 0 || v > 1 << 20) {
      std::fprintf(stderr, "tptriage log: --rank %s: expected rank numbers (0,3) or 'launcher'\n", r.c_str());
      return kExitUsage;
    }
    cfg.ranks.push_back(static_cast<int>(v));
  }

  std::string spooled;
  for (std::string& in : cfg.logs) {
    if (in != "-") continue;
    if (spooled.empty()) spooled = SpoolStdin();
    if (spooled.empty()) {
      std::fprintf(stderr, "tptriage log: cannot keep stdin in a temporary file (is /tmp writable?)\n");
      return kExitUsage;
    }
    in = spooled;
  }
  struct Cleanup {
    std::string path;
    ~Cleanup() {
      if (!path.empty()) std::remove(path.c_str());
    }
  } cleanup{spooled};

  AnalyzerOptions opts;
  opts.formats_dir = cfg.formats_dir;
  opts.skip_bad_formats = cfg.skip_bad_formats;
  // The first pass prints nothing until it ends; the second one prints as it reads.
  ProgressLine progress("log", "first pass", *progress_when);
  opts.parse.progress = &progress;
  auto analyzer = Analyzer::Create(opts);
  if (!analyzer.ok()) {
    std::fprintf(stderr, "tptriage log: %s\n", analyzer.status().message().c_str());
    return kExitUsage;
  }
  auto formats = cfg.formats_dir.empty() ? FormatSet::LoadBuiltin() : FormatSet::LoadDir(cfg.formats_dir);
  if (!formats.ok()) {
    std::fprintf(stderr, "tptriage log: %s\n", formats.status().message().c_str());
    return kExitUsage;
  }
  if (const std::string bad = UnknownKinds(cfg.kinds, *formats); !bad.empty()) return UsageError("log", bad);
  // The evidence lines: the diagnoses' and each rank's first error.
  std::set<std::pair<std::string, uint64_t>> evidence;
  bool time_of_day = false;
  std::optional<double> t0;  // the reports' axis: "+599 s" here is "+599 s" there, filtered or not
  ProcessRanks process_ranks;
  if (auto a = analyzer->Run(cfg.logs); a.ok()) {
    process_ranks = a->process_ranks;
    if (report::TimeAxis ax = report::MakeTimeAxis(*a); ax.ok) t0 = ax.t0;
    for (const Diagnosis& d : a->diagnoses) {
      for (const Evidence& e : d.evidence) evidence.insert({e.file, e.line});
    }
    for (const RankState& r : a->ranks) {
      if (!r.first_error.empty()) evidence.insert({r.first_error_evidence.file, r.first_error_evidence.line});
      for (const RankMark& m : r.marks) time_of_day |= (m.ts > 0 && m.time_of_day);
      time_of_day |= (r.last_line_ts > 0 && r.last_line_time_of_day);
    }
  }
  ParseOptions popts;
  if (!cfg.raw) popts.kinds = cfg.kinds;  // --raw needs every event to place the unparsed lines
  Output out(cfg.pager);
  View view(cfg, evidence, process_ranks, time_of_day, t0, &out);
  std::vector<InputReport> reports;
  Status st = ParseRun(cfg.logs, *formats, popts, &view, &reports);
  if (!st.ok()) {
    std::fprintf(stderr, "tptriage log: %s\n", st.message().c_str());
    return kExitUsage;
  }
  view.Finish(reports);
  for (const auto& r : reports) {
    if (!r.error.empty()) std::fprintf(stderr, "tptriage log: %s\n", r.error.c_str());
  }
  if (view.shown() == 0) {
    std::fprintf(stderr, "tptriage log: no line %s\n",
                 cfg.context >= 0 ? "of evidence (no diagnosis pointed at a line); drop -C to see every line"
                                  : "matched the filters");
  }
  return 0;
}

}  // namespace tpt::cli
