// vllm_v0_reserved_test.cc: vLLM V0 before 0.6.4 charges what PyTorch's caching allocator
// reserved in the profiling forward (vllm_v0_reserved.h). Uniform layers reserve little
// above their allocated peak; a dense first layer before MoE layers and DeepSeek's padded
// attention leave freed blocks the next layers cannot use (that case is tested beside the
// padded attention, vllm_deepseek_mha_test.cc). The config here is a Llama-shaped 6.7B.
// From 0.6.4 the allocated peak of an eager forward is priced by what Python still names
// (vllm_eager_forward.h): the model loop's layer input, gate_up where the MLP keeps it, and
// from 0.6.5 at TP > 1 the out-of-place all-reduce's copy; the replay keeps the same input.
#include "memory/vllm_v0_reserved.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "memory/launch_plan.h"
#include "memory/model_config.h"
#include "memory/vllm_eager_forward.h"
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
  // the model loop's layer input (still named by the caller), the residual, the MLP's normed
  // input, gate_up, SiluAndMul, down_proj: 65,536 x (4 x 4096 + 3 x 5504) x 2 B
  EXPECT_NEAR(r.allocated_peak / kGiB, 65536.0 * (4 * 4096 + 3 * 5504) * 2 / kGiB, 0.01);
  EXPECT_GE(r.reserved_peak, r.allocated_peak);
  EXPECT_LT(r.reserved_peak, 1.2 * r.allocated_peak);
}

