// plan_scale_test.cc: a replay of a larger card on a smaller GPU (--scale-to-fit),
// against the simulated device backend (no GPU needed).
#include "repro/plan_scale.h"

#include <gtest/gtest.h>

#include "repro/launch.h"
#include "repro/runner.h"

namespace tpt::repro {
namespace {

Plan Founding() {
  auto p = LoadPlanFile(std::string(TPT_SOURCE_DIR) + "/samples/repro/sglang_tp8_rtxpro6000.json");
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  return *p;
}

RankLayout Colocated(int world) {
  RankLayout l;
  l.world = world;
  l.colocated = true;
  l.launcher = "single";
  return l;
}

ReproReport OnCard(int64_t total, const Plan& plan, bool scale_to_fit) {
  SimulatedDevice d;
  d.total_bytes = total;
  auto be = MakeSimulatedBackend(d);
  ReproOptions opt;
  opt.scale_to_fit = scale_to_fit;
  return Reproduce(plan, *be, Colocated(8), opt);
}

TEST(FitScale, LargestTwoDecimalFactorThatFits) {
  Plan p;
  p.free_at_init_bytes = 94 * kGiB;
  EXPECT_DOUBLE_EQ(FitScale(79 * kGiB, p), 0.83);  // (79 - 0.25) / 94 = 0.8377
  EXPECT_DOUBLE_EQ(FitScale(200 * kGiB, p), 1.0);  // never above the log's figures
  p.free_at_init_per_rank = {90 * kGiB, 96 * kGiB};  // the largest rank decides
  EXPECT_DOUBLE_EQ(FitScale(48 * kGiB + (256 << 20), p), 0.5);
  EXPECT_EQ(FitScale(100 << 20, p), 0.0);
}

TEST(ScalePlan, BytesScaleTokensAndKnobsStay) {
  Plan p = Founding();
  p.context_length = 32768;
  p.logged_free_after["weights"] = 20 * kGiB;
  const Plan s = ScalePlan(p, 0.5);
  EXPECT_NEAR(double(s.free_at_init_bytes), p.free_at_init_bytes / 2.0, 1);
  EXPECT_NEAR(double(s.weights_bytes), p.weights_bytes / 2.0, 1);
  EXPECT_NEAR(double(s.card_total_bytes), p.card_total_bytes / 2.0, 1);
  EXPECT_NEAR(double(s.kv_bytes_per_token), p.kv_bytes_per_token / 2.0, 1);  // tokens = pool / cell: unchanged
  EXPECT_EQ(s.logged_free_after.at("weights"), 10 * kGiB);
  EXPECT_EQ(s.custom_allreduce_max_bytes, p.custom_allreduce_max_bytes);  // our own buffer, real size
  EXPECT_EQ(s.context_length, 32768);
  EXPECT_EQ(s.mem_fraction_static, p.mem_fraction_static);
  EXPECT_EQ(s.cuda_graph_bs, p.cuda_graph_bs);
  EXPECT_NE(s.sources.at("scale").find("0.50"), std::string::npos);
}

// The founding case (94 GiB free at init) on an 80 GiB card: without the flag
// the ballast cannot emulate it and says which factor would; with it, the same
// failure at the same step, the shortfall times the factor.
TEST(ScaledReplay, FoundingCaseOnAnH100SizedCard) {
  const Plan plan = Founding();
  ReproReport off = OnCard(80 * kGiB, plan, false);
  EXPECT_EQ(off.verdict.outcome, "inconclusive");
  EXPECT_NE(off.original.failure.find("--scale-to-fit replays the log's figures at 0.8"), std::string::npos)
      << off.original.failure;

  ReproReport on = OnCard(80 * kGiB, plan, true);
  EXPECT_EQ(on.verdict.outcome, "reproduced") << on.verdict.reason;
  EXPECT_EQ(on.original.failed_step, kStepKvFormula);
  EXPECT_GT(on.scale, 0.8);
  EXPECT_LT(on.scale, 0.85);
  EXPECT_NEAR(on.original.kv.rest_bytes / double(kGiB), -25.3 * on.scale, 0.1);
  EXPECT_NEAR(on.original.kv.min_viable, 0.77, 0.005);  // the floor does not move with the scale
  EXPECT_NE(on.verdict.reason.find("figures at 0.8"), std::string::npos) << on.verdict.reason;
  bool noted = false;
  for (const auto& n : on.notes) noted |= n.find("scaled replay") != std::string::npos;
  EXPECT_TRUE(noted);
  EXPECT_EQ(ExitCodeOf(on.verdict), ExitCodeOf(OnCard(143156ll << 20, plan, false).verdict));
}

// The fix check judges tokens, which the scale keeps: the floor 0.77 still
// leaves less than one 32k request, 0.80 still holds one, with the tokens of the
// full-size replay within a block or two.
TEST(ScaledReplay, FixCheckKeepsItsTokens) {
  Plan plan = Founding();
  plan.context_length = 32768;
  EXPECT_EQ(OnCard(80 * kGiB, plan, true).verdict.fix_outcome, "fails");
  plan.fix["mem_fraction_static"] = 0.80;
  ReproReport small = OnCard(80 * kGiB, plan, true);
  ReproReport full = OnCard(143156ll << 20, plan, false);
  ASSERT_TRUE(small.fix && full.fix);
  EXPECT_EQ(small.verdict.fix_outcome, "passes") << small.verdict.fix_reason;
  EXPECT_NEAR(double(small.fix->kv.tokens), double(full.fix->kv.tokens), 0.02 * full.fix->kv.tokens);
}

// A card too small for a meaningful factor stays inconclusive, with no hint.
TEST(ScaledReplay, RefusesAFactorBelowTheMinimum) {
  ReproReport r = OnCard(16 * kGiB, Founding(), true);
  EXPECT_EQ(r.verdict.outcome, "inconclusive");
  EXPECT_EQ(r.scale, 1.0);
  EXPECT_EQ(r.original.failure.find("--scale-to-fit"), std::string::npos) << r.original.failure;
}

// CUDA graphs are this GPU's size: a scaled run that stops there proves nothing.
TEST(ScaledVerdict, GraphStepIsInconclusive) {
  Plan p = Founding();
  p.failed_step = kStepGraphs;
  ReproReport rep;
  rep.scale = 0.6;
  rep.original.failed_step = kStepGraphs;
  rep.verdict = Judge(p, rep.original, nullptr);
  ASSERT_EQ(rep.verdict.outcome, "reproduced");
  ScaledVerdict(p, rep);
  EXPECT_EQ(rep.verdict.outcome, "inconclusive");
  EXPECT_NE(rep.verdict.reason.find("CUDA graphs are not scaled"), std::string::npos) << rep.verdict.reason;
}

}  // namespace
}  // namespace tpt::repro
