// vllm_mm_profile_test.cc: vLLM V1's encoder profiling (vllm_mm_profile.h) on the
// Qwen2.5-VL-7B sample config: which dummy items, how many, the encoder's peak and what
// stays held, each against the arithmetic of vLLM 0.8.2 / 0.9.2's source written out here.
#include "memory/vllm_mm_profile.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "memory/launch_plan.h"
#include "memory/model_config.h"

namespace tpt::memory {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

ModelConfig Qwen25Vl7b() {
  auto m = LoadModel(std::string(TPT_SOURCE_DIR) + "/samples/models/qwen2.5-vl-7b-instruct");
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  return m.ok() ? *m : ModelConfig();
}

TEST(VllmEncoderProfileTest, ReadsTheQwen25VisionTransformer) {
  ModelConfig m = Qwen25Vl7b();
  EXPECT_EQ(m.vit_width, 1280);
  EXPECT_EQ(m.vit_heads, 16);
  EXPECT_EQ(m.vit_mlp, 3420);
  EXPECT_TRUE(m.vit_mlp_gated);
  EXPECT_EQ(m.vit_merge, 2);
  EXPECT_EQ(m.vit_temporal, 2);
  EXPECT_EQ(m.mm_item_tokens, 16384);  // 12,845,056 px / 14^2 / 2^2
}

// Qwen3-VL#1057's launch: vLLM 0.8.2, H100, LLM-class max_num_batched_tokens 16384, the
// README's limits of 10 images and 10 videos: "profiled with 1 image items".
TEST(VllmEncoderProfileTest, OneImageAtTheReadmeLimits) {
  const ModelConfig m = Qwen25Vl7b();
  VllmEncoderProfile p = VllmV1EncoderProfile(m, "0.8.2", 1, 16384, 1024, 128000, {10, 10});
  ASSERT_TRUE(p.modelled);
  EXPECT_EQ(p.modality, "image");
  EXPECT_EQ(p.item_tokens, 16384);
  EXPECT_EQ(p.items, 1);
  EXPECT_EQ(p.patches, 65536);
  // Per layer, X = 65,536 x 1,280 x 2 B: residual + normed 2X, qkv 3X, contiguous q/k/v 3X,
  // torch rotary over float32 8X = 16X; the gated MLP 3X + 3 x 65,536 x 3,420 x 2 B is less.
  const double X = 65536.0 * 1280 * 2;
  const double pixels = 65536.0 * 1176 * 4, cast = 65536.0 * 1176 * 2;
  EXPECT_DOUBLE_EQ(p.encoder_peak, 16 * X + pixels + cast);
  EXPECT_NEAR(p.encoder_peak / kGiB, 2.93, 0.01);
  // Held through the language model's run: the float32 pixels and 16,384 x 3,584 outputs.
  EXPECT_DOUBLE_EQ(p.held, pixels + 16384.0 * 3584 * 2);
  EXPECT_NE(p.arithmetic.find("65,536 patches"), std::string::npos) << p.arithmetic;
}

// At vLLM's default limits (1 image, 1 video) and max_model_len 128,000 the dummy video
// has min((128,000 - 16,384) frames' worth, 16) = 12 frames, 6 grid steps of 16,384 tokens:
// it outweighs the image and is what the profile encodes.
TEST(VllmEncoderProfileTest, TheDefaultLimitsEncodeAVideo) {
  const ModelConfig m = Qwen25Vl7b();
  VllmEncoderProfile p = VllmV1EncoderProfile(m, "0.8.2", 1, 16384, 1024, 128000, {});
  ASSERT_TRUE(p.modelled);
  EXPECT_EQ(p.modality, "video");
  EXPECT_EQ(p.item_tokens, 6 * 16384);
  EXPECT_EQ(p.items, 1);
  EXPECT_EQ(p.patches, 6 * 65536);
  // A short context leaves no frame beyond the first pair: 16,384 tokens, a tie the image wins.
  VllmEncoderProfile s = VllmV1EncoderProfile(m, "0.9.2", 1, 2048, 256, 2048, {});
  EXPECT_EQ(s.modality, "image");
  EXPECT_EQ(s.item_tokens, 16384);
  // Video off: the image.
  EXPECT_EQ(VllmV1EncoderProfile(m, "0.8.2", 1, 16384, 1024, 128000, {1, 0}).modality, "image");
  // Every modality off: nothing is encoded.
  VllmEncoderProfile off = VllmV1EncoderProfile(m, "0.8.2", 1, 16384, 1024, 128000, {0, 0});
  EXPECT_TRUE(off.modelled);
  EXPECT_EQ(off.modality, "");
  EXPECT_EQ(off.encoder_peak, 0);
  EXPECT_EQ(off.held, 0);
}

// The batch: ceil(max(max_num_batched_tokens, item) / item) before 0.10, floor from 0.10.0,
// at most max_num_seqs x the items a prompt holds (the limit; from 0.10.1 also at most
// max_model_len // item, at least 1).
TEST(VllmEncoderProfileTest, ItemsFillTheEncoderBudget) {
  const ModelConfig m = Qwen25Vl7b();
  EXPECT_EQ(VllmV1EncoderProfile(m, "0.9.2", 1, 40000, 1024, 8192, {4, 0}).items, 3);
  EXPECT_EQ(VllmV1EncoderProfile(m, "0.9.2", 1, 40000, 2, 8192, {1, 0}).items, 2);
  EXPECT_EQ(VllmV1EncoderProfile(m, "0.9.2", 1, 40000, 2, 8192, {1, 0}).patches, 2 * 65536);
  EXPECT_EQ(VllmV1EncoderProfile(m, "0.10.0", 1, 40000, 1024, 8192, {4, 0}).items, 2);
  // 0.10.1: a 40,000-token context holds 2 images a prompt; one sequence then encodes 2.
  EXPECT_EQ(VllmV1EncoderProfile(m, "0.10.1.1", 1, 60000, 1, 40000, {4, 0}).items, 2);
  EXPECT_EQ(VllmV1EncoderProfile(m, "0.10.0", 1, 60000, 1, 40000, {4, 0}).items, 3);
}

// 0.9 applies the rotary embedding with vLLM's flash-attn kernel (the float32 copy, its
// output and the cast back: 5X instead of the torch path's 8X); TP splits the per-head
// tensors and all-gathers qkv.
TEST(VllmEncoderProfileTest, RotaryByVersionAndTensorParallel) {
  const ModelConfig m = Qwen25Vl7b();
  const double X = 65536.0 * 1280 * 2, inputs = 65536.0 * 1176 * 6;
  EXPECT_DOUBLE_EQ(VllmV1EncoderProfile(m, "0.9.2", 1, 2048, 256, 2048, {1, 0}).encoder_peak, 13 * X + inputs);
  // tp 2, 0.8.2: 2X + gathered 3X + 6X / 2 + 8X / 2 = 12X; the MLP 3X + 3M / 2 is less.
  EXPECT_DOUBLE_EQ(VllmV1EncoderProfile(m, "0.8.2", 2, 2048, 256, 2048, {1, 0}).encoder_peak, 12 * X + inputs);
}

// 0.11.0: the video's frames count against max_model_len alone, at most 14 (7 grid steps,
// 114,688 tokens at 128k); q and k are rotated concatenated (2X + 4X + 4X + 2X beside the
// 8X baseline = 20X); the cast pixel values are dropped after the patch embedding; each
// output is padded to the encoder budget.
TEST(VllmEncoderProfileTest, Version011) {
  const ModelConfig m = Qwen25Vl7b();
  VllmEncoderProfile video = VllmV1EncoderProfile(m, "0.11.0", 1, 8192, 1024, 128000, {});
  EXPECT_EQ(video.modality, "video");
  EXPECT_EQ(video.item_tokens, 7 * 16384);
  // At a 40,000-token context: 2 frame pairs of 16,384 tokens fit, 32,768 > the image's.
  EXPECT_EQ(VllmV1EncoderProfile(m, "0.11.0", 1, 8192, 1024, 40000, {}).item_tokens, 2 * 16384);
  const double X = 65536.0 * 1280 * 2;
  VllmEncoderProfile image = VllmV1EncoderProfile(m, "0.11.0", 1, 32768, 1024, 128000, {2, 0});
  EXPECT_EQ(image.items, 2);
  EXPECT_DOUBLE_EQ(image.encoder_peak, 2 * 20 * X + 2 * 65536.0 * 1176 * 4);
  // Each of the 2 outputs padded from 16,384 to the 32,768-token budget.
  EXPECT_DOUBLE_EQ(image.held, 2 * 65536.0 * 1176 * 4 + 2 * 32768.0 * 3584 * 2);
}

// From 0.9 the largest item is measured with one item of each modality left on, whatever
// the limits (registry.py 0.9.2 get_max_tokens_per_item_by_modality: {modality: 1}): at the
// README's 10 images and 10 videos the dummy video gets (128,000 - 16,384) tokens' worth
// of frames, 12, 6 steps of 16,384 tokens, where 0.8.2 (the limits passed through) leaves
// it one frame pair and encodes the image.
TEST(VllmEncoderProfileTest, ItemTokensFromOneItemOfEachModalityFrom09) {
  const ModelConfig m = Qwen25Vl7b();
  EXPECT_EQ(VllmV1EncoderProfile(m, "0.8.2", 1, 16384, 1024, 128000, {10, 10}).modality, "image");
  VllmEncoderProfile p = VllmV1EncoderProfile(m, "0.9.2", 1, 16384, 1024, 128000, {10, 10});
  EXPECT_EQ(p.modality, "video");
  EXPECT_EQ(p.item_tokens, 6 * 16384);
}

// Versions and towers not read stay with the rough estimate.
TEST(VllmEncoderProfileTest, OnlyTheVersionsAndTowersRead) {
  const ModelConfig m = Qwen25Vl7b();
  EXPECT_FALSE(VllmV1EncoderProfile(m, "0.7.3", 1, 8192, 1024, 8192, {}).modelled);
  EXPECT_FALSE(VllmV1EncoderProfile(m, "0.22.0", 1, 8192, 1024, 8192, {}).modelled);
  EXPECT_TRUE(VllmV1EncoderProfile(m, "0.21.0", 1, 8192, 1024, 8192, {}).modelled);
  EXPECT_TRUE(VllmV1EncoderProfile(m, "0.10.2", 1, 8192, 1024, 8192, {}).modelled);
  EXPECT_TRUE(VllmV1EncoderProfile(m, "0.11.0", 1, 8192, 1024, 8192, {}).modelled);
  auto gemma = LoadModel(std::string(TPT_SOURCE_DIR) + "/samples/models/gemma-3-27b");
  ASSERT_TRUE(gemma.ok());
  EXPECT_FALSE(VllmV1EncoderProfile(*gemma, "0.22.0", 1, 8192, 1024, 8192, {}).modelled);
  // A SigLIP tower whose pooled tokens are not a square of the patch grid is not Gemma-3's.
  ModelConfig odd = *gemma;
  odd.vit_width = odd.vit_heads = odd.vit_mlp = 0;
  EXPECT_FALSE(VllmV1EncoderProfile(odd, "0.10.1.1", 1, 8192, 1024, 8192, {}).modelled);
}

// Gemma-3's SigLIP (gemma3_mm.py, siglip.py 0.10.1.1 / 0.11.0): one 896 px image of 256
// soft tokens an item (64 x 64 patches pooled 4 x 4), as many items as the encoder budget
// holds; image only, whatever --limit-mm-per-prompt says of video.
TEST(VllmEncoderProfileTest, Gemma3SiglipTower) {
  auto m = LoadModel(std::string(TPT_SOURCE_DIR) + "/samples/models/gemma-3-27b");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_TRUE(m->vit_siglip);
  EXPECT_EQ(m->vit_width, 1152);
  EXPECT_EQ(m->vit_mlp, 4304);
  EXPECT_EQ(m->vit_merge, 4);
  EXPECT_EQ(m->mm_item_tokens, 256);
  EXPECT_EQ(m->vision_patch_elems, 3 * 14 * 14);
  EXPECT_FALSE(m->mm_video);

  // 0.10.1.1 on an H100 (8,192 batched tokens, 1,024 seqs): floor(8,192 / 256) = 32 images.
  VllmEncoderProfile p = VllmV1EncoderProfile(*m, "0.10.1.1", 1, 8192, 1024, 32768, {});
  ASSERT_TRUE(p.modelled);
  EXPECT_EQ(p.modality, "image");
  EXPECT_EQ(p.items, 32);
  EXPECT_EQ(p.patches, 32 * 4096);
  const double P = 32 * 4096.0, X = P * 1152 * 2, M = P * 4304 * 2;
  const double pixels = 32 * 3 * 896.0 * 896 * 4;  // float32 pixel values
  // The MLP is the widest phase: embeddings + layer input + residual + normed + fc1 + GELU.
  EXPECT_DOUBLE_EQ(p.encoder_peak, 4 * X + 2 * M + pixels);
  EXPECT_DOUBLE_EQ(p.held, pixels + 32 * 256.0 * 5376 * 2);
  EXPECT_NE(p.arithmetic.find("SigLIP"), std::string::npos) << p.arithmetic;
  EXPECT_EQ(p.arithmetic.find("a video would be"), std::string::npos) << p.arithmetic;

  // At TP 2 the qkv and MLP widths are per rank; the residual stream is whole.
  VllmEncoderProfile tp2 = VllmV1EncoderProfile(*m, "0.10.1.1", 2, 8192, 1024, 32768, {});
  EXPECT_DOUBLE_EQ(tp2.encoder_peak, std::max({4 * X + 4 * X / 2, 4 * X + 2 * M / 2, 5 * X + M / 2}) + pixels);

  // 0.11.0 pads every output to the 8,192-token budget (gpu_model_runner.py profile_run).
  VllmEncoderProfile v011 = VllmV1EncoderProfile(*m, "0.11.0", 1, 8192, 1024, 32768, {});
  EXPECT_DOUBLE_EQ(v011.held, pixels + 32 * 8192.0 * 5376 * 2);
  EXPECT_NEAR(v011.held / kGiB, 2.92, 0.01);

  // 0.12.0 still pads them; from 0.13.0 to 0.21.0 they are kept as they are (the same
  // SigLIP forward and item, read in 0.12.0-0.21.0: vllm_mm_profile.cc).
  EXPECT_DOUBLE_EQ(VllmV1EncoderProfile(*m, "0.12.0", 1, 8192, 1024, 32768, {}).held, v011.held);
  for (const char* v : {"0.13.0", "0.16.0", "0.19.0", "0.21.0"}) {
    VllmEncoderProfile later = VllmV1EncoderProfile(*m, v, 1, 8192, 1024, 32768, {});
    ASSERT_TRUE(later.modelled) << v;
    EXPECT_EQ(later.items, 32) << v;
    EXPECT_DOUBLE_EQ(later.held, pixels + 32 * 256.0 * 5376 * 2) << v;
    EXPECT_DOUBLE_EQ(later.encoder_peak, p.encoder_peak) << v;
  }
  // 0.9.2 rounds the budget up (cdiv) and takes the limit per prompt: 2,048 / 256 = 8.
  EXPECT_EQ(VllmV1EncoderProfile(*m, "0.9.2", 1, 2048, 256, 32768, {}).items, 8);
  // Images off: nothing to encode.
  VllmEncoderProfile off = VllmV1EncoderProfile(*m, "0.10.1.1", 1, 8192, 1024, 32768, {0, 1});
  EXPECT_TRUE(off.modality.empty());
  // Without the flag, 0.10.1.1's default of 999 images a prompt: a 4-sequence profile still
  // encodes the 32 images the budget holds (max_num_seqs x min(999, 32,768 / 256)).
  EXPECT_EQ(VllmV1EncoderProfile(*m, "0.10.1.1", 1, 8192, 4, 32768, VllmMmLimits::Default()).items, 32);
  EXPECT_EQ(VllmV1EncoderProfile(*m, "0.10.1.1", 1, 8192, 4, 32768, {1, 0}).items, 4);
}

// Qwen3-VL-30B-A3B's public config.json numbers (the text model abridged to what plan reads).
constexpr const char* kQwen3VlConfig = R"({
  "architectures": ["Qwen3VLMoeForConditionalGeneration"], "model_type": "qwen3_vl_moe",
  "tie_word_embeddings": false,
  "text_config": {"model_type": "qwen3_vl_moe_text", "dtype": "bfloat16", "head_dim": 128, "hidden_size": 2048,
    "intermediate_size": 6144, "max_position_embeddings": 262144, "moe_intermediate_size": 768,
    "num_attention_heads": 32, "num_experts": 128, "num_experts_per_tok": 8, "num_hidden_layers": 48,
    "num_key_value_heads": 4, "vocab_size": 151936},
  "vision_config": {"model_type": "qwen3_vl_moe", "deepstack_visual_indexes": [8, 16, 24], "depth": 27,
    "hidden_size": 1152, "in_channels": 3, "intermediate_size": 4304, "num_heads": 16,
    "num_position_embeddings": 2304, "out_hidden_size": 2048, "patch_size": 16, "spatial_merge_size": 2,
    "temporal_patch_size": 2}})";

