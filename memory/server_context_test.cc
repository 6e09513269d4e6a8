// server_context_test.cc: the context length vLLM and SGLang derive from config.json when
// none is passed (launch_plan_context.cc), on configs written here: length keys and
// rope_scaling as each server's _get_and_verify_max_len / get_context_length reads them.
#include <gtest/gtest.h>

#include "memory/launch_plan.h"
#include "memory/launch_plan_internal.h"
#include "memory/model_config.h"

namespace tpt::memory {
namespace {

using internal::ServerDefaultContext;

// A small llama-style config of 16,384 positions with `extra` merged in.
ModelConfig Config(const nlohmann::json& extra) {
  nlohmann::json j = {{"model_type", "llama"},          {"architectures", {"LlamaForCausalLM"}},
                      {"num_hidden_layers", 4},         {"hidden_size", 1024},
                      {"num_attention_heads", 8},       {"num_key_value_heads", 8},
                      {"intermediate_size", 2048},      {"vocab_size", 32000},
                      {"max_position_embeddings", 16384}, {"torch_dtype", "bfloat16"}};
  for (const auto& [k, v] : extra.items()) j[k] = v;
  auto m = ParseModelConfig(j, "config.json");
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  return m.ok() ? *m : ModelConfig();
}

int64_t Tokens(const ModelConfig& m, const std::string& fw, const std::string& v) {
  return ServerDefaultContext(m, fw, v).tokens;
}

TEST(ServerContextTest, LinearScalingMultipliesOnBothServers) {
  // deepseek-coder-6.7b's form: {"type": "linear", "factor": 4.0} on 16,384 positions.
  const ModelConfig m = Config({{"rope_scaling", {{"type", "linear"}, {"factor", 4.0}}}});
  for (const char* v : {"0.4.3", "0.5.5", "0.6.6.post1", "0.11.0", "0.20.2"}) EXPECT_EQ(Tokens(m, "vllm", v), 65536) << v;
  for (const char* v : {"0.2.15", "0.4.6", "0.5.9"}) EXPECT_EQ(Tokens(m, "sglang", v), 65536) << v;
  const auto c = ServerDefaultContext(m, "vllm", "0.4.3");
  EXPECT_NE(c.why.find("= max_position_embeddings 16384 x rope_scaling factor 4 (linear), as vLLM 0.4.3 derives it"),
            std::string::npos)
      << c.why;
  // Servers that do not derive it themselves get nothing here (the plan takes max_position_embeddings).
  EXPECT_EQ(Tokens(m, "lmdeploy", "0.6.0"), 0);
}

TEST(ServerContextTest, YarnStartsFromItsOriginalOnVllmAndIsUnscaledOnSglang) {
  // Qwen2.5's documented YaRN block: factor 4 over 32,768 original positions.
  const ModelConfig m = Config({{"max_position_embeddings", 32768},
                                {"rope_scaling",
                                 {{"type", "yarn"}, {"factor", 4.0}, {"original_max_position_embeddings", 32768}}}});
  EXPECT_EQ(Tokens(m, "vllm", "0.6.6.post1"), 131072);
  EXPECT_NE(ServerDefaultContext(m, "vllm", "0.11.0").why.find("rope_scaling.original_max_position_embeddings 32768"),
            std::string::npos);
  // SGLang takes the factor as 1 when rope_scaling carries original_max_position_embeddings.
  EXPECT_EQ(Tokens(m, "sglang", "0.5.2"), 32768);
  // YaRN over fewer original positions than max_position_embeddings (DeepSeek-V3's form).
  const ModelConfig d = Config({{"max_position_embeddings", 163840},
                                {"rope_scaling",
                                 {{"type", "yarn"}, {"factor", 40}, {"original_max_position_embeddings", 4096}}}});
  EXPECT_EQ(Tokens(d, "vllm", "0.11.0"), 163840);
  EXPECT_EQ(Tokens(d, "sglang", "0.5.2"), 163840);
}

TEST(ServerContextTest, Llama3IsNotScaledFrom055ButSuOnlyIsExcludedAt043) {
  const ModelConfig m = Config({{"max_position_embeddings", 131072},
                                {"rope_scaling",
                                 {{"rope_type", "llama3"},
                                  {"factor", 8.0},
                                  {"low_freq_factor", 1.0},
                                  {"high_freq_factor", 4.0},
                                  {"original_max_position_embeddings", 8192}}}});
  for (const char* v : {"0.5.3", "0.6.4.post1", "0.11.0"}) EXPECT_EQ(Tokens(m, "vllm", v), 131072) << v;
  EXPECT_NE(ServerDefaultContext(m, "vllm", "0.11.0").why.find("llama3 rope_scaling is not applied"),
            std::string::npos);
  EXPECT_EQ(Tokens(m, "sglang", "0.5.2"), 131072);
  // A llama3 block without original_max_position_embeddings: SGLang still leaves it unscaled.
  const ModelConfig bare = Config({{"rope_scaling", {{"rope_type", "llama3"}, {"factor", 8.0}}}});
  EXPECT_EQ(Tokens(bare, "sglang", "0.4.6"), 16384);
  // 0.4.3-0.5.0 except only "su": a dynamic block is scaled there as everywhere.
  const ModelConfig dyn = Config({{"rope_scaling", {{"type", "dynamic"}, {"factor", 2.0}}}});
  EXPECT_EQ(Tokens(dyn, "vllm", "0.4.3"), 32768);
  EXPECT_EQ(Tokens(dyn, "vllm", "0.11.0"), 32768);
}

TEST(ServerContextTest, SuAndLongropeAreNotScaledAndNewVllmDefaultsToTheOriginal) {
  // Phi-3's LongRoPE: no factor, the short/long lists, original_max_position_embeddings at the top.
  for (const char* type : {"su", "longrope"}) {
    const ModelConfig m = Config({{"max_position_embeddings", 131072},
                                  {"original_max_position_embeddings", 4096},
                                  {"rope_scaling",
                                   {{"type", type}, {"long_factor", {1.0, 2.0}}, {"short_factor", {1.0, 1.0}},
                                    {"factor", 32.0}}}});
    EXPECT_EQ(Tokens(m, "vllm", "0.6.6.post1"), 131072) << type;
    EXPECT_EQ(Tokens(m, "vllm", "0.11.0"), 131072) << type;
    // From 0.18 vLLM serves LongRoPE at its original length unless told otherwise.
    EXPECT_EQ(Tokens(m, "vllm", "0.20.2"), std::string(type) == "longrope" ? 4096 : 131072) << type;
  }
  // 0.4.3 reads rope_scaling["type"] and excepts only "su": longrope is scaled there.
  const ModelConfig lr = Config({{"rope_scaling", {{"type", "longrope"}, {"factor", 2.0}}}});
  EXPECT_EQ(Tokens(lr, "vllm", "0.4.3"), 32768);
}

TEST(ServerContextTest, NoRopeScalingKeepsTheLengthKeysOwnRules) {
  const ModelConfig m = Config(nlohmann::json::object());
  EXPECT_EQ(Tokens(m, "vllm", "0.11.0"), 16384);
  EXPECT_EQ(Tokens(m, "sglang", "0.5.2"), 16384);
  // vLLM takes the smallest key, SGLang the first of its list (max_position_embeddings last).
  const ModelConfig two = Config({{"seq_length", 8192}, {"max_position_embeddings", 4096}});
  EXPECT_EQ(Tokens(two, "vllm", "0.11.0"), 4096);
  EXPECT_EQ(Tokens(two, "sglang", "0.5.2"), 8192);
  // From 0.8 vLLM takes a config's model_max_length over the smaller keys (Command-R).
  const ModelConfig cmd = Config({{"model_max_length", 131072}, {"max_position_embeddings", 8192}});
  EXPECT_EQ(Tokens(cmd, "vllm", "0.7.3"), 8192);
  EXPECT_EQ(Tokens(cmd, "vllm", "0.11.0"), 131072);
  // Gemma-3's linear x8 is already in its 131,072 for vLLM (0.8 on), not for SGLang.
  const ModelConfig g = Config({{"model_type", "gemma3_text"},
                                {"max_position_embeddings", 131072},
                                {"rope_scaling", {{"rope_type", "linear"}, {"factor", 8.0}}}});
  EXPECT_EQ(Tokens(g, "vllm", "0.11.0"), 131072);
  EXPECT_EQ(Tokens(g, "sglang", "0.5.2"), 1048576);
  // From 0.5.10 (transformers 5) SGLang finds no factor in Gemma-3's nested rope_parameters,
  // and yarn/longrope/llama3 blocks always carry an original length.
  EXPECT_EQ(Tokens(g, "sglang", "0.5.13.post1"), 131072);
  const ModelConfig y = Config({{"rope_scaling", {{"type", "yarn"}, {"factor", 2.0}}}});
  EXPECT_EQ(Tokens(y, "sglang", "0.5.9"), 32768);
  EXPECT_EQ(Tokens(y, "sglang", "0.5.10"), 16384);
  EXPECT_EQ(Tokens(Config({{"rope_scaling", {{"type", "linear"}, {"factor", 4.0}}}}), "sglang", "0.5.13.post1"), 65536);
}

TEST(ServerContextTest, PlanTakesTheDerivedLengthWhenNoneIsPassed) {
  PlanInput in;
  in.model = Config({{"rope_scaling", {{"type", "linear"}, {"factor", 4.0}}}});  // vLLM 0.4.3 on one T4
  in.framework = "vllm";
  in.version = "0.4.3";
  in.gpu_name = "T4";
  in.total_bytes = 15 * kGiB;
  auto p = MakePlan(in);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  ASSERT_TRUE(p->input.context_length.has_value());
  EXPECT_EQ(*p->input.context_length, 65536);
  bool said = false;
  for (const auto& a : p->assumptions) said |= a.find("x rope_scaling factor 4 (linear)") != std::string::npos;
  EXPECT_TRUE(said);
  in.context_length = 16384;  // one passed is kept
  auto q = MakePlan(in);
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(*q->input.context_length, 16384);
}

}  // namespace
}  // namespace tpt::memory
