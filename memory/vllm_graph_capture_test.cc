// vllm_graph_capture_test.cc: the NCCL capture's risk between the priced and the measured
// high end (vllm_graph_capture.h).
#include "memory/vllm_graph_capture.h"

#include <gtest/gtest.h>

#include "memory/memory_model.h"

namespace tpt::memory {
namespace {

TEST(VllmGraphCaptureTest, NcclCaptureMayFailBetweenThePricedAndTheHighEnd) {
  // Room for the priced graphs and the sampler warm-up after them, not for vllm#5517's high end.
  const VllmCaptureRisk between = VllmNcclCaptureRisk(3.58 * kGiB, 0.25 * kGiB, 1.38 * kGiB);
  EXPECT_TRUE(between.may_fail);
  EXPECT_NEAR(between.need_low_bytes / kGiB, 1.63, 1e-9);
  EXPECT_NEAR(between.need_high_bytes / kGiB, 3.8086 + 1.38, 1e-9);
  EXPECT_NE(between.text.find("1.63-5.19 GiB"), std::string::npos) << between.text;
  EXPECT_NE(between.text.find("3.58 GiB"), std::string::npos) << between.text;
  // Room for the high end: a start. Less than the priced end: the plan's own failure, not this.
  EXPECT_FALSE(VllmNcclCaptureRisk(6 * kGiB, 0.25 * kGiB, 1.38 * kGiB).may_fail);
  EXPECT_FALSE(VllmNcclCaptureRisk(1 * kGiB, 0.25 * kGiB, 1.38 * kGiB).may_fail);
  // V0 prices no graphs and has no sampler warm-up after them.
  const VllmCaptureRisk v0 = VllmNcclCaptureRisk(2.71 * kGiB, 0, 0);
  EXPECT_TRUE(v0.may_fail);
  EXPECT_EQ(v0.text.find("sampler"), std::string::npos);
}

}  // namespace
}  // namespace tpt::memory
