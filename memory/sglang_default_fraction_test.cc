// sglang_default_fraction_test.cc: one test per boundary of SGLang's default
// --mem-fraction-static (server_args.py of the released wheels; the table in
// memory/README.md). Capacities are nvidia-smi's memory.total in MiB, what
// get_device_memory_capacity reads: RTX 4090 24564, H100 81559, H200 143771, B200 183359.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "memory/memory_model.h"

namespace tpt::memory {
namespace {

constexpr double kRtx4090 = 24564 * kMiB, kH100 = 81559 * kMiB, kH200 = 143771 * kMiB, kB200 = 183359 * kMiB;

double Default(const std::string& version, double capacity, int tp, const std::string& draft = "") {
  SglangDefaultsInput in;
  in.version = version;
  in.gpu_capacity_bytes = capacity;
  in.tp = tp;
  in.speculative_algorithm = draft;
  auto d = SglangDefaultMemFraction(in);
  EXPECT_TRUE(d.ok()) << version;
  return d.ok() ? d->mem_fraction_static : -1;
}

// 0.3.0-0.3.5.postN: tp>=8 0.83 (server_args.py:113 in 0.3.0); 0.3.6: 0.82 (:160); 0.4.0: 0.81 (:162).
TEST(SglangDefaultFractionTest, TpEightStepsDownAt036And040) {
  EXPECT_DOUBLE_EQ(Default("0.3.5.post2", kH100, 8), 0.83);
  EXPECT_DOUBLE_EQ(Default("0.3.6", kH100, 8), 0.82);
  EXPECT_DOUBLE_EQ(Default("0.3.6.post3", kH100, 8), 0.82);
  EXPECT_DOUBLE_EQ(Default("0.4.0", kH100, 8), 0.81);
  EXPECT_DOUBLE_EQ(Default("0.4.1", kH100, 4), 0.85);
}

// 0.4.6: above 80 GiB (gpu - 13 GiB) / gpu, not rounded; 0.4.5 kept the table.
TEST(SglangDefaultFractionTest, V046TakesThirteenGibOffCardsAbove80Gib) {
  EXPECT_DOUBLE_EQ(Default("0.4.5.post3", kH200, 1), 0.88);
  EXPECT_DOUBLE_EQ(Default("0.4.6", kH200, 1), (143771.0 - 13312) / 143771);
  EXPECT_DOUBLE_EQ(Default("0.4.6.post1", kH100, 2), 0.87);
}

// 0.4.6.post2: tp x pp keys the table, 0.88 above 80 GiB, and above 96 GiB
// min(f + 48 GiB (1 - f) / gpu, (gpu - 18 GiB) / gpu).
TEST(SglangDefaultFractionTest, V046Post2KeepsEighteenGibAbove96Gib) {
  EXPECT_DOUBLE_EQ(Default("0.4.6.post2", kH200, 1), (143771.0 - 18432) / 143771);
  SglangDefaultsInput in;
  in.version = "0.4.6.post2";
  in.gpu_capacity_bytes = kH100;
  in.tp = 4;
  in.pp = 2;
  EXPECT_DOUBLE_EQ(SglangDefaultMemFraction(in)->mem_fraction_static, 0.81);
  in.version = "0.4.6.post1";
  EXPECT_DOUBLE_EQ(SglangDefaultMemFraction(in)->mem_fraction_static, 0.85);
}

// 0.4.7: 0.79 above 180,000 MiB; a draft x0.95 on smaller cards.
TEST(SglangDefaultFractionTest, V047GivesB200079AndADraftFivePercentLess) {
  EXPECT_DOUBLE_EQ(Default("0.4.6.post5", kB200, 1), (183359.0 - 18432) / 183359);
  EXPECT_DOUBLE_EQ(Default("0.4.7", kB200, 1), 0.79);
  EXPECT_DOUBLE_EQ(Default("0.4.7", kH100, 1, "EAGLE"), 0.88 * 0.95);
  EXPECT_DOUBLE_EQ(Default("0.4.6.post5", kH100, 1, "EAGLE"), 0.88);
}

// 0.4.7.post1-0.5.2: reserve by capacity bucket; the 24 GB WSL2 launch of 0.4.9.post2
// (2.9 GiB kept back, 0.879) that the post-#7054 heuristic put at 0.847.
TEST(SglangDefaultFractionTest, V047Post1ReservesByCapacityBucket) {
  EXPECT_DOUBLE_EQ(Default("0.4.7.post1", kRtx4090, 1), 0.879);
  EXPECT_DOUBLE_EQ(Default("0.4.9.post2", kRtx4090, 1), 0.879);
  EXPECT_DOUBLE_EQ(Default("0.4.10", kH100, 8), 0.831);   // (9.5 + 8/2) GiB
  EXPECT_DOUBLE_EQ(Default("0.5.1", kH100, 1, "STANDALONE"), 0.849);  // +2 GiB
  EXPECT_DOUBLE_EQ(Default("0.5.2", kH100, 1, "STANDALONE"), 0.799);  // +6 GiB from 0.5.2
  SglangDefaultsInput in;
  in.version = "0.5.2";
  EXPECT_DOUBLE_EQ(SglangDefaultMemFraction(in)->mem_fraction_static, 0.88);  // capacity unknown
}

// 0.5.3: _handle_gpu_memory_settings, cuda_graph_max_bs 16 under 35 GiB at tp < 4; 24 from 0.5.4.post1.
TEST(SglangDefaultFractionTest, V053TakesSixteenGraphsOnSmallCardsUntil054Post1) {
  EXPECT_DOUBLE_EQ(Default("0.5.3", kRtx4090, 1), 0.848);        // 512 + 3072 + 32 + 128
  EXPECT_DOUBLE_EQ(Default("0.5.4", kRtx4090, 1), 0.848);
  EXPECT_DOUBLE_EQ(Default("0.5.4.post1", kRtx4090, 1), 0.847);  // + 16 MB
  EXPECT_DOUBLE_EQ(Default("0.5.9", kRtx4090, 1), 0.847);
  // --chunked-prefill-size -1: the activations of max_prefill_tokens (16384).
  SglangDefaultsInput in;
  in.version = "0.5.9";
  in.gpu_capacity_bytes = kH100;
  in.chunked_prefill_size = -1;
  EXPECT_DOUBLE_EQ(SglangDefaultMemFraction(in)->mem_fraction_static, 0.685);  // 512 + 24576 + 512 + 128
}

// 0.5.10: piecewise prefill graphs on by default, 8 MB for each of the 42 sizes up to 2048
// (1.5 GiB with MLA), off with a draft in 0.5.10 only; a draft keeps 4 GiB (was 2).
TEST(SglangDefaultFractionTest, V0510AddsPiecewiseGraphsAndFourGibADraft) {
  EXPECT_DOUBLE_EQ(Default("0.5.10", kRtx4090, 1), 0.833);  // 3760 + 336
  EXPECT_DOUBLE_EQ(Default("0.5.9", kH100, 1, "EAGLE"), std::round((81559.0 - 13440 - 2048) / 81559 * 1000) / 1000);
  EXPECT_DOUBLE_EQ(Default("0.5.10", kH100, 1, "EAGLE"), 0.785);  // 13440 + 4096, no piecewise
  SglangDefaultsInput in;
  in.version = "0.5.10";
  in.gpu_capacity_bytes = kH100;
  in.tp = 8;
  in.mla = true;
  EXPECT_DOUBLE_EQ(SglangDefaultMemFraction(in)->mem_fraction_static, 0.799);  // 14848 + 1536
  in.mla = false;
  in.multimodal = true;
  EXPECT_DOUBLE_EQ(SglangDefaultMemFraction(in)->mem_fraction_static, 0.818);  // 14848, none
}

// 0.5.13: the piecewise sizes stop at the context length.
TEST(SglangDefaultFractionTest, V0513CapsPiecewiseSizesAtTheContext) {
  SglangDefaultsInput in;
  in.version = "0.5.12";
  in.gpu_capacity_bytes = kRtx4090;
  in.context_length = 1024;
  EXPECT_DOUBLE_EQ(SglangDefaultMemFraction(in)->mem_fraction_static, 0.833);
  in.version = "0.5.13";
  EXPECT_DOUBLE_EQ(SglangDefaultMemFraction(in)->mem_fraction_static, 0.835);  // 38 sizes
}

// 0.5.14: the default keeps nothing for a draft (0.5.11-0.5.13: piecewise on and 4 GiB).
TEST(SglangDefaultFractionTest, V0514DropsTheDraftReserve) {
  EXPECT_DOUBLE_EQ(Default("0.5.13", kRtx4090, 1, "EAGLE"), 0.667);
  EXPECT_DOUBLE_EQ(Default("0.5.14", kRtx4090, 1, "EAGLE"), 0.833);
}

// 0.5.20 (arg_groups/memory_hook.py): under 35 GiB chunked prefill 4096 and 48 graphs;
// 0.95 without a capacity. 0.5.22: the default graphs stop at --max-running-requests.
TEST(SglangDefaultFractionTest, V0520WidensSmallCardsAndV0522CapsAtRunningRequests) {
  EXPECT_DOUBLE_EQ(Default("0.5.19", kRtx4090, 1), 0.833);
  EXPECT_DOUBLE_EQ(Default("0.5.20", kRtx4090, 1), 0.704);  // 512 + 6144 + 96 + 128 + 50 x 8
  EXPECT_DOUBLE_EQ(Default("0.5.19", 0, 1), 0.88);
  EXPECT_DOUBLE_EQ(Default("0.5.20", 0, 1), 0.95);
  SglangDefaultsInput in;
  in.version = "0.5.21";
  in.gpu_capacity_bytes = kRtx4090;
  in.max_running_requests = 8;
  EXPECT_DOUBLE_EQ(SglangDefaultMemFraction(in)->mem_fraction_static, 0.704);
  in.version = "0.5.22";
  EXPECT_DOUBLE_EQ(SglangDefaultMemFraction(in)->mem_fraction_static, 0.707);  // 8 graphs
}

}  // namespace
}  // namespace tpt::memory