std::string WriteModelDir(const std::string& name, const std::vector<std::pair<std::string, std::string>>& files) {
  const std::string dir = ::testing::TempDir() + "/" + name + "-" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  for (const auto& [file, text] : files) std::ofstream(dir + "/" + file) << text;
  return dir;
}

// Qwen3-VL on vLLM 0.11.0 (qwen3_vl.py): the largest video is the video processor's
// 25,165,824 px over all frames, 12,288 encoder rows (/ 16^2 / 2 frames / 2^2), formatted
// x12.5 with timestamps = 153,600 tokens, beyond 2,048 batched tokens: one video, the
// budget 153,600; its outputs are the merger's 2,048 and three deepstack mergers' columns
// (8,192 wide), each padded to the budget.
TEST(VllmEncoderProfileTest, Qwen3VlVideo) {
  auto m = LoadModel(WriteModelDir("qwen3vl", {{"config.json", kQwen3VlConfig}}));
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_TRUE(m->vit_qwen3);
  EXPECT_EQ(m->mm_item_tokens, 16384);  // 16,777,216 px / 16^2 / 2^2
  EXPECT_EQ(m->mm_video_rows, 12288);
  EXPECT_EQ(m->vit_out_width, 8192);
  EXPECT_EQ(m->vision_patch_elems, 3 * 2 * 16 * 16);
  // The tower's weights: 27 blocks, the merger and the three deepstack mergers (4,608 x
  // 4,608 + 4,608 x 2,048 each), the 2,304 x 1,152 position table and the patch embedding:
  // 0.54B, as the checkpoint's 31.1B less Qwen3-30B-A3B's 30.5B.
  EXPECT_DOUBLE_EQ(m->vision_params, 27 * (4.0 * 1152 * 1152 + 2.0 * 1152 * 4304 + 4 * 1152) +
                                         4 * (4608.0 * 4608 + 4608.0 * 2048) + 2304.0 * 1152 + 16 * 16 * 3 * 2 * 1152.0);
  VllmEncoderProfile p = VllmV1EncoderProfile(*m, "0.11.0", 4, 2048, 256, 65536, VllmMmLimits::Default());
  ASSERT_TRUE(p.modelled);
  EXPECT_EQ(p.modality, "video");
  EXPECT_EQ(p.item_tokens, 153600);
  EXPECT_EQ(p.items, 1);
  EXPECT_EQ(p.patches, 12288 * 4);
  const double P = 49152, pixels = P * 1536 * 4;
  EXPECT_DOUBLE_EQ(p.held, pixels + 153600.0 * 8192 * 2);
  EXPECT_NEAR(p.held / kGiB, 2.62, 0.01);
  // The encoder: the 0.11 attention at TP 4 (2X + gathered 3X + 6X/4 + 12X/4), the
  // interpolated position embeddings the forward keeps (X), the float32 pixels and their
  // bf16 cast (qwen3_vl.py _process_video_input keeps it), and the three deepstack outputs
  // of 12,288 x 2,048.
  const double X = P * 1152 * 2;
  EXPECT_DOUBLE_EQ(p.encoder_peak, 10.5 * X + pixels + P * 1536 * 2 + 3 * 12288.0 * 2048 * 2);
  // Video off: the 16,384-token image.
  VllmEncoderProfile image = VllmV1EncoderProfile(*m, "0.11.0", 4, 2048, 256, 65536, {1, 0});
  EXPECT_EQ(image.modality, "image");
  EXPECT_EQ(image.patches, 65536);

  // A checkpoint's own processor files decide the sizes (size.longest_edge).
  auto small = LoadModel(WriteModelDir(
      "qwen3vl-small", {{"config.json", kQwen3VlConfig},
                        {"preprocessor_config.json", R"({"size": {"longest_edge": 4194304, "shortest_edge": 65536}})"},
                        {"video_preprocessor_config.json", R"({"size": {"longest_edge": 8388608}})"}}));
  ASSERT_TRUE(small.ok()) << small.status().ToString();
  EXPECT_EQ(small->mm_item_tokens, 4096);
  EXPECT_EQ(small->mm_video_rows, 4096);
  // A broken processor file is the model folder's error, named.
  auto bad = LoadModel(WriteModelDir("qwen3vl-bad", {{"config.json", kQwen3VlConfig},
                                                     {"video_preprocessor_config.json", "{\"size\": "}}));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("video_preprocessor_config.json"), std::string::npos)
      << bad.status().message();
}

