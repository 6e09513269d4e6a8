// vLLM V0's profiling of Llama-3.2-Vision (vllm_v0_mllama.h): the floor its vision tower holds
// over every dummy tile at once, alone and through the plan.
#include "memory/vllm_v0_mllama.h"

#include <gtest/gtest.h>

#include "memory/launch_plan.h"

namespace tpt::memory {
namespace {

// meta-llama/Llama-3.2-11B-Vision-Instruct's published architecture (the fields the plan reads).
nlohmann::json Mllama11B() {
  return {{"architectures", {"MllamaForConditionalGeneration"}},
          {"model_type", "mllama"},
          {"torch_dtype", "bfloat16"},
          {"text_config",
           {{"hidden_size", 4096}, {"intermediate_size", 14336}, {"num_attention_heads", 32},
            {"num_hidden_layers", 40}, {"num_key_value_heads", 8}, {"vocab_size", 128256},
            {"max_position_embeddings", 131072}, {"cross_attention_layers", {3, 8, 13, 18, 23, 28, 33, 38}}}},
          {"vision_config",
           {{"hidden_size", 1280}, {"intermediate_size", 5120}, {"attention_heads", 16}, {"num_hidden_layers", 32},
            {"num_global_layers", 8}, {"image_size", 560}, {"patch_size", 14}, {"max_num_tiles", 4},
            {"vision_output_dim", 7680}, {"intermediate_layers_indices", {3, 7, 15, 23, 30}}}}};
}

ModelConfig Model() {
  auto m = ParseModelConfig(Mllama11B(), "mllama.json");
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  return m.ok() ? *m : ModelConfig();
}

TEST(VllmV0MllamaTest, TheTowerHoldsTheMaskAndTheKeptStatesOfEveryTile) {
  const ModelConfig m = Model();
  EXPECT_EQ(m.mllama_vit.tiles, 4);
  EXPECT_EQ(m.mllama_vit.tile_rows, 1608);  // 40 x 40 patches + the class token, padded to 8
  EXPECT_EQ(m.mllama_vit.kept_layers, 5);
  const VllmV0MllamaFloor f = VllmV0Mllama(m, "0.6.3", 256, 1);
  ASSERT_TRUE(f.modelled);
  EXPECT_EQ(f.images, 256);
  const double n = 4.0 * 1608;
  const double mask = 256 * n * n * 2, state = 256 * n * 1280 * 2;
  EXPECT_DOUBLE_EQ(f.floor, mask + 10 * state + state);
  EXPECT_NE(f.arithmetic.find("256 dummy image(s) x 4 tiles x 1608 rows"), std::string::npos) << f.arithmetic;
  // Sixteen sequences hold a sixteenth of it; V1 (0.10 on here) and other towers are not this.
  EXPECT_DOUBLE_EQ(VllmV0Mllama(m, "0.8.3", 16, 1).floor, f.floor / 16);
  EXPECT_FALSE(VllmV0Mllama(m, "0.10.0", 256, 1).modelled);
  EXPECT_FALSE(VllmV0Mllama(ModelConfig(), "0.6.3", 256, 1).modelled);
}

// vllm#10034's launch (2 x A10, vLLM 0.6.2, --max-model-len 1024, utilization 0.7): V0
// profiles 256 images of 4 tiles; the tower's floor alone is far past the room, so the plan
// calls the failure, with certainty. With 8 sequences it fits.
TEST(VllmV0MllamaTest, PlanCallsTheProfilingOomOfTheDefaultSequences) {
  PlanInput in;
  in.framework = "vllm";
  in.version = "0.6.2";
  in.vllm_engine = "v0";
  in.total_bytes = 21.99 * kGiB;
  in.tp = 2;
  in.context_length = 1024;
  in.gpu_memory_utilization = 0.7;
  in.model = Model();
  auto p = MakePlan(in);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_FALSE(p->fits);
  EXPECT_TRUE(p->outcome_certain);
  bool said = false;
  for (const auto& a : p->assumptions) said |= a.find("V0 profiles mllama's tower over 256") != std::string::npos;
  EXPECT_TRUE(said);
  in.max_num_seqs = 8;
  auto few = MakePlan(in);
  ASSERT_TRUE(few.ok());
  EXPECT_TRUE(few->fits);
}

// V0 from 0.6.2 leaves chunked prefill off for a multimodal model above 32,768 tokens
// (arg_utils.py 0.6.2:917, 0.8.3:1553): Llama-3.2-Vision at its 131,072 tokens profiles all
// of them; 0.6.1 still switched it on (2,048, raised to V0's multimodal 5,120).
TEST(VllmV0MllamaTest, V0KeepsChunkedPrefillOffForAMultimodalModelFrom062) {
  PlanInput in;
  in.framework = "vllm";
  in.vllm_engine = "v0";
  in.total_bytes = 21.99 * kGiB;
  in.tp = 4;
  in.max_num_seqs = 16;
  in.enforce_eager = true;
  in.model = Model();
  auto said = [](const Plan& p, const std::string& what) {
    for (const auto& a : p.assumptions) {
      if (a.find(what) != std::string::npos) return true;
    }
    return false;
  };
  in.version = "0.8.3";
  auto p = MakePlan(in);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_TRUE(said(*p, "profiling run of 131072 tokens"));
  EXPECT_TRUE(said(*p, "keeps chunked prefill off for a multimodal model"));
  in.version = "0.6.1";
  auto old = MakePlan(in);
  ASSERT_TRUE(old.ok());
  EXPECT_FALSE(said(*old, "profiling run of 131072 tokens"));
}

}  // namespace
}  // namespace tpt::memory
