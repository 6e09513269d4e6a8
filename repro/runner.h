// runner.h: runs a plan's steps on a DeviceBackend in the server's order,
// measures free memory and time after each, applies the server's KV formula
// (memory/) to the measured numbers, and judges the outcome against
// what the log says; then runs the fix the same way.
//
//   auto be = tpt::repro::MakeSimulatedBackend({});
//   tpt::repro::ReproReport rep = tpt::repro::Reproduce(plan, *be, layout, {});
//   std::puts(tpt::repro::RenderText(rep).c_str());
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "repro/backend.h"
#include "repro/repro_plan.h"

namespace tpt::repro {

inline constexpr int kReproSchemaVersion = 1;

// One rank's free memory after a step: measured on its device, or emulated
// from the plan (co-located mode), with what the log printed if it did.
struct RankFigure {
  int rank = -1;
  bool measured = false;
  int64_t free_bytes = 0;
  std::optional<int64_t> logged_free_bytes;
};

struct StepRecord {
  std::string step;
  bool ok = true;
  std::string error;
  double start_s = 0, seconds = 0;
  int64_t free_bytes = 0;   // representative rank, measured
  int64_t delta_bytes = 0;  // change of its free memory (negative: used)
  std::vector<RankFigure> ranks;
  std::string note;
};

struct KvFigures {
  bool computed = false;
  std::string formula;              // "sglang kV05: rest = available - free_at_init x (1 - f)"
  double free_at_init_bytes = 0;    // min over ranks (SGLang total_gpu_memory)
  double available_bytes = 0;       // min over ranks after weights
  double reserved_bytes = 0;
  double rest_bytes = 0;            // SGLang rest / vLLM kv bytes
  int64_t tokens = 0;
  double pool_bytes = 0;
  double held_bytes = 0;            // of the pool, already held before the kv_pool step (TGI's warm-up blocks)
  double min_viable = 0;            // smallest fraction/utilisation that passes
  bool fails = false;
  std::string error;                // the server's message when it fails
};

struct RunResult {
  std::string label;                // "as logged", "fix: mem_fraction_static=0.77"
  Plan plan;
  std::vector<StepRecord> steps;
  std::string failed_step;          // "" when every step passed
  std::string failure;              // server-side failure (or the tool's error)
  bool tool_error = false;          // stopped for a reason that is not the server's
  KvFigures kv;
  std::optional<GraphResult> graphs;
  int64_t free_before_ballast = 0;  // min over the real ranks (0: the step did not read it)
  double seconds = 0;
};

struct Verdict {
  std::string outcome;      // "reproduced" | "not reproduced" | "inconclusive"
  std::string reason;
  std::string fix_outcome;  // "passes" | "fails" | "inconclusive" | "not checked"
  std::string fix_reason;
};

struct ReproOptions {
  bool check_fix = true;
  bool force = false;                      // run even if other processes hold GPU memory
  int64_t foreign_memory_limit = 2ll << 30;  // refuse above this much used right after our context
  double step_deadline_s = 60;
  int64_t ballast_tolerance = 64ll << 20;  // free at init must match the log within this
  bool scale_to_fit = false;  // a GPU smaller than the log's free at init replays the figures scaled (plan_scale.h)
};

struct ReproReport {
  std::vector<std::string> banner;
  std::string backend;
  RankLayout layout;
  RunResult original;
  std::optional<RunResult> fix;
  Verdict verdict;
  double time_to_verdict_s = 0;
  double scale = 1;  // the factor the log's figures were replayed at (plan_scale.h)
  std::vector<std::string> notes;  // what was measured and what was emulated
};

// Runs one configuration. `first`: also creates the context and communicator.
RunResult RunPlan(const Plan& plan, DeviceBackend& backend, const RankLayout& layout, const ReproOptions& opt,
                  bool first);

// The verdict from the log's failure step and the runs.
Verdict Judge(const Plan& plan, const RunResult& original, const RunResult* fix);

// Original run, then the fix run (when the plan has a fix), then the verdict.
ReproReport Reproduce(const Plan& plan, DeviceBackend& backend, const RankLayout& layout, const ReproOptions& opt);

// Applies the server's formula to measured figures (via memory/).
KvFigures ComputeKv(const Plan& plan, double free_at_init_min, double available_min, double weights_bytes);

std::string RenderText(const ReproReport& r);
nlohmann::json RenderJson(const ReproReport& r);

// Exit codes of `tptriage repro`.
inline constexpr int kExitReproduced = 0;      // reproduced, and the fix (if any) passes
inline constexpr int kExitNotReproduced = 1;
inline constexpr int kExitReproUsage = 2;
inline constexpr int kExitInconclusive = 3;
inline constexpr int kExitFixFails = 4;        // reproduced, but the fix does not pass
int ExitCodeOf(const Verdict& v);

}  // namespace tpt::repro
