// memory_model_test.cc: SGLang KV pool sizing by era, the founding case, the
// knowledge notes' worked checks, the minimum viable fraction and the defaults.
#include <cmath>

#include <gtest/gtest.h>

#include "memory/memory_model.h"

namespace tpt::memory {
namespace {

constexpr double kTol = 0.005 * kGiB;  // figures printed with 2 decimals

SglangKvInput Founding(double f) {
  SglangKvInput in;
  in.era = SglangEra::kV05;
  in.free_at_init_bytes = 94.0 * kGiB;
  in.avail_after_weights_bytes = 21.7 * kGiB;
  in.mem_fraction_static = f;
  in.cell_bytes = 65536;
  return in;
}

// The case that started the project: 94 GiB free at init, 21.7 GiB after weights.
TEST(SglangKvPoolTest, FoundingCaseAtHalf) {
  auto r = SglangKvPool(Founding(0.50));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_NEAR(r->reserved_bytes, 47.0 * kGiB, kTol);
  EXPECT_NEAR(r->rest_bytes, -25.3 * kGiB, kTol);
  EXPECT_TRUE(r->fails);
  EXPECT_LT(r->profiled_tokens, 0);
  EXPECT_EQ(r->kv_pool_bytes, 0);
  EXPECT_DOUBLE_EQ(r->min_viable_mem_fraction_static, 0.77);
  EXPECT_EQ(r->error,
            "Not enough memory. Please try to increase --mem-fraction-static. Current value: "
            "self.server_args.mem_fraction_static=0.5");
}

TEST(SglangKvPoolTest, FoundingCaseAt055) {
  auto r = SglangKvPool(Founding(0.55));
  ASSERT_TRUE(r.ok());
  EXPECT_NEAR(r->reserved_bytes, 42.3 * kGiB, kTol);
  EXPECT_NEAR(r->rest_bytes, -20.6 * kGiB, kTol);
  EXPECT_TRUE(r->fails);
  EXPECT_DOUBLE_EQ(r->min_viable_mem_fraction_static, 0.77);
}

TEST(SglangKvPoolTest, FoundingCaseFitsAtMinimumViable) {
  auto at_min = SglangKvPool(Founding(0.77));
  ASSERT_TRUE(at_min.ok());
  EXPECT_FALSE(at_min->fails);
  EXPECT_GT(at_min->rest_bytes, 0);
  // rest = 21.7 - 94 x 0.23 = 0.08 GiB -> 1310 tokens of 64 KiB.
  EXPECT_EQ(at_min->max_total_num_tokens, static_cast<int64_t>((21.7 - 94 * 0.23) * kGiB) / 65536);
  auto below = SglangKvPool(Founding(0.76));
  ASSERT_TRUE(below.ok());
  EXPECT_TRUE(below->fails);
}

// sglang-source.md §4: QwQ-32B on 4xL4, v0.4.3.post4, mfs 0.85: 21.63 -> 6.09 GB,
// cell (8/4) x 128 x 64 x 2 x 2 = 65,536 B; the log says 46,611 tokens (K size 1.42 GB).
TEST(SglangKvPoolTest, QwqOnFourL4MatchesLog) {
  KvDims dims;
  dims.layers = 64;
  dims.kv_heads = 8;
  dims.head_dim = 128;
  dims.dtype_bytes = 2;
  auto era = SglangEraForVersion("0.4.3.post4");
  ASSERT_TRUE(era.ok());
  EXPECT_EQ(*era, SglangEra::kV02);
  auto cell = SglangCellBytes(dims, 4, *era);
  ASSERT_TRUE(cell.ok());
  EXPECT_EQ(*cell, 65536);
  SglangKvInput in;
  in.era = *era;
  in.free_at_init_bytes = 21.63 * kGiB;
  in.avail_after_weights_bytes = 6.09 * kGiB;
  in.mem_fraction_static = 0.85;
  in.cell_bytes = *cell;
  auto r = SglangKvPool(in);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->fails);
  // Inputs are rounded to 2 decimals in the log, so within 1% of 46,611.
  EXPECT_NEAR(static_cast<double>(r->max_total_num_tokens), 46611, 466);
  // K size alone: tokens x cell/2, logged as "K size: 1.42 GB" next to
  // "#tokens: 46611": the model's token count must give the logged size too.
  EXPECT_NEAR(static_cast<double>(r->max_total_num_tokens) * (*cell / 2) / kGiB, 1.42, 0.015);
}

// §1.2(c): DeepSeek R1 MLA bf16: 576 x 61 x 2 = 70,272 B/token, not divided by TP.
TEST(SglangCellBytesTest, MlaIsNotShardedByTp) {
  KvDims dims;
  dims.layers = 61;
  dims.kv_lora_rank = 512;
  dims.qk_rope_head_dim = 64;
  dims.dtype_bytes = 2;
  EXPECT_EQ(*SglangCellBytes(dims, 1, SglangEra::kV02), 70272);
  EXPECT_EQ(*SglangCellBytes(dims, 8, SglangEra::kV02), 70272);
  dims.dtype_bytes = 1;  // fp8 KV
  EXPECT_EQ(*SglangCellBytes(dims, 8, SglangEra::kV05), 576 * 61);
  // MLA did not exist in the v0.1 pools.
  EXPECT_FALSE(SglangCellBytes(dims, 8, SglangEra::kV0117).ok());
}

// §1.2(d) FP4: packed half + one 1-byte scale per 16 elements.
TEST(SglangCellBytesTest, Fp4AddsScales) {
  KvDims mla;
  mla.layers = 61;
  mla.kv_lora_rank = 512;
  mla.qk_rope_head_dim = 64;
  mla.dtype_bytes = 0.5;
  EXPECT_EQ(*SglangCellBytes(mla, 8, SglangEra::kV05), 576 * 61 / 2 + (576 / 16) * 61);
  KvDims gqa;
  gqa.layers = 32;
  gqa.kv_heads = 8;
  gqa.head_dim = 128;
  gqa.dtype_bytes = 0.5;
  int64_t elems = 8 * 256 * 32;
  EXPECT_EQ(*SglangCellBytes(gqa, 1, SglangEra::kY2026), elems / 2 + elems / 16);
  EXPECT_FALSE(SglangCellBytes(gqa, 1, SglangEra::kV02).ok());  // no fp4 pool before v0.5
}

TEST(SglangCellBytesTest, HeadsReplicateExceptInV01) {
  KvDims dims;
  dims.layers = 80;
  dims.kv_heads = 8;
  dims.head_dim = 128;
  dims.dtype_bytes = 1;  // ignored before v0.2: fp16 hard-coded
  // tp 16 > 8 heads: one head per rank from v0.1.17 (get_num_kv_heads).
  EXPECT_EQ(*SglangCellBytes(dims, 16, SglangEra::kV0117), 1 * 128 * 80 * 2 * 2);
  EXPECT_EQ(*SglangCellBytes(dims, 16, SglangEra::kV02), 1 * 128 * 80 * 2 * 1);
  EXPECT_EQ(*SglangCellBytes(dims, 4, SglangEra::kV01), 2 * 128 * 80 * 2 * 2);
  EXPECT_FALSE(SglangCellBytes(dims, 16, SglangEra::kV01).ok());  // 8 // 16 = 0
  // v0.5: K and V widths may differ.
  dims.v_head_dim = 64;
  dims.dtype_bytes = 2;
  EXPECT_EQ(*SglangCellBytes(dims, 8, SglangEra::kV05), 1 * (128 + 64) * 80 * 2);
  EXPECT_EQ(*SglangCellBytes(dims, 8, SglangEra::kV02), 1 * (128 + 128) * 80 * 2);
}

// sglang-source.md §4: DeepSeek-R1 DP8: "profiled value -561981" x 70,272 B is a rest of
// about -36.8 GiB; with 21.73 GB after weights the reserved slice was ~58.5 GiB.
TEST(SglangKvPoolTest, NegativeProfiledValueLikeIssue7691) {
  SglangKvInput in;
  in.era = SglangEra::kV02;
  in.avail_after_weights_bytes = 21.73 * kGiB;
  in.free_at_init_bytes = (21.73 + 166.59) * kGiB;
  in.mem_fraction_static = 1.0 - (21.73 + 36.8) / (21.73 + 166.59);  // the effective mfs
  in.cell_bytes = 70272;
  in.max_total_tokens = 131072;
  auto r = SglangKvPool(in);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->fails);
  EXPECT_NEAR(static_cast<double>(r->profiled_tokens), -561981, 561981 * 0.01);
  EXPECT_EQ(r->error, "Not enough memory. Please try to increase --mem-fraction-static.");
}

