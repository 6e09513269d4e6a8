// tgi_warmup_held_test.cc: what TGI's warm-up holds at its read (tgi_warmup_held.cc).
#include "memory/tgi_warmup_held.h"

#include <gtest/gtest.h>

#include <string>

#include "memory/memory_model.h"

namespace tpt::memory {
namespace {

TgiWarmupHeld Held(double room_gib, double forward_gib, double logits_gib, bool estimated = true,
                   const std::string& version = "") {
  TgiWarmupHeldInput in;
  in.room_bytes = room_gib * kGiB;
  in.forward_bytes = forward_gib * kGiB;
  in.logits_bytes = logits_gib * kGiB;
  in.estimated = estimated;
  in.version = version;
  return TgiHeldAtRead(in);
}

// Room for both phases and the unexplained bytes: all held, the rest free.
TEST(TgiWarmupHeldTest, BothPhasesHeldWhenTheyFit) {
  const TgiWarmupHeld h = Held(10, 2, 3);
  EXPECT_TRUE(h.fits);
  EXPECT_FALSE(h.released);
  EXPECT_NEAR(h.held_bytes, 5 * kGiB + TgiUnexplainedHeldBytes(""), 1);
  EXPECT_NEAR(h.free_bytes, 5 * kGiB - TgiUnexplainedHeldBytes(""), 1);
  EXPECT_NEAR(h.least_held_bytes, 3 * kGiB, 1);
}

// Not both, but the larger: the allocator gives the forward's blocks back for the logits, the
// warm-up passes and the point leaves nothing free; not even the larger: it fails.
TEST(TgiWarmupHeldTest, TheForwardsBlocksGoBackWhenOnlyTheLargerPhaseFits) {
  const TgiWarmupHeld h = Held(6, 2, 3);
  EXPECT_TRUE(h.fits);
  EXPECT_TRUE(h.released);
  EXPECT_EQ(h.free_bytes, 0);
  EXPECT_NEAR(h.held_bytes, 6 * kGiB, 1);
  EXPECT_FALSE(Held(4, 2, 3).fits);
  // Without logits (v3's default) there is one phase: nothing to give back.
  EXPECT_FALSE(Held(3.5, 3, 0).fits);
  EXPECT_TRUE(Held(5, 3, 0).fits);
}

// A peak given from a log is what the read saw: nothing is added to it.
TEST(TgiWarmupHeldTest, AGivenPeakTakesNothingUnexplained) {
  const TgiWarmupHeld h = Held(10, 4, 0, false);
  EXPECT_EQ(h.unexplained_bytes, 0);
  EXPECT_NEAR(h.free_bytes, 6 * kGiB, 1);
}

// The unexplained bytes follow what the version's server imports at start: v2.2.x imports
// fbgemm_gpu's gen_ai kernels (layers/fp8.py v2.2.0) and held 1.87 GiB a rank on its logged
// launch; v2.3.x imports the package through find_spec and, unmeasured, takes the same; no
// other tag installs it, and none held more than 1.03 GiB. An unknown version takes the larger.
TEST(TgiWarmupHeldTest, OnlyV22ImportsFbgemmAndHoldsItsBytes) {
  EXPECT_TRUE(TgiImportsFbgemmAtStart("2.2.0"));
  EXPECT_TRUE(TgiImportsFbgemmAtStart("2.3.1"));
  for (const char* v : {"2.1.1", "2.4.0", "2.4.1", "1.4.0", "3.3.4", ""}) {
    EXPECT_FALSE(TgiImportsFbgemmAtStart(v)) << v;
  }
  EXPECT_NEAR(TgiUnexplainedHeldBytes("2.2.0"), 1.9 * kGiB, 1);
  EXPECT_NEAR(TgiUnexplainedHeldBytes(""), 1.9 * kGiB, 1);
  EXPECT_NEAR(TgiUnexplainedHeldBytes("2.3.0"), 1.9 * kGiB, 1);
  for (const char* v : {"1.4.0", "2.0.3", "2.1.1", "2.4.0", "3.0.1", "3.3.4"}) {
    EXPECT_NEAR(TgiUnexplainedHeldBytes(v), 1.05 * kGiB, 1) << v;
  }
  // The point frees what the version does not hold: 0.85 GiB more room at the read off v2.2.x.
  EXPECT_NEAR(Held(10, 2, 3, true, "2.0.3").free_bytes - Held(10, 2, 3, true, "2.2.0").free_bytes, 0.85 * kGiB, 1);
}

}  // namespace
}  // namespace tpt::memory
