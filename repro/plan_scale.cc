#include "repro/plan_scale.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace tpt::repro {

double FitScale(int64_t free_here, const Plan& plan, int64_t margin) {
  int64_t target = plan.free_at_init_bytes;
  for (int64_t f : plan.free_at_init_per_rank) target = std::max(target, f);
  if (target <= 0 || free_here <= margin) return 0;
  const double s = std::floor(100.0 * static_cast<double>(free_here - margin) / static_cast<double>(target)) / 100.0;
  return std::min(1.0, s);
}

Plan ScalePlan(const Plan& plan, double s) {
  Plan p = plan;
  auto scale = [s](int64_t& v) { v = static_cast<int64_t>(std::llround(static_cast<double>(v) * s)); };
  for (int64_t* v : {&p.card_total_bytes, &p.free_at_init_bytes, &p.weights_bytes, &p.kv_bytes_per_token,
                     &p.warmup_asked_bytes, &p.warmup_free_bytes, &p.kv_block_bytes, &p.kv_estimate_bytes,
                     &p.free_at_creation_bytes, &p.warmup_bytes, &p.kv_available_bytes}) {
    scale(*v);
  }
  for (auto& v : p.free_at_init_per_rank) scale(v);
  for (auto& v : p.weights_per_rank) scale(v);
  for (auto& [step, v] : p.logged_free_after) scale(v);
  char buf[160];
  std::snprintf(buf, sizeof buf, "%.2f: every figure of the original card times %.2f to fit this GPU", s, s);
  p.sources["scale"] = buf;
  return p;
}

void ScaledVerdict(const Plan& scaled, ReproReport& rep) {
  char f[32];
  std::snprintf(f, sizeof f, "%.2fx", rep.scale);
  const int64_t card = rep.scale > 0 ? static_cast<int64_t>(std::llround(scaled.free_at_init_bytes / rep.scale)) : 0;
  rep.notes.push_back(std::string("scaled replay: this GPU had ") + FormatBytes(rep.original.free_before_ballast) +
                      " free before the ballast, the log's card " + FormatBytes(card) + " at init, so every figure of it was replayed at " +
                      f + " (free at init, weights, the KV cell, warm-up); the servers' KV formulas are linear in them, so the "
                      "failing step and the tokens a fix leaves carry over; the CUDA context, NCCL, custom all-reduce buffers "
                      "and CUDA graphs are this GPU's own and not scaled");
  Verdict& v = rep.verdict;
  v.reason += std::string(" (figures at ") + f + ")";
  if (!v.fix_reason.empty() && rep.fix) v.fix_reason += std::string(" (figures at ") + f + ")";
  const std::string why = std::string("CUDA graphs are not scaled: at ") + f +
                          " their share of the emulated card is larger than on the log's; run on a GPU with " +
                          FormatBytes(card) + " free for this verdict";
  if (rep.original.failed_step == kStepGraphs) {  // less room, same graphs: a failure there proves nothing
    v.outcome = "inconclusive";
    v.reason = why + "; " + v.reason;
  }
  if (rep.fix && rep.fix->failed_step == kStepGraphs) {
    v.fix_outcome = "inconclusive";
    v.fix_reason = why + "; " + v.fix_reason;
  }
}

}  // namespace tpt::repro