// Qwen3-VL from vLLM 0.12 to 0.21 (qwen3_vl.py, qwen2_5_vl.py, gpu_model_runner.py
// profile_run, multimodal/encoder_budget.py at 0.12.0, 0.13.0, 0.16.0, 0.18.1, 0.20.2,
// 0.21.0): 0.12 still counts a video's rows x12.5 and pads the outputs to the budget;
// 0.13.0 counts the rows (12,288 < the image's 16,384: the image is encoded) and keeps the
// outputs as they are. The block has no all-gather from 0.12, and no float32 rotary: at TP 4
// the attention holds 3X + 6X/4 (0.12) or 3X + 8X/4 with 0.13's q/k copy, the MLP 4X + M/4.
TEST(VllmEncoderProfileTest, Qwen3VlFrom012) {
  auto m = LoadModel(WriteModelDir("qwen3vl-012", {{"config.json", kQwen3VlConfig}}));
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  const auto def = VllmMmLimits::Default();
  for (const char* v : {"0.12.0", "0.13.0", "0.14.1", "0.16.0", "0.18.1", "0.20.2", "0.21.0"}) {
    EXPECT_TRUE(VllmV1EncoderProfile(*m, v, 4, 2048, 256, 65536, def).modelled) << v;
  }
  EXPECT_FALSE(VllmV1EncoderProfile(*m, "0.22.0", 4, 2048, 256, 65536, def).modelled);

  // 0.12.0: the video of 153,600 tokens, padded outputs, 3X + 6X/4 = 4.5X < the MLP's 4X + M/4.
  VllmEncoderProfile v012 = VllmV1EncoderProfile(*m, "0.12.0", 4, 2048, 256, 65536, def);
  EXPECT_EQ(v012.modality, "video");
  EXPECT_EQ(v012.item_tokens, 153600);
  EXPECT_EQ(v012.patches, 49152);
  const double Pv = 49152, Xv = Pv * 1152 * 2, Mv = Pv * 4304 * 2, pixels_v = Pv * 1536 * 4;
  const double deep_v = 3 * 12288.0 * 2048 * 2;
  EXPECT_DOUBLE_EQ(v012.encoder_peak, std::max(4.5 * Xv, std::max(3 * Xv + Mv / 2, 4 * Xv + Mv / 4)) + Xv +
                                          pixels_v + Pv * 1536 * 2 + deep_v);
  EXPECT_DOUBLE_EQ(v012.held, pixels_v + 153600.0 * 8192 * 2);

  // 0.13.0: the image of 16,384 tokens (65,536 patches), outputs of 16,384 rows.
  VllmEncoderProfile v013 = VllmV1EncoderProfile(*m, "0.13.0", 4, 2048, 256, 65536, def);
  EXPECT_EQ(v013.modality, "image");
  EXPECT_EQ(v013.item_tokens, 16384);
  EXPECT_EQ(v013.items, 1);
  EXPECT_EQ(v013.patches, 65536);
  const double P = 65536, X = P * 1152 * 2, M = P * 4304 * 2, pixels = P * 1536 * 4;
  // 0.13 and 0.14 pass the q/k view to the rotary (qwen2_5_vl.py 0.13.0:382-389): 3X + 6X/4
  // is below the MLP's 4X + M/4; the copy comes in 0.15/0.16 (qwen2_5_vl.py 0.16.0:378).
  const double layer = std::max(3 * X + 6 * X / 4, std::max(3 * X + 2 * M / 4, 4 * X + M / 4));
  EXPECT_DOUBLE_EQ(layer, 4 * X + M / 4);
  EXPECT_DOUBLE_EQ(v013.encoder_peak, layer + X + pixels + P * 1536 * 2 + 3 * 16384.0 * 2048 * 2);
  EXPECT_DOUBLE_EQ(v013.held, pixels + 16384.0 * 8192 * 2);
  EXPECT_DOUBLE_EQ(VllmV1EncoderProfile(*m, "0.14.1", 4, 2048, 256, 65536, def).encoder_peak, v013.encoder_peak);
  const double layer016 = std::max(3 * X + 8 * X / 4, std::max(3 * X + 2 * M / 4, 4 * X + M / 4));
  EXPECT_DOUBLE_EQ(layer016, 5 * X);  // the attention, with its q/k copy
  EXPECT_DOUBLE_EQ(VllmV1EncoderProfile(*m, "0.16.0", 4, 2048, 256, 65536, def).encoder_peak,
                   layer016 + X + pixels + P * 1536 * 2 + 3 * 16384.0 * 2048 * 2);
  EXPECT_NE(v013.arithmetic.find("a video would be 12,288"), std::string::npos) << v013.arithmetic;
  // 0.20.2 and 0.21.0 profile the same.
  EXPECT_DOUBLE_EQ(VllmV1EncoderProfile(*m, "0.21.0", 4, 2048, 256, 65536, def).held, v013.held);

  // A tie (an image processor of 12,582,912 px: 12,288 tokens, the video's rows) keeps the
  // image through 0.16 (key=tokens) and goes to the video from 0.18 (key=(tokens, modality)).
  auto tie = LoadModel(WriteModelDir(
      "qwen3vl-tie", {{"config.json", kQwen3VlConfig},
                      {"preprocessor_config.json", R"({"size": {"longest_edge": 12582912}})"}}));
  ASSERT_TRUE(tie.ok()) << tie.status().ToString();
  EXPECT_EQ(VllmV1EncoderProfile(*tie, "0.16.0", 1, 8192, 256, 65536, def).modality, "image");
  EXPECT_EQ(VllmV1EncoderProfile(*tie, "0.18.1", 1, 8192, 256, 65536, def).modality, "video");
}

