// plan_vllm_v0_profile_cli_test.cc: `tptriage plan` for vLLM's first profilers (issue #31): before
// 0.2.5 (vllm PR #2031) the KV budget is util x the device's total less torch's allocated peak
// alone (memory/launch_plan.cc PlanVllm); from 0.2.5 to 0.3.0 at TP > 1 the profile sees memory
// no source read here sizes, so the pool's range runs down to none
// (memory/launch_plan_sensitivity.cc).
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/cli_run.h"
#include "tests/plan_cli_run.h"

namespace {

nlohmann::json Json(const std::string& args) { return tpt::test::PlanJson(args); }

// CodeLlama-13B (40 layers, hidden 5120, 40 heads MHA) at TP 2 on 2 x RTX 4090, util 0.95,
// max_model_len 16384 and 16 sequences: written by us in vllm#2136's shape, which logs 1464 blocks
// (23,424 tokens) on 0.2.3 and 0.2.4 and 112 (1,792) on 0.2.5.
std::string Launch(const std::string& version, int tp) {
  return "--framework vllm --server-version " + version + " --vllm-engine v0 --gpu 'RTX 4090' --tp " +
         std::to_string(tp) + " --max-model-len 16384 --max-num-seqs 16 --gpu-memory-utilization 0.95 --model " +
         tpt::test::SampleModel("codellama-13b-instruct");
}

bool Says(const nlohmann::json& lines, const std::string& text) {
  for (const auto& l : lines) {
    if (l.get<std::string>().find(text) != std::string::npos) return true;
  }
  return false;
}

// Before 0.2.5 neither the CUDA context nor NCCL's memory is charged: the pool is the context's
// and non-torch memory larger than 0.2.7's arithmetic gives (before: -7.2% against the log).
TEST(PlanVllmV0ProfileCliTest, Before025OnlyTorchsPeakIsCharged) {
  const auto old = Json(Launch("0.2.4", 2)), later = Json(Launch("0.2.7", 2));
  ASSERT_FALSE(old.is_discarded());
  ASSERT_FALSE(later.is_discarded());
  EXPECT_TRUE(old["fits"].get<bool>());
  const double kv = old["kv_tokens"].get<double>();
  EXPECT_NEAR(kv, 23424.0, 0.02 * 23424.0) << old["assumptions"].dump(1);
  EXPECT_GT(kv, later["kv_tokens"].get<double>() * 1.05);
  EXPECT_TRUE(Says(old["assumptions"], "before PR #2031")) << old["assumptions"].dump(1);
  EXPECT_FALSE(Says(later["assumptions"], "before PR #2031"));
}

// 0.2.5 at TP 2: the pool the plan prices is not promised (its range holds the logged 1,792 tokens)
// and the start is not vouched for; at TP 1 (the CUDA context alone moved) nothing is said.
TEST(PlanVllmV0ProfileCliTest, From025AtTpAboveOneThePoolIsNotPromised) {
  const auto tp2 = Json(Launch("0.2.5", 2));
  ASSERT_FALSE(tp2.is_discarded());
  EXPECT_TRUE(Says(tp2["unknowns"], "0.2.5-0.3.0")) << tp2["unknowns"].dump(1);
  EXPECT_FALSE(tp2["outcome_certain"].get<bool>());
  bool holds = false;
  for (const auto& s : tp2["sensitivity"]) {
    holds = holds || (s["assumption"].get<std::string>().starts_with("vLLM 0.2.5-0.3.0") &&
                      s["kv_tokens_low"].get<int64_t>() <= 1792 && s["kv_tokens_high"].get<int64_t>() >= 1792);
  }
  EXPECT_TRUE(holds) << tp2["sensitivity"].dump(1);
  const auto tp1 = Json("--framework vllm --server-version 0.2.5 --vllm-engine v0 --gpu A100-80G --tp 1 --model " +
                        tpt::test::SampleModel("mistral-7b-v0.1") + " --max-model-len 4096");
  ASSERT_FALSE(tp1.is_discarded());
  EXPECT_FALSE(Says(tp1["unknowns"], "0.2.5-0.3.0")) << tp1["unknowns"].dump(1);
  const auto tp2_measured = Json(Launch("0.2.5", 2) + " --non-torch 8GiB");
  EXPECT_FALSE(Says(tp2_measured["unknowns"], "0.2.5-0.3.0"));
}

}  // namespace
