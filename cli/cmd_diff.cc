// cmd_diff.cc: `tptriage diff GOOD BAD`: why a relaunch failed where a run worked.
//
// Flags -> DiffConfig (validated here); parser/ reads each run, rules/ says
// whether it failed, rules/diff/ compares them. This file wires and renders:
// a side-by-side table for a person, or JSON (rules/diff/diff.h to_json).
// Exit codes: 0 no failure-relevant difference (or BAD healthy), 1 BAD fails
// and a difference explains it, 3 BAD fails and none does, 2 usage or input error.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <boost/program_options.hpp>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/size_flag.h"
#include "parser/format_set.h"
#include "parser/parser.h"
#include "memory/memory_model.h"
#include "rules/analysis.h"
#include "rules/analyzer.h"
#include "rules/diff/diff.h"
#include "rules/engine.h"
#include "rules/rule.h"

namespace tpt::cli {

namespace {

namespace po = boost::program_options;
using json = nlohmann::json;

struct DiffConfig {
  std::vector<std::string> good, bad, positional;
  std::string format = "text";
  std::string formats_dir;
  std::string rules_dir;
  bool no_builtin_rules = false, no_builtin_formats = false;
  bool skip_bad_formats = false;
  ByteSize max_line_bytes{1 << 20};
  RunByteSize max_input_bytes{kDefaultMaxExpandedBytes};
  std::string gpu_catalog;  // a GPU catalog file merged over the built-in one
};

// Stdin is one stream: it can be one side's log, not both sides' (the first
// would read it all and the second find it empty).
std::string StdinOnce(const DiffConfig& cfg) {
  size_t n = 0;
  for (const auto* side : {&cfg.good, &cfg.bad}) n += std::count(side->begin(), side->end(), "-");
  return n > 1 ? "'-' (stdin) is given " + std::to_string(n) + " times: stdin is one stream; give it to one run and "
                     "the other run's log as a file"
               : "";
}

// Flags -> a checked config; the message says what to do.
std::string Validate(DiffConfig& cfg) {
  if (cfg.format != "text" && cfg.format != "json") return "--format " + cfg.format + ": expected text or json";
  if (cfg.good.empty() && cfg.bad.empty()) {
    if (cfg.positional.size() != 2) {
      return "expected two runs, GOOD and BAD (got " + std::to_string(cfg.positional.size()) +
             "); for runs of several files use --good LOG... --bad LOG...";
    }
    cfg.good = {cfg.positional[0]};
    cfg.bad = {cfg.positional[1]};
    return StdinOnce(cfg);
  }
  if (!cfg.positional.empty()) return "give runs either as GOOD BAD or with --good/--bad, not both";
  if (cfg.good.empty()) return "--bad given without --good: name the run that worked with --good LOG";
  if (cfg.bad.empty()) return "--good given without --bad: name the run that failed with --bad LOG";
  return StdinOnce(cfg);
}

// Reads one run; nullopt (message printed) when nothing of it could be read.
std::optional<diff::RunFacts> ReadRun(const char* side, const std::vector<std::string>& inputs,
                                      const FormatSet& formats, const RuleSet& rules, const ParseOptions& opts) {
  auto run = ParseRunToMemory(inputs, formats, opts);
  if (!run.ok()) {
    std::fprintf(stderr, "tptriage diff: %s run: %s\n", side, run.status().message().c_str());
    return std::nullopt;
  }
  for (const auto& in : run->inputs) {
    for (const auto& w : InputWarnings(in, opts)) std::fprintf(stderr, "tptriage diff: warning: %s run: %s\n", side, w.c_str());
  }
  if (run->events.empty()) {
    std::fprintf(stderr, "tptriage diff: warning: %s run: no server log line recognised in %s\n", side,
                 inputs[0].c_str());
  }
  diff::RunFacts facts = diff::CollectFacts(run->events);
  AnalyzeOptions aopts;
  aopts.inputs = inputs;
  aopts.totals = &run->totals;
  Analysis a = Analyze(run->events, rules, aopts);
  diff::SetRootCause(facts, a.root_cause, a.verdict);
  return facts;
}

// ---------------------------------------------------------------------------
// Text rendering.

std::string Cell(const json& v, bool bytes) {
  if (v.is_null()) return "-";
  if (bytes && v.is_number()) return diff::FormatBytes(v.get<double>());
  if (v.is_string()) {
    std::string s = v.get<std::string>();
    return s.size() > 40 ? s.substr(0, 37) + "..." : s;
  }
  if (v.is_number_float()) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%g", v.get<double>());
    return buf;
  }
  return v.dump();
}

std::string Pad(const std::string& s, size_t w) { return s.size() >= w ? s + " " : s + std::string(w - s.size(), ' '); }

std::string RunLine(const diff::RunFacts& f) {
  std::string s = f.framework.empty() ? "unknown server" : f.framework;
  if (!f.version.empty()) s += " " + f.version;
  if (f.failure) {
    s += ": fails with " + f.failure->kind + " at " + f.failure->phase;
    if (!f.failure->file.empty()) s += " (" + f.failure->file + ":" + std::to_string(f.failure->line) + ")";
  } else {
    s += ": no failure, reached " + (f.LastPhase().empty() ? std::string("nothing") : f.LastPhase());
  }
  return s;
}

void RenderKv(std::ostream& o, const char* side, const diff::KvArithmetic& k) {
  o << "  " << side << ": ";
  if (!k.computed) {
    o << "not computed (" << k.note << ")\n";
    return;
  }
  o << k.formula << "\n        ";
  for (auto it = k.inputs.begin(); it != k.inputs.end(); ++it) {
    bool bytes = it.key().size() > 6 && it.key().substr(it.key().size() - 6) == "_bytes";
    o << it.key() << "=" << Cell(*it, bytes) << "  ";
  }
  o << "\n        " << k.arithmetic
    << (k.fails ? ": fails, short by " + diff::FormatBytes(k.shortfall_bytes) : ": fits") << "\n";
  if (!k.note.empty()) o << "        note: " << k.note << "\n";
}

void RenderText(std::ostream& o, const diff::DiffResult& r) {
  o << "GOOD  " << RunLine(r.good) << "\n";
  o << "BAD   " << RunLine(r.bad) << "\n\n";

  o << Pad("difference", 34) << Pad("GOOD", 22) << Pad("BAD", 22) << Pad("kind", 8) << "phase\n";
  if (r.differences.empty()) o << "  (none)\n";
  for (const auto& d : r.differences) {
    bool bytes = d.kind == "memory" || d.key == "gpu_total_bytes";
    std::string bad = Cell(d.bad, bytes);
    if (d.delta_bytes) bad += " (" + std::string(*d.delta_bytes >= 0 ? "+" : "") + diff::FormatBytes(*d.delta_bytes) + ")";
    o << "  " << Pad(d.key, 32) << Pad(Cell(d.good, bytes), 22) << Pad(bad, 22) << Pad(d.kind, 8) << d.phase << "\n";
  }

  // Memory per rank and phase, GOOD -> BAD.
  std::vector<int> ranks;
  for (const auto& [rank, m] : r.good.ranks) ranks.push_back(rank);
  for (const auto& [rank, m] : r.bad.ranks) {
    if (!r.good.ranks.count(rank)) ranks.push_back(rank);
  }
  if (!ranks.empty()) {
    o << "\nmemory per rank, GOOD -> BAD (GiB)\n  " << Pad("", 24);
    for (int rank : ranks) o << Pad(rank < 0 ? "rank ?" : "rank " + std::to_string(rank), 16);
    o << "\n";
    for (int q = 0; q < diff::kNumMemoryQuantities; ++q) {
      const auto& mq = diff::kMemoryQuantities[q];
      std::string line = "  " + Pad(mq.label, 24);
      bool any = false;
      for (int rank : ranks) {
        auto side = [&](const diff::RunFacts& f) -> std::string {
          auto it = f.ranks.find(rank);
          if (it == f.ranks.end() || !(it->second.*mq.field)) return "-";
          any = true;
          char buf[32];
          std::snprintf(buf, sizeof(buf), "%.2f", *(it->second.*mq.field) / (1024.0 * 1024 * 1024));
          return buf;
        };
        std::string g = side(r.good), b = side(r.bad);
        line += Pad(g == b ? g : g + " -> " + b, 16);
      }
      if (any) o << line << "\n";
    }
  }

  o << "\nKV pool arithmetic (memory model of each run's version)\n";
  RenderKv(o, "GOOD", r.good_kv);
  RenderKv(o, "BAD ", r.bad_kv);

  o << "\ndiverges at: " << (r.diverges_at.empty() ? "(nowhere)" : r.diverges_at) << "\n";
  o << "cause:       " << (r.attribution.cause.empty() ? "(not attributed)" : r.attribution.cause) << "\n";
  o << "  " << r.attribution.explanation << "\n";
  if (!r.attribution.ruled_out.empty()) {
    o << "ruled out:\n";
    for (const auto& x : r.attribution.ruled_out) o << "  " << x.key << ": " << x.reason << "\n";
  }
  for (const auto& w : r.warnings) o << "warning: " << w << "\n";
}

}  // namespace

