// SGLang's request table by version (sglang_request_table.cc cites the wheels read on each
// side of every boundary).
#include "memory/sglang_request_table.h"

#include <gtest/gtest.h>

#include "memory/memory_model.h"

namespace tpt::memory {
namespace {

SglangRequestTable Table(const std::string& version, int64_t context, int64_t tokens,
                         std::optional<int64_t> running = std::nullopt, int dp = 1) {
  return SglangRequestTableOf({.version = version,
                               .context_len = context,
                               .profiled_tokens = tokens,
                               .capacity_tokens = tokens,
                               .max_running_requests = running,
                               .dp_attention_size = dp});
}

TEST(SglangRequestTableTest, Llama4ScoutsTenMillionPositionsAt045Post3) {
  // 1.6M pool tokens / 10,485,760 x 512 = 78, raised to 2048 slots; + 1 row; context + 4.
  SglangRequestTable t = Table("0.4.5.post3", 10485760, 1602275);
  EXPECT_EQ(t.requests, 2048);
  EXPECT_EQ(t.rows, 2049);
  EXPECT_EQ(t.columns, 10485764);
  EXPECT_DOUBLE_EQ(t.bytes, 85941321744.0);
  EXPECT_EQ(FormatGiB(t.bytes), "80.04 GiB");  // the allocation torch names in the log
  EXPECT_NE(t.rule.find("(max_num_reqs + 1) x (context_len + 4)"), std::string::npos) << t.rule;
}

TEST(SglangRequestTableTest, RowsAndColumnsByRelease) {
  // 0.4.7 drops the padding row; 0.5.11 puts it back (ReqToTokenPool allocates size + 1).
  EXPECT_EQ(Table("0.4.6.post5", 1 << 20, 100000).rows, 2049);
  EXPECT_EQ(Table("0.4.7", 1 << 20, 100000).rows, 2048);
  EXPECT_EQ(Table("0.5.10", 1 << 20, 100000).rows, 2048);
  EXPECT_EQ(Table("0.5.11", 1 << 20, 100000).rows, 2049);
  // context + 8 up to 0.3.1, + 4 from 0.3.2.
  EXPECT_EQ(Table("0.3.1", 4096, 100000).columns, 4104);
  EXPECT_EQ(Table("0.3.2", 4096, 100000).columns, 4100);
  // The slots' cap: 5120 up to 0.3.0, 4096 from 0.3.1 (100,000 / 4,096 x 512 = 12,500).
  EXPECT_EQ(Table("0.3.0", 4096, 100000).rows, 5120);
  EXPECT_EQ(Table("0.3.1", 4096, 100000).rows, 4096);
  // 0.1.18: x 256 and no floor; 0.2.5: x 512, at least 2048, no cap.
  EXPECT_EQ(Table("0.1.18", 4096, 100000).rows, 6250);
  EXPECT_EQ(Table("0.2.5", 4096, 100000).rows, 12500);
  EXPECT_EQ(Table("0.2.5", 1 << 20, 100000).rows, 2048);
  // 0.5.10 on: at most half the pool's tokens.
  EXPECT_EQ(Table("0.5.12", 32768, 3000).requests, 1500);
  EXPECT_EQ(Table("0.5.9", 32768, 3000).requests, 2048);
}

TEST(SglangRequestTableTest, MaxRunningRequestsSizesItFrom029) {
  EXPECT_EQ(Table("0.2.5", 1 << 20, 100000, 64).rows, 2048);  // the flag does not size it yet
  EXPECT_EQ(Table("0.2.9", 1 << 20, 100000, 64).rows, 64);
  EXPECT_EQ(Table("0.4.5.post3", 1 << 20, 100000, 64).rows, 65);
  EXPECT_EQ(Table("0.4.9", 1 << 20, 100000, 64).rows, 64);
  // 0.5.10 on: the flag // the DP-attention size, capped by the estimate (to 0.5.14) or by
  // half the tokens (0.5.15 on).
  EXPECT_EQ(Table("0.5.12", 1 << 20, 100000, 64, 4).rows, 17);
  EXPECT_EQ(Table("0.5.12", 1 << 20, 100000, 8192).requests, 2048);
  EXPECT_EQ(Table("0.5.15", 1 << 20, 100000, 8192).requests, 8192);
  EXPECT_EQ(Table("0.5.15", 1 << 20, 10000, 8192).requests, 5000);
}

TEST(SglangRequestTableTest, MambaStatesCapTheSlotsFrom054) {
  SglangRequestTableInput in;
  in.version = "0.5.4";
  in.context_len = 262144;
  in.profiled_tokens = in.capacity_tokens = 500000;
  in.mamba_states = 300;
  EXPECT_EQ(SglangRequestTableOf(in).requests, 100);  // 300 // 3 with the radix cache
  in.radix_cache_off = true;
  EXPECT_EQ(SglangRequestTableOf(in).requests, 300);
  in.version = "0.5.1";
  EXPECT_EQ(SglangRequestTableOf(in).requests, 2048);
}

TEST(SglangRequestTableTest, LargestRunningRequestsWithinABudget) {
  SglangRequestTableInput in;
  in.version = "0.4.5.post3";
  in.context_len = 10485760;
  in.profiled_tokens = 1602275;
  const double budget = 10.0 * (1 << 30);
  auto n = SglangLargestRunningRequests(in, budget);
  ASSERT_TRUE(n.has_value());
  in.max_running_requests = *n;
  EXPECT_LE(SglangRequestTableOf(in).bytes, budget);
  in.max_running_requests = *n + 1;
  EXPECT_GT(SglangRequestTableOf(in).bytes, budget);
  EXPECT_EQ(*n, 254);  // 255 rows of 10,485,764 int32
  // Before 0.2.9 the flag does not size the table: no such remedy.
  in.version = "0.2.5";
  EXPECT_FALSE(SglangLargestRunningRequests(in, budget).has_value());
  EXPECT_EQ(Table("0.4.5.post3", 0, 1000).bytes, 0.0);  // no context: nothing priced
}

}  // namespace
}  // namespace tpt::memory
