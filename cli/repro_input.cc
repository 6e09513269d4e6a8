// repro_input.cc: see repro_input.h.
#include "cli/repro_input.h"

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "parser/event_json.h"
#include "parser/format_set.h"
#include "parser/parser.h"
#include "rules/analyzer.h"

namespace tpt::cli {

namespace {

bool LooksLikeJson(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char c = 0;
  while (in.get(c)) {
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
    // '{': analyze's JSON or a plan, unless it does not parse (LoadReproInput then
    // reads it as a log: JSON Lines, a container's json-file log).
    if (c == '{') return true;
    if (c != '[') return false;
    // "[2025-11-20 09:14:09 TP0] ..." is a log; a whole JSON array is JSON
    // (refused as a plan, not analysed as a log). A log fails within a line.
    std::ifstream again(path, std::ios::binary);
    return nlohmann::json::accept(again);
  }
  return false;
}

// Event kinds a box check reads its figures from.
const std::vector<std::string> kBoxEventKinds = {
    "env_var", "nccl_net", "nccl_comm_init", "rank_assignment", "duplicate_gpu", "unsupported_arch", "no_kernel_image",
    "driver_mismatch", "framework_version", "gpu_info", "xid", "ecc_error", "shm_error", "address_in_use",
    "watchdog_timeout", "p2p_error", "custom_ar_error", "network_error", "nccl_version", "nccl_transport", "disk_full"};

}  // namespace

StatusOr<ReproInput> LoadReproInput(const std::vector<std::string>& inputs) {
  ReproInput in;
  if (inputs.empty()) {
    in.flags_only = true;
    in.name = "flags";
    return in;
  }
  std::string not_json;  // set when the one input began as JSON and did not parse
  if (inputs.size() == 1 && inputs[0] != "-" && LooksLikeJson(inputs[0])) {
    std::ifstream f(inputs[0], std::ios::binary);
    if (!f) return NotFoundError(inputs[0] + ": cannot open (does it exist? pass analyze's --format json output or a plan)");
    in.doc = nlohmann::json::parse(f, nullptr, /*allow_exceptions=*/false);
    in.name = inputs[0];
    if (!in.doc.is_discarded()) return in;
    // Not one JSON document: a log of JSON records (JSON Lines, a container
    // runtime's json-file log, a server's JSON logging, pasted and wrapped)
    // is analysed as a log; when nothing in it is understood, it was meant
    // as JSON and is named so.
    not_json = inputs[0] + ": not valid JSON; pass `tptriage analyze --format json` output or a plan "
                             "(`tptriage plan --format json`), or LOG files";
  }
  for (const auto& i : inputs) {
    if (i != "-" && !std::filesystem::exists(i)) {
      return NotFoundError(i + ": no such file or directory (give analyze's JSON, a plan, or the run's logs)");
    }
  }
  auto an = Analyzer::Create({});
  if (!an.ok()) return an.status();
  auto a = an->Run(inputs);
  if (!a.ok()) return a.status();
  if (!not_json.empty() && a->root_cause == "no_evidence") return InvalidArgumentError(not_json);
  in.doc = *a;
  in.name = inputs[0] + (inputs.size() > 1 ? " (+" + std::to_string(inputs.size() - 1) + " more)" : "") + " (analysed)";
  // The events a box check reads (stdin cannot be read twice: the analysis alone then).
  if (std::find(inputs.begin(), inputs.end(), "-") == inputs.end()) {
    auto formats = LoadFormats("", true);
    if (formats.ok()) {
      ParseOptions opts;
      opts.kinds = kBoxEventKinds;
      opts.keep_per_group = 256;  // a rank's NCCL "via SHM" lines are counted (box_plan.cc)
      auto run = ParseRunToMemory(inputs, *formats, opts);
      if (run.ok()) {
        for (const Event& e : run->events) in.events.push_back(EventToJson(e));
      }
    }
  }
  return in;
}

}  // namespace tpt::cli