// Qwen3-VL's deepstack buffers (qwen3_vl.py / qwen3_vl_moe.py __init__, vLLM 0.11.0-0.21.0):
// three max_num_batched_tokens x hidden tensors allocated with the model on every rank, so
// the weights a rank holds grow with --max-num-batched-tokens; before 0.16 none with the
// tower left out (--limit-mm-per-prompt image=0,video=0), and none for a model without
// deepstack mergers.
TEST(VllmEncoderProfileTest, Qwen3VlDeepstackBuffersAreWeights) {
  auto m = LoadModel(WriteModelDir("qwen3vl-deepstack", {{"config.json", kQwen3VlConfig}}));
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  PlanInput in;
  in.framework = "vllm";
  in.version = "0.11.0";
  in.total_bytes = 23.57 * kGiB;
  in.gpu_arch = "ampere";
  in.tp = 4;
  in.context_length = 65536;
  in.model = *m;
  auto weights = [&](const PlanInput& x) {
    auto p = MakePlan(x);
    EXPECT_TRUE(p.ok()) << p.status().ToString();
    return p.ok() ? p->row.weights_bytes : 0.0;
  };
  in.max_num_batched_tokens = 2048;
  const double at2048 = weights(in);
  in.max_num_batched_tokens = 8192;
  EXPECT_DOUBLE_EQ(weights(in) - at2048, 3 * 6144.0 * 2048 * 2);
  PlanInput towerless = in;
  towerless.mm_limits = VllmMmLimits{0, 0, true};
  EXPECT_DOUBLE_EQ(weights(in) - weights(towerless), 3 * 8192.0 * 2048 * 2);
  // From 0.16 the buffers are made whatever the limits.
  in.version = towerless.version = "0.16.0";
  EXPECT_DOUBLE_EQ(weights(in), weights(towerless));
  in.version = "0.11.0";
  PlanInput flat = in;
  flat.model->vit_deepstack = 0;
  EXPECT_DOUBLE_EQ(weights(in) - weights(flat), 3 * 8192.0 * 2048 * 2);
  // The text is said once, with the sum.
  auto p = MakePlan(in);
  ASSERT_TRUE(p.ok());
  bool said = false;
  for (const auto& a : p->assumptions) said = said || a.find("deepstack buffers, 3 x 8192") != std::string::npos;
  EXPECT_TRUE(said);
}

