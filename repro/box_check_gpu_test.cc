// box_check_gpu_test.cc: the box checks on this machine (label gpu; skips
// without a GPU). This process never initialises CUDA itself: every GPU
// step runs in forked children (gpu_checks.h), as in `tptriage repro`.
#include <gtest/gtest.h>

#include "repro/box_check.h"
#include "repro/gpu_checks.h"
#include "repro/nvml_dl.h"

namespace tpt::repro {
namespace {

class BoxGpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto g = GpuList(60);
    if (!g.ok() || g->empty()) GTEST_SKIP() << "no GPU: " << (g.ok() ? "none listed" : g.status().message());
    gpus_ = *g;
  }
  std::vector<GpuFacts> gpus_;
};

TEST_F(BoxGpuTest, NcclRefusesTwoRanksOfOneCommunicatorOnOneGpu) {
  Status s = GpuTwoRanksOneGpu(0, 120);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.code(), StatusCode::kUnavailable) << s.ToString();
  EXPECT_NE(s.message().find("ncclCommInitRank"), std::string::npos) << s.ToString();
}

TEST_F(BoxGpuTest, IpcHandleExchangedBetweenProcessesWithTheDataRight) {
  Status s = GpuIpcBetweenProcesses(120);
  EXPECT_TRUE(s.ok()) << s.ToString();
}

TEST_F(BoxGpuTest, BootstrapFailsOnAnInterfaceTheBoxLacksAndPassesOnLoopback) {
  Status bad = GpuNcclBootstrap({{"NCCL_SOCKET_IFNAME", "=tptnoif0"}}, 120);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.code(), StatusCode::kUnavailable) << bad.ToString();
  Status good = GpuNcclBootstrap({{"NCCL_SOCKET_IFNAME", "lo"}}, 120);
  EXPECT_TRUE(good.ok()) << good.ToString();
}

TEST_F(BoxGpuTest, DriverAndComputeCapabilityRead) {
  auto d = GpuDriverCudaVersion(60);
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_GE(*d, 11000);
  auto n = NvmlDriverCudaVersion();
  if (n.ok()) EXPECT_EQ(*n, *d);
  EXPECT_GE(gpus_[0].sm, 50);
  EXPECT_FALSE(gpus_[0].bus_id.empty());
}

TEST_F(BoxGpuTest, NvmlReadsEveryGpuReadOnly) {
  auto h = NvmlHealthOfAll();
  if (!h.ok()) GTEST_SKIP() << h.status().message();
  ASSERT_FALSE(h->empty());
  bool found = false;
  for (const auto& g : *h) {
    EXPECT_GT(g.pcie_width_max, 0) << g.bus_id;
    std::string a = g.bus_id, b = gpus_[0].bus_id;
    for (auto* s : {&a, &b}) {
      for (char& c : *s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    found |= a.find(b.substr(b.size() > 7 ? b.size() - 7 : 0)) != std::string::npos;
  }
  EXPECT_TRUE(found) << "NVML does not list the CUDA device's bus id " << gpus_[0].bus_id;
}

TEST_F(BoxGpuTest, CustomAllreduceMatchesTheExactReference) {
  auto w = GpuCustomAllreduceWrong(2, 300);
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  EXPECT_EQ(*w, 0);
}

TEST_F(BoxGpuTest, CollectiveCompletesAndAHangWouldBeKilledAtTheDeadline) {
  const int ranks = std::min<int>(2, gpus_.size());
  auto r = GpuCollective("all_reduce", 64 << 20, ranks, {}, 120);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->completed) << r->note;
  EXPECT_GT(r->seconds, 0);
}

}  // namespace
}  // namespace tpt::repro
