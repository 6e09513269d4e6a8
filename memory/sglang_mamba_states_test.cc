// The version boundaries of SGLang's mamba state count (sglang_mamba_states.cc cites the
// wheels read on each side).
#include "memory/sglang_mamba_states.h"

#include <gtest/gtest.h>

namespace tpt::memory {
namespace {

SglangMambaStates Count(const std::string& version, const std::string& kind, bool radix_off,
                        std::optional<int64_t> running = std::nullopt, std::optional<int64_t> given = std::nullopt,
                        int dp_attention = 1) {
  SglangMambaStatesInput in;
  in.version = version;
  in.mamba_kind = kind;
  in.disable_radix_cache = radix_off;
  in.max_running_requests = running;
  in.max_mamba_cache_size = given;
  in.dp_attention_size = dp_attention;
  return SglangMambaStateCount(in);
}

TEST(SglangMambaStatesTest, Mamba2ModelsRunWithoutTheRadixCacheUpTo056Post1) {
  // ModelRunner.__init__ turns the radix cache off for a Mamba2 config through 0.5.6.post1.
  SglangMambaStates s = Count("0.5.6.post1", "mamba2", false, 64);
  ASSERT_TRUE(s.fixed.has_value());
  EXPECT_EQ(*s.fixed, 64);
  EXPECT_TRUE(s.radix_cache_off);
  EXPECT_NE(s.rule.find("turns it off for Mamba2 models"), std::string::npos) << s.rule;
  // 0.5.6.post2 no longer does; a GDN model never did from 0.5.3.post2.
  EXPECT_FALSE(Count("0.5.6.post2", "mamba2", false, 64).fixed.has_value());
  EXPECT_FALSE(Count("0.5.6.post1", "gdn", false, 64).fixed.has_value());
}

TEST(SglangMambaStatesTest, DpAttentionDividesByEraAndKind) {
  // Before 0.5.7 only GDN models divide the count by the DP-attention size.
  EXPECT_EQ(*Count("0.5.6", "gdn", true, 64, std::nullopt, 4).fixed, 16);
  EXPECT_EQ(*Count("0.5.6", "mamba2", true, 64, std::nullopt, 4).fixed, 64);
  EXPECT_EQ(*Count("0.5.7", "mamba2", true, 64, std::nullopt, 4).fixed, 16);
  EXPECT_EQ(*Count("0.5.15", "gdn", false, std::nullopt, 100, 4).fixed, 25);
}

TEST(SglangMambaStatesTest, RatioDefaultAndTheFlagBefore053Post2) {
  EXPECT_DOUBLE_EQ(Count("0.5.3.post2", "gdn", false).ratio, 0.2);
  EXPECT_DOUBLE_EQ(Count("0.5.3.post3", "gdn", false).ratio, 0.9);
  SglangMambaStatesInput in;
  in.version = "0.5.3";
  in.mamba_kind = "gdn";
  in.mamba_full_memory_ratio = 0.5;
  SglangMambaStates s = SglangMambaStateCount(in);
  EXPECT_EQ(*s.fixed, 512);
  EXPECT_NE(s.ignored.find("--mamba-full-memory-ratio"), std::string::npos) << s.ignored;
}

}  // namespace
}  // namespace tpt::memory
