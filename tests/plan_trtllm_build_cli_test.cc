// plan_trtllm_build_cli_test.cc: `tptriage plan` for a TensorRT-LLM engine built on the serving
// GPUs before it serves (memory/trtllm_engine_build.cc): TensorRT holds the engine's weights
// there, trtllm-serve's LLM API builds a config.json FP8 checkpoint unquantized, and what
// TensorRT's tactic timing adds beyond the weights (closed) keeps a tight build from being
// called certain either way.
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/cli_run.h"
#include "tests/plan_cli_run.h"

namespace {

using tpt::test::CmdResult;
using tpt::test::Quote;

std::string Model(const std::string& name) { return tpt::test::SampleModel(name); }

nlohmann::json Plan(const std::string& args) { return tpt::test::PlanJson(args); }

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// Llama-3.1-405B-Instruct-FP8 (Meta's fbgemm_fp8 in config.json) through trtllm-serve 0.15 on
// 8 x A100 80GB (written by us in TensorRT-LLM#2586's shape): the LLM API reads no quantization
// from config.json, so the engine is bfloat16, 94.5 GiB a rank, more than the card: the build
// runs out of memory. Before, the plan priced FP8 (56.75 GiB) and said "fits", certain.
TEST(PlanTrtllmBuildCliTest, ServeBuildsAConfigFp8CheckpointUnquantized) {
  const std::string base = "--framework trtllm --server-version 0.15.0 --backend tensorrt --gpu A100-80G --tp 8 "
                           "--model " + Model("llama-3.1-405b-instruct-fp8");
  auto said = Plan(base + " --engine-build serve");
  ASSERT_FALSE(said.is_discarded());
  EXPECT_FALSE(said["fits"].get<bool>());
  EXPECT_EQ(said["failure"], "weights_oom");
  EXPECT_TRUE(said["outcome_certain"].get<bool>()) << said["unknowns"].dump(1);
  EXPECT_NE(said["error"].get<std::string>().find("while TensorRT builds the engine"), std::string::npos);
  EXPECT_GT(said["ledger"][0]["weights_bytes"].get<double>(), 90 * kGiB);
  // Unsaid, the path is trtllm-serve's, and trtllm-build of a converted FP8 checkpoint would
  // not fail on its weights: a failure, not vouched for.
  auto unsaid = Plan(base);
  EXPECT_FALSE(unsaid["fits"].get<bool>());
  EXPECT_FALSE(unsaid["outcome_certain"].get<bool>());
  // trtllm-build keeps FP8 (examples' convert_checkpoint.py); an engine built elsewhere is the
  // runtime alone, as before.
  auto built = Plan(base + " --engine-build trtllm-build");
  EXPECT_LT(built["ledger"][0]["weights_bytes"].get<double>(), 60 * kGiB);
  auto elsewhere = Plan(base + " --engine-build elsewhere");
  EXPECT_TRUE(elsewhere["fits"].get<bool>());
  EXPECT_TRUE(elsewhere["outcome_certain"].get<bool>());
}

// Where the unquantized engine fits (8 x H200), the weights' range line is the unquantized
// engine's +/-3% and holds the point (its replan does not take the checkpoint for bf16 twice).
TEST(PlanTrtllmBuildCliTest, UnquantizedWeightsRangeHoldsThePoint) {
  auto j = Plan("--framework trtllm --server-version 0.15.0 --backend tensorrt --gpu H200 --tp 8 --engine-build serve "
                "--model " + Model("llama-3.1-405b-instruct-fp8"));
  ASSERT_FALSE(j.is_discarded());
  EXPECT_TRUE(j["fits"].get<bool>());
  bool seen = false;
  for (const auto& s : j["sensitivity"]) {
    if (s["assumption"].get<std::string>().rfind("weights per rank", 0) != 0) continue;
    seen = true;
    EXPECT_LE(s["kv_tokens_low"].get<int64_t>(), j["kv_tokens"].get<int64_t>()) << s.dump();
    EXPECT_GE(s["kv_tokens_high"].get<int64_t>(), j["kv_tokens"].get<int64_t>()) << s.dump();
  }
  EXPECT_TRUE(seen) << j["sensitivity"].dump(1);
}

// Mixtral-8x7B bf16 at TP 2 on A100 80GB (TensorRT-LLM#2043's shape, 0.11): 43.5 GiB a rank of
// engine weights, and less than as much again free: whether TensorRT's build fits is closed
// TensorRT's, so the start is not certain (before: "fits", certain; the logged build ran out of
// memory). Built elsewhere, the runtime alone fits and is vouched for.
TEST(PlanTrtllmBuildCliTest, TightBuildIsNotCalledCertain) {
  const std::string base = "--framework trtllm --server-version 0.11.0 --backend tensorrt --gpu A100-80G --tp 2 "
                           "--max-batch-size 2048 --max_num_tokens 2048 --max_seq_len 4096 --model " +
                           Model("mixtral-8x7b");
  auto j = Plan(base);
  ASSERT_FALSE(j.is_discarded());
  EXPECT_TRUE(j["fits"].get<bool>());
  EXPECT_FALSE(j["outcome_certain"].get<bool>());
  bool range = false;
  for (const auto& s : j["sensitivity"]) {
    range = range || (s["assumption"].get<std::string>().find("the engine's build on these GPUs") != std::string::npos &&
                      !s["fits_low"].get<bool>());
  }
  EXPECT_TRUE(range) << j["sensitivity"].dump(1);
  auto elsewhere = Plan(base + " --engine-build elsewhere");
  EXPECT_TRUE(elsewhere["fits"].get<bool>());
  EXPECT_TRUE(elsewhere["outcome_certain"].get<bool>()) << elsewhere["unknowns"].dump(1);
}

// A small engine with room for twice its weights builds and serves: still certain.
TEST(PlanTrtllmBuildCliTest, RoomyBuildStaysCertain) {
  auto j = Plan("--framework trtllm --server-version 0.13.0 --backend tensorrt --gpu A100-80G --model " +
                Model("llama-3.1-8b-instruct"));
  ASSERT_FALSE(j.is_discarded());
  EXPECT_TRUE(j["fits"].get<bool>());
  EXPECT_TRUE(j["outcome_certain"].get<bool>()) << j["unknowns"].dump(1);
}

// A Qwen2-7B-shaped engine (28 heads) at TP 4 on 4 x RTX 2080 Ti, trtllm-build 0.10.0 with context FMHA
// off, max_batch_size 1 and max_input_len 32256 (written by us in TensorRT-LLM#2122's shape): the GPT
// attention plugin's unfused context workspace, 1 x 7 x 32256^2 x (2 + 4) B = 40.7 GiB, is far over
// the card, and the build fails at the plugin. Before, the plan had no such flag and said "fits",
// certain. With FMHA on (the default) the same build has no such term; the reporter's smaller build
// (batch 6, max_input_len 4096: 3.9 GiB) fits.
TEST(PlanTrtllmBuildCliTest, ContextFmhaOffPricesTheQuadraticWorkspace) {
  const std::string base = "--framework trtllm --server-version 0.10.0 --backend tensorrt --engine-build trtllm-build "
                           "--gpu 'RTX 2080 Ti' --tp 4 --dtype fp16 --max_seq_len 32768 --model " +
                           Model("deepseek-r1-distill-qwen-7b");
  auto off = Plan(base + " --max-batch-size 1 --context_fmha disable --max_input_len 32256");
  ASSERT_FALSE(off.is_discarded());
  EXPECT_FALSE(off["fits"].get<bool>());
  EXPECT_EQ(off["failure"], "warmup_oom");
  EXPECT_TRUE(off["outcome_certain"].get<bool>()) << off["unknowns"].dump(1);
  EXPECT_NEAR(off["figures"]["context_fmha_off_workspace_bytes"].get<double>(), 7.0 * 32256 * 32256 * 6, 1.0);
  EXPECT_NE(off["error"].get<std::string>().find("context FMHA off"), std::string::npos);
  auto on = Plan(base + " --max-batch-size 1 --context_fmha enable --max_input_len 32256");
  EXPECT_TRUE(on["fits"].get<bool>()) << on["error"];
  EXPECT_FALSE(on["figures"].contains("context_fmha_off_workspace_bytes"));
  auto small = Plan(base + " --max-batch-size 6 --context_fmha disable --max_input_len 4096");
  EXPECT_TRUE(small["fits"].get<bool>()) << small["error"];
  EXPECT_NEAR(small["figures"]["context_fmha_off_workspace_bytes"].get<double>(), 6.0 * 7 * 4096 * 4096 * 6, 1.0);
  // Without --max_input_len the engine's whole sequence stands for it: a bound, not certain.
  auto unsaid = Plan(base + " --max-batch-size 1 --context_fmha disable");
  EXPECT_FALSE(unsaid["fits"].get<bool>());
  EXPECT_FALSE(unsaid["outcome_certain"].get<bool>());
  // The flags are trtllm-build's.
  EXPECT_EQ(tpt::test::Tptriage("plan --framework vllm --gpu H100 --context_fmha disable --model " +
                                    Model("qwen3-8b"), false).rc, 2);
  EXPECT_EQ(tpt::test::Tptriage("plan " + base + " --context_fmha off", false).rc, 2);
}

// The PyTorch backend builds no engine: --engine-build is refused there.
TEST(PlanTrtllmBuildCliTest, PytorchBackendBuildsNoEngine) {
  CmdResult r = tpt::test::Tptriage("plan --framework trtllm --server-version 1.0.0 --gpu H100 --model " +
                                        Model("llama-3.1-8b-instruct") + " --engine-build serve",
                                    false);
  EXPECT_EQ(r.rc, 2) << r.out;
}

}  // namespace