// Qwen2-VL's tower: embed_dim wide (hidden_size is the merger's output), a plain
// fc1-GELU-fc2 MLP of embed_dim x mlp_ratio; the same attention (qwen2_vl.py 0.8.2).
TEST(VllmEncoderProfileTest, Qwen2VlTower) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("tpt_qwen2vl_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  {
    std::ofstream out(dir / "config.json");
    out << R"({"architectures": ["Qwen2VLForConditionalGeneration"], "model_type": "qwen2_vl",
      "hidden_size": 3584, "intermediate_size": 18944, "num_hidden_layers": 28, "num_attention_heads": 28,
      "num_key_value_heads": 4, "vocab_size": 152064, "max_position_embeddings": 32768, "torch_dtype": "bfloat16",
      "rms_norm_eps": 1e-06, "tie_word_embeddings": false,
      "vision_config": {"depth": 32, "embed_dim": 1280, "mlp_ratio": 4, "num_heads": 16, "in_chans": 3,
        "hidden_size": 3584, "patch_size": 14, "spatial_merge_size": 2, "spatial_patch_size": 14,
        "temporal_patch_size": 2}})";
  }
  auto m = LoadModel(dir.string());
  fs::remove_all(dir);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->vit_width, 1280);
  EXPECT_EQ(m->vit_mlp, 5120);
  EXPECT_FALSE(m->vit_mlp_gated);
  VllmEncoderProfile p = VllmV1EncoderProfile(*m, "0.8.2", 1, 8192, 1024, 8192, {1, 0});
  ASSERT_TRUE(p.modelled);
  EXPECT_EQ(p.patches, 65536);
  // Attention 16X; the MLP max(2X + 2 x 4X, 3X + 4X) = 10X is less.
  const double X = 65536.0 * 1280 * 2;
  EXPECT_DOUBLE_EQ(p.encoder_peak, 16 * X + 65536.0 * 1176 * 6);
  // Two TP ranks: attention 2X + 3X + 3X + 4X = 12X; the MLP max(2X + 4X, 3X + 2X) = 6X.
  EXPECT_DOUBLE_EQ(QwenVitLayerPeak(*m, 65536, 2, "0.8.2").layer, 12 * X);
  // From 0.12 (qwen2_vl.py Qwen2VisionAttention 0.12.0-0.21.0): input, normed input and
  // projection 3X, qkv, the q/k concatenation, the rotary output (model dtype) and the
  // attention's output 8X/tp; 0.12 keeps each rank's heads, 0.13 on all-gathers qkv (3X).
  EXPECT_DOUBLE_EQ(QwenVitLayerPeak(*m, 65536, 1, "0.12.0").layer, 11 * X);
  EXPECT_DOUBLE_EQ(QwenVitLayerPeak(*m, 65536, 2, "0.12.0").layer, 7 * X);
  EXPECT_DOUBLE_EQ(QwenVitLayerPeak(*m, 65536, 2, "0.13.0").layer, 10 * X);
  EXPECT_DOUBLE_EQ(QwenVitLayerPeak(*m, 65536, 2, "0.21.0").layer, 10 * X);
  // The image's profile on 0.20.2: no cast kept (the transformer's own x.to(dtype) is gone
  // after patch_embed), the outputs unpadded.
  VllmEncoderProfile v020 = VllmV1EncoderProfile(*m, "0.20.2", 1, 8192, 1024, 8192, {1, 0});
  ASSERT_TRUE(v020.modelled);
  EXPECT_DOUBLE_EQ(v020.encoder_peak, 11 * X + 65536.0 * 1176 * 4);
  EXPECT_DOUBLE_EQ(v020.held, 65536.0 * 1176 * 4 + 16384.0 * 3584 * 2);
}

