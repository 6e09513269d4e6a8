// plan_figures_test.cc: a memory plan's figures the log lacks come from the
// catalogue, a dump or the server's default, else are assumed and asked for.
#include "repro/plan_figures.h"

#include <gtest/gtest.h>

#include "repro/runner.h"

namespace tpt::repro {
namespace {

using nlohmann::json;

json Analysis(const std::string& framework, const std::string& cause, json run_extra, json repro) {
  json run = {{"framework", framework}, {"tp", 2}};
  run.update(run_extra);
  return {{"root_cause", cause},
          {"run", run},
          {"diagnoses", json::array({{{"id", cause}, {"repro", repro},
                                      {"evidence", json::array({{{"text", "the server's error line"}}})}}})}};
}

bool StartsWith(const std::string& s, const std::string& p) { return s.rfind(p, 0) == 0; }

TEST(PlanFigures, TheCardFromTheCatalogueWhenTheLogNamesIt) {
  auto p = PlanFromJson(Analysis("vllm", "kv_pool_no_room", {{"gpu", "H100"}},
                                 {{"free_at_init_bytes", 78ll << 30}, {"weights_bytes_per_rank", 60ll << 30}}),
                        "t");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_GT(p->card_total_bytes, 79ll << 30);
  EXPECT_TRUE(StartsWith(p->sources["card_total_bytes"], kFromCatalog)) << p->sources["card_total_bytes"];
  EXPECT_EQ(p->sources["free_at_init_bytes"], kFromLog);
  // vLLM's default utilisation, named as such.
  EXPECT_DOUBLE_EQ(p->gpu_memory_utilization, 0.9);
  EXPECT_TRUE(StartsWith(p->sources["gpu_memory_utilization"], kFromDefault));
  EXPECT_TRUE(p->asked.empty());
  EXPECT_TRUE(ValidatePlan(*p).ok());
}

// issue #31: a card the catalog does not know ("NVIDIA RTX A4000" once took the A40's
// 48 GB) is said to be unknown, by name, and its total is asked for.
TEST(PlanFigures, ACardTheCatalogueLacksIsNamedAndAskedFor) {
  auto p = PlanFromJson(Analysis("vllm", "kv_pool_no_room", {{"gpu", "NVIDIA RTX A1000"}},
                                 {{"weights_bytes_per_rank", 6ll << 30}}),
                        "t");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_TRUE(StartsWith(p->sources["card_total_bytes"], kFromAssumed)) << p->sources["card_total_bytes"];
  EXPECT_NE(p->sources["card_total_bytes"].find("'NVIDIA RTX A1000' is not in the GPU catalog"), std::string::npos)
      << p->sources["card_total_bytes"];
  ASSERT_FALSE(p->asked.empty());
  EXPECT_TRUE(StartsWith(p->asked[0], "--target-gpu-mem ")) << p->asked[0];
  EXPECT_NE(p->asked[0].find("NVIDIA RTX A1000"), std::string::npos) << p->asked[0];
}

TEST(PlanFigures, ADumpsTotalBeforeTheCatalogue) {
  auto p = PlanFromJson(Analysis("vllm", "kv_pool_no_room",
                                 {{"gpu", "H100"}, {"gpu_memory_bytes", 81559ll << 20}, {"environment", {"smi.txt"}}},
                                 {{"free_at_init_bytes", 78ll << 30}, {"weights_bytes_per_rank", 60ll << 30}}),
                        "t");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->card_total_bytes, 81559ll << 20);
  EXPECT_TRUE(StartsWith(p->sources["card_total_bytes"], kFromEnvDump));
}

TEST(PlanFigures, SglangsDefaultFractionForTheLoggedVersion) {
  auto p = PlanFromJson(Analysis("sglang", "kv_pool_no_room", {{"version", "0.4.3"}, {"tp", 8}},
                                 {{"free_at_init_bytes", 78ll << 30}, {"weights_bytes_per_rank", 70ll << 30}}),
                        "t");
  ASSERT_TRUE(p.ok());
  EXPECT_DOUBLE_EQ(p->mem_fraction_static, 0.81);  // tp>=8 from v0.4.2
  EXPECT_TRUE(StartsWith(p->sources["mem_fraction_static"], kFromDefault)) << p->sources["mem_fraction_static"];
}

TEST(PlanFigures, TheErrorLinesFractionBeforeAnyDefault) {
  json a = Analysis("sglang", "kv_pool_no_room", json::object(),
                    {{"free_at_init_bytes", 7ll << 30}, {"weights_bytes_per_rank", 6ll << 30}});
  a["diagnoses"][0]["evidence"][0]["text"] =
      "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static. Current value: "
      "self.server_args.mem_fraction_static=0.2";
  auto p = PlanFromJson(a, "t");
  ASSERT_TRUE(p.ok());
  EXPECT_DOUBLE_EQ(p->mem_fraction_static, 0.2);
  EXPECT_TRUE(StartsWith(p->sources["mem_fraction_static"], kFromLog));
}

TEST(PlanFigures, NothingKnownIsAssumedOnceAndAskedByFlag) {
  auto p = PlanFromJson(Analysis("vllm", "kv_pool_no_room", json::object(), json::object()), "t");
  ASSERT_TRUE(p.ok());
  EXPECT_TRUE(ValidatePlan(*p).ok()) << ValidatePlan(*p).ToString();
  auto has = [&](const std::string& flag) {
    for (const auto& a : p->asked) {
      if (StartsWith(a, flag + " ")) return true;
    }
    return false;
  };
  EXPECT_TRUE(has("--target-gpu-mem"));
  EXPECT_TRUE(has("--free-at-init"));
  EXPECT_TRUE(has("--weights"));
  EXPECT_EQ(p->asked.size(), 3u);
  // A flag replaces its figure and its question; what was derived from the old figure follows.
  Overrides o;
  o.card_total_bytes = 40ll << 30;
  ASSERT_TRUE(ApplyOverrides(o, &*p).ok());
  EXPECT_FALSE(has("--target-gpu-mem"));
  EXPECT_EQ(p->sources["card_total_bytes"], "flag: --target-gpu-mem");
  EXPECT_EQ(p->free_at_init_bytes, (40ll << 30) - kContextAndNcclBytes);
  EXPECT_TRUE(has("--free-at-init"));
}

TEST(PlanFigures, AReplayThatPassesOnAssumedFiguresIsInconclusive) {
  // Nothing but the framework: the replay runs on assumed figures.
  auto p = PlanFromJson(Analysis("vllm", "kv_pool_no_room", {{"gpu", "H100"}}, json::object()), "t");
  ASSERT_TRUE(p.ok());
  ASSERT_FALSE(p->asked.empty());
  p->gpu_memory_utilization = 0.95;
  p->fix.clear();
  auto be = MakeSimulatedBackend(SimulatedDevice{});
  RankLayout l;
  l.world = 2;
  l.colocated = true;
  ReproReport r = Reproduce(*p, *be, l, {});
  if (r.verdict.outcome != "reproduced") {
    EXPECT_EQ(r.verdict.outcome, "inconclusive");
    EXPECT_NE(r.verdict.reason.find("--weights"), std::string::npos) << r.verdict.reason;
  } else {
    EXPECT_NE(r.verdict.reason.find("assumed"), std::string::npos);
  }
}

TEST(PlanFigures, AWeightsOomFromItsOwnLineAnyServer) {
  json a = Analysis("lmdeploy", "weights_oom", json::object(), json::object());
  a["diagnoses"][0]["figures"] = {{"total_gib", 16.0}, {"free_gib", 0.25}, {"tried_gib", 0.5}};
  auto p = PlanFromJson(a, "t");
  ASSERT_TRUE(p.ok());
  EXPECT_TRUE(StartsWith(p->sources["weights_bytes"], kFromLog)) << p->sources["weights_bytes"];
  EXPECT_EQ(p->card_total_bytes, 16ll << 30);
  ASSERT_TRUE(ValidatePlan(*p).ok()) << ValidatePlan(*p).ToString();  // no KV formula needed to die in the weights
  auto be = MakeSimulatedBackend(SimulatedDevice{});
  RankLayout l;
  l.world = 2;
  l.colocated = true;
  ReproReport r = Reproduce(*p, *be, l, {});
  EXPECT_EQ(r.verdict.outcome, "reproduced") << r.verdict.reason;
  EXPECT_EQ(r.original.failed_step, kStepWeights);
  // Without the line's figures the weights are assumed, and the verdict does not count on them.
  auto q = PlanFromJson(Analysis("lmdeploy", "weights_oom", json::object(), json::object()), "t");
  ASSERT_TRUE(q.ok());
  ReproReport r2 = Reproduce(*q, *be, l, {});
  EXPECT_EQ(r2.verdict.outcome, "inconclusive");
  EXPECT_NE(r2.verdict.reason.find("--weights"), std::string::npos);
  // A server without a KV formula is not replayed past its weights.
  auto k = PlanFromJson(Analysis("torch", "kv_pool_no_room", json::object(), json::object()), "t");
  ASSERT_TRUE(k.ok());
  EXPECT_FALSE(ValidatePlan(*k).ok());
}

}  // namespace
}  // namespace tpt::repro
