// vllm_v0_graphs_test.cc: vLLM V0's decode CUDA graphs after the KV cache (vllm_v0_graphs.h):
// the sizes capture_model takes by version and max_num_seqs, the estimate over graphs x
// layers, and the verdict against the room the pool leaves.
#include "memory/vllm_v0_graphs.h"

#include <gtest/gtest.h>

#include "memory/model_config.h"
#include "memory/nccl_graph_capture.h"

namespace tpt::memory {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

ModelConfig Layers(int n, const std::string& model_type = "llama") {
  ModelConfig m;
  m.layers = n;
  m.model_type = model_type;
  return m;
}

TEST(VllmV0GraphsTest, SizesFollowMaxNumSeqsPaddedAndTheVersionsList) {
  // 256: 1, 2, 4, 8 .. 256 (35); 3 pads to 4 (1, 2, 4); 16: 1, 2, 4, 8, 16.
  EXPECT_EQ(VllmV0CaptureSizes("0.8.3", 256).count, 35);
  EXPECT_EQ(VllmV0CaptureSizes("0.8.3", 256).largest, 256);
  EXPECT_EQ(VllmV0CaptureSizes("0.8.3", 3).count, 3);
  EXPECT_EQ(VllmV0CaptureSizes("0.8.3", 3).largest, 4);
  EXPECT_EQ(VllmV0CaptureSizes("0.6.6", 16).count, 5);
  // 512: 0.6 on lists to 8192 (67 sizes); 0.5.x's _BATCH_SIZES_TO_CAPTURE stops at 256.
  EXPECT_EQ(VllmV0CaptureSizes("0.8.3", 512).count, 67);
  EXPECT_EQ(VllmV0CaptureSizes("0.5.5", 512).count, 35);
  // vllm#1926 brought the graphs with 0.2.6: none before.
  EXPECT_EQ(VllmV0CaptureSizes("0.2.5", 256).count, 0);
  EXPECT_EQ(VllmV0CaptureSizes("0.2.7", 256).count, 35);
}

TEST(VllmV0GraphsTest, EstimateGrowsWithGraphsTimesLayers) {
  // Gemma-3-27B at the default 256 sequences: 35 graphs of 62 layers.
  const VllmV0Graphs g = VllmV0GraphsFor(Layers(62), "0.8.3", 256, 1);
  ASSERT_TRUE(g.captured);
  EXPECT_EQ(g.layer_graphs, 35 * 62);
  EXPECT_NEAR(g.point_bytes / kGiB, 0.21 * 62 / 16, 1e-9);  // Llama-3.2-1B's 0.21 GiB over 35 x 16
  EXPECT_NEAR(g.low_bytes / kGiB, 0.13 * 62 / 24, 1e-9);
  EXPECT_NEAR(g.high_bytes / kGiB, 1.92 * 62 / 28, 1e-9);
  // Sixteen sequences capture five graphs: a seventh of the memory.
  const VllmV0Graphs few = VllmV0GraphsFor(Layers(62), "0.8.3", 16, 1);
  EXPECT_NEAR(few.high_bytes * 7, g.high_bytes, 1e-3);
  // A rank of a pipeline stage captures each size for each virtual engine.
  EXPECT_EQ(VllmV0GraphsFor(Layers(61), "0.7.3", 256, 4).layer_graphs, 35 * 16 * 4);
}

TEST(VllmV0GraphsTest, ModelsTheVersionRunsEagerCaptureNone) {
  EXPECT_FALSE(VllmV0GraphsFor(Layers(40, "mllama"), "0.8.1", 256, 1).captured);
  EXPECT_TRUE(VllmV0GraphsFor(Layers(40, "mllama"), "0.8.3", 256, 1).captured);
  EXPECT_FALSE(VllmV0GraphsFor(Layers(61, "deepseek_v3"), "0.6.6.post1", 256, 1).captured);
  EXPECT_FALSE(VllmV0GraphsFor(Layers(32), "0.2.0", 256, 1).captured);
}

TEST(VllmV0GraphsTest, RoomBetweenThePricedGraphsAndTheLoggedHighEndMayFail) {
  const VllmV0Graphs g = VllmV0GraphsFor(Layers(62), "0.8.3", 256, 1);
  // vllm#16199: at util 0.98 on an A10 the pool leaves about 2.3 GiB; the graphs need
  // 0.81-4.25 GiB: not a confident start.
  const VllmCaptureRisk mid = VllmV0CaptureRisk(2.3 * kGiB, g, 1, false);
  EXPECT_TRUE(mid.may_fail);
  EXPECT_NE(mid.text.find("--max-num-seqs"), std::string::npos) << mid.text;
  EXPECT_DOUBLE_EQ(mid.need_low_bytes, g.point_bytes);
  EXPECT_DOUBLE_EQ(mid.need_high_bytes, g.high_bytes);
  EXPECT_FALSE(VllmV0CaptureRisk(g.high_bytes + 1, g, 1, false).may_fail) << "room for the high end: a start";
  EXPECT_FALSE(VllmV0CaptureRisk(g.point_bytes - 1, g, 1, false).may_fail) << "below the priced graphs: the pool's check";
}

TEST(VllmV0GraphsTest, AtTpAboveOneTheHighEndIsTheCollectivesOrNone) {
  // The per graph and layer range was logged at TP 1. InternVL3-78B at TP 8 on L40S (0.6.6,
  // NCCL all-reduces captured) logged 0.36 GiB over 35 x 80: its room of 4.94 GiB holds
  // vllm#5517's 3.81 GiB, not the TP 1 high end of 5.49.
  const VllmV0Graphs big = VllmV0GraphsFor(Layers(80), "0.6.6.post1", 256, 1);
  EXPECT_GT(big.high_bytes, 4.94 * kGiB);
  EXPECT_FALSE(VllmV0CaptureRisk(4.94 * kGiB, big, 8, true).may_fail);
  EXPECT_TRUE(VllmV0CaptureRisk(3.5 * kGiB, big, 8, true).may_fail);
  EXPECT_DOUBLE_EQ(VllmV0CaptureRisk(3.5 * kGiB, big, 8, true).need_high_bytes, kNcclCaptureHighBytes);
  // With the custom all-reduce (NVLink) the priced graphs decide alone.
  EXPECT_FALSE(VllmV0CaptureRisk(big.point_bytes + 1, big, 8, false).may_fail);
}

}  // namespace
}  // namespace tpt::memory
