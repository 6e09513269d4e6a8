// tgi_gptq_kernels_test.cc: the plan does not vouch for a TGI warm-up of a GPTQ checkpoint
// before v1.3.4 (tgi_gptq_kernels.cc), and still does from v1.3.4 and for other checkpoints.
#include "memory/tgi_gptq_kernels.h"

#include <gtest/gtest.h>

#include "memory/launch_plan.h"
#include "memory/memory_model.h"

namespace tpt::memory {
namespace {

// A Llama-2-70B GPTQ checkpoint of the "no group size, act-order" kind, written here.
ModelConfig Llama70bGptq(bool gptq) {
  nlohmann::json c = {{"architectures", {"LlamaForCausalLM"}}, {"model_type", "llama"},
                      {"hidden_size", 8192},   {"intermediate_size", 28672},
                      {"num_hidden_layers", 80}, {"num_attention_heads", 64},
                      {"num_key_value_heads", 8}, {"vocab_size", 32000},
                      {"max_position_embeddings", 4096}, {"torch_dtype", "float16"}};
  if (gptq) {
    c["quantization_config"] = {{"quant_method", "gptq"}, {"bits", 4}, {"group_size", -1}, {"desc_act", true}};
  }
  auto m = ParseModelConfig(c, "llama-2-70b-gptq/config.json");
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  return m.ok() ? *m : ModelConfig();
}

Plan TgiPlan(const std::string& version, bool gptq) {
  PlanInput in;
  in.framework = "tgi";
  in.version = version;
  in.tp = 4;
  in.total_bytes = 14.75 * kGiB;  // T4
  in.model = Llama70bGptq(gptq);
  auto p = MakePlan(in);
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  return p.ok() ? *p : Plan();
}

bool Says(const Plan& p, const std::string& what) {
  for (const auto& u : p.unknowns) {
    if (u.find(what) != std::string::npos) return true;
  }
  return false;
}

TEST(TgiGptqKernelsTest, BeforeV134TheWarmupOfAGptqCheckpointIsNotVouchedFor) {
  // 4 x T4, TGI 1.0.0 and 1.1.0: logged launches of this shape failed their warm-up with
  // "Not enough memory to handle 4096 prefill tokens" while the ledger has room.
  for (const char* v : {"0.9.3", "1.0.0", "1.1.0", "1.3.3"}) {
    Plan p = TgiPlan(v, /*gptq=*/true);
    EXPECT_FALSE(p.outcome_certain) << v;
    EXPECT_TRUE(Says(p, "before v1.3.4")) << v;
  }
}

TEST(TgiGptqKernelsTest, FromV134AndWithoutGptqTheLedgerDecides) {
  Plan fixed = TgiPlan("1.3.4", /*gptq=*/true);
  EXPECT_FALSE(Says(fixed, "before v1.3.4"));
  Plan plain = TgiPlan("1.0.0", /*gptq=*/false);
  EXPECT_FALSE(Says(plain, "before v1.3.4"));
  EXPECT_FALSE(TgiGptqWarmupUnvouched("1.0.0", Llama70bGptq(false)).has_value());
  EXPECT_TRUE(TgiGptqWarmupUnvouched("1.0.0", Llama70bGptq(true)).has_value());
}

}  // namespace
}  // namespace tpt::memory
