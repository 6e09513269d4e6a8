// repro_plan_test.cc: plans from JSON (bare and analyze's Analysis), overrides,
// validation messages, and the size/list parsers.
#include "repro/repro_plan.h"

#include <gtest/gtest.h>

#include <fstream>

namespace tpt::repro {
namespace {

const std::string kSamples = std::string(TPT_SOURCE_DIR) + "/samples/repro/";

TEST(PlanFromJson, ReadsTheFoundingCasePlan) {
  auto p = LoadPlanFile(kSamples + "sglang_tp8_rtxpro6000.json");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->framework, "sglang");
  EXPECT_EQ(p->tp, 8);
  EXPECT_EQ(p->free_at_init_bytes, 94 * kGiB);
  EXPECT_NEAR(double(p->weights_bytes), 72.3 * double(kGiB), 1.0);
  EXPECT_DOUBLE_EQ(p->mem_fraction_static, 0.5);
  EXPECT_EQ(p->cuda_graph_bs.size(), 23u);
  EXPECT_EQ(p->failed_step, kStepKvFormula);
  EXPECT_EQ(p->logged_free_after.at(kStepWeights), int64_t(21.7 * double(kGiB) + 0.5));
  EXPECT_DOUBLE_EQ(p->fix.at("mem_fraction_static"), 0.77);
  EXPECT_TRUE(ValidatePlan(*p).ok());
}

TEST(PlanFromJson, CompletesTheDiagnosisPlanFromTheAnalysis) {
  auto p = LoadPlanFile(kSamples + "analysis_kv_no_room.json");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  // The consequence with an empty plan is skipped for the cause.
  EXPECT_EQ(p->root_cause, "kv_pool_no_room");
  EXPECT_EQ(p->failed_step, kStepKvFormula);  // from the root cause
  EXPECT_EQ(p->tp, 4);                        // from run
  EXPECT_DOUBLE_EQ(p->mem_fraction_static, 0.4);  // from run.config, given as text
  ASSERT_EQ(p->free_at_init_per_rank.size(), 4u);  // from the ledger
  EXPECT_EQ(p->free_at_init_per_rank[1], 83000000000);
  EXPECT_EQ(Weights(*p, 2), 40000000000);
  EXPECT_EQ(p->card_total_bytes, 85031714816);
  EXPECT_DOUBLE_EQ(p->fix.at("mem_fraction_static"), 0.55);  // from the remedy
  EXPECT_NE(p->failure_message.find("Not enough memory"), std::string::npos);
  EXPECT_TRUE(ValidatePlan(*p).ok()) << ValidatePlan(*p).ToString();
}

// A log that died before the KV pool (the founding case) has no KV size: the
// plan assumes one and says so, and a flag replaces the assumption.
TEST(PlanFromJson, AssumesAKvCellWhenTheLogHasNone) {
  auto p = PlanFromJson(nlohmann::json::parse(
                            R"({"framework":"sglang","tp":8,"card_total_bytes":"95GiB","free_at_init_bytes":"94GiB",
                                "weights_bytes":"72.3GiB","mem_fraction_static":0.5})"),
                        "nokv.json");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_TRUE(p->kv_bytes_per_token_assumed);
  EXPECT_EQ(p->kv_bytes_per_token, kAssumedKvBytesPerToken);
  EXPECT_TRUE(ValidatePlan(*p).ok()) << ValidatePlan(*p).ToString();
  Overrides o;
  o.kv_bytes_per_token = 70272;
  ASSERT_TRUE(ApplyOverrides(o, &*p).ok());
  EXPECT_FALSE(p->kv_bytes_per_token_assumed);
  EXPECT_EQ(p->kv_bytes_per_token, 70272);
}

