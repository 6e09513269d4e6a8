// launch_plan_turbomind.cc: what LMDeploy's TurboMind allocates around its KV cache, for a
// plan, from the model's shapes: before its free-memory read (turbomind_startup.cc) and after
// the cache, its start-up GEMM tuning pass (turbomind_tuning.cc). Each says what it counted,
// or why nothing, under `assumed:`.
#include "memory/launch_plan_internal.h"
#include "memory/turbomind_startup.h"
#include "memory/turbomind_tuning.h"

namespace tpt::memory::internal {
namespace {

// The version, TP and the model's shapes both TurboMind inputs take (same field names).
template <class Input>
Input TurbomindShapes(const PlanInput& in, const ModelConfig& m) {
  Input t;
  t.version = in.version;
  t.tp = in.tp;
  t.hidden = m.hidden;
  t.intermediate = m.intermediate;
  t.heads = m.heads;
  t.kv_heads = m.kv_heads;
  t.head_dim = m.head_dim;
  t.vocab = m.vocab;
  return t;
}

}  // namespace

double TurbomindHeldForPlan(const PlanInput& in, Plan& p) {
  if (in.turbomind_held_bytes) return *in.turbomind_held_bytes;
  if (!in.model) {
    p.assumptions.push_back("TurboMind's buffers before its free-memory read need the model's shapes (--model): "
                            "nothing counted");
    return 0;
  }
  const ModelConfig& m = *in.model;
  auto ts = TurbomindShapes<TurbomindStartupInput>(in, m);
  ts.layers = m.layers;
  ts.elem_bytes = m.dtype_bytes > 0 ? m.dtype_bytes : 2;
  ts.moe = m.IsMoe();
  ts.int4 = (m.quant.method == "awq" || m.quant.method == "gptq") && m.quant.linear_bytes > 0 &&
            m.quant.linear_bytes < 1;
  auto h = TurbomindHeldBeforeRead(ts);
  if (!h.ok()) {
    p.assumptions.push_back(h.status().message() + ": nothing counted before the free-memory read");
    return 0;
  }
  p.figures["turbomind_held_bytes"] = h->total_bytes();
  p.figures["turbomind_held_upper_bytes"] = h->upper_bytes();
  for (const auto& n : h->notes) p.assumptions.push_back(n);
  return h->total_bytes();
}

double TurbomindAfterCacheForPlan(const PlanInput& in, Plan& p) {
  if (!in.model) return 0;
  const ModelConfig& m = *in.model;
  auto tt = TurbomindShapes<TurbomindTuningInput>(in, m);
  if (in.max_num_batched_tokens) tt.max_prefill_token_num = *in.max_num_batched_tokens;
  tt.max_batch_size = in.max_num_seqs ? *in.max_num_seqs : LmdeployDefaultMaxBatchSize(in.gpu_name);
  tt.session_len = in.context_length.value_or(0);
  auto t = TurbomindTuningPeak(tt);
  if (!t.ok()) {
    p.assumptions.push_back(t.status().message() + ": the tuning pass after the cache is not checked");
    return 0;
  }
  p.assumptions.push_back(t->note);
  if (!t->runs) return 0;
  p.figures["turbomind_tuning_bytes"] = t->bytes;
  return t->bytes;
}

}  // namespace tpt::memory::internal