TEST(SglangKvPoolTest, EraErrorTexts) {
  auto in = Founding(0.5);
  in.era = SglangEra::kV01;
  EXPECT_EQ(SglangKvPool(in)->error, "Not enought memory. Please try to increase --mem-fraction-static.");
  in.era = SglangEra::kY2026;
  // 2026 pre-check: minimum viable = 1 - 21.7/94 = 0.76915 -> "above 0.770".
  EXPECT_EQ(SglangKvPool(in)->error,
            "Loaded weights leave no GPU memory for the KV cache under --mem-fraction-static=0.5. "
            "Raise --mem-fraction-static above 0.770 (minimum viable = 1 - available/pre = 0.7691). "
            "If using speculative decoding, draft weights are now counted.");
}

// 2026: rest positive but the configurator's tokens round to 0 -> RuntimeError text.
TEST(SglangKvPoolTest, Y2026TinyRestIsNotEnoughMemory) {
  SglangKvInput in;
  in.era = SglangEra::kY2026;
  in.free_at_init_bytes = 10 * kGiB;
  in.mem_fraction_static = 0.9;
  in.avail_after_weights_bytes = 1 * kGiB + 1000;  // rest = 1000 B < one cell
  in.cell_bytes = 4096;
  auto r = SglangKvPool(in);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->fails);
  EXPECT_GT(r->rest_bytes, 0);
  EXPECT_EQ(r->error, "Not enough memory. Please try to increase --mem-fraction-static. Current value: "
                      "mem_fraction_static=0.9");
}