// Qwen2.5-VL from 0.12 (qwen2_5_vl.py 0.12.0-0.21.0): Qwen3-VL's attention (3X + 6X/tp in
// 0.12-0.14, 3X + 8X/tp with the q/k copy of 0.15/0.16), the gated MLP 3X + 3M/tp beside the in-place fused
// add-RMSNorm; the image of 16,384 tokens, unpadded outputs from 0.13.
TEST(VllmEncoderProfileTest, Qwen25VlFrom012) {
  const ModelConfig m = Qwen25Vl7b();
  const double X = 65536.0 * 1280 * 2, M = 65536.0 * 3420 * 2, pixels = 65536.0 * 1176 * 4;
  EXPECT_DOUBLE_EQ(QwenVitLayerPeak(m, 65536, 1, "0.12.0").layer, std::max(9 * X, 3 * X + 3 * M));
  EXPECT_DOUBLE_EQ(QwenVitLayerPeak(m, 65536, 4, "0.12.0").layer, std::max(4.5 * X, 3 * X + 0.75 * M));
  EXPECT_DOUBLE_EQ(QwenVitLayerPeak(m, 65536, 4, "0.13.0").layer, std::max(4.5 * X, 3 * X + 0.75 * M));
  EXPECT_DOUBLE_EQ(QwenVitLayerPeak(m, 65536, 1, "0.14.1").layer, std::max(9 * X, 3 * X + 3 * M));
  EXPECT_DOUBLE_EQ(QwenVitLayerPeak(m, 65536, 1, "0.16.0").layer, std::max(11 * X, 3 * X + 3 * M));
  EXPECT_DOUBLE_EQ(QwenVitLayerPeak(m, 65536, 4, "0.16.0").layer, std::max(5 * X, 3 * X + 0.75 * M));
  VllmEncoderProfile p = VllmV1EncoderProfile(m, "0.16.0", 4, 8192, 1024, 8192, {1, 0});
  ASSERT_TRUE(p.modelled);
  EXPECT_EQ(p.items, 1);
  EXPECT_DOUBLE_EQ(p.encoder_peak, std::max(5 * X, 3 * X + 0.75 * M) + pixels);
  EXPECT_DOUBLE_EQ(p.held, pixels + 16384.0 * 3584 * 2);
  // 0.12.0 still pads the output to the budget (16,384 rows here: the item is the budget).
  EXPECT_DOUBLE_EQ(VllmV1EncoderProfile(m, "0.12.0", 4, 8192, 1024, 8192, {1, 0}).held, p.held);
  EXPECT_DOUBLE_EQ(VllmV1EncoderProfile(m, "0.12.0", 4, 32768, 1024, 32768, {1, 0}).held,
                   2 * pixels + 2 * 32768.0 * 3584 * 2);
}

TEST(VllmEncoderProfileTest, ParsesLimitMmPerPrompt) {
  auto a = ParseVllmMmLimits("image=10,video=10");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->image, 10);
  EXPECT_EQ(a->video, 10);
  auto b = ParseVllmMmLimits("{\"image\": 2, \"video\": 0}");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->image, 2);
  EXPECT_EQ(b->video, 0);
  auto c = ParseVllmMmLimits("video=0");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->image, 1);
  EXPECT_EQ(c->video, 0);
  EXPECT_EQ(VllmMmLimitsFlag(*b, "0.8.2"), "image=2,video=0");
  EXPECT_EQ(VllmMmLimitsFlag(*b, "0.10.1.1"), "'{\"image\": 2, \"video\": 0}'");
  for (const char* bad : {"", "image", "image=", "image=x", "frames=2", "{\"image\": -1}", "{\"image\": 1.5}",
                          "{bad", "image=99999999999"}) {
    auto r = ParseVllmMmLimits(bad);
    EXPECT_FALSE(r.ok()) << bad;
    if (!r.ok()) {
      EXPECT_NE(r.status().message().find("--limit-mm-per-prompt"), std::string::npos) << bad;
    }
  }
}

}  // namespace
}  // namespace tpt::memory
