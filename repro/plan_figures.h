// plan_figures.h: completes a memory replay plan with the figures the log
// did not print, each from the best source there is, in this order: the
// log (already in the plan), an environment dump beside it, the GPU
// catalogue (a GPU the log names), the server's own default for its version
// (SGLang's --mem-fraction-static table, vLLM's 0.9), and last an assumption,
// which is asked for once by its flag with the value used. Every figure's
// source lands in Plan::sources, which the dry run prints.
//
//   TPT_RETURN_IF_ERROR(tpt::repro::CompleteFigures(analysis["run"], /*from_log=*/true, &plan));
//   for (const auto& a : plan.asked) std::cout << a << "\n";   // "--free-at-init 78.1GiB (assumed: ...)"
#pragma once

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "repro/repro_plan.h"

namespace tpt::repro {

// CUDA context + NCCL communicator before the server's first free-memory
// reading: 527 + 580 MiB measured on the H200 (anchors-allreduce.md §4.1).
inline constexpr int64_t kContextAndNcclBytes = (527ll + 580ll) << 20;

// `run`: analyze's `run` object (gpu, gpu_memory_bytes, environment), or
// {} for a bare plan. `from_log`: the plan's figures were read from a log
// (else from a plan file). Never fails on a missing figure: it assumes one.
void CompleteFigures(const nlohmann::json& run, bool from_log, Plan* p);

}  // namespace tpt::repro