TEST(SglangKvPoolTest, PageSizeAndMaxTotalTokensCap) {
  SglangKvInput in;
  in.era = SglangEra::kV05;
  in.free_at_init_bytes = 80 * kGiB;
  in.avail_after_weights_bytes = 40 * kGiB;
  in.mem_fraction_static = 0.8;  // rest = 24 GiB
  in.cell_bytes = 1000;          // not a power of two: page rounding shows
  in.page_size = 64;
  auto r = SglangKvPool(in);
  ASSERT_TRUE(r.ok());
  int64_t raw = static_cast<int64_t>(24 * kGiB) / 1000;
  EXPECT_EQ(r->profiled_tokens, raw);
  EXPECT_EQ(r->max_total_num_tokens, raw / 64 * 64);
  EXPECT_NE(r->max_total_num_tokens, raw);
  in.max_total_tokens = 100000;
  EXPECT_EQ(SglangKvPool(in)->max_total_num_tokens, 100000 / 64 * 64);
}

TEST(SglangKvPoolTest, ContextLengthRemedy) {
  auto in = Founding(0.8);  // rest = 21.7 - 18.8 = 2.9 GiB = 47,513 tokens
  in.context_length = 131072;
  auto r = SglangKvPool(in);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->fails);
  EXPECT_FALSE(r->holds_one_context);
  ASSERT_TRUE(r->mem_fraction_for_context.has_value());
  // need 131072 x 64 KiB = 8 GiB: f >= 1 - (21.7 - 8)/94 = 0.8543 -> 0.86.
  EXPECT_DOUBLE_EQ(*r->mem_fraction_for_context, 0.86);
  in.mem_fraction_static = *r->mem_fraction_for_context;
  auto fixed = SglangKvPool(in);
  EXPECT_TRUE(fixed->holds_one_context);
  in.mem_fraction_static = 0.85;
  EXPECT_FALSE(SglangKvPool(in)->holds_one_context);
}

TEST(SglangKvPoolTest, MinFractionStepsPastExactBoundary) {
  // 1 - 23/100 = 0.77 exactly: f = 0.77 leaves rest 0, which is not a pool.
  double f = SglangMinMemFraction(100 * kGiB, 23 * kGiB);
  EXPECT_DOUBLE_EQ(f, 0.78);
  SglangKvInput in;
  in.era = SglangEra::kV05;
  in.free_at_init_bytes = 100 * kGiB;
  in.avail_after_weights_bytes = 23 * kGiB;
  in.cell_bytes = 65536;
  in.mem_fraction_static = f;
  EXPECT_FALSE(SglangKvPool(in)->fails);
  // Weights larger than the card: no fraction can work; the value says so (> 1).
  EXPECT_GT(SglangMinMemFraction(10 * kGiB, 0), 0.99);
}

