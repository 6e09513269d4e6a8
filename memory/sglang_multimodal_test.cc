// sglang_multimodal_test.cc: SGLang's lower --mem-fraction-static for multimodal models by
// version (sglang_multimodal.cc), and the plan's pool at the lowered fraction.
#include "memory/sglang_multimodal.h"

#include <cmath>
#include <string>

#include <gtest/gtest.h>

#include "memory/launch_plan.h"
#include "memory/memory_model.h"

namespace tpt::memory {
namespace {

ModelConfig Arch(const std::string& architecture, bool vision_config = true) {
  ModelConfig m;
  m.architecture = architecture;
  m.top.vision_config = vision_config;
  return m;
}

TEST(SglangMultimodalTest, FactorByVersion) {
  const ModelConfig llava = Arch("LlavaLlamaForCausalLM");
  // 0.3.0-0.3.4 lower server_args' copy after ModelRunner took its own: no effect.
  EXPECT_EQ(SglangMultimodalFactor("0.3.4", llava, true, 0.88, 0).factor, 1.0);
  EXPECT_EQ(SglangMultimodalFactor("0.3.5", llava, true, 0.88, 0).factor, 0.95);
  EXPECT_EQ(SglangMultimodalFactor("0.4.4.post3", llava, true, 0.88, 0).factor, 0.95);
  EXPECT_EQ(SglangMultimodalFactor("0.4.4.post4", llava, true, 0.88, 0).factor, 0.90);
  EXPECT_EQ(SglangMultimodalFactor("0.4.8", llava, true, 0.88, 0).factor, 0.90);
  // From 0.4.9 a fraction the user gave stands; the default is lowered.
  EXPECT_EQ(SglangMultimodalFactor("0.4.9", llava, true, 0.88, 0).factor, 1.0);
  EXPECT_EQ(SglangMultimodalFactor("0.4.9", llava, false, 0.88, 0).factor, 0.90);
  // 0.5.1: adjust_mem_fraction_for_vlm (24 x 1024^2 when the vision config says nothing).
  EXPECT_NEAR(SglangMultimodalFactor("0.5.1", llava, false, 0.88, 0).factor, 0.95, 1e-12);
  EXPECT_EQ(SglangMultimodalFactor("0.5.1", Arch("LlavaLlamaForCausalLM", false), false, 0.88, 0).factor, 1.0);
  // A text model is never lowered.
  EXPECT_EQ(SglangMultimodalFactor("0.4.4.post2", Arch("LlamaForCausalLM", false), true, 0.88, 0).factor, 1.0);
}

TEST(SglangMultimodalTest, WhichArchitecturesCountByVersion) {
  const ModelConfig gemma3 = Arch("Gemma3ForConditionalGeneration");
  EXPECT_EQ(SglangMultimodalFactor("0.4.4.post2", gemma3, true, 0.88, 0).factor, 0.95);
  EXPECT_EQ(SglangMultimodalFactor("0.4.5", gemma3, true, 0.88, 0).factor, 0.90);
  // From 0.4.6 Gemma-3 runs text-only unless --enable-multimodal.
  auto off = SglangMultimodalFactor("0.4.6", gemma3, true, 0.88, 0);
  EXPECT_EQ(off.factor, 1.0);
  EXPECT_NE(off.why.find("--enable-multimodal"), std::string::npos);
  EXPECT_EQ(SglangMultimodalFactor("0.4.6", gemma3, true, 0.88, 0, /*enable_multimodal=*/true).factor, 0.90);
  EXPECT_EQ(SglangMultimodalFactor("0.4.9", gemma3, false, 0.88, 0, /*enable_multimodal=*/true).factor, 0.90);
  // Not in the list at 0.4.0, in it at 0.4.4.post2: between, unknown with a range.
  auto between = SglangMultimodalFactor("0.4.2", gemma3, true, 0.88, 0);
  EXPECT_EQ(between.factor, 1.0);
  EXPECT_FALSE(between.unknown.empty());
  EXPECT_EQ(between.unknown_low, 0.95);
  // Qwen2-VL from the first list on.
  EXPECT_EQ(SglangMultimodalFactor("0.3.6", Arch("Qwen2VLForConditionalGeneration"), true, 0.88, 0).factor, 0.95);
}

// The list read wheel by wheel (configs/model_config.py multimodal_model_archs): Qwen3-VL and
// its MoE came with 0.5.3 (0.5.3:803-804; 0.5.2 lacks them), Qwen3-Omni with 0.5.4, Qwen3.5
// with 0.5.9 (0.5.8.post1 lacks it), Pixtral with 0.5.6.post1, Gemma-4 with 0.5.11; VILA left
// it at 0.5.4.post1 (NVILA replaced it). Qwen3-VL's vision config names its depth `depth`, so
// adjust_mem_fraction_for_vlm counts 24 layers: 0.95 x (1 - 0.1 x (24 x 1152^2 / (24 x 1024^2) - 1)).
TEST(SglangMultimodalTest, FirstWheelOfEachArchitecture) {
  ModelConfig qwen3vl = Arch("Qwen3VLForConditionalGeneration");
  qwen3vl.vision_layers_attr = 24;
  qwen3vl.vision_hidden_attr = 1152;
  const double lowered = 0.95 * (1 - 0.1 * (1152.0 * 1152 / (1024.0 * 1024) - 1));
  EXPECT_NEAR(SglangMultimodalFactor("0.5.3", qwen3vl, false, 0.907, 0).factor, lowered, 1e-9);
  EXPECT_NEAR(SglangMultimodalFactor("0.5.11", qwen3vl, false, 0.907, 0).factor, lowered, 1e-9);
  EXPECT_EQ(SglangMultimodalFactor("0.5.2", qwen3vl, false, 0.907, 0).factor, 1.0);
  EXPECT_TRUE(SglangMultimodalFactor("0.5.2", qwen3vl, false, 0.907, 0).unknown.empty());
  EXPECT_LT(SglangMultimodalFactor("0.5.3", Arch("Qwen3VLMoeForConditionalGeneration"), false, 0.9, 0).factor, 1.0);
  EXPECT_EQ(SglangMultimodalFactor("0.5.3.post3", Arch("Qwen3OmniMoeForConditionalGeneration"), false, 0.9, 0).factor, 1.0);
  EXPECT_LT(SglangMultimodalFactor("0.5.4", Arch("Qwen3OmniMoeForConditionalGeneration"), false, 0.9, 0).factor, 1.0);
  EXPECT_EQ(SglangMultimodalFactor("0.5.8.post1", Arch("Qwen3_5ForConditionalGeneration"), false, 0.9, 0).factor, 1.0);
  EXPECT_LT(SglangMultimodalFactor("0.5.9", Arch("Qwen3_5MoeForConditionalGeneration"), false, 0.9, 0).factor, 1.0);
  EXPECT_EQ(SglangMultimodalFactor("0.5.6", Arch("PixtralForConditionalGeneration"), false, 0.9, 0).factor, 1.0);
  EXPECT_LT(SglangMultimodalFactor("0.5.6.post1", Arch("PixtralForConditionalGeneration"), false, 0.9, 0).factor, 1.0);
  EXPECT_LT(SglangMultimodalFactor("0.5.11", Arch("Gemma4ForConditionalGeneration"), false, 0.9, 0).factor, 1.0);
  EXPECT_EQ(SglangMultimodalFactor("0.5.10.post1", Arch("Gemma4ForConditionalGeneration"), false, 0.9, 0).factor, 1.0);
  const ModelConfig vila = Arch("VILAForConditionalGeneration");
  EXPECT_LT(SglangMultimodalFactor("0.5.4", vila, false, 0.9, 0).factor, 1.0);
  EXPECT_EQ(SglangMultimodalFactor("0.5.4.post1", vila, false, 0.9, 0).factor, 1.0);
  // Between two wheels read (0.5.12 lies between 0.5.11 and 0.5.13.post1): unknown, ranged.
  EXPECT_FALSE(SglangMultimodalFactor("0.5.12", Arch("Cohere2VisionForConditionalGeneration"), false, 0.9, 0)
                   .unknown.empty());
  // Step-3-VL is text-only by default; --enable-multimodal turns it back on.
  const ModelConfig step3 = Arch("Step3VLForConditionalGeneration");
  EXPECT_EQ(SglangMultimodalFactor("0.5.1", step3, false, 0.9, 0).factor, 1.0);
  EXPECT_LT(SglangMultimodalFactor("0.5.1", step3, false, 0.9, 0, /*enable_multimodal=*/true).factor, 1.0);
}

ModelConfig SampleModel(const std::string& name) {
  auto m = LoadModel(std::string(TPT_SOURCE_DIR) + "/samples/models/" + name);
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  return m.ok() ? *m : ModelConfig();
}

// Gemma-3 on SGLang 0.4.4.post2 with --mem-fraction-static 0.88: the pool is the one at
// 0.88 x 0.95 = 0.836 (0.4.6 runs Gemma-3 text-only: the same arithmetic, no factor),
// the launch line keeps the flag as given, and the factor is said under assumed.
TEST(SglangMultimodalTest, PlanSizesThePoolAtTheLoweredFraction) {
  PlanInput in;
  in.framework = "sglang";
  in.version = "0.4.4.post2";
  in.total_bytes = 139.8 * kGiB;
  in.mem_fraction_static = 0.88;
  in.model = SampleModel("gemma-3-27b");
  auto lowered = MakePlan(in);
  ASSERT_TRUE(lowered.ok()) << lowered.status().ToString();
  PlanInput text = in;
  text.version = "0.4.6";
  text.mem_fraction_static = 0.88 * 0.95;
  auto same = MakePlan(text);
  ASSERT_TRUE(same.ok()) << same.status().ToString();
  EXPECT_NEAR(static_cast<double>(lowered->kv_tokens), static_cast<double>(same->kv_tokens), 2.0);
  EXPECT_DOUBLE_EQ(lowered->fraction, 0.88);
  bool said = false;
  for (const auto& a : lowered->assumptions) said |= a.find("x 0.950 = 0.836") != std::string::npos;
  EXPECT_TRUE(said);
  text.mem_fraction_static = 0.88;
  auto unlowered = MakePlan(text);
  ASSERT_TRUE(unlowered.ok());
  EXPECT_GT(unlowered->kv_tokens, lowered->kv_tokens);
  // A remedy's fraction is the flag's value: the floor the pool needs over 0.95.
  EXPECT_GE(lowered->figures["min_viable_mem_fraction_static"].get<double>(),
            same->figures["min_viable_mem_fraction_static"].get<double>() / 0.95 - 1e-9);
}

}  // namespace
}  // namespace tpt::memory
