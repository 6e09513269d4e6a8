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
}

}  // namespace tpt::memory::internal
