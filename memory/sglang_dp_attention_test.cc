// SGLang's --enable-dp-attention by release (sglang_dp_attention.h cites the wheels read):
// the DP size it runs and DeepSeek's vocabulary placement, alone and through the plan.
#include "memory/sglang_dp_attention.h"

#include <gtest/gtest.h>

#include "memory/launch_plan.h"

namespace tpt::memory {
namespace {

ModelConfig Deepseek() {
  ModelConfig m;
  m.architecture = "DeepseekV2ForCausalLM";
  return m;
}

TEST(SglangDpAttentionTest, ThroughRelease044TheDpSizeIsTheTpSize) {
  for (const char* v : {"0.3.6", "0.4.1.post4", "0.4.3.post4", "0.4.4"}) {
    auto r = ResolveSglangDpAttention(v, 8, 1, nullptr);
    ASSERT_TRUE(r.ok()) << v << ": " << r.status().ToString();
    EXPECT_EQ(r->dp, 8) << v;
    EXPECT_TRUE(r->dp_from_tp) << v;
    EXPECT_NE(r->note.find("sets the DP size to the TP size"), std::string::npos) << r->note;
  }
  // A --dp given is overwritten, and said so.
  auto r = ResolveSglangDpAttention("0.4.2", 8, 2, nullptr);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->dp, 8);
  EXPECT_NE(r->note.find("--dp 2 given is overwritten"), std::string::npos) << r->note;
}

TEST(SglangDpAttentionTest, From044Post1TheFlagsDpIsUsedAndMustExceedOne) {
  auto r = ResolveSglangDpAttention("0.4.4.post1", 8, 1, nullptr);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("without --dp > 1"), std::string::npos) << r.status().message();
  EXPECT_FALSE(ResolveSglangDpAttention("", 8, 1, nullptr).ok());  // the newest rule
  auto two = ResolveSglangDpAttention("0.4.5", 8, 2, nullptr);
  ASSERT_TRUE(two.ok());
  EXPECT_EQ(two->dp, 2);
  EXPECT_FALSE(two->dp_from_tp);
  EXPECT_FALSE(ResolveSglangDpAttention("0.5.5", 8, 3, nullptr).ok());  // tp % dp != 0
}

TEST(SglangDpAttentionTest, DeepseekKeepsTheVocabularyWholeByRelease) {
  const ModelConfig ds = Deepseek();
  auto old = ResolveSglangDpAttention("0.4.1.post4", 8, 1, &ds);
  ASSERT_TRUE(old.ok());
  EXPECT_TRUE(old->embedding_whole);
  EXPECT_TRUE(old->lm_head_whole);  // ReplicatedLinear through 0.4.4
  auto post1 = ResolveSglangDpAttention("0.4.4.post1", 8, 8, &ds);
  ASSERT_TRUE(post1.ok());
  EXPECT_TRUE(post1->embedding_whole);
  EXPECT_FALSE(post1->lm_head_whole);  // ParallelLMHead from 0.4.4.post1
  // 0.4.9 splits the embedding over the attention-TP group: whole only at dp = tp.
  auto r049 = ResolveSglangDpAttention("0.4.9", 8, 2, &ds);
  ASSERT_TRUE(r049.ok());
  EXPECT_FALSE(r049->embedding_whole);
  EXPECT_TRUE(ResolveSglangDpAttention("0.4.9", 8, 8, &ds)->embedding_whole);
  // Another architecture's file is not this one: its vocabulary stays split.
  ModelConfig qwen;
  qwen.architecture = "Qwen2MoeForCausalLM";
  auto q = ResolveSglangDpAttention("0.4.1.post4", 8, 1, &qwen);
  ASSERT_TRUE(q.ok());
  EXPECT_FALSE(q->embedding_whole || q->lm_head_whole);
}

// Through the plan: DeepSeek-V3 on 8 x 80 GiB with SGLang 0.4.1.post4 and --enable-dp-attention
// but no --dp runs DP attention 8 (attention weights whole on every rank), with the embedding
// and the LM head whole too; 0.4.5 refuses the same launch.
TEST(SglangDpAttentionTest, PlanRunsTheReleasesDpSizeAndWholeVocabulary) {
  auto model = LoadModel(std::string(TPT_SOURCE_DIR) + "/samples/models/deepseek-v3");
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  PlanInput in;
  in.framework = "sglang";
  in.version = "0.4.1.post4";
  in.total_bytes = 79.1 * kGiB;
  in.tp = 8;
  in.model = *model;
  in.enable_dp_attention = true;
  auto implicit = MakePlan(in);
  ASSERT_TRUE(implicit.ok()) << implicit.status().ToString();
  in.dp = 8;
  auto explicit8 = MakePlan(in);
  ASSERT_TRUE(explicit8.ok());
  EXPECT_DOUBLE_EQ(implicit->row.weights_bytes, explicit8->row.weights_bytes);
  bool said = false;
  for (const auto& a : implicit->assumptions) said |= a.find("sets the DP size to the TP size") != std::string::npos;
  EXPECT_TRUE(said);
  // 0.4.5 with --dp 8: the same attention, the LM head split again; the embedding stays whole.
  PlanInput later = in;
  later.version = "0.4.5";
  auto split_head = MakePlan(later);
  ASSERT_TRUE(split_head.ok()) << split_head.status().ToString();
  const double vocab = static_cast<double>(model->vocab) * model->hidden * model->dtype_bytes;
  EXPECT_NEAR(implicit->row.weights_bytes - split_head->row.weights_bytes, vocab * 7 / 8, 0.01 * vocab);
  later.dp = 1;
  EXPECT_FALSE(MakePlan(later).ok());
}

}  // namespace
}  // namespace tpt::memory