int RunDiff(const Args& args) {
  DiffConfig cfg;
  po::options_description desc("options");
  desc.add_options()
      ("help,h", "show this help")
      ("good", po::value(&cfg.good)->composing(), "a log of the run that worked (repeatable)")
      ("bad", po::value(&cfg.bad)->composing(), "a log of the run that failed (repeatable)")
      ("format", po::value(&cfg.format)->default_value("text"), "output: text | json")
      ("formats", po::value(&cfg.formats_dir), "add the format files of DIR to the built-in ones (one named like a built-in file replaces it)")
      ("rules", po::value(&cfg.rules_dir), "add the rule files of DIR to the built-in ones (one named like a built-in file replaces it)")
      ("no-builtin-rules", po::bool_switch(&cfg.no_builtin_rules), "use only the rules of --rules DIR")
      ("no-builtin-formats", po::bool_switch(&cfg.no_builtin_formats), "use only the formats of --formats DIR")
      ("skip-bad-formats", po::bool_switch(&cfg.skip_bad_formats), "leave out a --formats file that does not load (warned) instead of refusing the run")
      ("max-line-bytes", po::value(&cfg.max_line_bytes)->default_value(cfg.max_line_bytes, "1M"),
       "match only the first SIZE bytes of a longer line (4096, 64K, 1M, 1GiB)")
      ("max-input-bytes", po::value(&cfg.max_input_bytes)->default_value(cfg.max_input_bytes, "16G"),
       "stop decompressing (gzip, xz, zstd, archives) after SIZE expanded bytes in one run; the rest is warned of and the run is not called healthy (64M, 16G)")
      ("gpu-catalog", po::value(&cfg.gpu_catalog), "more GPUs (or corrected figures) in gpu_catalog.json's shape, merged over the built-in catalog; default $TPTRIAGE_GPU_CATALOG or ~/.config/tptriage/gpus.json when present");
  if (auto code = ParseCommandLine(args, desc, "diff", &cfg.positional)) return *code;
  if (Status st = memory::LoadUserGpuCatalog(cfg.gpu_catalog); !st.ok()) return UsageError("diff", st.message());
  if (std::string err = Validate(cfg); !err.empty()) return UsageError("diff", err);

  auto formats = LoadFormats(cfg.formats_dir, !cfg.no_builtin_formats, cfg.skip_bad_formats);
  if (!formats.ok()) {
    std::fprintf(stderr, "tptriage diff: %s\n", formats.status().message().c_str());
    return kExitUsage;
  }
  for (const auto& p : formats->problems()) std::fprintf(stderr, "tptriage diff: warning: format file skipped: %s\n", p.c_str());
  auto rules = LoadRules(cfg.rules_dir, !cfg.no_builtin_rules);
  if (!rules.ok()) {
    std::fprintf(stderr, "tptriage diff: %s\n", rules.status().message().c_str());
    return kExitUsage;
  }
  ParseOptions opts;
  opts.max_line_bytes = cfg.max_line_bytes.bytes;
  opts.max_input_bytes = cfg.max_input_bytes.bytes;
  auto good = ReadRun("GOOD", cfg.good, *formats, *rules, opts);
  auto bad = ReadRun("BAD", cfg.bad, *formats, *rules, opts);
  if (!good || !bad) return kExitUsage;

  diff::DiffResult r = diff::Compare(*good, *bad);
  if (cfg.format == "json") {
    json j = r;
    WholeBytes(&j);  // byte counts are integers in JSON (memory/ledger.h)
    std::cout << j.dump(2) << "\n";
  } else {
    RenderText(std::cout, r);
  }
  return r.exit_code;
}

}  // namespace tpt::cli
