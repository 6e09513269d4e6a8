// turbomind_tuning_test.cc: the buffers TurboMind's start-up GEMM tuning pass keeps after
// the cache (turbomind_tuning.cc): 0.6.x only, sized by max_prefill_token_num +
// max_batch_size whatever the session length.
#include "memory/turbomind_tuning.h"

#include <gtest/gtest.h>

namespace tpt::memory {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// Qwen2.5-32B (lmdeploy#2731's model), one rank.
TurbomindTuningInput Qwen25_32b(const std::string& version) {
  TurbomindTuningInput in;
  in.version = version;
  in.hidden = 5120;
  in.intermediate = 27648;
  in.heads = 40;
  in.kv_heads = 8;
  in.head_dim = 128;
  in.vocab = 152064;
  in.session_len = 100;
  return in;
}

TEST(TurbomindTuningTest, ThePassRunsMaxPrefillPlusMaxBatchTokensAndKeepsItsBuffers) {
  auto t = TurbomindTuningPeak(Qwen25_32b("0.6.2"));
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_TRUE(t->runs);
  EXPECT_EQ(t->tokens, 8192 + 128);
  // MLP 2 x 8320 x 27648 x 2 B, attention (56 + 40 + 16 heads) x 128 x 8320 x 2 B,
  // LlamaBatch 2 x 8320 x 5120 x 2 B + 2 x 128 x 152064 x 4 B (+ ids).
  const double ffn = 2.0 * 8320 * 27648 * 2, attn = (56.0 + 40) * 128 * 8320 * 2 + 8.0 * 2 * (8320 + 64) * 128 * 2;
  const double batch = 2.0 * 8320 * 5120 * 2 + 2.0 * 128 * 152064 * 4 + 128.0 * 100 * 12;
  EXPECT_NEAR(t->bytes, ffn + attn + batch, 1024);
  EXPECT_NEAR(t->bytes / kGiB, 1.38, 0.01);
  // The session length barely moves it; the prefill budget and TP do.
  auto longer = Qwen25_32b("0.6.2");
  longer.session_len = 32768;
  EXPECT_LT(TurbomindTuningPeak(longer)->bytes - t->bytes, 0.2 * kGiB);
  auto small = Qwen25_32b("0.6.2");
  small.max_prefill_token_num = 2048;
  EXPECT_LT(TurbomindTuningPeak(small)->bytes, 0.5 * t->bytes);
  auto tp2 = Qwen25_32b("0.6.2");
  tp2.tp = 2;
  // Attention and MLP split by TP; LlamaBatch's activations and logits do not.
  EXPECT_NEAR(TurbomindTuningPeak(tp2)->bytes, (attn + ffn) / 2 + batch, 1024);
}

TEST(TurbomindTuningTest, OnlyTheVersionsWhoseBuffersWereReadAreChecked) {
  auto before = TurbomindTuningPeak(Qwen25_32b("0.5.3"));
  ASSERT_TRUE(before.ok());
  EXPECT_FALSE(before->runs);
  EXPECT_NE(before->note.find("no GEMM tuning pass"), std::string::npos) << before->note;
  auto later = TurbomindTuningPeak(Qwen25_32b("0.9.2"));
  ASSERT_TRUE(later.ok());
  EXPECT_FALSE(later->runs);
  EXPECT_NE(later->note.find("0.6.x only"), std::string::npos) << later->note;
  EXPECT_TRUE(TurbomindTuningPeak(Qwen25_32b("0.6.0"))->runs);
  auto no_shapes = Qwen25_32b("0.6.2");
  no_shapes.intermediate = 0;
  EXPECT_FALSE(TurbomindTuningPeak(no_shapes).ok());
}

TEST(TurbomindTuningTest, DefaultMaxBatchSizeByCard) {
  EXPECT_EQ(LmdeployDefaultMaxBatchSize("RTX 3090 24GB"), 128);
  EXPECT_EQ(LmdeployDefaultMaxBatchSize("A100 SXM 80GB"), 256);
  EXPECT_EQ(LmdeployDefaultMaxBatchSize("H800 80GB"), 512);
  EXPECT_EQ(LmdeployDefaultMaxBatchSize(""), 128);
}

}  // namespace
}  // namespace tpt::memory
