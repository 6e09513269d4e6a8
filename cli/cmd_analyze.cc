// cmd_analyze.cc: `tptriage analyze LOG...`: why did this run die.
//
// Flags -> AnalyzeConfig (validated here), then rules/analyzer.h does the work;
// this file only wires and prints. Exit codes: 0 healthy, 1 failure diagnosed,
// 3 failure seen but not classified, 2 usage or input error.
#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <boost/program_options.hpp>

#include "cli/commands.h"
#include "rules/analyzer.h"
#include "rules/engine.h"

namespace tpt::cli {

namespace {

namespace po = boost::program_options;

struct AnalyzeConfig {
  std::vector<std::string> logs;
  std::string format = "text";
  std::string rules_dir;
  std::string formats_dir;
  size_t max_line_bytes = 1 << 20;
  bool help = false;
};

int Usage(const po::options_description& desc, FILE* out, int code) {
  std::ostringstream s;
  s << desc;
  std::fprintf(out, "usage: tptriage analyze [options] LOG...\n\n"
                    "LOG: log files (one per rank, or stdout+stderr of one run), directories,\n"
                    ".gz files, or - for stdin; all of them are one run.\n\n%s", s.str().c_str());
  return code;
}

}  // namespace

int RunAnalyze(const Args& args) {
  AnalyzeConfig cfg;
  po::options_description desc("options");
  desc.add_options()
      ("help,h", po::bool_switch(&cfg.help), "show this help")
      ("format", po::value(&cfg.format)->default_value("text"), "output: text | json")
      ("rules", po::value(&cfg.rules_dir), "load rule files from DIR instead of the built-in ones")
      ("formats", po::value(&cfg.formats_dir), "load format files from DIR instead of the built-in ones")
      ("max-line-bytes", po::value(&cfg.max_line_bytes), "match only the first N bytes of a longer line");
  po::options_description hidden;
  hidden.add_options()("log", po::value(&cfg.logs));
  po::options_description all;
  all.add(desc).add(hidden);
  po::positional_options_description pos;
  pos.add("log", -1);
  try {
    po::variables_map vm;
    po::store(po::command_line_parser(args).options(all).positional(pos).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::fprintf(stderr, "tptriage analyze: %s\n\n", e.what());
    return Usage(desc, stderr, kExitUsage);
  }
  if (cfg.help) return Usage(desc, stdout, kExitHealthy);
  if (cfg.format != "text" && cfg.format != "json") {
    std::fprintf(stderr, "tptriage analyze: --format %s: expected text or json\n", cfg.format.c_str());
    return kExitUsage;
  }
  if (cfg.logs.empty()) {
    std::fprintf(stderr, "tptriage analyze: no LOG given (files, directories, .gz or - for stdin)\n\n");
    return Usage(desc, stderr, kExitUsage);
  }
  if (cfg.max_line_bytes == 0) {
    std::fprintf(stderr, "tptriage analyze: --max-line-bytes must be > 0\n");
    return kExitUsage;
  }

  AnalyzerOptions opts;
  opts.rules_dir = cfg.rules_dir;
  opts.formats_dir = cfg.formats_dir;
  opts.parse.max_line_bytes = cfg.max_line_bytes;
  auto analyzer = Analyzer::Create(opts);
  if (!analyzer.ok()) {
    std::fprintf(stderr, "tptriage analyze: %s\n", analyzer.status().message().c_str());
    return kExitUsage;
  }
  auto analysis = analyzer->Run(cfg.logs);
  if (!analysis.ok()) {
    std::fprintf(stderr, "tptriage analyze: %s\n", analysis.status().message().c_str());
    return kExitUsage;
  }
  for (const auto& w : analysis->warnings) std::fprintf(stderr, "tptriage analyze: warning: %s\n", w.c_str());
  if (cfg.format == "json") {
    nlohmann::json j = *analysis;
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << RenderPlainText(*analysis);
  }
  return ExitCodeFor(*analysis);
}

}  // namespace tpt::cli
