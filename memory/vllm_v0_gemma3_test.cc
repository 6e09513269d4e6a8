// vllm_v0_gemma3_test.cc: vLLM V0's Gemma-3 profiling run (vllm_v0_gemma3.h) against the
// arithmetic of 0.8.3's _dummy_run and gemma3_mm.py written out here, with the SigLIP tower
// read from a Gemma-3 config.json (model_vision.cc).
#include "memory/vllm_v0_gemma3.h"

#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "memory/model_config.h"
#include "memory/vllm_mm_profile.h"

namespace tpt::memory {
namespace {

// Gemma-3-27B's published architecture, written here (samples/models/gemma-3-27b's fields).
ModelConfig Gemma3_27b() {
  const auto j = nlohmann::json::parse(R"({
    "architectures": ["Gemma3ForConditionalGeneration"], "model_type": "gemma3",
    "mm_tokens_per_image": 256,
    "text_config": {"model_type": "gemma3_text", "hidden_size": 5376, "intermediate_size": 21504,
      "num_hidden_layers": 62, "num_attention_heads": 32, "num_key_value_heads": 16, "head_dim": 128,
      "vocab_size": 262208, "max_position_embeddings": 131072, "sliding_window": 1024,
      "sliding_window_pattern": 6},
    "vision_config": {"model_type": "siglip_vision_model", "hidden_size": 1152, "intermediate_size": 4304,
      "num_hidden_layers": 27, "num_attention_heads": 16, "image_size": 896, "patch_size": 14},
    "torch_dtype": "bfloat16"})");
  auto m = ParseModelConfig(j, "gemma-3-27b config.json");
  EXPECT_TRUE(m.ok()) << m.status().message();
  return m.ok() ? *m : ModelConfig{};
}

TEST(VllmV0Gemma3Test, ImagesTokensCapTheDummySequences) {
  // vllm#16199's launch (0.8.3 V0, max_num_batched_tokens 5,120 for a multimodal model):
  // max_mm_tokens = <start_of_image> + 256 + <end_of_image> = 258, so 5,120 // 258 = 19
  // sequences, not 256, each with one 896 x 896 image (64 x 64 patches).
  const ModelConfig m = Gemma3_27b();
  ASSERT_TRUE(m.vit_siglip);
  const VllmV0Gemma3Profile p = VllmV0Gemma3(m, "0.8.3", 1, 5120, 256, 1);
  ASSERT_TRUE(p.modelled);
  EXPECT_EQ(p.item_tokens, 258);
  EXPECT_EQ(p.seqs, 19);
  EXPECT_EQ(p.images, 19);
  EXPECT_EQ(p.patches, 19 * 4096);
  EXPECT_EQ(p.lm_tokens, 5120) << "each prompt (261 tokens) is padded to its 269";
  // SigLIP's layer over all 77,824 patches at once, the float32 pixels and 0.8.x's cast beside it.
  const double P = 19.0 * 4096;
  const double pixels = P * 588 * 4, cast = P * 588 * 2;
  EXPECT_DOUBLE_EQ(p.encoder_phase, QwenVitLayerPeak(m, 19 * 4096, 1, "0.8.3").layer + pixels + cast);
  EXPECT_DOUBLE_EQ(p.held, pixels + 19.0 * 256 * 5376 * 2);
}

TEST(VllmV0Gemma3Test, FromEightFourTheEmbedsAloneCountAndNineTwoCastsNoCopy) {
  const ModelConfig m = Gemma3_27b();
  const VllmV0Gemma3Profile p = VllmV0Gemma3(m, "0.8.4", 1, 5120, 256, 1);
  ASSERT_TRUE(p.modelled);
  EXPECT_EQ(p.item_tokens, 256);
  EXPECT_EQ(p.seqs, 20);
  const VllmV0Gemma3Profile q = VllmV0Gemma3(m, "0.9.2", 1, 5120, 256, 1);
  const double P = 20.0 * 4096;
  EXPECT_DOUBLE_EQ(q.encoder_phase, QwenVitLayerPeak(m, 20 * 4096, 1, "0.9.2").layer + P * 588 * 4);
}

TEST(VllmV0Gemma3Test, ImagesAPromptPastTheBatchKeepTheirPromptWhole) {
  // Eight images a prompt: 8 x 258 = 2,064 > 2,048 batched tokens, so one sequence whose
  // prompt (BOS + 8 x 260) is never cut to 2,048.
  const VllmV0Gemma3Profile p = VllmV0Gemma3(Gemma3_27b(), "0.8.3", 2, 2048, 256, 8);
  ASSERT_TRUE(p.modelled);
  EXPECT_EQ(p.seqs, 1);
  EXPECT_EQ(p.images, 8);
  EXPECT_EQ(p.lm_tokens, 1 + 8 * 260);
}

TEST(VllmV0Gemma3Test, OnlyGemma3OnTheVersionsRead) {
  const ModelConfig m = Gemma3_27b();
  EXPECT_FALSE(VllmV0Gemma3(m, "0.7.3", 1, 5120, 256, 1).modelled) << "no Gemma-3 before 0.8.0";
  EXPECT_FALSE(VllmV0Gemma3(m, "0.10.1", 1, 5120, 256, 1).modelled) << "not read";
  ModelConfig other = m;
  other.architecture = "Qwen2VLForConditionalGeneration";
  EXPECT_FALSE(VllmV0Gemma3(other, "0.8.3", 1, 5120, 256, 1).modelled);
  const VllmV0Gemma3Profile none = VllmV0Gemma3(m, "0.8.3", 1, 5120, 256, 0);
  EXPECT_TRUE(none.modelled);
  EXPECT_EQ(none.images, 0);
  EXPECT_EQ(none.seqs, 256) << "no image: max_mm_tokens 0 leaves max_num_seqs";
  EXPECT_EQ(none.encoder_phase, 0);
}

}  // namespace
}  // namespace tpt::memory
