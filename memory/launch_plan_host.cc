// launch_plan_host.cc: a plan on a Windows or WSL2 host (`--host`): the
// share of the card its OS and desktop hold, taken from the free memory at init at the plan's
// point, and what the answer says about the point (host_platform.cc for the measured share and
// its sources).
#include "memory/host_platform.h"
#include "memory/launch_plan_internal.h"

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

}  // namespace tpt::memory::internal
