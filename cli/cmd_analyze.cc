// cmd_analyze.cc: `tptriage analyze LOG...` or `--runs DIR`: why did it die.
//
// Flags -> AnalyzeConfig (validated here, the only place that sees a
// variables_map); rules/analyzer.h analyses each run; report/ groups and
// renders. Exit codes: 0 healthy, 1 failure diagnosed, 3 failure seen but not
// classified, 2 usage or input error; with --runs, the worst over all runs
// (2 > 3 > 1 > 0).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <boost/program_options.hpp>

#include "cli/args.h"
#include "cli/color.h"
#include "cli/commands.h"
#include "cli/progress.h"
#include "cli/size_flag.h"
#include "parser/parser.h"
#include "report/exit_codes.h"
#include "report/batch.h"
#include "report/report.h"
#include "rules/analyzer.h"
#include "memory/model_config.h"
#include "rules/model_figures.h"

namespace tpt::cli {

namespace {

namespace po = boost::program_options;

struct AnalyzeConfig {
  std::vector<std::string> logs;
  std::string format = "text";
  std::string output;   // "" = stdout
  std::string html;     // also write the HTML page here
  // One analysis, many outputs: each of these also gets its format.
  std::string json_out, markdown_out, junit_out, sarif_out, github_out;
  std::string fail_on = "failure";
  std::string color = "auto";
  std::string progress = "auto";
  std::string runs_dir;
  int jobs = 0;         // 0 = all cores
  std::string rules_dir;
  std::string findings_dir;
  std::string formats_dir;
  bool no_builtin_rules = false, no_builtin_findings = false, no_builtin_formats = false;
  bool skip_bad_formats = false;
  ByteSize max_line_bytes{1 << 20};
  RunByteSize max_input_bytes{kDefaultMaxExpandedBytes};
  std::string model;    // model directory or config.json: figures the log does not print
  std::string gpu_catalog;  // a GPU catalog file merged over the built-in one
};

// --fail-on: which outcomes make the exit code non-zero. Outcomes rank
// error (2) > unknown (3) = no evidence (4) > failure (1) > healthy (0);
// --fail-on X fails on X and anything worse, and keeps the code so CI can
// still tell them apart (no evidence is never a pass by default).
int ApplyFailOn(int code, const std::string& fail_on) {
  return report::FailsOn(code, fail_on) ? code : kExitHealthy;  // report/exit_codes.h
}

namespace fs = std::filesystem;

// The input a report file would overwrite: `out` is one of `inputs`, or a
// log file inside an input directory (which the next run would read).
// Empty when none.
std::string InputAt(const std::string& out, const std::vector<std::string>& inputs) {
  std::error_code ec;
  if (out.empty() || out == "-" || !fs::exists(out, ec)) return "";
  const fs::path target = fs::weakly_canonical(out, ec);
  for (const std::string& in : inputs) {
    if (in == "-") continue;
    if (fs::equivalent(out, in, ec)) return in;
    if (!fs::is_directory(in, ec)) continue;
    const fs::path dir = fs::weakly_canonical(in, ec);
    const auto rel = target.lexically_relative(dir);
    if (rel.empty() || *rel.begin() == "..") continue;
    if (ReadFromDirectory(target.string())) return in;
  }
  return "";
}

// True when two output paths name one file under different spellings
// (o/x and ./o/../o/x, a symlink and its target), existing yet or not.
bool SameOutputFile(const std::string& a, const std::string& b) {
  std::error_code ea, eb;
  if (fs::equivalent(a, b, ea)) return true;
  const fs::path ca = fs::weakly_canonical(fs::absolute(a, ea), ea);
  const fs::path cb = fs::weakly_canonical(fs::absolute(b, eb), eb);
  return !ea && !eb && ca == cb;
}

// Writes `report` as `format` to `path` ("" = stdout). A file is written to a
// temporary beside it and renamed over it at the end, so an interrupted or
// failed write never leaves a cut report (devices and pipes are written in
// place). False (with a message naming the file) when it cannot be written;
// stdout's errors are reported by main().
// The text report to a terminal is coloured when `color` (--color, NO_COLOR).
bool WriteReport(const report::Report& rep, report::Format format, const std::string& path, bool color = false) {
  auto reporter = report::MakeReporter(format);
  if ((path.empty() || path == "-") && color && format == report::Format::kText) {
    std::ostringstream text;
    reporter->Write(rep, text);
    std::cout << ColorizeText(text.str(), report::WorstExitCode(rep.runs) != kExitHealthy);
    std::cout.flush();
    return static_cast<bool>(std::cout);
  }
  if (path.empty() || path == "-") {
    reporter->Write(rep, std::cout);
    std::cout.flush();
    return static_cast<bool>(std::cout);
  }
  struct stat st;
  const bool exists = ::stat(path.c_str(), &st) == 0;  // through symlinks
  if (exists && S_ISDIR(st.st_mode)) {
    std::fprintf(stderr, "tptriage analyze: cannot write %s: it is a directory; name a file\n", path.c_str());
    return false;
  }
  // The file to replace: a symlink's target (resolved one level at a time
  // by the kernel when it exists; by hand when it does not yet).
  std::error_code ec;
  fs::path target = path;
  if (exists && fs::is_symlink(path, ec)) {
    target = fs::canonical(path, ec);
    if (ec) target = path;
  } else if (!exists && fs::is_symlink(path, ec)) {
    const fs::path to = fs::read_symlink(path, ec);
    if (!ec) target = to.is_absolute() ? to : fs::path(path).parent_path() / to;
  }
  if (exists && !S_ISREG(st.st_mode)) {  // /dev/null, a FIFO, /dev/stdout: in place
    std::ofstream out(path, std::ios::binary);
    reporter->Write(rep, out);
    out.close();
    if (!out) std::fprintf(stderr, "tptriage analyze: writing %s failed\n", path.c_str());
    return static_cast<bool>(out);
  }
  std::string tmp = target.string() + ".tmp-XXXXXX";
  const int fd = ::mkstemp(tmp.data());
  if (fd < 0) {
    std::fprintf(stderr, "tptriage analyze: cannot write %s (%s): check the directory exists and is writable\n",
                 path.c_str(), std::strerror(errno));
    return false;
  }
  // The mode a plain create would give (mkstemp makes 0600), or the old file's.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  ::fchmod(fd, exists ? (st.st_mode & 07777) : (0666 & ~mask));
  ::close(fd);
  std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
  reporter->Write(rep, out);
  out.close();
  if (!out || ::rename(tmp.c_str(), target.c_str()) != 0) {
    std::fprintf(stderr, "tptriage analyze: writing %s failed (%s); it was left as it was\n", path.c_str(),
                 !out ? "disk full?" : std::strerror(errno));
    ::unlink(tmp.c_str());
    return false;
  }
  return true;
}

report::RunResult AnalyzeOne(const Analyzer& analyzer, std::string name, const std::vector<std::string>& inputs) {
  report::RunResult r;
  r.name = std::move(name);
  auto analysis = analyzer.Run(inputs);
  if (!analysis.ok()) {
    r.error = analysis.status().message();
    r.exit_code = kExitUsage;
    return r;
  }
  r.analysis = std::move(*analysis);
  r.exit_code = ExitCodeFor(r.analysis);
  return r;
}

// A run's warnings less the format-file ones printed once at load.
std::vector<std::string> RunWarnings(const Analyzer& an, const report::RunResult& r) {
  std::vector<std::string> out;
  for (const auto& w : r.analysis.warnings) {
    bool load = false;
    for (const auto& l : an.load_warnings()) load |= w == l;
    if (!load) out.push_back(w);
  }
  return out;
}

}  // namespace

int RunAnalyze(const Args& args) {
  AnalyzeConfig cfg;
  po::options_description desc("options");
  desc.add_options()
      ("help,h", "show this help")
      ("format", po::value(&cfg.format)->default_value("text"),
       "output on stdout (or --output): text | json | markdown | junit | sarif | github | html")
      ("output,o", po::value(&cfg.output), "write the --format report to FILE instead of stdout")
      ("json", po::value(&cfg.json_out), "also write the JSON document to FILE")
      ("markdown", po::value(&cfg.markdown_out), "also write the Markdown summary to FILE")
      ("junit", po::value(&cfg.junit_out), "also write JUnit XML to FILE")
      ("sarif", po::value(&cfg.sarif_out), "also write SARIF 2.1.0 to FILE")
      ("html", po::value(&cfg.html), "also write a self-contained HTML page to FILE")
      ("github", po::value(&cfg.github_out), "also write GitHub workflow annotations to FILE")
      ("fail-on", po::value(&cfg.fail_on)->default_value("failure"),
       "outcomes that fail (exit non-zero): failure | unknown | error | never")
      ("color", po::value(&cfg.color)->default_value("auto"),
       "colour the text report: auto | always | never (auto: on a terminal, unless NO_COLOR is set)")
      ("progress", po::value(&cfg.progress)->default_value("auto"),
       "a line on stderr while a long run is read: auto | always | never (auto: on a terminal, after 2 s; not with --runs)")
      ("runs", po::value(&cfg.runs_dir), "analyse every subdirectory or file of DIR as one run, and group them")
      ("jobs,j", po::value(&cfg.jobs)->default_value(0), "runs analysed at once with --runs (0 = all cores)")
      ("rules", po::value(&cfg.rules_dir), "add the rule files of DIR to the built-in ones (one named like a built-in file replaces it)")
      ("findings", po::value(&cfg.findings_dir), "add the finding files of DIR to the built-in ones (one named like a built-in file replaces it)")
      ("formats", po::value(&cfg.formats_dir), "add the format files of DIR to the built-in ones (one named like a built-in file replaces it)")
      ("no-builtin-rules", po::bool_switch(&cfg.no_builtin_rules), "use only the rules of --rules DIR")
      ("no-builtin-findings", po::bool_switch(&cfg.no_builtin_findings), "use only the findings of --findings DIR")
      ("no-builtin-formats", po::bool_switch(&cfg.no_builtin_formats), "use only the formats of --formats DIR")
      ("skip-bad-formats", po::bool_switch(&cfg.skip_bad_formats), "leave out a --formats file that does not load (warned) instead of refusing the run")
      ("max-line-bytes", po::value(&cfg.max_line_bytes)->default_value(cfg.max_line_bytes, "1M"),
       "match only the first SIZE bytes of a longer line (4096, 64K, 1M, 1GiB)")
      ("max-input-bytes", po::value(&cfg.max_input_bytes)->default_value(cfg.max_input_bytes, "16G"),
       "stop decompressing (gzip, xz, zstd, archives) after SIZE expanded bytes in one run; the rest is warned of and the run is not called healthy (64M, 16G)")
      ("gpu-catalog", po::value(&cfg.gpu_catalog), "more GPUs (or corrected figures) in gpu_catalog.json's shape, merged over the built-in catalog; default $TPTRIAGE_GPU_CATALOG or ~/.config/tptriage/gpus.json when present")
      ("model", po::value(&cfg.model),
       "the run's model directory or config.json (no download): weights per rank, KV bytes per token and "
       "context length from it fill what the log does not print");
  if (auto code = ParseCommandLine(args, desc, "analyze", &cfg.logs)) return *code;
  if (Status st = memory::LoadUserGpuCatalog(cfg.gpu_catalog); !st.ok()) return UsageError("analyze", st.message());
  if (cfg.no_builtin_rules && cfg.rules_dir.empty()) return UsageError("analyze", "--no-builtin-rules needs --rules DIR");
  if (cfg.no_builtin_findings && cfg.findings_dir.empty()) {
    return UsageError("analyze", "--no-builtin-findings needs --findings DIR");
  }
  if (cfg.no_builtin_formats && cfg.formats_dir.empty()) {
    return UsageError("analyze", "--no-builtin-formats needs --formats DIR");
  }
  auto format = report::ParseFormat(cfg.format);
  if (!format.ok()) return UsageError("analyze", format.status().message());
  if (cfg.fail_on != "failure" && cfg.fail_on != "unknown" && cfg.fail_on != "error" && cfg.fail_on != "never") {
    return UsageError("analyze", "--fail-on '" + cfg.fail_on + "': expected failure, unknown, error or never");
  }
  if (cfg.color != "auto" && cfg.color != "always" && cfg.color != "never") {
    return UsageError("analyze", "--color '" + cfg.color + "': expected auto, always or never");
  }
  const std::optional<ProgressLine::When> progress_when = ProgressLine::ParseWhen(cfg.progress);
  if (!progress_when) return UsageError("analyze", "--progress '" + cfg.progress + "': expected auto, always or never");
  bool many = !cfg.runs_dir.empty();
  if (many && !cfg.logs.empty()) {
    return UsageError("analyze", "give either LOG... (one run) or --runs DIR (many runs), not both");
  }
  if (!many && cfg.logs.empty()) {
    if (!StdinIsPiped()) {
      return UsageError("analyze", "no LOG given (files, directories, .gz, or - for stdin) and no --runs DIR");
    }
    cfg.logs.push_back("-");
  }
  if (cfg.jobs < 0) {
    return UsageError("analyze", "--jobs " + std::to_string(cfg.jobs) + ": expected 0 (all cores) or a positive count");
  }
  // Every output asked for, the main one first; none may overwrite an input,
  // and two may not share a file (or both go to stdout).
  struct Output {
    report::Format format;
    const char* flag;
    std::string path;
  };
  std::vector<Output> outputs = {{*format, "--output", cfg.output}};
  for (const Output& o : {Output{report::Format::kJson, "--json", cfg.json_out},
                          Output{report::Format::kMarkdown, "--markdown", cfg.markdown_out},
                          Output{report::Format::kJunit, "--junit", cfg.junit_out},
                          Output{report::Format::kSarif, "--sarif", cfg.sarif_out},
                          Output{report::Format::kHtml, "--html", cfg.html},
                          Output{report::Format::kGithub, "--github", cfg.github_out}}) {
    if (!o.path.empty()) outputs.push_back(o);
  }
  std::vector<std::string> inputs = cfg.logs;
  if (many) inputs.push_back(cfg.runs_dir);
  for (const Output& o : outputs) {
    if (std::string in = InputAt(o.path, inputs); !in.empty()) {
      return UsageError("analyze", std::string(o.flag) + " " + o.path + " would overwrite the input log " + in +
                                       "; write the report elsewhere");
    }
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    for (size_t j = i + 1; j < outputs.size(); ++j) {
      const std::string a = outputs[i].path.empty() ? "-" : outputs[i].path;
      const std::string b = outputs[j].path.empty() ? "-" : outputs[j].path;
      if (a == b || (a != "-" && b != "-" && SameOutputFile(a, b))) {
        return UsageError("analyze", std::string(outputs[i].flag) + " and " + outputs[j].flag + " both go to " +
                                         (a == "-" ? "stdout" : a) + "; give each its own file");
      }
    }
  }

  AnalyzerOptions opts;
  opts.rules_dir = cfg.rules_dir;
  opts.findings_dir = cfg.findings_dir;
  opts.formats_dir = cfg.formats_dir;
  opts.builtin_rules = !cfg.no_builtin_rules;
  opts.builtin_findings = !cfg.no_builtin_findings;
  opts.builtin_formats = !cfg.no_builtin_formats;
  opts.skip_bad_formats = cfg.skip_bad_formats;
  opts.parse.max_line_bytes = cfg.max_line_bytes.bytes;
  opts.parse.max_input_bytes = cfg.max_input_bytes.bytes;
  // One run: a progress line (--runs reads runs on several threads at once).
  ProgressLine progress("analyze", "", many ? ProgressLine::kNever : *progress_when);
  opts.parse.progress = &progress;
  auto analyzer = Analyzer::Create(opts);
  if (!analyzer.ok()) {
    std::fprintf(stderr, "tptriage analyze: %s\n", analyzer.status().message().c_str());
    return kExitUsage;
  }
  for (const auto& w : analyzer->load_warnings()) std::fprintf(stderr, "tptriage analyze: warning: %s\n", w.c_str());

  std::vector<report::RunResult> results;
  if (many) {
    std::vector<std::string> skipped;
    auto inputs = report::ListRuns(cfg.runs_dir, &skipped);
    if (!inputs.ok()) {
      std::fprintf(stderr, "tptriage analyze: %s\n", inputs.status().message().c_str());
      return kExitUsage;
    }
    for (const auto& w : skipped) std::fprintf(stderr, "tptriage analyze: warning: --runs: %s\n", w.c_str());
    const Analyzer& an = *analyzer;
    results = report::AnalyzeInParallel(*inputs, {.jobs = cfg.jobs}, [&an](const report::RunInput& in) {
      return AnalyzeOne(an, in.name, {in.path});
    });
    // Inputs read only in part, per run (the reports carry them too).
    for (const auto& r : results) {
      for (const auto& w : RunWarnings(*analyzer, r)) {
        std::fprintf(stderr, "tptriage analyze: warning: run %s: %s\n", r.name.c_str(), w.c_str());
      }
    }
  } else {
    results.push_back(AnalyzeOne(*analyzer, cfg.logs.front(), cfg.logs));
    const report::RunResult& r = results.front();
    if (!r.error.empty()) {
      std::fprintf(stderr, "tptriage analyze: %s\n", r.error.c_str());
      // A person gets the message above; CI formats still get a document
      // that records the failure (a junit <error>, a SARIF notification).
      if (*format == report::Format::kText) return ApplyFailOn(kExitUsage, cfg.fail_on);
    }
    for (const auto& w : RunWarnings(*analyzer, r)) std::fprintf(stderr, "tptriage analyze: warning: %s\n", w.c_str());
  }
  if (!cfg.model.empty()) {
    auto model = memory::LoadModel(cfg.model);
    if (!model.ok()) {
      std::fprintf(stderr, "tptriage analyze: %s\n", model.status().message().c_str());
      return kExitUsage;
    }
    for (auto& r : results) {
      if (r.error.empty()) memory::AddModelFigures(*model, &r.analysis);
    }
  }
  report::Report rep = report::MakeReport(std::move(results), many, TPT_VERSION);
  int code = report::WorstExitCode(rep.runs);
  bool color = UseColor(cfg.color);
  for (const Output& o : outputs) {
    if (!WriteReport(rep, o.format, o.path, color)) return kExitUsage;
  }
  return ApplyFailOn(code, cfg.fail_on);
}

}  // namespace tpt::cli