TEST(PlanFromJson, RejectsBadInputWithTheFieldNamed) {
  auto bad_type = PlanFromJson(nlohmann::json::parse(R"({"framework":"sglang","tp":"eight"})"), "x.json");
  ASSERT_FALSE(bad_type.ok());
  EXPECT_NE(bad_type.status().message().find("x.json: $.tp"), std::string::npos);
  auto bad_size = PlanFromJson(nlohmann::json::parse(R"({"weights_bytes":"72 parsecs"})"), "y.json");
  ASSERT_FALSE(bad_size.ok());
  EXPECT_NE(bad_size.status().message().find("$.weights_bytes"), std::string::npos);
  auto healthy = PlanFromJson(nlohmann::json::parse(R"({"root_cause":"none","diagnoses":[]})"), "h.json");
  ASSERT_FALSE(healthy.ok());
  EXPECT_NE(healthy.status().message().find("no diagnosis"), std::string::npos);
  EXPECT_EQ(LoadPlanFile("/nonexistent/plan.json").status().code(), StatusCode::kNotFound);
  const std::string garbage = ::testing::TempDir() + "/garbage.json";
  std::ofstream(garbage) << "\x01\x02not json{";
  auto g = LoadPlanFile(garbage);
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.status().message().find("not valid JSON"), std::string::npos);
}

TEST(ValidatePlan, SaysWhichFlagSuppliesAMissingFigure) {
  Plan p;
  p.framework = "sglang";
  p.tp = 2;
  p.card_total_bytes = 80 * kGiB;
  p.free_at_init_bytes = 79 * kGiB;
  p.weights_bytes = 30 * kGiB;
  p.mem_fraction_static = 0.9;
  Status s = ValidatePlan(p);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("--kv-bytes-per-token"), std::string::npos);
  p.kv_bytes_per_token = 1 << 17;
  EXPECT_TRUE(ValidatePlan(p).ok());
  p.free_at_init_bytes = 81 * kGiB;
  EXPECT_NE(ValidatePlan(p).message().find("exceeds the card's total"), std::string::npos);
  p.free_at_init_bytes = 79 * kGiB;
  p.framework = "torch";  // no KV formula in memory/ (tgi, lmdeploy and trtllm have theirs)
  EXPECT_NE(ValidatePlan(p).message().find("--framework"), std::string::npos);
}

// plans with an unknown fix key, a fractional TP, an unknown
// failed step or zero KV bytes were accepted (the fix run repeated the
// failing configuration and the report said the fix fails).
TEST(ValidatePlan, RefusesWhatItCannotReplayFaithfully) {
  Plan p;
  p.framework = "sglang";
  p.tp = 2;
  p.card_total_bytes = 80 * kGiB;
  p.free_at_init_bytes = 79 * kGiB;
  p.weights_bytes = 30 * kGiB;
  p.mem_fraction_static = 0.9;
  p.kv_bytes_per_token = 1 << 17;
  p.failed_step = kStepKvFormula;
  ASSERT_TRUE(ValidatePlan(p).ok());
  Plan q = p;
  q.fix["mem_fraction_statc"] = 0.77;
  EXPECT_NE(ValidatePlan(q).message().find("fix key 'mem_fraction_statc'"), std::string::npos);
  q = p;
  q.fix["tp"] = 2.5;
  EXPECT_NE(ValidatePlan(q).message().find("fix tp must be a whole number"), std::string::npos);
  q = p;
  q.failed_step = "; rm -rf /";
  EXPECT_NE(ValidatePlan(q).message().find("is not a start-up step"), std::string::npos);
  auto frac = PlanFromJson(nlohmann::json::parse(R"({"framework":"sglang","tp":2.5})"), "f.json");
  ASSERT_FALSE(frac.ok());
  EXPECT_NE(frac.status().message().find("$.tp must be a whole number"), std::string::npos);
  auto text_frac = PlanFromJson(nlohmann::json::parse(R"({"framework":"sglang","tp":"2.5"})"), "f.json");
  EXPECT_FALSE(text_frac.ok());
  auto zero_kv = PlanFromJson(nlohmann::json::parse(R"({"framework":"sglang","kv_bytes_per_token":0})"), "z.json");
  ASSERT_FALSE(zero_kv.ok());
  EXPECT_NE(zero_kv.status().message().find("kv_bytes_per_token must be > 0"), std::string::npos);
  EXPECT_TRUE(PlanFromJson(nlohmann::json::parse(R"({"framework":"sglang","tp":"8"})"), "s.json").ok());
}

