// vllm_v0_internvl_test.cc: vLLM V0's InternVL profiling (vllm_v0_internvl.h) against the
// arithmetic of 0.6.6.post1's profile_run, dummy_data and intern_vit.py written out here, and
// config.json's fields it is read from (model_vision.cc SetInternVitProfile).
#include "memory/vllm_v0_internvl.h"

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "memory/model_config.h"

namespace tpt::memory {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// InternVL3-78B's tower (InternViT-6B) and language model width.
ModelConfig InternVl3() {
  ModelConfig m;
  m.hidden = 8192;
  m.dtype_bytes = 2;
  m.intern_vit.width = 3200;
  m.intern_vit.heads = 25;
  m.intern_vit.mlp = 12800;
  m.intern_vit.layers = 45;
  m.intern_vit.tiles = 13;  // max_dynamic_patch 12 + the thumbnail
  m.intern_vit.tile_patches = 1025;
  m.intern_vit.tile_tokens = 256;
  m.intern_vit.image_size = 448;
  m.intern_vit.qk_norm = true;
  return m;
}

TEST(VllmV0InternVlTest, DefaultLimitFillsTheBatchWithOneImageASequence) {
  // max_mm_tokens = 1 x 13 x 256 = 3,328; 8,192 // 3,328 = 2 sequences of 4,096 tokens.
  VllmV0InternVlProfile p = VllmV0InternVl(InternVl3(), "0.6.6.post1", 8, 8192, 256, 1);
  ASSERT_TRUE(p.modelled);
  EXPECT_EQ(p.seqs, 2);
  EXPECT_EQ(p.images, 2);
  EXPECT_EQ(p.tiles, 26);
  EXPECT_EQ(p.lm_tokens, 8192);
}

TEST(VllmV0InternVlTest, SixteenImagesRunTheWholeTowerAndAPromptPastTheBatch) {
  // "Computed max_num_seqs (min(256, 8192 // 53248)) to be less than 1": one sequence of
  // 16 images, 208 tiles; the prompt is the images' 53,248 tokens, never cut to 8,192.
  VllmV0InternVlProfile p = VllmV0InternVl(InternVl3(), "0.6.6.post1", 8, 8192, 256, 16);
  ASSERT_TRUE(p.modelled);
  EXPECT_EQ(p.seqs, 1);
  EXPECT_EQ(p.tiles, 208);
  EXPECT_EQ(p.image_tokens, 53248);
  EXPECT_EQ(p.lm_tokens, 53248);
  // 25 heads at TP 8: InternSdpaAttention whole. 2u held + norm1 1u + qkv 3u + q 1u + k's
  // float32 RMSNorm 4u = 11u, u = 208 x 1025 x 3200 x 2 B; + 208 x 3 x 448^2 float32 pixels.
  const double u = 208.0 * 1025 * 3200 * 2;
  const double pixels = 208.0 * 3 * 448 * 448 * 4;
  EXPECT_DOUBLE_EQ(p.vit_peak, 11 * u + pixels);
  EXPECT_DOUBLE_EQ(p.held, pixels + 53248.0 * 8192 * 2);
  EXPECT_NEAR(p.vit_peak / kGiB, 14.45, 0.01);
}

TEST(VllmV0InternVlTest, AttentionSplitByTpAllGathersQAndKForTheirNorms) {
  ModelConfig m = InternVl3();
  m.intern_vit.heads = 32;  // divides by 8: InternParallelAttention
  VllmV0InternVlProfile p = VllmV0InternVl(m, "0.6.6", 8, 8192, 256, 16);
  const double u = 208.0 * 1025 * 3200 * 2;
  const double pixels = 208.0 * 3 * 448 * 448 * 4;
  EXPECT_DOUBLE_EQ(p.vit_peak, (2 + 7 + 3.0 / 8) * u + pixels);
  // Without the q/k norms the MLP is the widest: 2u + residual + norm2 + fc1 and GELU at
  // 12800 / (3200 x 8) = 0.5u each, or GELU + fc2 1.5u.
  m.intern_vit.qk_norm = false;
  p = VllmV0InternVl(m, "0.6.6", 8, 8192, 256, 16);
  EXPECT_DOUBLE_EQ(p.vit_peak, (2 + 2 + 1.5) * u + pixels);
}

TEST(VllmV0InternVlTest, OnlyTheVersionsRead) {
  EXPECT_FALSE(VllmV0InternVl(InternVl3(), "0.6.4.post1", 8, 8192, 256, 1).modelled);
  EXPECT_TRUE(VllmV0InternVl(InternVl3(), "0.6.5", 8, 8192, 256, 1).modelled);
  EXPECT_TRUE(VllmV0InternVl(InternVl3(), "0.7.0", 8, 8192, 256, 1).modelled);
  EXPECT_FALSE(VllmV0InternVl(InternVl3(), "0.7.1", 8, 8192, 256, 1).modelled);
  EXPECT_FALSE(VllmV0InternVl(ModelConfig(), "0.6.6", 8, 8192, 256, 1).modelled);  // not InternVL
  // The most images a prompt of 8,192 tokens carries: one 256-token tile each.
  EXPECT_EQ(InternVlMostImagesAPrompt(InternVl3(), 8192), 32);
  EXPECT_EQ(InternVlMostImagesAPrompt(ModelConfig(), 8192), 0);
}

// config.json -> ModelConfig::intern_vit; fields InternVLChatConfig defaults are taken and said.
TEST(VllmV0InternVlTest, ReadsTheTowerAndSaysTheChatConfigDefaults) {
  const std::string dir = testing::TempDir() + "/tpt_internvl_small";
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/config.json") << R"({"architectures": ["InternVLChatModel"], "model_type": "internvl_chat",
    "force_image_size": 448, "torch_dtype": "bfloat16",
    "llm_config": {"architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "hidden_size": 896,
      "intermediate_size": 4864, "max_position_embeddings": 32768, "num_attention_heads": 14,
      "num_hidden_layers": 24, "num_key_value_heads": 2, "vocab_size": 151674, "torch_dtype": "bfloat16"},
    "vision_config": {"architectures": ["InternVisionModel"], "hidden_size": 1024, "image_size": 448,
      "intermediate_size": 4096, "num_attention_heads": 16, "num_hidden_layers": 24, "patch_size": 14,
      "qk_normalization": false, "torch_dtype": "bfloat16"}})";
  auto m = LoadModel(dir);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->intern_vit.width, 1024);
  EXPECT_EQ(m->intern_vit.layers, 24);   // select_layer -1 (default): every layer
  EXPECT_EQ(m->intern_vit.tiles, 1);     // dynamic_image_size false (default): one tile
  EXPECT_EQ(m->intern_vit.tile_patches, 1025);
  EXPECT_EQ(m->intern_vit.tile_tokens, 256);  // 32^2 x 0.5^2
  EXPECT_FALSE(m->intern_vit.qk_norm);
  EXPECT_NE(m->intern_vit.defaults.find("dynamic_image_size false"), std::string::npos) << m->intern_vit.defaults;
  EXPECT_NE(m->intern_vit.defaults.find("max_dynamic_patch 6"), std::string::npos) << m->intern_vit.defaults;
}

}  // namespace
}  // namespace tpt::memory
