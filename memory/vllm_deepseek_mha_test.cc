// vllm_deepseek_mha_test.cc: vLLM before 0.7.1 keeps DeepSeek-V2/V3's KV as multi-head
// attention padded to 256 (vllm_deepseek_mha.h), not MLA's latent; the plan's cell, pool and
// outcome follow it. The config below is written here in DeepSeek-Coder-V2-Lite's shape.
#include "memory/vllm_deepseek_mha.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "memory/launch_plan.h"
#include "memory/model_config.h"
#include "memory/vllm_v0_reserved.h"

namespace tpt::memory {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

ModelConfig CoderV2Lite() {
  nlohmann::json c = {
      {"architectures", {"DeepseekV2ForCausalLM"}}, {"model_type", "deepseek_v2"},
      {"hidden_size", 2048},        {"intermediate_size", 10944},  {"moe_intermediate_size", 1408},
      {"num_hidden_layers", 27},    {"num_attention_heads", 16},   {"num_key_value_heads", 16},
      {"kv_lora_rank", 512},        {"q_lora_rank", nullptr},      {"qk_nope_head_dim", 128},
      {"qk_rope_head_dim", 64},     {"v_head_dim", 128},           {"n_routed_experts", 64},
      {"n_shared_experts", 2},      {"num_experts_per_tok", 6},    {"first_k_dense_replace", 1},
      {"moe_layer_freq", 1},        {"vocab_size", 102400},        {"max_position_embeddings", 163840},
      {"tie_word_embeddings", false}, {"torch_dtype", "bfloat16"}, {"rms_norm_eps", 1e-6},
      {"rope_theta", 10000},
      {"rope_scaling",
       {{"type", "yarn"}, {"factor", 40}, {"original_max_position_embeddings", 4096}, {"beta_fast", 32},
        {"beta_slow", 1}, {"mscale", 0.707}, {"mscale_all_dim", 0.707}}}};
  auto m = ParseModelConfig(c, "test:deepseek-coder-v2-lite");
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  return *m;
}

// vllm#6156's launch: Coder-V2-Lite on 2 x L40 (44.39 GiB) under V0.
PlanInput OnTwoL40s(const char* version) {
  PlanInput in;
  in.framework = "vllm";
  in.version = version;
  in.vllm_engine = "v0";
  in.total_bytes = 44.39 * kGiB;
  in.tp = 2;
  in.model = CoderV2Lite();
  return in;
}

TEST(VllmDeepseekMhaTest, BeforeMlaTheCacheHoldsEveryHeadPaddedTo256) {
  ModelConfig m = CoderV2Lite();
  ASSERT_TRUE(m.IsMla());
  KvDims d = KvDimsOf(m, 1);
  std::string why;
  ASSERT_TRUE(VllmDeepseekKvAsMha(m, "0.5.1", &d, &why));
  EXPECT_FALSE(d.IsMla());
  EXPECT_EQ(d.kv_heads, 16);
  EXPECT_EQ(d.head_dim, 256);
  EXPECT_EQ(d.layers, 27);
  EXPECT_NE(why.find("padded to 256"), std::string::npos);
  KvDims same = KvDimsOf(m, 1);
  EXPECT_TRUE(VllmDeepseekKvAsMha(m, "0.7.0", &same, &why));
  // 0.7.1 builds DeepseekV2MLAAttention (ModelConfig.use_mla): the latent stays.
  KvDims mla = KvDimsOf(m, 1);
  EXPECT_FALSE(VllmDeepseekKvAsMha(m, "0.7.1", &mla, &why));
  EXPECT_TRUE(mla.IsMla());
}

TEST(VllmDeepseekMhaTest, PlanPricesTheMhaCellAndTheMaxLengthCheckFails) {
  // vllm#6156's shape: Coder-V2-Lite on 2 x L40 under vLLM 0.5.1 (V0) with the config's
  // 163,840 positions. 2 x 8 heads x 256 x 2 bytes x 27 layers a token and rank.
  PlanInput in = OnTwoL40s("0.5.1");
  auto p = MakePlan(in);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->cell_bytes, 27 * 2 * 8 * 256 * 2);
  EXPECT_FALSE(p->fits);
  EXPECT_LT(p->kv_tokens, 163840);
  in.version = "0.8.5";  // MLA: 27 x (512 + 64) x 2 bytes, replicated on every rank
  in.vllm_engine = "";
  auto mla = MakePlan(in);
  ASSERT_TRUE(mla.ok()) << mla.status().ToString();
  EXPECT_EQ(mla->cell_bytes, 27 * 576 * 2);
}


TEST(VllmDeepseekMhaTest, V0Before053ProfilesTheWholeContextWithoutChunkedPrefill) {
  // arg_utils.py 0.5.1:82 and 0.5.2 have no use_long_context: chunked prefill stays off above
  // 32,768 tokens and SchedulerConfig profiles max(max_model_len, 2048); 0.5.3 switches it on.
  PlanInput in = OnTwoL40s("0.5.2");
  auto profiled = [&](const char* version) {
    in.version = version;
    auto p = MakePlan(in);
    EXPECT_TRUE(p.ok()) << p.status().ToString();
    for (const auto& a : p->assumptions) {
      if (a.rfind("activation peak", 0) == 0) return a;
    }
    return std::string();
  };
  EXPECT_NE(profiled("0.5.2").find("profiling run of 163840 tokens"), std::string::npos) << profiled("0.5.2");
  EXPECT_EQ(profiled("0.5.3").find("profiling run of 163840 tokens"), std::string::npos) << profiled("0.5.3");
}

TEST(VllmDeepseekMhaTest, ADenseFirstLayerBeforeMoeLayersStrandsTheAllocatorsBlocks) {
  // 0.5.1's whole-context profile (163,840 tokens) at TP 2 (vllm_v0_reserved.h): layer 0's
  // MLP (gate_up 3.34 GiB, activation 1.67) is the allocated peak; the padded attention's
  // and the experts' smaller tensors of the next 26 layers cannot all reuse its blocks, and
  // new segments are cut beside them.
  const VllmV0Reserve r = VllmV0ReservedPeak(CoderV2Lite(), 2, 163840, "0.5.1");
  ASSERT_TRUE(r.modelled);
  EXPECT_NEAR(r.allocated_peak / kGiB, 6.88, 0.01);
  EXPECT_GT(r.reserved_peak, 1.5 * r.allocated_peak);
  EXPECT_LT(r.reserved_peak / kGiB, 12.5);
  // MLA from 0.7.1 is another attention path: not replayed.
  EXPECT_FALSE(VllmV0ReservedPeak(CoderV2Lite(), 2, 163840, "0.7.1").modelled);
}

TEST(VllmDeepseekMhaTest, PlanChargesTheAllocatorsReserveOverTheFactor) {
  // vLLM logged 63,040 tokens; 1.2x the allocated peak gave 81,504 (+29%).
  auto p = MakePlan(OnTwoL40s("0.5.1"));
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_FALSE(p->fits);
  EXPECT_GT(p->kv_tokens, 60000);
  EXPECT_LT(p->kv_tokens, 66200);
  bool said = false;
  for (const auto& a : p->assumptions) said |= a.find("caching allocator's replay") != std::string::npos;
  EXPECT_TRUE(said);
}

}  // namespace
}  // namespace tpt::memory
