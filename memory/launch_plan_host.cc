// launch_plan_host.cc: what others on the card hold. A Windows or WSL2 host (`--host`): the
// share of the card its OS and desktop hold, taken from the free memory at init at the plan's
// point, and what the answer says about the point (host_platform.cc for the measured share and
// its sources). Any other process: how much of the card it may hold before the start fails.
#include <string>

#include "memory/host_platform.h"
#include "memory/launch_plan_internal.h"
#include "memory/numeric.h"

namespace tpt::memory::internal {

void TakeHostShare(const PlanInput& in, Plan& p) {
  if (in.free_at_init_bytes) return;  // measured on the host: taken as given
  if (auto host = HostUnsizedMemory(in.host, in.total_bytes)) {
    p.free_at_init_bytes -= host->point_bytes;
    p.assumptions.push_back(host->point_why);
  }
}

void SayHostReliability(const PlanInput& user, double total_bytes, Plan& p) {
  auto u = HostUnsizedMemory(user.host, total_bytes);
  if (!u) return;
  if (user.free_at_init_bytes) {
    p.assumptions.push_back("host " + HostPlatformName(user.host) + ": --free-at-init is taken as CUDA's free "
                            "memory measured on this host, with what its OS and desktop hold");
  } else {
    p.point_estimate_reliable = false;
    p.unknowns.push_back(u->why);
  }
}

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
