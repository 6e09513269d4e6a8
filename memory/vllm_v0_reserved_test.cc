// vllm_v0_reserved_test.cc: vLLM V0 before 0.6.4 charges what PyTorch's caching allocator
// reserved in the profiling forward (vllm_v0_reserved.h). Uniform layers reserve little
// above their allocated peak; a dense first layer before MoE layers and DeepSeek's padded
// attention leave freed blocks the next layers cannot use (that case is tested beside the
// padded attention, vllm_deepseek_mha_test.cc). The config here is a Llama-shaped 6.7B.
#include "memory/vllm_v0_reserved.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "memory/launch_plan.h"
#include "memory/model_config.h"
#include "memory/vllm_nccl_connect.h"

namespace tpt::memory {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

ModelConfig Parse(const nlohmann::json& c, const char* name) {
  auto m = ParseModelConfig(c, name);
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  return *m;
}

ModelConfig UniformLlama() {
  return Parse({{"architectures", {"LlamaForCausalLM"}}, {"model_type", "llama"}, {"hidden_size", 4096},
                {"intermediate_size", 11008}, {"num_hidden_layers", 32}, {"num_attention_heads", 32},
                {"num_key_value_heads", 32}, {"vocab_size", 32256}, {"max_position_embeddings", 16384},
                {"torch_dtype", "bfloat16"}, {"tie_word_embeddings", false}},
               "test:uniform-llama");
}

TEST(VllmV0ReservedTest, UniformLayersReserveLessThanTheMeasuredFactor) {
  // Every layer makes the same tensors: the blocks freed by one are reused by the next, so
  // the replay stays under the 1.2x the plan keeps for these versions.
  const VllmV0Reserve r = VllmV0ReservedPeak(UniformLlama(), 2, 65536, "0.4.3");
  ASSERT_TRUE(r.modelled);
  // residual, normed input, gate_up, SiluAndMul, down_proj: 65,536 x (3 x 4096 + 3 x 5504) x 2 B
  EXPECT_NEAR(r.allocated_peak / kGiB, 65536.0 * (3 * 4096 + 3 * 5504) * 2 / kGiB, 0.01);
  EXPECT_GE(r.reserved_peak, r.allocated_peak);
  EXPECT_LT(r.reserved_peak, 1.2 * r.allocated_peak);
}

TEST(VllmV0ReservedTest, UniformLayersKeepTheMeasuredFactorInThePlan) {
  // The replay below 1.2x: the plan keeps the factor, says so, and does not name the replay
  // (the DeepSeek case where it does: vllm_deepseek_mha_test.cc).
  PlanInput in;
  in.framework = "vllm";
  in.version = "0.4.3";
  in.vllm_engine = "v0";
  in.total_bytes = 14.75 * kGiB;
  in.tp = 2;
  in.model = UniformLlama();
  auto u = MakePlan(in);
  ASSERT_TRUE(u.ok()) << u.status().ToString();
  bool factor = false, replay = false;
  for (const auto& a : u->assumptions) {
    factor |= a.find("x1.2 for the allocator's reserve") != std::string::npos;
    replay |= a.find("caching allocator's replay") != std::string::npos;
  }
  EXPECT_TRUE(factor);
  EXPECT_FALSE(replay);
}

TEST(VllmV0ReservedTest, TheProfileWindowHoldsTorchsTpGroupCommunicator) {
  // V0 gathers the logits through torch.distributed on the TP device group (and before 0.6.5
  // all-reduces there too, PyNccl being off outside capture): torch's communicator for that
  // group is made inside the profiling window, beside PyNccl's; 0.4.3-0.5.0's distributed
  // init also warms the world group up with an all-reduce, a third. Four PCIe Ampere cards:
  // no custom all-reduce, so each TP 4 plan's non-torch memory over TP 1's is communicators.
  PlanInput in;
  in.framework = "vllm";
  in.vllm_engine = "v0";
  in.total_bytes = 22.19 * kGiB;
  in.gpu_arch = "ampere";
  in.gpu_interconnect = "pcie";
  in.weights_bytes = 4 * kGiB;
  in.activation_peak_bytes = 0.5 * kGiB;
  in.cell_bytes = 24576;
  auto communicators = [&](const char* version) {
    PlanInput t = in;
    t.version = version;
    t.tp = 4;
    auto four = MakePlan(t);
    t.tp = 1;
    auto one = MakePlan(t);
    EXPECT_TRUE(four.ok() && one.ok());
    const double each = NcclCommBytes("ampere", "pcie") + VllmNcclConnectBytes({version, 4, ""});
    return (four->non_torch_bytes - one->non_torch_bytes) / each;
  };
  EXPECT_NEAR(communicators("0.4.3"), 3, 0.01);
  EXPECT_NEAR(communicators("0.5.1"), 2, 0.01);
  EXPECT_NEAR(communicators("0.7.0"), 2, 0.01);
}

TEST(VllmV0ReservedTest, FusedMoeChunkByVersion) {
  // fused_moe.py: no chunk before vllm#6029 (0.5.1), 64K until vllm#7995 (0.6.0), then 32K.
  EXPECT_EQ(VllmFusedMoeChunkTokens("0.5.0", 163840), 163840);
  EXPECT_EQ(VllmFusedMoeChunkTokens("0.5.1", 163840), 65536);
  EXPECT_EQ(VllmFusedMoeChunkTokens("0.5.5", 163840), 65536);
  EXPECT_EQ(VllmFusedMoeChunkTokens("0.6.0", 163840), 32768);
  EXPECT_EQ(VllmFusedMoeChunkTokens("0.6.0", 4096), 4096);
}

}  // namespace
}  // namespace tpt::memory