TEST(SglangKvPoolTest, RejectsBadInputsNamingTheField) {
  auto in = Founding(1.5);
  auto r = SglangKvPool(in);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("mem_fraction_static"), std::string::npos);
  in = Founding(0.5);
  in.cell_bytes = 0;
  EXPECT_FALSE(SglangKvPool(in).ok());
  in = Founding(0.5);
  in.free_at_init_bytes = 0;
  EXPECT_NE(SglangKvPool(in).status().message().find("free memory at init"), std::string::npos);
}

// SGLang's hybrid sliding-window pool (set_num_tokens_hybrid_swa): gpt-oss-120b at TP 1,
// 18 full + 18 sliding layers of 8 KV heads x 64: cell 36 x 2048 B. tokens over all
// layers x 36 are split full : swa = 1 : 0.8, so full = rest / (2048 x 32.4).
TEST(SglangKvPoolTest, HybridSwaSplitsFullAndSwaTokens) {
  SglangKvInput in;
  in.era = SglangEra::kV05;
  in.free_at_init_bytes = 78.0 * kGiB;
  in.avail_after_weights_bytes = 78.0 * kGiB - 62.0 * kGiB;
  in.mem_fraction_static = 0.9;
  in.cell_bytes = 36 * 2048;
  in.full_layers = 18;
  in.swa_layers = 18;
  in.context_length = 131072;
  auto r = SglangKvPool(in);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const double rest = in.avail_after_weights_bytes - in.free_at_init_bytes * 0.1;
  const int64_t all = static_cast<int64_t>(rest) / in.cell_bytes;
  EXPECT_EQ(r->full_tokens, static_cast<int64_t>(all * 36.0 / (0.8 * 18 + 18)));
  EXPECT_EQ(r->swa_tokens, static_cast<int64_t>(r->full_tokens * 0.8));
  EXPECT_EQ(r->max_total_num_tokens, r->full_tokens);  // the pool is the full-attention count
  EXPECT_GT(r->full_tokens, all);
  // The two pools use the rest: full x 18 + swa x 18 layers at 2048 B.
  EXPECT_NEAR(r->kv_pool_bytes, 2048.0 * 18 * (r->full_tokens + r->swa_tokens), 1.0);
  EXPECT_LE(r->kv_pool_bytes, rest);
  EXPECT_GT(r->kv_pool_bytes, rest - in.cell_bytes * 2.0);
  // The fraction that holds one 131072-token request prices a token at 2048 x 32.4 B.
  ASSERT_TRUE(r->mem_fraction_for_context.has_value());
  EXPECT_DOUBLE_EQ(*r->mem_fraction_for_context,
                   SglangMinMemFraction(in.free_at_init_bytes, in.avail_after_weights_bytes,
                                        static_cast<int64_t>(std::ceil(2048 * 32.4)), 131072));
  in.swa_full_tokens_ratio = 1.5;
  EXPECT_FALSE(SglangKvPool(in).ok());
}

// handle_max_mamba_cache: mamba : KV = 0.9 by default, whole request states; with
// --max-mamba-cache-size N exactly N states. The KV cell counts full-attention layers.
TEST(SglangKvPoolTest, MambaStatesComeOutOfRestFirst) {
  SglangKvInput in;
  in.era = SglangEra::kV05;
  in.free_at_init_bytes = 78.0 * kGiB;
  in.avail_after_weights_bytes = 40.0 * kGiB;
  in.mem_fraction_static = 0.9;
  in.cell_bytes = 12 * 2 * 1 * 256 * 2;  // Qwen3-Next TP 4: 12 full layers, 1 KV head x 256
  in.mamba_bytes_per_request = 19.3 * kMiB;
  auto r = SglangKvPool(in);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const double rest = 40.0 * kGiB - 7.8 * kGiB;
  EXPECT_EQ(r->max_mamba_cache_size, static_cast<int64_t>(std::floor(rest * 0.9 / 1.9 / in.mamba_bytes_per_request)));
  EXPECT_NEAR(r->mamba_bytes / (r->kv_pool_bytes), 0.9, 0.01);
  EXPECT_EQ(r->max_total_num_tokens, static_cast<int64_t>(rest - r->mamba_bytes) / in.cell_bytes);
  in.max_mamba_cache_size = 100;
  r = SglangKvPool(in);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->max_mamba_cache_size, 100);
  EXPECT_DOUBLE_EQ(r->mamba_bytes, 100 * in.mamba_bytes_per_request);
  EXPECT_EQ(r->max_total_num_tokens, static_cast<int64_t>(rest - r->mamba_bytes) / in.cell_bytes);
  // 2,000 states (38 GiB) leave nothing: the fraction floor must cover them too.
  in.max_mamba_cache_size = 2000;
  r = SglangKvPool(in);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->fails);
  EXPECT_GT(r->min_viable_mem_fraction_static, SglangMinMemFraction(in.free_at_init_bytes, in.avail_after_weights_bytes));
}

