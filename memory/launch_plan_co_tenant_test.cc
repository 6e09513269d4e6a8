// launch_plan_co_tenant_test.cc: vLLM V1 before 0.9.1 charges what other processes hold on
// the card to its own budget, though --gpu-memory-utilization is documented as a share of a
// card others may use; where the room the utilization leaves could hold a process that
// empties the pool, the plan's start is not vouched for (launch_plan_co_tenant.cc).
#include <gtest/gtest.h>

#include "memory/launch_plan.h"

namespace tpt::memory {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// An 8B model alone on an 80 GB card, its KV pool sized at a utilization of 0.40.
PlanInput ShareOfAnEightyGigCard(const char* version, const char* engine, double util) {
  PlanInput in;
  in.framework = "vllm";
  in.version = version;
  in.vllm_engine = engine;
  in.total_bytes = 79.15 * kGiB;
  in.gpu_memory_utilization = util;
  in.weights_bytes = 15.27 * kGiB;
  in.activation_peak_bytes = 5.57 * kGiB;
  in.non_torch_bytes = 0.06 * kGiB;
  in.cell_bytes = 147456;
  in.context_length = 40960;
  return in;
}

bool SaysCharged(const Plan& p) {
  for (const auto& u : p.unknowns) {
    if (u.find("charges memory other processes hold") != std::string::npos) return true;
  }
  return false;
}

TEST(CoTenantTest, V1Before091AtALowUtilizationIsNotVouchedFor) {
  auto p = MakePlan(ShareOfAnEightyGigCard("0.8.5", "", 0.4));
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_TRUE(p->fits);
  EXPECT_FALSE(p->outcome_certain);
  EXPECT_TRUE(SaysCharged(*p));
}

TEST(CoTenantTest, TheSameLaunchStaysCertainWhereTheServerKeepsTheShare) {
  // V0 0.8.5 (memory_profiling: this instance's increase) and V1 from 0.9.1 (init-relative
  // non-torch, the startup check) do not charge another process inside the room left.
  for (auto [version, engine] : {std::pair{"0.8.5", "v0"}, std::pair{"0.9.2", ""}}) {
    auto p = MakePlan(ShareOfAnEightyGigCard(version, engine, 0.4));
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    EXPECT_TRUE(p->fits) << version;
    EXPECT_TRUE(p->outcome_certain) << version;
    EXPECT_FALSE(SaysCharged(*p)) << version;
  }
  // At 0.90 the 7.6 GiB left beside the budget cannot hold what empties a 50 GiB pool.
  auto full = MakePlan(ShareOfAnEightyGigCard("0.8.5", "", 0.9));
  ASSERT_TRUE(full.ok());
  EXPECT_TRUE(full->outcome_certain);
  EXPECT_FALSE(SaysCharged(*full));
  // Free memory measured on the card already counts whoever holds it.
  PlanInput measured = ShareOfAnEightyGigCard("0.8.5", "", 0.4);
  measured.free_at_init_bytes = 78.8 * kGiB;
  auto m = MakePlan(measured);
  ASSERT_TRUE(m.ok());
  EXPECT_FALSE(SaysCharged(*m));
}

}  // namespace
}  // namespace tpt::memory
