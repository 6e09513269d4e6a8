// launch_plan_card_mod_test.cc: a GeForce card with more memory than it was sold with
// (--gpu-mem well over the catalog's total) vouches for no start that needs the added memory
// (launch_plan_card_mod.cc): a 7B model in 16 bits on a 22 GB RTX 2080 Ti under TurboMind 0.2.5.
#include <gtest/gtest.h>

#include <algorithm>

#include "memory/launch_plan.h"

namespace tpt::memory {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

PlanInput TurbomindOn2080Ti(double total_gib, double weights_gib) {
  PlanInput in;
  in.framework = "lmdeploy";
  in.version = "0.2.5";
  in.gpu_name = "RTX 2080 Ti 11GB [total 22GiB from --gpu-mem]";
  in.total_bytes = total_gib * kGiB;
  in.gpu_arch = "turing";
  in.gpu_sm = 75;
  in.gpu_interconnect = "pcie";
  in.gpu_pcie_peer_access = false;
  in.weights_bytes = weights_gib * kGiB;
  in.cell_bytes = 131072;  // 32 layers x 8 KV heads x 128 x K and V x 2 bytes
  in.context_length = 4096;
  in.memory_fraction = 0.2;
  return in;
}

// What the plan says of a launch: fits, certain, and whether it names the modification.
struct Said {
  bool fits, certain, modified;
};

Said PlanOf(const PlanInput& in) {
  auto p = MakePlan(in);
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  if (!p.ok()) return {};
  const bool modified = std::any_of(p->unknowns.begin(), p->unknowns.end(), [](const std::string& u) {
    return u.find("a modified card") != std::string::npos;
  });
  return {p->fits, p->outcome_certain, modified};
}

TEST(ModifiedCardTest, StartNeedingTheAddedMemoryIsNotVouchedFor) {
  // 14.42 GiB of weights: more than the 10.76 GiB the card was sold with.
  const Said s = PlanOf(TurbomindOn2080Ti(22, 14.42));
  EXPECT_TRUE(s.fits);
  EXPECT_FALSE(s.certain);
  EXPECT_TRUE(s.modified);
}

TEST(ModifiedCardTest, OnlyAStartThatNeedsTheAddedMemoryLosesItsCertainty) {
  // A 3B model fits the card's own 10.76 GiB: nothing the modification added is needed.
  const Said small = PlanOf(TurbomindOn2080Ti(22, 5.8));
  EXPECT_TRUE(small.fits && small.certain && !small.modified);
  // 21.5 GiB of weights fail even on the modified card: less memory fails them the same.
  const Said big = PlanOf(TurbomindOn2080Ti(22, 21.5));
  EXPECT_TRUE(!big.fits && !big.modified);
  // The card at its own total is not modified.
  auto own = TurbomindOn2080Ti(10.76, 5.8);
  own.gpu_name = "RTX 2080 Ti 11GB";
  EXPECT_FALSE(PlanOf(own).modified);
  // An 80 GB A100 named by the catalog's 40 GB one corrects the total; it is not a modification.
  auto a100 = TurbomindOn2080Ti(79.15, 60);
  a100.gpu_name = "A100 PCIe 40GB [total 79.15GiB from --gpu-mem]";
  a100.gpu_arch = "ampere";
  a100.gpu_sm = 80;
  a100.gpu_pcie_peer_access = true;
  const Said dc = PlanOf(a100);
  EXPECT_TRUE(dc.fits && dc.certain && !dc.modified);
}

}  // namespace
}  // namespace tpt::memory
