// plan_sampler_warmup_cli_test.cc: `tptriage plan` on vLLM V1's sampler warm-up after the KV
// cache (memory/vllm_sampler_warmup.h). The warm-up runs the profile's own sampler over the
// same rows (gpu_worker.py compile_or_warm_up_model, gpu_model_runner.py profile_run), so it
// is priced with the sampler the profile took and never above the profile's peak; on 0.8.x
// FlashInfer's rejection sampler may fall back to renormalised copies the profile did not
// hold, which the plan does not vouch for ("may fail"). Qwen2.5-32B-AWQ (vocab 152,064, 1,024
// dummy requests) on an A100 80GB at --max-model-len 4096.
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/cli_run.h"
#include "tests/plan_cli_run.h"

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

std::string Base(const std::string& version) {
  return "--framework vllm --gpu A100-80G --max-model-len 4096 --model " +
         tpt::test::SampleModel("qwen2.5-32b-instruct-awq") + " --server-version " + version + " ";
}

double Figure(const nlohmann::json& j, const char* key) { return j["figures"].value(key, 0.0); }

// With FlashInfer installed (the vllm/vllm-openai images) 0.8.3 profiles and warms up with
// FlashInfer's sampler: 10 bytes a logit priced, not the sort's 38. At 0.95 the pool leaves
// 5.2 GiB after the graphs, which holds it and its fallback: a start (the sort's 5.5 GiB
// warm-up made it a warmup_oom).
TEST(PlanSamplerWarmupCliTest, FlashInferInstalledWarmsUpWithFlashInfer) {
  auto j = tpt::test::PlanJson(Base("0.8.3") + "--gpu-memory-utilization 0.95 --vllm-flashinfer installed");
  ASSERT_FALSE(j.is_discarded());
  EXPECT_TRUE(j["fits"].get<bool>()) << j["error"];
  EXPECT_TRUE(j["outcome_certain"].get<bool>());
  const double logits = 1024.0 * 152064;
  EXPECT_NEAR(Figure(j, "sampler_warmup_bytes"), 10 * logits, 0.05 * kGiB);
  EXPECT_LE(Figure(j, "sampler_warmup_bytes"), Figure(j, "activation_peak_bytes"));
  // 0.9.2 takes FlashInfer 0.2.3 or newer (top_k_top_p_sampling_from_logits, 14 bytes, no
  // fallback) over its default 256 requests: at 0.99 the warm-up fits what the
  // startup-checked budget leaves (the sort's 38 bytes did not).
  auto k = tpt::test::PlanJson(Base("0.9.2") + "--gpu-memory-utilization 0.99 --vllm-flashinfer installed");
  ASSERT_FALSE(k.is_discarded());
  ASSERT_EQ(k["figures"].value("sampler_warmup_requests", 0), 256);
  EXPECT_NEAR(Figure(k, "sampler_warmup_bytes"), 14 * 256.0 * 152064, 0.05 * kGiB);
  EXPECT_FALSE(k.value("failure", "") == "warmup_oom") << k["error"];
}

// At 0.99 the pool leaves 2.0 GiB after the graphs: FlashInfer's 1.46 GiB fits, its fallback
// (one float32 copy of the probabilities more, 0.58 GiB) does not. Not a start the plan
// vouches for, nor a certain failure; the remedies, planned again, leave room for the
// fallback and are certain starts.
TEST(PlanSamplerWarmupCliTest, FlashInferFallbackOn08xMayFail) {
  const std::string base = Base("0.8.3") + "--vllm-flashinfer installed ";
  auto j = tpt::test::PlanJson(base + "--gpu-memory-utilization 0.99");
  ASSERT_FALSE(j.is_discarded());
  EXPECT_FALSE(j["fits"].get<bool>());
  EXPECT_FALSE(j["outcome_certain"].get<bool>());
  EXPECT_EQ(j["failure"], "warmup_oom");
  const double left = Figure(j, "left_for_sampler_bytes");
  EXPECT_LT(Figure(j, "sampler_warmup_bytes"), left);
  EXPECT_GT(Figure(j, "sampler_warmup_high_bytes"), left);
  EXPECT_NEAR(Figure(j, "sampler_warmup_high_bytes") - Figure(j, "sampler_warmup_bytes"), 4.0 * 1024 * 152064, 1e6);
  EXPECT_NE(j["error"].get<std::string>().find("warming up sampler with 1024 dummy requests"), std::string::npos);
  std::string seqs, util;
  for (const auto& r : j["remedy"]) {
    if (r["flag"] == "--max-num-seqs") seqs = r["value"];
    if (r["flag"] == "--gpu-memory-utilization") util = r["value"];
  }
  ASSERT_FALSE(seqs.empty()) << j["remedy"].dump(1);
  ASSERT_FALSE(util.empty()) << j["remedy"].dump(1);
  for (const std::string& fix : {"--gpu-memory-utilization 0.99 --max-num-seqs " + seqs, "--gpu-memory-utilization " + util}) {
    auto f = tpt::test::PlanJson(base + fix);
    EXPECT_TRUE(f["fits"].get<bool>() && f["outcome_certain"].get<bool>()) << fix << ": " << f["error"];
  }
  // A pip install has no FlashInfer: the sort, no fallback, a start.
  auto pip = tpt::test::PlanJson(Base("0.8.3") + "--gpu-memory-utilization 0.99 --vllm-flashinfer absent");
  EXPECT_TRUE(pip["fits"].get<bool>() && pip["outcome_certain"].get<bool>()) << pip["error"];
}

