// run_facts_test.cc: events of one run -> RunFacts.
#include "rules/diff/run_facts.h"

#include <gtest/gtest.h>

#include "rules/diff/test_events.h"

namespace tpt::diff {
namespace {

using testing::Ev;
using testing::Gib;
using json = nlohmann::json;

TEST(NormalizeValueTest, PythonReprBecomesTypedJson) {
  EXPECT_EQ(NormalizeValue("True"), json(true));
  EXPECT_EQ(NormalizeValue("False"), json(false));
  EXPECT_EQ(NormalizeValue("None"), json(nullptr));
  EXPECT_EQ(NormalizeValue("4"), json(4));
  EXPECT_EQ(NormalizeValue(" 0.85 "), json(0.85));
  EXPECT_EQ(NormalizeValue("'/models/Llama'"), json("/models/Llama"));
  EXPECT_EQ(NormalizeValue(json(0.5)), json(0.5));
}

TEST(CollectFactsTest, ConfigFromServerArgsEnvAndVersions) {
  std::vector<Event> ev = {
      Ev("framework_version", -1, {{"framework", "sglang"}, {"version", "0.4.6.post1"}}),
      Ev("server_args", -1,
         {{"framework", "sglang"},
          {"args", {{"tp_size", "4"}, {"mem_fraction_static", "0.88"}, {"model_path", "'/m/Llama'"},
                    {"disable_custom_all_reduce", "True"}}}}),
      Ev("env_var", -1, {{"name", "NCCL_P2P_DISABLE"}, {"value", "1"}}),
      Ev("custom_ar_disabled", 0, {{"reason", "pcie_multi_gpu"}}),
  };
  RunFacts f = CollectFacts(ev);
  EXPECT_EQ(f.framework, "sglang");
  EXPECT_EQ(f.version, "0.4.6.post1");
  EXPECT_EQ(f.config.at("tp"), json(4));          // alias, not flag.tp_size
  EXPECT_FALSE(f.config.count("flag.tp_size"));
  EXPECT_EQ(f.config.at("model"), json("/m/Llama"));
  EXPECT_EQ(*f.Number("flag.mem_fraction_static"), 0.88);
  EXPECT_EQ(*f.Bool("flag.disable_custom_all_reduce"), true);
  EXPECT_EQ(f.config.at("env.NCCL_P2P_DISABLE"), json(1));
  EXPECT_EQ(f.config.at("custom_all_reduce"), json("off (pcie_multi_gpu)"));
}

TEST(CollectFactsTest, PerRankLedgerIsDerivedFromWhatSglangPrints) {
  std::vector<Event> ev;
  testing::SglangRankStartup(ev, 0, 0.57, 78.5, 60.0);
  testing::SglangRankStartup(ev, 1, 0.57, 62.5, 60.0);
  ev.push_back(Ev("kv_pool_alloc", 0, {{"tokens", 1000}, {"k_bytes", 5e7}, {"v_bytes", 5e7}}));
  RunFacts f = CollectFacts(ev);
  ASSERT_EQ(f.ranks.size(), 2u);
  const RankMemory& r1 = f.ranks.at(1);
  EXPECT_NEAR(*r1.free_at_init, Gib(62.5 + 0.57), 1);  // Load weight begin + dist-init usage
  EXPECT_NEAR(*r1.free_after_weights, Gib(2.5), 1);
  EXPECT_NEAR(*r1.weights_usage, Gib(60.0), 1);
  EXPECT_NEAR(*f.ranks.at(0).kv_pool, 1e8, 1);
  EXPECT_NEAR(*r1.left, Gib(2.5), 1);  // last free memory it printed
  EXPECT_NEAR(*f.MinOverRanks(&RankMemory::free_after_dist_init), Gib(62.5), 1);
  EXPECT_EQ(f.LastPhase(), "kv_pool");
  EXPECT_FALSE(f.failure.has_value());
}

TEST(CollectFactsTest, NothingIsLeftForARunThatDiedBeforeItsPool) {
  std::vector<Event> ev;
  testing::SglangRankStartup(ev, 0, 0.5, 40, 20);
  ev.push_back(Ev("not_enough_memory", 0));
  RunFacts f = CollectFacts(ev);
  EXPECT_FALSE(f.ranks.at(0).left.has_value());
  EXPECT_NEAR(*f.ranks.at(0).free_after_weights, Gib(20), 1);
}

TEST(CollectFactsTest, FailurePhaseIsThePhaseInProgress) {
  std::vector<Event> ev;
  testing::SglangRankStartup(ev, 0, 0.5, 40, 20);
  ev.push_back(Ev("graph_capture_begin", 0, {{"avail_bytes", Gib(3)}}));
  Event oom = Ev("cuda_oom", 0, {{"tried_bytes", Gib(1)}, {"free_bytes", Gib(0.2)}});
  ev.push_back(oom);
  ev.push_back(Ev("startup_complete", 1));  // after the failure: not counted
  RunFacts f = CollectFacts(ev);
  ASSERT_TRUE(f.failure.has_value());
  EXPECT_EQ(f.failure->kind, "cuda_oom");
  EXPECT_EQ(f.failure->phase, "graphs");
  EXPECT_EQ(f.LastPhase(), "kv_pool");
}

TEST(CollectFactsTest, SpecificErrorWinsOverAnEarlierGenericException) {
  std::vector<Event> ev;
  testing::SglangRankStartup(ev, 0, 0.5, 40, 20);
  ev.push_back(Ev("exception", 0, {{"type", "RuntimeError"}}));
  Event sig = Ev("sigquit", -1);
  sig.consequence = true;
  ev.push_back(sig);
  ev.push_back(Ev("not_enough_memory", 0));
  RunFacts f = CollectFacts(ev);
  ASSERT_TRUE(f.failure.has_value());
  EXPECT_EQ(f.failure->kind, "not_enough_memory");
  EXPECT_EQ(f.failure->phase, "kv_pool");
}

TEST(CollectFactsTest, DraftWorkerRepeatDoesNotOverwriteTheTarget) {
  std::vector<Event> ev;
  testing::SglangRankStartup(ev, 0, 0.5, 70, 30);
  testing::SglangRankStartup(ev, 0, 0.0, 38, 2);  // the draft model loads afterwards
  ev.push_back(Ev("kv_pool_alloc", 0, {{"tokens", 10}}));
  RunFacts f = CollectFacts(ev);
  EXPECT_NEAR(*f.ranks.at(0).weights_usage, Gib(30), 1);
  EXPECT_NEAR(*f.ranks.at(0).left, Gib(36), 1);
}

TEST(CollectFactsTest, EmptyRunHasNoFacts) {
  RunFacts f = CollectFacts({});
  EXPECT_TRUE(f.framework.empty());
  EXPECT_TRUE(f.ranks.empty());
  EXPECT_EQ(f.LastPhase(), "");
  EXPECT_FALSE(f.failure.has_value());
}

}  // namespace
}  // namespace tpt::diff
