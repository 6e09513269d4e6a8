// vllm_dp_moe_test.cc: vLLM V1 data parallelism on an MoE model (vllm_fused_moe.h
// VllmDpMoeTokens, launch_plan_vllm_non_torch.cc): the profiling run's MoE layers see every DP
// rank's tokens, chunked at the runtime CHUNK_SIZE (32,768), and the DP group brings its own
// NCCL communicators. The config below is written here in Qwen3-Coder-480B-A35B-FP8's shape.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "memory/launch_plan.h"
#include "memory/model_config.h"
#include "memory/vllm_fused_moe.h"

namespace tpt::memory {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

ModelConfig Coder480bFp8() {
  nlohmann::json c = {
      {"architectures", {"Qwen3MoeForCausalLM"}}, {"model_type", "qwen3_moe"},
      {"hidden_size", 6144},          {"intermediate_size", 8192},   {"moe_intermediate_size", 2560},
      {"num_hidden_layers", 62},      {"num_attention_heads", 96},   {"num_key_value_heads", 8},
      {"head_dim", 128},              {"num_experts", 160},          {"num_experts_per_tok", 8},
      {"decoder_sparse_step", 1},     {"mlp_only_layers", nlohmann::json::array()},
      {"vocab_size", 151936},         {"max_position_embeddings", 262144},
      {"tie_word_embeddings", false}, {"torch_dtype", "bfloat16"},   {"rope_theta", 10000000},
      {"quantization_config",
       {{"quant_method", "fp8"}, {"activation_scheme", "dynamic"}, {"fmt", "e4m3"},
        {"weight_block_size", {128, 128}}}}};
  auto m = ParseModelConfig(c, "test:qwen3-coder-480b-fp8");
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  return *m;
}

TEST(VllmDpMoeTest, FusedMoeCachesAreChunkedAtTheRuntimeDefault) {
  // envs.py: the annotation says 64 * 1024, the lambda read at run time returns 32768.
  const ModelConfig m = Coder480bFp8();
  EXPECT_EQ(kVllmFusedMoeChunkTokens, 32768);
  EXPECT_DOUBLE_EQ(VllmFusedMoeBytes(m, 1, 65536, VllmMoeCaches::kShared13),
                   VllmFusedMoeBytes(m, 1, 32768, VllmMoeCaches::kShared13));
  EXPECT_GT(VllmFusedMoeBytes(m, 1, 32768, VllmMoeCaches::kShared13),
            VllmFusedMoeBytes(m, 1, 8192, VllmMoeCaches::kShared13));
  EXPECT_EQ(VllmDpMoeTokens(m, 8, 8192), 65536);
  EXPECT_EQ(VllmDpMoeTokens(m, 1, 8192), 8192);
}

TEST(VllmDpMoeTest, DataParallelExpertParallelPoolOnEightH20) {
  // vllm-project/recipes#12 (vLLM 0.10.1 dev, -dp=8 --enable-expert-parallel, eight 141 GB
  // H20, holdout44): 48.66 GiB of KV cache memory a rank at 0.90 and 55.65 GiB at 0.95; both
  // fail the 262,144-token max_model_len (62.00 GiB needed). Pricing only a TP group of one
  // left the pool 7.9% and 6.8% larger.
  PlanInput in;
  in.framework = "vllm";
  in.version = "0.10.1";
  in.gpu_name = "H20 141GB";
  in.gpu_arch = "hopper";
  in.gpu_interconnect = "nvlink";
  in.gpu_sm = 90;
  in.total_bytes = 139.72 * kGiB;
  in.tp = 1;
  in.dp = 8;
  in.ep = 8;
  in.model = Coder480bFp8();
  for (const auto& [util, logged] : {std::pair{0.90, 48.66}, std::pair{0.95, 55.65}}) {
    in.gpu_memory_utilization = util;
    auto p = MakePlan(in);
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    const double kv = p->figures.value("kv_bytes", 0.0) / kGiB;
    EXPECT_NEAR(kv / logged, 1.0, 0.05) << util << ": " << kv << " GiB";
    EXPECT_FALSE(p->fits);
    bool said = false;
    for (const auto& a : p->assumptions) said = said || a.find("the DP group's") != std::string::npos;
    EXPECT_TRUE(said);
  }
}

}  // namespace
}  // namespace tpt::memory
