// cmd_log.cc: `tptriage log LOG...`: the run's lines as one merged view.
//
// What users open lnav for: every line the parser understood, from every rank
// and file, merged by time, launcher wrappers stripped (docker, kubectl, srun,
// torchrun prefixes), each tagged with its rank and kind; traceback bodies
// kept under their line. The diagnosis' evidence lines are marked `>`; with
// `-C N` only they are shown, with N lines of the merged view around each.
// `--kinds` and `--rank` filter. On a terminal the output goes through
// $PAGER (else `less -R -F -X`), like git does; into a pipe or file it is
// plain text.
//
// Exit codes: 0 shown, 2 usage error or nothing readable.
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <boost/program_options.hpp>

#include "cli/args.h"
#include "cli/commands.h"
#include "parser/format_set.h"
#include "parser/parser.h"
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
  std::string formats_dir;
};

std::vector<std::string> SplitComma(const std::vector<std::string>& in) {
  std::vector<std::string> out;
  for (const auto& s : in) {
    std::stringstream ss(s);
    std::string item;
    while (std::getline(ss, item, ',')) {
      if (!item.empty()) out.push_back(item);
    }
  }
  return out;
}

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
// axis as dated ones (UTC day seconds), as the reports do.
class Clock {
 public:
  explicit Clock(const std::vector<Event>& events) {
    for (const Event& e : events) tod_ |= (e.ts && e.ts_is_time_of_day);
    for (const Event& e : events) {
      if (!e.ts) continue;
      double t = Norm(e);
      if (!any_ || t < t0_) t0_ = t;
      any_ = true;
    }
  }
  std::string Of(const Event& e) const {
    if (!e.ts || !any_) return "        ";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%+8.1fs", Norm(e) - t0_);
    return buf;
  }

 private:
  double Norm(const Event& e) const { return tod_ && !e.ts_is_time_of_day ? std::fmod(*e.ts, 86400.0) : *e.ts; }
  bool tod_ = false, any_ = false;
  double t0_ = 0;
};

std::string RankTag(const Event& e) {
  if (e.rank >= 0) return "r" + std::to_string(e.rank);
  if (e.local_rank >= 0) return "l" + std::to_string(e.local_rank);
  return "-";
}

// Where the view goes: $PAGER (else less) when stdout is a terminal.
class Output {
 public:
  explicit Output(bool page) {
    if (!page || !isatty(STDOUT_FILENO)) return;
    const char* pager = std::getenv("PAGER");
    std::string cmd = pager != nullptr && *pager != '\0' ? pager : "less -R -F -X";
    if (cmd == "cat") return;
    pipe_ = popen(cmd.c_str(), "w");
  }
  ~Output() {
    if (pipe_ != nullptr) pclose(pipe_);
  }
  void Write(const std::string& s) {
    std::fwrite(s.data(), 1, s.size(), pipe_ != nullptr ? pipe_ : stdout);
  }

 private:
  FILE* pipe_ = nullptr;
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
      "no-pager", po::bool_switch(&no_pager), "never page, even on a terminal")(
      "formats", po::value(&cfg.formats_dir), "load format files from DIR instead of the built-in ones");
  if (auto code = ParseCommandLine(args, desc, "log", &cfg.logs)) return *code;
  if (cfg.logs.empty()) {
    if (!StdinIsPiped()) return UsageError("log", "no LOG given (files, directories, .gz, or - for stdin)");
    cfg.logs.push_back("-");
  }
  if (cfg.context < -1 || (cfg.context > 1000)) {
    std::fprintf(stderr, "tptriage log: -C %d: expected 0..1000 lines of context\n", cfg.context);
    return kExitUsage;
  }
  cfg.pager = !no_pager;
  cfg.kinds = SplitComma(kinds_raw);
  for (const std::string& r : SplitComma(ranks_raw)) {
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
  ParseOptions popts;
  popts.keep_high_volume = 1 << 30;  // a view shows every line
  auto run = ParseRunToMemory(cfg.logs, *formats, popts);
  if (!run.ok()) {
    std::fprintf(stderr, "tptriage log: %s\n", run.status().message().c_str());
    return kExitUsage;
  }
  for (const auto& r : run->inputs) {
    if (!r.error.empty()) std::fprintf(stderr, "tptriage log: %s\n", r.error.c_str());
  }
  // The evidence lines: the diagnoses' and each rank's first error.
  std::set<std::pair<std::string, uint64_t>> evidence;
  if (auto a = analyzer->Run(cfg.logs); a.ok()) {
    for (const Diagnosis& d : a->diagnoses) {
      for (const Evidence& e : d.evidence) evidence.insert({e.file, e.line});
    }
    for (const RankState& r : a->ranks) {
      if (!r.first_error.empty()) evidence.insert({r.first_error_evidence.file, r.first_error_evidence.line});
    }
  }

  const std::vector<Event>& events = run->events;
  auto kept = [&](const Event& e) {
    if (!cfg.kinds.empty() && std::find(cfg.kinds.begin(), cfg.kinds.end(), e.kind) == cfg.kinds.end()) return false;
    if (!cfg.ranks.empty() && std::find(cfg.ranks.begin(), cfg.ranks.end(), e.rank < 0 ? -1 : e.rank) == cfg.ranks.end())
      return false;
    return true;
  };
  // One line of the view per source line (a line can hold several events).
  std::vector<size_t> view;
  for (size_t i = 0; i < events.size(); ++i) {
    if (!kept(events[i])) continue;
    if (!view.empty()) {
      const Event& p = events[view.back()];
      if (p.file == events[i].file && p.line == events[i].line) continue;
    }
    view.push_back(i);
  }
  std::vector<bool> show(view.size(), cfg.context < 0);
  std::vector<bool> is_evidence(view.size(), false);
  for (size_t k = 0; k < view.size(); ++k) {
    const Event& e = events[view[k]];
    if (!evidence.count({e.file, e.line})) continue;
    is_evidence[k] = true;
    if (cfg.context < 0) continue;
    size_t lo = k >= static_cast<size_t>(cfg.context) ? k - cfg.context : 0;
    size_t hi = std::min(view.size() - 1, k + cfg.context);
    for (size_t j = lo; j <= hi; ++j) show[j] = true;
  }

  Clock clock(events);
  Output out(cfg.pager);
  bool gap = false;
  size_t shown = 0;
  for (size_t k = 0; k < view.size(); ++k) {
    if (!show[k]) {
      gap = shown > 0;
      continue;
    }
    if (gap) out.Write("--\n");
    gap = false;
    ++shown;
    const Event& e = events[view[k]];
    char head[96];
    std::snprintf(head, sizeof head, "%s %s %-5s %-20s ", is_evidence[k] ? ">" : " ", clock.Of(e).c_str(),
                  RankTag(e).c_str(), e.kind.c_str());
    std::string line = head + Printable(e.text) + "\n";
    for (const std::string& x : e.extra_lines) line += std::string(38, ' ') + Printable(x) + "\n";
    out.Write(line);
  }
  if (shown == 0) {
    std::fprintf(stderr, "tptriage log: no line %s\n",
                 cfg.context >= 0 ? "of evidence (no diagnosis pointed at a line); drop -C to see every line"
                                  : "matched the filters");
  }
  return 0;
}

}  // namespace tpt::cli