TEST(ApplyOverrides, FlagsWinAndFixValueFollowsTheFramework) {
  auto p = LoadPlanFile(kSamples + "sglang_tp8_rtxpro6000.json");
  ASSERT_TRUE(p.ok());
  Overrides o;
  o.mem_fraction_static = 0.55;
  o.card_total_bytes = 96 * kGiB;
  o.custom_allreduce = false;
  o.fix_value = 0.8;
  ASSERT_TRUE(ApplyOverrides(o, &*p).ok());
  EXPECT_DOUBLE_EQ(p->mem_fraction_static, 0.55);
  EXPECT_EQ(p->card_total_bytes, 96 * kGiB);
  EXPECT_FALSE(p->custom_allreduce);
  EXPECT_DOUBLE_EQ(p->fix.at("mem_fraction_static"), 0.8);
  Plan fixed = WithFix(*p);
  EXPECT_DOUBLE_EQ(fixed.mem_fraction_static, 0.8);
  EXPECT_TRUE(fixed.fix.empty());
}

TEST(Parsers, SizesAndLists) {
  EXPECT_EQ(*ParseSize("96GiB"), 96 * kGiB);
  EXPECT_EQ(*ParseSize("512MiB"), 512 * kMiB);
  EXPECT_FALSE(ParseSize("lots").ok());
  EXPECT_EQ(*ParseIntList("1,2,4,8"), (std::vector<int>{1, 2, 4, 8}));
  EXPECT_EQ(*ParseIntList("1-3,16"), (std::vector<int>{1, 2, 3, 16}));
  EXPECT_FALSE(ParseIntList("1,,2").ok());
  EXPECT_FALSE(ParseIntList("4-1").ok());
  EXPECT_FALSE(ParseIntList("x").ok());
  EXPECT_EQ(FormatBytes(-25 * kGiB - kGiB / 2), "-25.50 GiB");
}

}  // namespace
}  // namespace tpt::repro

namespace tpt::repro {
namespace {

// The keys rules/repro_params.cc (BuildRepro) writes into Diagnosis::repro.
TEST(PlanFromJson, ReadsTheRulesEnginesKeyNames) {
  auto p = PlanFromJson(nlohmann::json::parse(R"({
      "scenario": "kv_pool_no_room", "framework": "sglang", "version": "0.4.6", "tp": 8,
      "gpu": "NVIDIA RTX PRO 6000 Blackwell Server Edition",
      "free_at_init_bytes": 100931731456, "avail_after_weights_bytes": 23300197580.8,
      "mem_fraction_static": 0.5, "kv_bytes_per_token": 70272,
      "custom_all_reduce": false, "cuda_graph_max_bs": 40})"),
                        "engine.json");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->root_cause, "kv_pool_no_room");
  EXPECT_EQ(p->failed_step, kStepKvFormula);
  // Weights = free at init - available after weights (94 - 21.7 GiB).
  EXPECT_NEAR(double(p->weights_bytes) / kGiB, 72.3, 0.001);
  EXPECT_EQ(p->logged_free_after.at(kStepWeights), 23300197581);
  EXPECT_FALSE(p->custom_allreduce);
  EXPECT_EQ(p->cuda_graph_bs, (std::vector<int>{1, 2, 4, 8, 16, 24, 32, 40}));
  // No total in the log: the GPU catalog's figure for the card.
  EXPECT_NEAR(double(p->card_total_bytes) / kGiB, 94.97, 0.01);
  EXPECT_TRUE(ValidatePlan(*p).ok()) << ValidatePlan(*p).ToString();
}

}  // namespace
}  // namespace tpt::repro