// The install not given: the point is the sort's and fits; the range's FlashInfer end is the
// fallback's "may fail", and the activation range no longer turns the outcome (the warm-up
// shrinks with the profile it is the sampler of).
TEST(PlanSamplerWarmupCliTest, InstallUnknownRangesTheFallbackNotTheActivation) {
  auto j = tpt::test::PlanJson(Base("0.8.3") + "--gpu-memory-utilization 0.99");
  ASSERT_FALSE(j.is_discarded());
  EXPECT_TRUE(j["fits"].get<bool>());
  EXPECT_FALSE(j["outcome_certain"].get<bool>());
  bool flashinfer_turns = false, activation_turns = false;
  for (const auto& s : j["sensitivity"]) {
    const std::string what = s["assumption"];
    const bool turns = s["fits_low"] != s["fits_high"];
    if (what.rfind("sampler: FlashInfer", 0) == 0) flashinfer_turns = turns;
    if (what.rfind("activation peak", 0) == 0) activation_turns = turns;
  }
  EXPECT_TRUE(flashinfer_turns) << j["sensitivity"].dump(1);
  EXPECT_FALSE(activation_turns) << j["sensitivity"].dump(1);
  bool said = false;
  for (const auto& u : j["unknowns"]) said = said || u.get<std::string>().find("renormalises the probabilities") != std::string::npos;
  EXPECT_TRUE(said) << j["unknowns"].dump(1);
}

// A profile peak read from the launch's log bounds the warm-up: the profile ran the same
// sampler over the same 1,024 rows, so 2 GiB logged leaves no 5.5 GiB warm-up to fail.
TEST(PlanSamplerWarmupCliTest, LoggedProfilePeakBoundsTheWarmup) {
  auto j = tpt::test::PlanJson(Base("0.8.3") + "--gpu-memory-utilization 0.99 --activation-peak 2GiB --vllm-flashinfer absent");
  ASSERT_FALSE(j.is_discarded());
  EXPECT_TRUE(j["fits"].get<bool>()) << j["error"];
  EXPECT_LE(Figure(j, "sampler_warmup_bytes"), 2 * kGiB + 1);
}

// Two RTX 3090s at TP 2 (no P2P: NCCL all-reduces captured after the pool), 0.8.1 at 0.78, a
// pip install: the capture's unknown line says how much of its room the sampler's warm-up
// after it needs (holdout50's launch ran out of memory there).
TEST(PlanSamplerWarmupCliTest, NcclCaptureUnknownSaysTheWarmupsShare) {
  auto j = tpt::test::PlanJson("--framework vllm --gpu rtx3090 --tp 2 --max-model-len 15000 --gpu-memory-utilization 0.78 "
                               "--vllm-flashinfer absent --server-version 0.8.1 --model " +
                               tpt::test::SampleModel("qwen2.5-32b-instruct-awq"));
  ASSERT_FALSE(j.is_discarded());
  bool said = false;
  for (const auto& u : j["unknowns"]) {
    const std::string s = u;
    said = said || (s.find("NCCL all-reduces") != std::string::npos &&
                    s.find("the sampler's warm-up after the capture needs") != std::string::npos);
  }
  EXPECT_TRUE(said) << j["unknowns"].dump(1);
}

}  // namespace
