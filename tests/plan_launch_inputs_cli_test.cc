// plan_launch_inputs_cli_test.cc: `tptriage plan`'s launch line and remedies follow the inputs
// that choose how the server is started (memory/launch_command.cc, vllm_entrypoint.cc): vLLM's
// offline LLM(...) class is told EngineArgs' keywords, not serve's flags; every flag the plan
// priced (--quantization, --max-num-seqs, --enforce-eager) is on the line; a TensorRT engine's
// line is the build path the plan priced (--engine-build).
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/cli_run.h"
#include "tests/plan_cli_run.h"

namespace {

using tpt::test::Quote;

std::string Model(const std::string& name) { return tpt::test::SampleModel(name); }

nlohmann::json Json(const std::string& args) { return tpt::test::PlanJson(args); }

std::string Text(const std::string& args) { return tpt::test::Tptriage("plan " + args, false).out; }

// Llama-3.1-8B at its full 131,072 context on an L4 does not hold one request: the remedies
// (a shorter context, a larger utilisation, TP, an 8-bit KV cache) name serve's flags for
// `vllm serve` and EngineArgs' keywords for LLM(...), in the JSON and the text alike.
TEST(PlanLaunchInputsCliTest, LlmClassRemediesAreKeywords) {
  const std::string base = "--framework vllm --server-version 0.20.0 --gpu L4 --max-model-len 131072 --model " +
                           Model("llama-3.1-8b-instruct");
  auto serve = Json(base);
  auto llm = Json(base + " --vllm-entrypoint llm");
  ASSERT_FALSE(serve.is_discarded() || llm.is_discarded());
  ASSERT_FALSE(llm["fits"].get<bool>());
  ASSERT_FALSE(llm["remedy"].empty());
  bool serve_flag = false, keyword = false;
  for (const auto& r : serve["remedy"]) serve_flag = serve_flag || r["flag"] == "--max-model-len";
  for (const auto& r : llm["remedy"]) {
    const std::string flag = r["flag"], why = r["why"];
    EXPECT_NE(flag.rfind("--", 0), 0u) << r.dump();
    EXPECT_EQ(why.find("--gpu-memory-utilization"), std::string::npos) << why;
    EXPECT_EQ(why.find("--max-model-len"), std::string::npos) << why;
    keyword = keyword || flag == "max_model_len";
  }
  EXPECT_TRUE(serve_flag) << serve["remedy"].dump(1);
  EXPECT_TRUE(keyword) << llm["remedy"].dump(1);
  const std::string text = Text(base + " --vllm-entrypoint llm");
  EXPECT_NE(text.find("remedy: max_model_len="), std::string::npos) << text;
  EXPECT_EQ(text.find("remedy: --"), std::string::npos) << text;
  EXPECT_NE(text.find("remedy: tensor_parallel_size=2: "), std::string::npos) << text;
  EXPECT_NE(Text(base).find("remedy: --max-model-len "), std::string::npos);
  // At 40,000 tokens: a larger utilisation, a shorter context, the KV dtype as a Python string.
  const std::string shorter = "--framework vllm --server-version 0.20.0 --gpu L4 --max-model-len 40000 "
                              "--vllm-entrypoint llm --model " + Model("llama-3.1-8b-instruct");
  const std::string t40 = Text(shorter);
  EXPECT_NE(t40.find("remedy: gpu_memory_utilization=0.95: "), std::string::npos) << t40;
  EXPECT_NE(t40.find("remedy: kv_cache_dtype=\"fp8_e4m3\": "), std::string::npos) << t40;
  EXPECT_EQ(t40.find("remedy: --"), std::string::npos) << t40;
}

// --quantization (a method), --max-num-seqs and --enforce-eager were priced but left off the
// launch line; they are on it now, as flags for serve and keywords for LLM(...).
TEST(PlanLaunchInputsCliTest, LineHoldsEveryPricedVllmFlag) {
  const std::string base = "--framework vllm --server-version 0.20.0 --gpu L4 --max-model-len 8192 "
                           "--quantization awq_marlin --max-num-seqs 64 --enforce-eager --model " +
                           Model("qwen3-8b-awq");
  auto serve = Json(base);
  ASSERT_FALSE(serve.is_discarded());
  ASSERT_TRUE(serve["fits"].get<bool>()) << serve.dump(1);
  const std::string line = serve["launch_command"];
  EXPECT_NE(line.find(" --quantization awq_marlin"), std::string::npos) << line;
  EXPECT_NE(line.find(" --max-num-seqs 64"), std::string::npos) << line;
  EXPECT_NE(line.find(" --enforce-eager"), std::string::npos) << line;
  auto llm = Json(base + " --vllm-entrypoint llm");
  const std::string call = llm["launch_command"];
  EXPECT_NE(call.find(", quantization=\"awq_marlin\""), std::string::npos) << call;
  EXPECT_NE(call.find(", max_num_seqs=64"), std::string::npos) << call;
  EXPECT_NE(call.find(", enforce_eager=True"), std::string::npos) << call;
}

// A TensorRT engine's line is the path priced: trtllm-serve on the checkpoint with the build
// limits as its flags (the default, serve), trtllm-build then trtllm-serve on the engine, or
// trtllm-serve on an engine built elsewhere with the limits it was assumed built with.
TEST(PlanLaunchInputsCliTest, TrtllmLineFollowsTheBuildPath) {
  const std::string base = "--framework trtllm --server-version 0.13.0 --backend tensorrt --gpu A100-80G "
                           "--max-batch-size 64 --max_num_tokens 4096 --max_seq_len 8192 --model " +
                           Model("llama-3.1-8b-instruct");
  const std::string ckpt = std::string(TPT_SOURCE_DIR) + "/samples/models/llama-3.1-8b-instruct";
  for (const std::string path : {"", " --engine-build serve"}) {
    auto j = Json(base + path);
    ASSERT_TRUE(j["fits"].get<bool>()) << j.dump(1);
    const std::string line = j["launch_command"];
    EXPECT_EQ(line.rfind("trtllm-serve " + ckpt + " ", 0), 0u) << line;
    EXPECT_EQ(line.find("trtllm-build"), std::string::npos) << line;
    EXPECT_NE(line.find(" --max_batch_size 64 --max_num_tokens 4096 --max_seq_len 8192"), std::string::npos) << line;
  }
  auto built = Json(base + " --engine-build trtllm-build");
  const std::string two = built["launch_command"];
  EXPECT_EQ(two.rfind("trtllm-build --checkpoint_dir ", 0), 0u) << two;
  EXPECT_NE(two.find(" && trtllm-serve " + ckpt + "-trtllm-engine --tokenizer "), std::string::npos) << two;
  auto elsewhere = Json(base + " --engine-build elsewhere");
  const std::string one = elsewhere["launch_command"];
  EXPECT_EQ(one.rfind("trtllm-serve " + ckpt + "-trtllm-engine --tokenizer ", 0), 0u) << one;
  bool said = false;
  for (const auto& a : elsewhere["assumptions"]) {
    said = said || a.get<std::string>().find("built elsewhere, as the plan assumed: trtllm-build --max_batch_size 64, "
                                             "--max_num_tokens 4096, --max_seq_len 8192") != std::string::npos;
  }
  EXPECT_TRUE(said) << elsewhere["assumptions"].dump(1);
}

// From 1.0 the PyTorch backend is trtllm-serve's default: an engine's line says --backend tensorrt.
TEST(PlanLaunchInputsCliTest, TrtllmEngineLineNamesTheBackendFromOne) {
  auto j = Json("--framework trtllm --server-version 1.0.0 --backend tensorrt --gpu A100-80G --model " +
                Model("llama-3.1-8b-instruct"));
  ASSERT_TRUE(j["fits"].get<bool>()) << j.dump(1);
  EXPECT_NE(j["launch_command"].get<std::string>().find(" --backend tensorrt"), std::string::npos) << j["launch_command"];
}

// LMDeploy TurboMind v0.1.x allocates its pool a block at a time as requests come (cache_chunk_size
// 1): Llama-3.1-8B on an L4, half the card (11.0 GiB) past the 6.8 GiB the weights leave, is a cap
// in the ledger, not a -4.24 GiB "shortfall" next to "fits".
TEST(PlanLaunchInputsCliTest, LmdeployEarlyPoolIsACap) {
  const std::string model = " --context-length 2048 --model " + Model("llama-3.1-8b-instruct");
  const std::string text = Text("--framework lmdeploy --server-version 0.1.0 --gpu L4" + model);
  EXPECT_NE(text.find("\nfits: "), std::string::npos) << text;
  EXPECT_NE(text.find("KV pool (cap)"), std::string::npos) << text;
  EXPECT_EQ(text.find("(shortfall)"), std::string::npos) << text;
  EXPECT_NE(text.find("(under the pool's cap: allocated as requests come, not at start)"), std::string::npos) << text;
  // From v0.2.0 the pool is allocated at start: the same cap is a failure.
  const std::string later = Text("--framework lmdeploy --server-version 0.2.0 --gpu L4" + model);
  EXPECT_EQ(later.find("KV pool (cap)"), std::string::npos) << later;
}

}  // namespace
