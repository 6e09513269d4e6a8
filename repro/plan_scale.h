// plan_scale.h: a memory replay of a larger card on a smaller GPU.
//
// The servers' KV formulas (memory/) are linear in the card's figures: SGLang's
// rest = available - free_at_init x (1 - f), vLLM's total x util - non-KV, the
// warm-up and TurboMind/TensorRT-LLM fractions. Multiplying every byte figure of
// the original card by one factor s (and the KV cell by s, so token counts stay)
// keeps the sign of the pool, the step that fails and the tokens a fix leaves.
// What the replay allocates on our GPU and does not scale: the CUDA context and
// the communicator (made before the ballast, so outside the emulated figures),
// custom all-reduce buffers (likewise) and CUDA graphs (after the pool): a run
// that turns on graph memory is inconclusive when scaled.
//
//   double s = FitScale(/*free_here=*/79 * kGiB, plan);   // 0.83 for the founding case's 94 GiB
//   Plan small = ScalePlan(plan, s);
#pragma once

#include <cstdint>

#include "repro/repro_plan.h"
#include "repro/runner.h"

namespace tpt::repro {

// Below this the replay is mostly our own fixed allocations: refused.
inline constexpr double kMinScale = 0.25;

// The largest s (two decimals, rounded down, at most 1) with s x the plan's
// largest free-at-init figure <= free_here - margin. 0 when free_here is not
// above the margin.
double FitScale(int64_t free_here, const Plan& plan, int64_t margin = int64_t(256) << 20);

// The plan with every byte figure of the original card multiplied by s (card
// total, free at init, weights, KV cell and blocks, warm-up, logged free
// memory); fractions, token counts, batch sizes and custom all-reduce's buffer
// are kept. Records the factor in plan.sources["scale"].
Plan ScalePlan(const Plan& plan, double s);

// What scaling changes in a verdict judged on a scaled plan: a note with the
// factor and what was not scaled, the factor in the reasons, and a run that
// stopped at CUDA graph capture (graphs are this GPU's own size) inconclusive.
void ScaledVerdict(const Plan& scaled, ReproReport& rep);

}  // namespace tpt::repro
