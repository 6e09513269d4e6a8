// launch_plan_co_tenant.cc: another process on the card. A start says how much of each GPU
// another process may hold before it fails: the plan run again with less free memory at init
// until the outcome turns (each server's budget decides how much: vLLM V1 before 0.9.1 charges
// it to its own budget, V0 and later versions need room beside it).
#include "memory/launch_plan_internal.h"
#include "memory/numeric.h"

namespace tpt::memory::internal {

void SayCoTenantMargin(const PlanInput& in, Plan& p) {
  // Measured free memory already counts whoever holds the card; a failure needs no margin.
  if (in.free_at_init_bytes || !p.fits) return;
  auto fits_with = [&](double held) {
    PlanInput t = in;
    t.free_at_init_bytes = p.free_at_init_bytes - held;
    auto r = Run(t);
    return r.ok() && r->fits;
  };
  double lo = 0, hi = p.free_at_init_bytes;
  if (fits_with(hi)) return;  // nothing another process holds makes it fail (cannot happen on a real card)
  while (hi - lo > 0.01 * kGiB) {
    const double mid = (lo + hi) / 2;
    (fits_with(mid) ? lo : hi) = mid;
  }
  p.figures["co_tenant_margin_bytes"] = lo;
  // vLLM V1 before 0.9.1 (and 0.6.4-0.6.5) charges every process's memory on the card to its
  // own budget (gpu_worker.py determine_available_memory: total - free is its non-torch
  // memory), so there the margin is the pool itself, not only the room left after it.
  p.assumptions.push_back("nothing else on the GPU: another process holding " + FormatGiB(lo) +
                          " or more of each GPU makes this launch fail; on a shared card pass --free-at-init with "
                          "the free memory CUDA reports there");
  SayCoTenantChargedInsideTheRoomLeft(in, lo, p);
}

void SayCoTenantChargedInsideTheRoomLeft(const PlanInput& in, double margin_bytes, Plan& p) {
  // --gpu-memory-utilization is "a per-instance limit ... if you have two vLLM instances
  // running on the same GPU, you can set the GPU memory utilization to 0.5 for each
  // instance" (its help from vllm#10511, 2024-12-16; config.py CacheConfig at 2025-04-28
  // cfe4532 L1308-1315). V1 before 0.9.1 does not keep that promise: determine_available_memory
  // (v1/worker/gpu_worker.py at cfe4532, ~0.8.5, L194-210) adds everything the card holds
  // beyond torch's allocation (total - free, other processes included) to its peak. So where
  // the room the utilization leaves beside the budget could hold another process big enough
  // to empty the pool, the start rests on a card nothing else uses, which no input says:
  // not vouched for (vllm#17431's V1 launch at 0.40 failed with "No available memory for the
  // cache blocks" where the same flags under V0 started).
  if (in.framework != "vllm" || !p.fits || !in.gpu_memory_utilization) return;
  auto era = VllmEraForVersion(in.version, in.vllm_engine);
  if (!era.ok() || *era != VllmEra::kV0NonTorchWholeGpu || !IsVllmV1(in)) return;
  const double budget = *in.gpu_memory_utilization * in.total_bytes;
  const double room = p.free_at_init_bytes - budget - p.input.cuda_graph_bytes.value_or(0);
  if (room < margin_bytes) return;
  p.outcome_certain = false;
  p.unknowns.push_back(
      "vLLM " + in.version + " (V1 before 0.9.1) charges memory other processes hold on the card to this "
      "instance's budget (gpu_worker.py determine_available_memory: total - free beyond torch's allocation), "
      "although --gpu-memory-utilization " + PyFloat(*in.gpu_memory_utilization) + " leaves " + FormatGiB(room) +
      " of each GPU beside it for them: another process holding " + FormatGiB(margin_bytes) +
      " or more there makes this launch fail (\"No available memory for the cache blocks\" or a pool too small); "
      "the plan cannot say the card is empty: give --free-at-init from the card, or start it alone");
}

}  // namespace tpt::memory::internal
