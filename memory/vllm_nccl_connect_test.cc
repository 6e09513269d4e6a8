// vllm_nccl_connect_test.cc: NCCL's connection buffers in vLLM's profiling window by era
// (vllm_nccl_connect.h): at creation before 0.10.2, the ring's at its first collective from
// 0.10.2 (runtime connect), and the A100 SXM4's 24 channels only where the name says SXM.
#include <string>

#include <gtest/gtest.h>

#include "memory/launch_plan.h"
#include "memory/memory_model.h"
#include "memory/vllm_nccl_connect.h"

namespace tpt::memory {
namespace {

TEST(VllmNcclConnectTest, RingConnectedAtFirstUseFrom0102) {
  // From 0.10.2 (cuMem on) the ring alone: 24 channels x 12 MiB at TP 2 on A100 SXM4 and Hopper.
  EXPECT_NEAR(VllmNcclConnectBytes({"0.11.2", 2, "A100 SXM 80GB"}), 288.0 * kMiB, 1.0);
  EXPECT_NEAR(VllmNcclConnectBytes({"0.10.2", 2, "H200 141GB"}), 288.0 * kMiB, 1.0);
  // No NVLS on Ampere: the ring at TP 4 too, one receive and one send connection a channel.
  EXPECT_NEAR(VllmNcclConnectBytes({"0.11.2", 4, "A100 SXM 40GB"}), 288.0 * kMiB, 1.0);
  // Hopper at TP >= 3: NVLS may take the first all-gather, not derived.
  EXPECT_EQ(VllmNcclConnectBytes({"0.11.0", 4, "H100 SXM 80GB"}), 0.0);
  // Before 0.10.2 every channel's ring and tree at creation: a middle rank's two peers.
  EXPECT_NEAR(VllmNcclConnectBytes({"0.9.2", 4, "A100 SXM 80GB"}), 576.0 * kMiB, 1.0);
  // PCIe and an A100 named without SXM (the PCIe card has the same memory): not derived.
  EXPECT_EQ(VllmNcclConnectBytes({"0.11.2", 2, "A100 PCIe 80GB"}), 0.0);
  const std::string open = "A100 SXM 80GB [assumed: " + GpuFormFactorOpen("A100-80G") + "]";
  EXPECT_EQ(VllmNcclConnectBytes({"0.11.2", 2, open}), 0.0);
  EXPECT_EQ(VllmNcclChannels("A100 SXM 80GB"), 24);
}

TEST(VllmNcclConnectTest, A100NamesThatLeaveTheFormFactorOpen) {
  EXPECT_FALSE(GpuFormFactorOpen("A100-80G").empty());
  EXPECT_FALSE(GpuFormFactorOpen("A100").empty());
  EXPECT_FALSE(GpuFormFactorOpen("NVIDIA A100 40GB").empty());
  EXPECT_TRUE(GpuFormFactorOpen("A100-SXM4-80GB").empty());
  EXPECT_TRUE(GpuFormFactorOpen("NVIDIA A100-SXM4-40GB").empty());
  EXPECT_TRUE(GpuFormFactorOpen("A100-PCIe-80GB").empty());
  EXPECT_TRUE(GpuFormFactorOpen("H100").empty());
}

// vLLM 0.11.2 at TP 2 on A100 SXM4: PyNccl's communicator and its ring (warmed up at creation)
// are before the snapshot; torch's TP-group communicator is created and its ring connected by
// the profile's logits all-gather, inside the window.
TEST(VllmNcclConnectTest, PlanPricesTheGatherCommunicatorsRingOnA100Sxm) {
  auto m = LoadModel(std::string(TPT_SOURCE_DIR) + "/samples/models/qwen3-32b");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  PlanInput in;
  in.framework = "vllm";
  in.version = "0.11.2";
  in.total_bytes = 79.15 * kGiB;
  in.gpu_name = "A100 SXM 80GB";
  in.gpu_arch = "ampere";
  in.gpu_interconnect = "nvlink";
  in.gpu_sm = 80;
  in.tp = 2;
  in.enforce_eager = true;
  in.model = *m;
  auto p = MakePlan(in);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  const double base = 66.0 * kMiB + kCustomAllReduceBytes + NcclCommBytes("ampere", "nvlink");
  EXPECT_NEAR(p->non_torch_bytes, base + 288.0 * kMiB, 1.0);
  bool said = false;
  for (const auto& a : p->assumptions) said = said || a.find("connected at its first collective") != std::string::npos;
  EXPECT_TRUE(said);
  in.gpu_name = "A100 SXM 80GB [assumed: " + GpuFormFactorOpen("A100-80G") + "]";
  auto q = MakePlan(in);
  ASSERT_TRUE(q.ok()) << q.status().ToString();
  EXPECT_NEAR(q->non_torch_bytes, base, 1.0);
  EXPECT_GT(q->kv_tokens, p->kv_tokens);
}

}  // namespace
}  // namespace tpt::memory
