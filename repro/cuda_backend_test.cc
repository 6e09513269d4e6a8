// cuda_backend_test.cc: the real backend on this machine's GPU (label gpu;
// skips without one): a scaled-down KV failure reproduced in co-located mode
// with the custom all-reduce in the decode graphs, and memory given back; the
// warm-up/KV replays of TGI, LMDeploy and TensorRT-LLM with their fixes.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include "memory/memory_model.h"
#include "repro/runner.h"

namespace tpt::repro {
namespace {

class CudaBackendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) GTEST_SKIP() << "no CUDA device";
  }
};

Plan Small() {
  Plan p;
  p.source = "test";
  p.framework = "sglang";
  p.version = "0.4.6";
  p.tp = 8;
  p.card_total_bytes = 24 * kGiB;
  p.free_at_init_bytes = 20 * kGiB;
  p.weights_bytes = 15 * kGiB;
  p.mem_fraction_static = 0.5;  // rest = 5 - 10 < 0
  p.kv_bytes_per_token = 70272;
  p.cuda_graph_bs = {1, 8, 32, 160};
  p.hidden_size = 7168;
  p.num_layers = 8;
  p.failed_step = kStepKvFormula;
  p.fix["mem_fraction_static"] = 0.8;  // rest = 5 - 4 = 1 GiB
  return p;
}

TEST_F(CudaBackendTest, ReproducesAScaledKvFailureAndTheFixCapturesGraphs) {
  size_t free0 = 0, total = 0;
  ASSERT_EQ(cudaMemGetInfo(&free0, &total), cudaSuccess);
  {
    auto be = MakeCudaBackend();
    ASSERT_TRUE(be.ok()) << be.status().ToString();
    RankLayout l;
    l.world = 8;
    l.colocated = true;
    l.launcher = "test";
    ReproOptions opt;
    opt.force = true;  // CI machines with a GPU may run other tests at once
    ReproReport rep = Reproduce(Small(), **be, l, opt);
    EXPECT_EQ(rep.verdict.outcome, "reproduced") << RenderText(rep);
    EXPECT_EQ(rep.verdict.fix_outcome, "passes") << RenderText(rep);
    for (const auto& s : rep.original.steps) {
      if (s.step == kStepFreeAtInit) {
        EXPECT_LE(std::llabs(s.free_bytes - 20 * kGiB), 64 * kMiB);
      }
    }
    ASSERT_TRUE(rep.fix && rep.fix->graphs);
    EXPECT_EQ(rep.fix->graphs->graphs, 4);
    // bs 160 x 7168 x 2 B = 2.2 MiB fits the 8 MiB buffer: every all-reduce is custom.
    EXPECT_EQ(rep.fix->graphs->custom_ar_calls, 8);
    EXPECT_GT(rep.fix->graphs->replay_us, 0);
  }
  size_t free1 = 0;
  ASSERT_EQ(cudaMemGetInfo(&free1, &total), cudaSuccess);
  // Everything but the context is given back (NCCL may keep a little).
  EXPECT_LE(int64_t(free0) - int64_t(free1), 256 * kMiB);
}

TEST_F(CudaBackendTest, OneRankPerGpuModeWithOneRank) {
  Plan p = Small();
  p.tp = 1;
  p.custom_allreduce = false;
  auto be = MakeCudaBackend();
  ASSERT_TRUE(be.ok());
  RankLayout l;
  l.world = 1;
  l.colocated = false;
  l.real_ranks = 1;
  l.launcher = "test";
  ReproOptions opt;
  opt.force = true;
  ReproReport rep = Reproduce(p, **be, l, opt);
  EXPECT_EQ(rep.verdict.outcome, "reproduced") << RenderText(rep);
  EXPECT_EQ(rep.verdict.fix_outcome, "passes") << RenderText(rep);
}

// TGI's warm-up prefill and LMDeploy TurboMind's buffers (samples/repro), and a
// TensorRT-LLM final KV cache scaled to fit a 24 GiB card: each reproduced on the
// GPU, its Fix (the value that serves) passes, and the memory goes back.
TEST_F(CudaBackendTest, StartupServersWarmupAndKvReplaysWithTheirFixes) {
  const std::string samples = std::string(TPT_SOURCE_DIR) + "/samples/repro/";
  std::vector<Plan> plans;
  for (const char* f : {"tgi_warmup_oom.json", "lmdeploy_turbomind_buffers.json"}) {
    auto p = LoadPlanFile(samples + f);
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    plans.push_back(*p);
  }
  auto trt = LoadPlanFile(samples + "trtllm_kv_cache_creation.json");
  ASSERT_TRUE(trt.ok());
  Plan t = *trt;  // 11 GiB asked at 0.9, 10.86 GiB free at creation
  t.card_total_bytes = 24 * kGiB;
  t.kv_estimate_bytes = 11 * kGiB;
  t.kv_available_bytes = static_cast<int64_t>(11.0 * kGiB / 0.9);
  t.free_at_creation_bytes = static_cast<int64_t>(10.86 * kGiB);
  t.free_at_init_bytes = t.free_at_creation_bytes + 4 * kGiB;
  t.weights_bytes = 4 * kGiB;
  auto serving = memory::TrtllmServingFraction(double(t.kv_available_bytes), 0.9, double(t.free_at_creation_bytes), 65536);
  ASSERT_TRUE(serving.ok());
  t.fix = {{"free_gpu_memory_fraction", serving->fraction}};  // 0.78
  plans.push_back(t);
  size_t free0 = 0, total = 0;
  ASSERT_EQ(cudaMemGetInfo(&free0, &total), cudaSuccess);
  for (const Plan& p : plans) {
    SCOPED_TRACE(p.framework);
    ASSERT_TRUE(ValidatePlan(p).ok()) << ValidatePlan(p).ToString();
    auto be = MakeCudaBackend();
    ASSERT_TRUE(be.ok()) << be.status().ToString();
    RankLayout l;
    l.world = p.tp;
    l.colocated = p.tp > 1;
    l.real_ranks = 1;
    l.launcher = "test";
    ReproOptions opt;
    opt.force = true;
    ReproReport rep = Reproduce(p, **be, l, opt);
    EXPECT_EQ(rep.verdict.outcome, "reproduced") << RenderText(rep);
    EXPECT_EQ(rep.original.failed_step, p.failed_step) << RenderText(rep);
    EXPECT_EQ(rep.verdict.fix_outcome, "passes") << RenderText(rep);
  }
  size_t free1 = 0;
  ASSERT_EQ(cudaMemGetInfo(&free1, &total), cudaSuccess);
  EXPECT_LE(int64_t(free0) - int64_t(free1), 256 * kMiB);
}

}  // namespace
}  // namespace tpt::repro