TEST(VllmV0ReservedTest, UniformLayersKeepTheFactorUntilTheHeldInputPassesIt) {
  // One rank: the MLP is wide beside hidden, the replay (with the layer input the model loop
  // still names) stays under 1.2x the estimate, and the plan keeps the factor. Two ranks over
  // the 65,536 tokens of a 4x linear-rope 16K model (holdout40's T4 launch): the held input is
  // a larger share, the replay's reserve passes 1.2x, and the plan takes it and says so.
  auto says = [](int tp, int64_t positions) {
    PlanInput in;
    in.framework = "vllm";
    in.version = "0.4.3";
    in.vllm_engine = "v0";
    in.total_bytes = 14.75 * kGiB;
    in.tp = tp;
    in.model = UniformLlama();
    in.model->max_position = positions;
    auto u = MakePlan(in);
    EXPECT_TRUE(u.ok()) << u.status().ToString();
    bool factor = false, replay = false;
    for (const auto& a : u->assumptions) {
      factor |= a.find("x1.2 for the allocator's reserve") != std::string::npos;
      replay |= a.find("caching allocator's replay") != std::string::npos;
    }
    return std::pair(factor, replay);
  };
  EXPECT_EQ(says(1, 16384), std::pair(true, false));
  EXPECT_EQ(says(2, 65536), std::pair(false, true));
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

// A Seed-OSS-shaped dense model (Qwen2-style MLP) and a Llama-shaped one.
ModelConfig SeedOss() {
  return Parse({{"architectures", {"SeedOssForCausalLM"}}, {"model_type", "seed_oss"}, {"hidden_size", 5120},
                {"intermediate_size", 27648}, {"num_hidden_layers", 64}, {"num_attention_heads", 80},
                {"num_key_value_heads", 8}, {"head_dim", 128}, {"vocab_size", 155136},
                {"max_position_embeddings", 524288}, {"torch_dtype", "bfloat16"}, {"tie_word_embeddings", false}},
               "test:seed-oss");
}

ModelConfig Llama70B() {
  return Parse({{"architectures", {"LlamaForCausalLM"}}, {"model_type", "llama"}, {"hidden_size", 8192},
                {"intermediate_size", 28672}, {"num_hidden_layers", 80}, {"num_attention_heads", 64},
                {"num_key_value_heads", 8}, {"vocab_size", 128256}, {"max_position_embeddings", 131072},
                {"torch_dtype", "bfloat16"}, {"tie_word_embeddings", false}},
               "test:llama-70b");
}

TEST(VllmEagerForwardTest, FlagsByEngineVersionAndModel) {
  const ModelConfig seed = SeedOss(), llama = Llama70B();
  // V1 under --enforce-eager runs the model eagerly; without it torch.compile frees at last use.
  VllmEagerForward f = VllmEagerForwardFor(seed, "0.11.2", true, true, 2);
  EXPECT_TRUE(f.eager && f.out_of_place && f.mlp_keeps_gate_up);
  f = VllmEagerForwardFor(seed, "0.11.2", true, false, 2);
  EXPECT_FALSE(f.eager || f.out_of_place);
  // V0 never compiles; its allocated peak is read from 0.6.4, out-of-place all-reduces from 0.6.5.
  f = VllmEagerForwardFor(seed, "0.6.4", false, false, 2);
  EXPECT_TRUE(f.eager);
  EXPECT_FALSE(f.out_of_place);
  EXPECT_TRUE(VllmEagerForwardFor(seed, "0.6.5", false, false, 2).out_of_place);
  EXPECT_FALSE(VllmEagerForwardFor(seed, "0.6.3", false, false, 2).eager);  // the reserve era
  EXPECT_FALSE(VllmEagerForwardFor(seed, "0.11.2", true, true, 1).out_of_place);  // no all-reduce
  // Llama's MLP rebinds x: gate_up goes after the activation.
  EXPECT_FALSE(VllmEagerForwardFor(llama, "0.11.2", true, true, 8).mlp_keeps_gate_up);
  EXPECT_TRUE(VllmMlpKeepsGateUp("Qwen3ForCausalLM"));
  EXPECT_TRUE(VllmMlpKeepsGateUp("Qwen2_5_VLForConditionalGeneration"));
  EXPECT_FALSE(VllmMlpKeepsGateUp("MistralForCausalLM"));
}

TEST(VllmEagerForwardTest, QwenStyleMlpAtTpTwoHoldsTheLayerInputAndTheReducedCopy) {
  // At down_proj's all-reduce: the loop's layer input, the residual, the MLP's input, gate_up,
  // the activation, down_proj's output and the reduced copy: 5 T h + 3 T I/tp, where the plan
  // had 3 T h + 3 T I/tp. In float32 over 8,192 tokens that is 0.3125 GiB more a rank.
  ModelConfig m = SeedOss();
  m.dtype_bytes = 4;
  const VllmEagerForward eager = VllmEagerForwardFor(m, "0.11.2", true, true, 2);
  const double compiled = VllmActivationPeakBytes(m, 2, 8192, 32, VllmLogitsProfile::kSampler);
  const double held = VllmActivationPeakBytes(m, 2, 8192, 32, VllmLogitsProfile::kSampler,
                                              VllmMoeCaches::kSeparate, 0, eager);
  EXPECT_NEAR((held - compiled) / kGiB, 2.0 * 8192 * 5120 * 4 / kGiB, 1e-6);
  EXPECT_NEAR(held / kGiB, 8192.0 * (5 * 5120 + 3 * 13824) * 4 / kGiB, 1e-6);
  // One rank: no all-reduce, the layer input alone.
  const double one = VllmActivationPeakBytes(m, 1, 8192, 32, VllmLogitsProfile::kSampler, VllmMoeCaches::kSeparate,
                                             0, VllmEagerForwardFor(m, "0.11.2", true, true, 1));
  EXPECT_NEAR(one / kGiB, 8192.0 * (4 * 5120 + 3 * 27648) * 4 / kGiB, 1e-6);
}

TEST(VllmEagerForwardTest, LlamaMlpCountsOnlyWhereDownProjOutgrowsTheActivation) {
  // Llama frees gate_up after the activation: at down_proj the loop's input, the residual, the
  // MLP's input, the activation, down_proj's output and the reduced copy (5 T h + T I/tp). At
  // TP 2 the activation's 3 T h + 3 T I/tp is larger and nothing moves; at TP 8 (I/tp = 3,584
  // against h = 8,192) down_proj's point is the peak. One dummy sequence keeps the sampler below.
  const ModelConfig m = Llama70B();
  auto peak = [&](int tp, bool eager) {
    return VllmActivationPeakBytes(m, tp, 8192, 1, VllmLogitsProfile::kSampler, VllmMoeCaches::kSeparate, 0,
                                   eager ? VllmEagerForwardFor(m, "0.11.2", true, true, tp) : VllmEagerForward{});
  };
  EXPECT_DOUBLE_EQ(peak(2, true), peak(2, false));
  EXPECT_NEAR(peak(8, true) / kGiB, 8192.0 * (5 * 8192 + 3584) * 2 / kGiB, 1e-6);
  EXPECT_GT(peak(8, true), peak(8, false));
}

TEST(VllmEagerForwardTest, ThePlanPricesItForAnEagerLaunchOnly) {
  PlanInput in;
  in.framework = "vllm";
  in.version = "0.11.2";
  in.total_bytes = 79.25 * kGiB;
  in.gpu_arch = "ampere";
  in.tp = 2;
  in.max_num_batched_tokens = 8192;
  in.max_num_seqs = 32;
  in.model = SeedOss();
  in.enforce_eager = true;
  auto eager = MakePlan(in);
  in.enforce_eager = false;
  auto compiled = MakePlan(in);
  ASSERT_TRUE(eager.ok() && compiled.ok());
  const double more = eager->figures["activation_peak_bytes"].get<double>() -
                      compiled->figures["activation_peak_bytes"].get<double>();
  EXPECT_NEAR(more / kGiB, 2.0 * 8192 * 5120 * 2 / kGiB, 0.001);
  bool said = false;
  for (const auto& a : eager->assumptions) said |= a.find("out of place") != std::string::npos;
  EXPECT_TRUE(said);
}

}  // namespace
}  // namespace tpt::memory
