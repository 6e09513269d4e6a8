// startup_servers_test.cc: the warm-up and KV replays of TGI, LMDeploy and
// TensorRT-LLM (startup_servers.h) on the simulated device: reproduced, not
// reproduced and inconclusive, and the fix with the value that serves.
#include "repro/startup_servers.h"

#include <gtest/gtest.h>

#include "repro/plan_figures.h"

namespace tpt::repro {
namespace {

const std::string kSamples = std::string(TPT_SOURCE_DIR) + "/samples/repro/";

Plan Load(const std::string& name) {
  auto p = LoadPlanFile(kSamples + name);
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  return p.ok() ? *p : Plan{};
}

RankLayout Layout(int world) {
  RankLayout l;
  l.world = world;
  l.colocated = world > 1;
  l.launcher = "single";
  return l;
}

ReproReport Replay(const Plan& p) {
  auto be = MakeSimulatedBackend(SimulatedDevice{});
  EXPECT_TRUE(ValidatePlan(p).ok()) << ValidatePlan(p).ToString();
  return Reproduce(p, *be, Layout(p.tp * p.pp), ReproOptions{});
}

TEST(StartupReplay, TgiWarmupPrefillReproducesAndTheFittingPrefillPasses) {
  Plan p = Load("tgi_warmup_oom.json");
  EXPECT_EQ(p.failed_step, kStepWarmup);
  EXPECT_EQ(p.warmup_bytes, 4 * kGiB);
  // The weights step brings the free memory to the OOM line's 2.91 GiB.
  EXPECT_EQ(FreeAtInit(p, 0) - Weights(p, 0), p.warmup_free_bytes);
  EXPECT_EQ(p.context_length, 4096);  // one request of max_total_tokens
  ReproReport rep = Replay(p);
  EXPECT_EQ(rep.verdict.outcome, "reproduced") << rep.verdict.reason;
  EXPECT_EQ(rep.original.failed_step, kStepWarmup);
  // 23552 tokens ask 4 x 23552 / 32768 = 2.875 GiB: fits; then TGI 2.0's blocks:
  // (34 MiB x 0.95) // 1 MiB = 32, + 6 warm-up requests x 256 = 1568 blocks.
  EXPECT_EQ(rep.verdict.fix_outcome, "passes") << rep.verdict.fix_reason;
  ASSERT_TRUE(rep.fix.has_value());
  EXPECT_EQ(rep.fix->kv.tokens, (32 + 6 * 256) * 16) << rep.fix->kv.formula;
  EXPECT_EQ(ExitCodeOf(rep.verdict), kExitReproduced);
  // TGI frees the warm-up (its batch and its cache: set_cache_manager's
  // empty_cache) before it allocates the whole KV cache: after the pool the
  // warm-up's 2.875 GiB is free again, not held beside the pool.
  const StepRecord* warm = nullptr;
  const StepRecord* pool = nullptr;
  for (const StepRecord& s : rep.fix->steps) {
    if (s.step == kStepWarmup) warm = &s;
    if (s.step == kStepKvPool) pool = &s;
  }
  ASSERT_TRUE(warm && pool);
  EXPECT_EQ(pool->free_bytes - warm->free_bytes,
            static_cast<int64_t>(2.875 * kGiB) - static_cast<int64_t>(rep.fix->kv.pool_bytes))
      << pool->note;
  EXPECT_NE(pool->note.find("after the warm-up's"), std::string::npos) << pool->note;
  // A prefill that still does not fit: the fix fails at the same step.
  p.fix["max_batch_prefill_tokens"] = 24576;  // 3.0 GiB on 2.91 GiB
  rep = Replay(p);
  EXPECT_EQ(rep.verdict.fix_outcome, "fails") << rep.verdict.fix_reason;
  EXPECT_EQ(ExitCodeOf(rep.verdict), kExitFixFails);
  // A warm-up that fits the free memory is not what the log says.
  p.warmup_bytes = 2 * kGiB;
  rep = Replay(p);
  EXPECT_EQ(rep.verdict.outcome, "not reproduced") << rep.verdict.reason;
}

// TGI 3.x folds its wiggle room into the fraction: free - (1 - 1.0 x 0.90) x 22.06 GiB
// is below zero after the warm-up, so the pool is the warm-up's blocks alone.
TEST(StartupReplay, TgiV3KeepsOnlyTheWarmupBlocksWhenLittleIsLeft) {
  Plan p = Load("tgi_warmup_oom.json");
  p.version = "3.3.6";
  ReproReport rep = Replay(p);
  ASSERT_TRUE(rep.fix.has_value());
  EXPECT_EQ(rep.fix->kv.tokens, 6 * 256 * 16) << rep.fix->kv.formula;
  EXPECT_NE(rep.fix->kv.formula.find("(1 - 1.00 x 0.90) x total"), std::string::npos) << rep.fix->kv.formula;
  EXPECT_EQ(rep.verdict.fix_outcome, "passes") << rep.verdict.fix_reason;
}

TEST(StartupReplay, TrtllmFinalKvCacheDoesNotFitAndTheServingFractionDoes) {
  Plan p = Load("trtllm_kv_cache_creation.json");
  EXPECT_EQ(p.failed_step, kStepKvPool);
  EXPECT_NEAR(double(p.kv_available_bytes) / kGiB, 110.01 / 0.9, 1e-3);
  EXPECT_EQ(p.block_tokens, 32);
  ReproReport rep = Replay(p);
  EXPECT_EQ(rep.verdict.outcome, "reproduced") << rep.verdict.reason;
  EXPECT_EQ(rep.original.failed_step, kStepKvPool);
  EXPECT_EQ(rep.verdict.fix_outcome, "passes") << rep.verdict.fix_reason;
  ASSERT_TRUE(rep.fix.has_value());
  EXPECT_NEAR(rep.fix->kv.pool_bytes / kGiB, 96.56, 0.01);
  // The logged fraction as the "fix" fails the same way.
  p.fix["free_gpu_memory_fraction"] = 0.9;
  rep = Replay(p);
  EXPECT_EQ(rep.verdict.fix_outcome, "fails") << rep.verdict.fix_reason;
  // A cache the free memory holds is not the log's failure.
  p.free_at_creation_bytes = 0;
  p.weights_bytes = 0;
  p.free_at_init_bytes = 0;
  p.sources.clear();
  p.kv_estimate_bytes = 90 * kGiB;
  p.kv_available_bytes = 0;
  p.free_at_creation_bytes = int64_t(108.86 * kGiB);
  CompleteFigures(nlohmann::json::object(), false, &p);
  rep = Replay(p);
  EXPECT_EQ(rep.verdict.outcome, "not reproduced") << rep.verdict.reason;
}

// TensorRT-LLM v0.8's one-sequence check: the C++ runtime's "Allocate 956301312 bytes
// for k/v cache" (0.9 of what it found) and the error's beam x tokensPerBlock x
// maxBlocksPerSeq give the replay its figures: 228 blocks of 128 = 29184 tokens < 34816.
TEST(StartupReplay, TrtllmOneSequenceCheckFromTheErrorLine) {
  Plan p;
  p.framework = "trtllm";
  p.root_cause = "kv_pool_too_small";
  p.failed_step = kStepKvFormula;
  p.kv_estimate_bytes = 956301312;
  p.kv_bytes_per_token = 32768;
  p.failure_message = "maxTokensInPagedKvCache (29184) must be large enough to process at least 1 sequence to "
                      "completion (i.e. must be larger than beam_width (1) * tokensPerBlock (128) * maxBlocksPerSeq (272))";
  CompleteFigures(nlohmann::json::object(), false, &p);
  EXPECT_EQ(p.block_tokens, 128);
  EXPECT_EQ(p.context_length, 34816);
  ReproReport rep = Replay(p);
  EXPECT_EQ(rep.verdict.outcome, "reproduced") << rep.verdict.reason;
  EXPECT_EQ(rep.original.kv.tokens, 29184);
}

TEST(StartupReplay, TurbomindBuffersAfterTheCache) {
  Plan p = Load("lmdeploy_turbomind_buffers.json");
  EXPECT_EQ(p.failed_step, kStepWarmup);
  EXPECT_EQ(p.kv_bytes_per_token, 24576);  // 1.5 MiB / 64 tokens
  ReproReport rep = Replay(p);
  EXPECT_EQ(rep.verdict.outcome, "reproduced") << rep.verdict.reason;
  ASSERT_NE(rep.original.kv.tokens, 0);
  EXPECT_EQ(rep.original.kv.tokens / 64, 5120);  // the log's max_block_count, from the measured free memory
  EXPECT_EQ(rep.verdict.fix_outcome, "passes") << rep.verdict.fix_reason;
  EXPECT_NE(rep.verdict.fix_reason.find("7.50x the context length 32768"), std::string::npos) << rep.verdict.fix_reason;
  // Buffers that fit in what the cache left: not the log's failure.
  p.warmup_bytes = kGiB;
  rep = Replay(p);
  EXPECT_EQ(rep.verdict.outcome, "not reproduced") << rep.verdict.reason;
  // Without their size (the log never prints it) the least that fails is assumed,
  // and a replay that turns on it is inconclusive.
  p.warmup_bytes = 0;
  p.sources.erase("warmup_bytes");
  CompleteFigures(nlohmann::json::object(), false, &p);
  ASSERT_FALSE(p.asked.empty());
  EXPECT_EQ(p.asked.back().rfind("--warmup-bytes ", 0), 0u) << p.asked.back();
  rep = Replay(p);
  EXPECT_EQ(rep.verdict.outcome, "inconclusive") << rep.verdict.reason;
  EXPECT_NE(rep.verdict.reason.find("pass --warmup-bytes"), std::string::npos) << rep.verdict.reason;
}

// A warm-up OOM whose log prints no ask: the least that fails is assumed and asked
// for, and the replay that turns on it is inconclusive; with the OOM line's figures
// vLLM's profile run is replayed to its failing ask.
TEST(StartupReplay, WarmupOomWithoutItsAskIsAskedForByName) {
  Plan p;
  p.framework = "vllm";
  p.root_cause = "warmup_oom";
  p.card_total_bytes = 80 * kGiB;
  p.gpu_memory_utilization = 0.9;
  CompleteFigures(nlohmann::json::object(), false, &p);
  EXPECT_EQ(p.failed_step, kStepWarmup);
  ASSERT_FALSE(p.asked.empty());
  EXPECT_EQ(p.asked.back().rfind("--warmup-bytes ", 0), 0u) << p.asked.back();
  ReproReport rep = Replay(p);
  EXPECT_EQ(rep.verdict.outcome, "inconclusive") << rep.verdict.reason;
  EXPECT_NE(rep.verdict.reason.find("pass --warmup-bytes"), std::string::npos) << rep.verdict.reason;
  p = Plan{};
  p.framework = "vllm";
  p.root_cause = "warmup_oom";
  p.card_total_bytes = 80 * kGiB;
  p.gpu_memory_utilization = 0.9;
  p.warmup_asked_bytes = 6 * kGiB;
  p.warmup_free_bytes = 5 * kGiB;
  CompleteFigures(nlohmann::json::object(), false, &p);
  rep = Replay(p);
  EXPECT_EQ(rep.verdict.outcome, "reproduced") << rep.verdict.reason;
  EXPECT_EQ(rep.original.steps.back().step, kStepWarmup);
  // A warm-up with no step to replay is refused by name.
  p.failed_step = kStepWarmup;
  p.warmup_bytes = 0;
  EXPECT_NE(ValidatePlan(p).message().find("--warmup-bytes"), std::string::npos);
}

}  // namespace
}  // namespace tpt::repro
