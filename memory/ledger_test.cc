// ledger_test.cc: per-rank ledger rows and the CUDA-graph batch-size remedy.
#include <gtest/gtest.h>

#include "memory/memory_model.h"

namespace tpt::memory {
namespace {

// The founding case as a ledger: left equals SGLang's rest (-25.3 GiB) when the pool is 0.
TEST(LedgerTest, SglangShortfallIsRest) {
  RankMemory m;
  m.rank = 3;
  m.total_bytes = 95 * kGiB;
  m.free_at_init_bytes = 94 * kGiB;
  m.weights_bytes = (94 - 21.7) * kGiB;
  m.reserved_bytes = 47 * kGiB;
  LedgerRow row = BuildLedgerRow(m);
  EXPECT_EQ(row.rank, 3);
  EXPECT_EQ(row.role, "target");
  EXPECT_NEAR(row.left_bytes / kGiB, -25.3, 1e-9);
  EXPECT_DOUBLE_EQ(row.total_bytes, 95 * kGiB);
}

TEST(LedgerTest, GraphsInsideReservedCountOnlyPastIt) {
  RankMemory m;
  m.free_at_init_bytes = 80 * kGiB;
  m.weights_bytes = 40 * kGiB;
  m.reserved_bytes = 8 * kGiB;
  m.kv_pool_bytes = 30 * kGiB;
  m.graphs_bytes = 3 * kGiB;
  EXPECT_NEAR(BuildLedgerRow(m).left_bytes / kGiB, 2, 1e-9);  // graphs fit in the slice
  m.graphs_bytes = 11 * kGiB;
  EXPECT_NEAR(BuildLedgerRow(m).left_bytes / kGiB, -1, 1e-9);  // 3 GiB past the slice, 2 free
  m.graphs_inside_reserved = false;
  EXPECT_NEAR(BuildLedgerRow(m).left_bytes / kGiB, -9, 1e-9);
  // SGLang's request table is paid from the slice before the graphs: the two together count
  // only past it (sglang_request_table.h).
  m.graphs_inside_reserved = true;
  m.graphs_bytes = 3 * kGiB;
  m.reserved_use_bytes = 4 * kGiB;
  EXPECT_NEAR(BuildLedgerRow(m).left_bytes / kGiB, 2, 1e-9);  // 7 of the 8 GiB slice
  m.reserved_use_bytes = 7 * kGiB;
  EXPECT_NEAR(BuildLedgerRow(m).left_bytes / kGiB, 0, 1e-9);  // 2 GiB past the slice, 2 free
}

TEST(LedgerTest, RowsSortedTargetThenDraftByRank) {
  std::vector<RankMemory> in(4);
  in[0].rank = 1;
  in[0].role = "draft";
  in[1].rank = 1;
  in[2].rank = 0;
  in[3].rank = 0;
  in[3].role = "draft";
  auto rows = BuildLedger(in);
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0].role, "target");
  EXPECT_EQ(rows[0].rank, 0);
  EXPECT_EQ(rows[1].rank, 1);
  EXPECT_EQ(rows[2].role, "draft");
  EXPECT_EQ(rows[2].rank, 0);
  EXPECT_EQ(rows[3].rank, 1);
}

TEST(GraphBatchSizeTest, LinearModelFromTwoCaptures) {
  // 1.0 GiB at bs 64, 2.5 GiB at bs 256: slope 8 MiB/bs, intercept 0.5 GiB.
  std::vector<GraphMemPoint> pts = {{64, 1.0 * kGiB}, {256, 2.5 * kGiB}};
  auto bs = LargestGraphBatchSize(pts, 1.5 * kGiB);
  ASSERT_TRUE(bs.ok());
  EXPECT_EQ(*bs, 128);
  // SGLang captures a fixed list: the largest listed size that fits.
  std::vector<int> sizes = {1, 2, 4, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 120};
  EXPECT_EQ(*LargestGraphBatchSize(pts, 1.5 * kGiB, 1024, sizes), 120);
  EXPECT_EQ(*LargestGraphBatchSize(pts, 0.4 * kGiB), 0);  // the fixed part alone does not fit
}

TEST(GraphBatchSizeTest, OnePointIsProportional) {
  // "Capture cuda graph end ... mem usage=1.91 GB" with bs up to 512.
  std::vector<GraphMemPoint> pts = {{512, 1.91 * kGiB}};
  EXPECT_EQ(*LargestGraphBatchSize(pts, 0.5 * kGiB), 134);  // 0.5 / (1.91/512) = 134.03
  EXPECT_EQ(*LargestGraphBatchSize(pts, 10 * kGiB, 512), 512);
  EXPECT_FALSE(LargestGraphBatchSize({}, kGiB).ok());
  EXPECT_FALSE(LargestGraphBatchSize({{0, kGiB}}, kGiB).ok());
}

}  // namespace
}  // namespace tpt::memory