TEST(SglangEraTest, VersionsMapToEras) {
  EXPECT_EQ(*SglangEraForVersion("0.1.13"), SglangEra::kV01);
  EXPECT_EQ(*SglangEraForVersion("v0.1.17"), SglangEra::kV0117);
  EXPECT_EQ(*SglangEraForVersion("0.3.0"), SglangEra::kV02);
  EXPECT_EQ(*SglangEraForVersion("0.4.8.post1"), SglangEra::kV02);
  EXPECT_EQ(*SglangEraForVersion("0.5.3"), SglangEra::kV05);
  EXPECT_EQ(*SglangEraForVersion("0.5.16"), SglangEra::kY2026);
  EXPECT_FALSE(SglangEraForVersion("latest").ok());
}

// §1.4 worked example: H100 80 GB (81,920 MB), TP8, defaults -> 14,848 MB reserved, 0.819.
TEST(SglangDefaultsTest, Post7054HeuristicWorkedExample) {
  SglangDefaultsInput in;
  in.version = "0.5.5";
  in.gpu_capacity_bytes = 80 * kGiB;
  in.tp = 8;
  auto d = SglangDefaultMemFraction(in);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->chunked_prefill_size, 8192);
  EXPECT_EQ(d->cuda_graph_max_bs, 512);
  EXPECT_DOUBLE_EQ(d->reserved_mb, 14848);
  EXPECT_DOUBLE_EQ(d->mem_fraction_static, 0.819);
  // EAGLE adds 2 GiB to the reserve.
  in.speculative_algorithm = "EAGLE";
  EXPECT_DOUBLE_EQ(SglangDefaultMemFraction(in)->reserved_mb, 14848 + 2048);
  // A 24 GB card, tp 1: 2048/24, reserved 512 + 3072 + 48 + 128 = 3760 MB (no 10 GiB floor).
  in.speculative_algorithm.clear();
  in.gpu_capacity_bytes = 24 * kGiB;
  in.tp = 1;
  auto small = SglangDefaultMemFraction(in);
  EXPECT_EQ(small->cuda_graph_max_bs, 24);
  EXPECT_DOUBLE_EQ(small->reserved_mb, 3760);
  EXPECT_DOUBLE_EQ(small->mem_fraction_static, std::round((24576.0 - 3760) / 24576 * 1000) / 1000);
}

TEST(SglangDefaultsTest, OlderTables) {
  SglangDefaultsInput in;
  in.version = "0.1.13";
  in.tp = 8;
  EXPECT_DOUBLE_EQ(SglangDefaultMemFraction(in)->mem_fraction_static, 0.9);
  in.version = "0.3.0";
  EXPECT_DOUBLE_EQ(SglangDefaultMemFraction(in)->mem_fraction_static, 0.83);
  in.version = "0.4.3.post4";
  EXPECT_DOUBLE_EQ(SglangDefaultMemFraction(in)->mem_fraction_static, 0.81);
  in.tp = 4;
  EXPECT_DOUBLE_EQ(SglangDefaultMemFraction(in)->mem_fraction_static, 0.85);
  in.tp = 1;
  EXPECT_DOUBLE_EQ(SglangDefaultMemFraction(in)->mem_fraction_static, 0.88);
  in.tp = 16;
  EXPECT_DOUBLE_EQ(SglangDefaultMemFraction(in)->mem_fraction_static, 0.79);
}

}  // namespace
}  // namespace tpt::memory
