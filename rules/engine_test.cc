// engine_test.cc: rules over hand-made events: figures, ranking, none/unknown.
#include "rules/engine.h"
#include "rules/run_index.h"

#include <cmath>

#include <gtest/gtest.h>

#include "rules/test_rules.h"

namespace tpt {
namespace {

constexpr double kGiB = 1073741824.0;

Event Ev(const std::string& kind, int rank, nlohmann::json fields = nlohmann::json::object(), bool consequence = false) {
  static uint64_t line = 0;
  Event e;
  e.kind = kind;
  e.family = "sglang";
  e.rank = rank;
  e.file = "run.log";
  e.line = ++line;
  e.SetFields(std::move(fields));
  e.consequence = consequence;
  e.text = kind + " line";
  return e;
}

const RuleSet& Builtin() { return testing::BuiltinRules(); }

// The founding case: 8 ranks, 94 GiB free at init, 21.7 GiB after weights, f.
std::vector<Event> Founding(double f) {
  std::vector<Event> ev;
  ev.push_back(Ev("server_args", -1, {{"framework", "sglang"}, {"tp_size", 8}, {"mem_fraction_static", f}}));
  ev.push_back(Ev("env_var", -1, {{"name", "SGLANG_FORCE_CUSTOM_AR_PCIE"}, {"value", "1"}}));
  for (int r = 0; r < 8; ++r) ev.push_back(Ev("weights_load_begin", r, {{"avail_bytes", 94.0 * kGiB}}));
  for (int r = 0; r < 8; ++r)
    ev.push_back(Ev("weights_load_end", r, {{"avail_bytes", 21.7 * kGiB}, {"weights_bytes", 72.3 * kGiB}}));
  ev.push_back(Ev("sigquit", -1, {}, /*consequence=*/true));  // printed before the tracebacks
  for (int r = 0; r < 8; ++r) ev.push_back(Ev("not_enough_memory", r));
  return ev;
}

// A trimmed paste: one 'Load weight end' with its mem usage and SGLang's
// message cut before the floor it names. SGLang logs mem usage = before - after
// the load (ModelRunner.load_model), so free at init = 12.25 + 125.65 GiB and the
// floor 1 - 12.25 / 137.9 = 0.9112 -> 0.92, the Fix instead of no remedy.
TEST(EngineTest, FloorFromOneLoadWeightEndWithItsUsage) {
  std::vector<Event> ev;
  ev.push_back(Ev("weights_load_end", -1, {{"avail_bytes", 12.25 * kGiB}, {"weights_bytes", 125.65 * kGiB}}));
  ev.push_back(Ev("min_viable_fraction_error", -1, {{"current_fraction", 0.88}}));
  Analysis a = Analyze(ev, Builtin());
  ASSERT_EQ(a.root_cause, "kv_pool_no_room") << a.verdict;
  const Diagnosis& d = a.diagnoses.at(0);
  EXPECT_NEAR(d.figures["free_at_init_gib"].get<double>(), 137.9, 1e-6);
  EXPECT_NEAR(d.figures["min_viable_mem_fraction_static"].get<double>(), 0.92, 1e-9);
  ASSERT_FALSE(d.remedy.empty()) << a.verdict;
  EXPECT_EQ(d.remedy[0].flag, "--mem-fraction-static");
  EXPECT_EQ(d.remedy[0].value, "0.92");
  // Two ranks' ends without their begins: whose usage goes with whose avail is
  // not known, so no floor is made up from them.
  ev.insert(ev.begin() + 1, Ev("weights_load_end", 1, {{"avail_bytes", 11.0 * kGiB}, {"weights_bytes", 125.65 * kGiB}}));
  Analysis b = Analyze(ev, Builtin());
  ASSERT_EQ(b.root_cause, "kv_pool_no_room") << b.verdict;
  EXPECT_TRUE(b.diagnoses.at(0).remedy.empty()) << b.verdict;
}

TEST(EngineTest, FoundingCaseFigures) {
  Analysis a = Analyze(Founding(0.50), Builtin());
  ASSERT_EQ(a.root_cause, "kv_pool_no_room") << a.verdict;
  const Diagnosis& d = a.diagnoses.at(0);
  EXPECT_NEAR(d.figures["rest_gib"].get<double>(), -25.3, 1e-3);
  EXPECT_NEAR(d.figures["reserved_gib"].get<double>(), 47.0, 1e-3);
  EXPECT_NEAR(d.figures["free_at_init_gib"].get<double>(), 94.0, 1e-3);
  EXPECT_NEAR(d.figures["avail_after_weights_gib"].get<double>(), 21.7, 1e-3);
  EXPECT_NEAR(d.figures["mem_fraction_static"].get<double>(), 0.50, 1e-9);
  EXPECT_NEAR(d.figures["min_viable_mem_fraction_static"].get<double>(), 0.77, 1e-9);
  ASSERT_FALSE(d.remedy.empty());
  // The Fix is the value that serves: SGLang's own headroom (sglang-source.md
  // 1.4: 512 MB + 1.5 x 8192 + 2 x 512 + 8/8 x 1024 = 14,848 MB = 14.5 GiB) out of
  // 94 GiB free: 1 - 14.5 / 94 = 0.846, rounded down 0.84; the floor 0.77 second.
  EXPECT_EQ(d.remedy[0].flag, "--mem-fraction-static");
  EXPECT_EQ(d.remedy[0].value, "0.84");
  EXPECT_EQ(d.remedy[0].direction, "increase");
  EXPECT_NEAR(d.figures["kv_gib_per_step"].get<double>(), 0.94, 1e-9);
  EXPECT_NEAR(d.figures["kv_pool_gib_at_serving"].get<double>(), 21.7 - 94.0 * 0.16, 1e-6);
  ASSERT_GE(d.remedy.size(), 2u);
  EXPECT_EQ(d.remedy[1].value, "0.77");
  EXPECT_NE(d.remedy[1].why.find("the floor"), std::string::npos);
  bool car = false;
  for (const auto& r : d.ruled_out)
    if (r.id == "custom_allreduce_buffers") {
      car = true;
      EXPECT_NE(r.reason.find("24 MiB"), std::string::npos) << r.reason;
      EXPECT_NE(r.reason.find("25.3 GiB"), std::string::npos) << r.reason;
    }
  EXPECT_TRUE(car);
  EXPECT_EQ(ExitCodeFor(a), kExitDiagnosed);
  // The launcher's sigquit came first in the stream but never outranks the ranks' own error.
  EXPECT_EQ(d.evidence.at(0).rank, 0);
}

TEST(EngineTest, FoundingCaseVariant055) {
  Analysis a = Analyze(Founding(0.55), Builtin());
  ASSERT_EQ(a.root_cause, "kv_pool_no_room");
  EXPECT_NEAR(a.diagnoses[0].figures["rest_gib"].get<double>(), -20.6, 1e-3);
  EXPECT_NEAR(a.diagnoses[0].figures["reserved_gib"].get<double>(), 42.3, 1e-3);
}

TEST(EngineTest, OomOnOneRankOutranksLaterWatchdogTimeouts) {
  std::vector<Event> ev;
  ev.push_back(Ev("server_args", -1, {{"framework", "sglang"}, {"tp_size", 8}}));
  for (int r = 0; r < 8; ++r) ev.push_back(Ev("startup_complete", r));
  ev.push_back(Ev("cuda_oom", 3, {{"tried_bytes", 2.0 * kGiB}, {"total_bytes", 80.0 * kGiB}}));
  for (int r = 0; r < 8; ++r)
    if (r != 3) ev.push_back(Ev("watchdog_timeout", r, {{"seq", 1000}, {"op_type", "ALLREDUCE"}}));
  ev.push_back(Ev("sigquit", -1, {}, true));
  Analysis a = Analyze(ev, Builtin());
  EXPECT_EQ(a.root_cause, "runtime_oom") << a.verdict;
  EXPECT_EQ(a.diagnoses.at(0).evidence.at(0).rank, 3);
}

TEST(EngineTest, OomBeforeWeightsEndIsWeightsOom) {
  std::vector<Event> ev;
  for (int r = 0; r < 2; ++r) ev.push_back(Ev("weights_load_begin", r, {{"avail_bytes", 79.0 * kGiB}}));
  ev.push_back(Ev("cuda_oom", 1, {{"tried_bytes", 1.0 * kGiB}}));
  Analysis a = Analyze(ev, Builtin());
  EXPECT_EQ(a.root_cause, "weights_oom") << a.verdict;
}

TEST(EngineTest, OomDuringGraphCaptureIsCaptureOom) {
  std::vector<Event> ev;
  ev.push_back(Ev("weights_load_end", 0, {{"avail_bytes", 20.0 * kGiB}}));
  ev.push_back(Ev("graph_capture_begin", 0, {{"avail_bytes", 10.0 * kGiB}}));
  ev.push_back(Ev("cuda_oom", 0, {{"tried_bytes", 1.0 * kGiB}}));
  Analysis a = Analyze(ev, Builtin());
  EXPECT_EQ(a.root_cause, "cuda_graph_capture_oom") << a.verdict;
}

TEST(EngineTest, TimeoutsOnlyPointAtTheRankBehind) {
  // One rank alone at another SeqNum of the same process group: the sequences
  // no longer match (knowledge: fingerprint comparison per (PG, SeqNum)), and
  // the odd rank out is the suspect.
  std::vector<Event> ev;
  for (int r = 0; r < 4; ++r) ev.push_back(Ev("startup_complete", r));
  for (int r = 0; r < 4; ++r)
    ev.push_back(Ev("watchdog_timeout", r, {{"seq", r == 2 ? 41 : 42}, {"op_type", "ALLREDUCE"}}));
  Analysis a = Analyze(ev, Builtin());
  ASSERT_EQ(a.root_cause, "collective_desync") << a.verdict;
  EXPECT_EQ(a.diagnoses[0].rank, 2) << a.verdict;
  EXPECT_EQ(a.diagnoses[0].figures["suspect_rank"].get<double>(), 2);
  EXPECT_EQ(a.diagnoses[0].figures["min_seq"].get<double>(), 41);
  EXPECT_EQ(a.diagnoses[0].figures["max_seq"].get<double>(), 42);
  // Two ranks behind, two ahead: no single odd one out, a hang whose lowest
  // SeqNum points at the ranks behind.
  std::vector<Event> ev2;
  for (int r = 0; r < 4; ++r) ev2.push_back(Ev("startup_complete", r));
  for (int r = 0; r < 4; ++r)
    ev2.push_back(Ev("watchdog_timeout", r, {{"seq", r >= 2 ? 41 : 42}, {"op_type", "ALLREDUCE"}}));
  Analysis b = Analyze(ev2, Builtin());
  ASSERT_EQ(b.root_cause, "nccl_timeout_hang") << b.verdict;
  EXPECT_EQ(b.diagnoses[0].figures["min_seq"].get<double>(), 41);
  EXPECT_EQ(b.diagnoses[0].figures["max_seq"].get<double>(), 42);
  // The lowest-SeqNum path blames a rank behind (2 or 3), never one ahead.
  EXPECT_EQ(b.diagnoses[0].rank, 2) << b.verdict;
  EXPECT_EQ(b.diagnoses[0].figures["suspect_rank"].get<double>(), 2);
  EXPECT_NE(b.verdict.find("rank 2 is the one behind"), std::string::npos) << b.verdict;
}

// Every path of the rules that name a suspect rank (`suspect_rank`), on the
// rank each blames: a rule that points at the wrong rank sends the engineer
// to the wrong machine.
Analysis Timeouts(const std::vector<int>& seq_of_rank, int ranks_started, const std::string& op_of_odd = "") {
  std::vector<Event> ev;
  for (int r = 0; r < ranks_started; ++r) ev.push_back(Ev("startup_complete", r));
  for (size_t r = 0; r < seq_of_rank.size(); ++r) {
    if (seq_of_rank[r] < 0) continue;  // this rank logged no timeout
    nlohmann::json f = {{"op_type", "ALLREDUCE"}};
    if (seq_of_rank[r] > 0) f["seq"] = seq_of_rank[r];
    if (!op_of_odd.empty() && r == 1) f["op_type"] = op_of_odd;
    ev.push_back(Ev("watchdog_timeout", static_cast<int>(r), f));
  }
  return Analyze(ev, Builtin());
}

TEST(EngineTest, HangBlamesTheRankBehindOnEveryPath) {
  // Two ranks, one behind: the lowest SeqNum (rank 1 at 41).
  Analysis behind = Timeouts({42, 41}, 2);
  ASSERT_EQ(behind.root_cause, "nccl_timeout_hang") << behind.verdict;
  EXPECT_EQ(behind.diagnoses[0].rank, 1) << behind.verdict;
  // The same with rank 0 behind: the blame follows the SeqNum, not the order.
  Analysis behind0 = Timeouts({41, 42}, 2);
  ASSERT_EQ(behind0.root_cause, "nccl_timeout_hang") << behind0.verdict;
  EXPECT_EQ(behind0.diagnoses[0].rank, 0) << behind0.verdict;
  // A rank that logged no timeout while the others waited at one SeqNum: the
  // silent rank (rank 2).
  Analysis silent = Timeouts({42, 42, -1, 42}, 4);
  ASSERT_EQ(silent.root_cause, "nccl_timeout_hang") << silent.verdict;
  EXPECT_EQ(silent.diagnoses[0].rank, 2) << silent.verdict;
  // Every rank at the same SeqNum, none silent: nobody to blame (-1).
  Analysis same = Timeouts({42, 42, 42, 42}, 4);
  ASSERT_EQ(same.root_cause, "nccl_timeout_hang") << same.verdict;
  EXPECT_EQ(same.diagnoses[0].rank, -1) << same.verdict;
  // No SeqNum on the lines and every rank timed out: -1 as well.
  Analysis noseq = Timeouts({0, 0, 0, 0}, 4);
  ASSERT_EQ(noseq.root_cause, "nccl_timeout_hang") << noseq.verdict;
  EXPECT_EQ(noseq.diagnoses[0].rank, -1) << noseq.verdict;
}

// One rank's watchdog line and nothing from any other rank: a peer that
// stopped and ranks in different collectives at that SeqNum look the same, so
// the hang is a possibility, not a verdict; a second rank in the same
// collective (or a rank that printed but never timed out) makes it one.
TEST(EngineTest, OneRanksTimeoutAloneIsAPossibleHang) {
  std::vector<Event> one = {Ev("watchdog_timeout", 7, {{"seq", 80078}, {"op_type", "BROADCAST"}})};
  Analysis a = Analyze(one, Builtin());
  ASSERT_EQ(a.root_cause, "nccl_timeout_hang") << a.verdict;
  EXPECT_LT(a.diagnoses[0].confidence, kSureEnough);
  EXPECT_EQ(a.verdict.rfind("Possible: ", 0), 0u) << a.verdict;
  EXPECT_NE(a.verdict.find("desync"), std::string::npos) << a.verdict;
  EXPECT_EQ(a.verdict.find("logged no timeout"), std::string::npos) << a.verdict;
  // What the log shows of the peer decides: a worker that died is why the
  // collective never completed; SeqNum 1 is the group's first collective,
  // which every rank reaches through the same setup.
  std::vector<Event> died = {Ev("worker_died", -1, {{"exit_code", -6}}),
                             Ev("watchdog_timeout", 0, {{"seq", 2}, {"op_type", "ALLREDUCE"}})};
  Analysis d = Analyze(died, Builtin());
  ASSERT_EQ(d.root_cause, "nccl_timeout_hang") << d.verdict;
  EXPECT_GE(d.diagnoses[0].confidence, kSureEnough) << d.verdict;
  Analysis first = Analyze({Ev("watchdog_timeout", 0, {{"seq", 1}, {"op_type", "ALLREDUCE"}})}, Builtin());
  ASSERT_EQ(first.root_cause, "nccl_timeout_hang") << first.verdict;
  EXPECT_GE(first.diagnoses[0].confidence, kSureEnough) << first.verdict;
  // Two ranks at different SeqNums and no third in the log: which one left the
  // common sequence (by lagging, or by calling another collective) needs a
  // majority, so the hang is a possibility; with two ranks on each side it stands.
  Analysis apart = Timeouts({42, 41}, 2);
  ASSERT_EQ(apart.root_cause, "nccl_timeout_hang") << apart.verdict;
  EXPECT_LT(apart.diagnoses[0].confidence, kSureEnough) << apart.verdict;
  Analysis pairs = Timeouts({42, 42, 41, 41}, 4);
  ASSERT_EQ(pairs.root_cause, "nccl_timeout_hang") << pairs.verdict;
  EXPECT_GE(pairs.diagnoses[0].confidence, kSureEnough) << pairs.verdict;
  // Two ranks in the same collective at the same SeqNum: a hang, as sure as before.
  Analysis two = Timeouts({42, 42}, 0);
  ASSERT_EQ(two.root_cause, "nccl_timeout_hang") << two.verdict;
  EXPECT_GE(two.diagnoses[0].confidence, kSureEnough) << two.verdict;
  // One rank timed out while another printed lines and no timeout: that rank is
  // the suspect, and the reading stands.
  Analysis silent = Timeouts({42, -1}, 2);
  ASSERT_EQ(silent.root_cause, "nccl_timeout_hang") << silent.verdict;
  EXPECT_GE(silent.diagnoses[0].confidence, kSureEnough) << silent.verdict;
  EXPECT_EQ(silent.diagnoses[0].rank, 1) << silent.verdict;
}

TEST(EngineTest, DesyncBlamesTheOddRankOutOnEveryPath) {
  // One rank ahead of three (argmax path): rank 1 at 42.
  Analysis ahead = Timeouts({41, 42, 41, 41}, 4);
  ASSERT_EQ(ahead.root_cause, "collective_desync") << ahead.verdict;
  EXPECT_EQ(ahead.diagnoses[0].rank, 1) << ahead.verdict;
  // One rank behind three (argmin path): rank 3 at 41.
  Analysis behind = Timeouts({42, 42, 42, 41}, 4);
  ASSERT_EQ(behind.root_cause, "collective_desync") << behind.verdict;
  EXPECT_EQ(behind.diagnoses[0].rank, 3) << behind.verdict;
  // Same SeqNum, another operation on rank 1: the fingerprints disagree but
  // the line does not say who is wrong: no rank.
  Analysis other_op = Timeouts({42, 42, 42, 42}, 4, "BROADCAST");
  ASSERT_EQ(other_op.root_cause, "collective_desync") << other_op.verdict;
  EXPECT_EQ(other_op.diagnoses[0].rank, -1) << other_op.verdict;
}

TEST(EngineTest, StartupMemoryBlamesTheRankWithLeastFreeMemory) {
  // SGLang: rank 5 of 8 had 20 GiB less free at startup than the others; every
  // rank stops with "Not enough memory" sized from the minimum.
  auto run = [](int odd, double odd_free) {
    std::vector<Event> ev;
    ev.push_back(Ev("server_args", -1, {{"framework", "sglang"}, {"tp_size", 8}, {"mem_fraction_static", 0.85}}));
    for (int r = 0; r < 8; ++r) ev.push_back(Ev("weights_load_begin", r, {{"avail_bytes", (r == odd ? odd_free : 78.0) * kGiB}}));
    for (int r = 0; r < 8; ++r)
      ev.push_back(Ev("weights_load_end", r, {{"avail_bytes", (r == odd ? odd_free - 30 : 48.0) * kGiB}, {"weights_bytes", 30.0 * kGiB}}));
    for (int r = 0; r < 8; ++r) ev.push_back(Ev("not_enough_memory", r));
    return Analyze(ev, Builtin());
  };
  for (int odd : {5, 0}) {
    Analysis a = run(odd, 38.0);
    ASSERT_FALSE(a.diagnoses.empty()) << a.verdict;
    EXPECT_EQ(a.diagnoses[0].rank, odd) << a.root_cause << ": " << a.verdict;
  }
}

TEST(EngineTest, ARequestsTracebackWhileServingGoesOnIsNotAFailure) {
  // uvicorn's traceback for a client that went away, then the scheduler serves on.
  Event tb = Ev("exception", -1, {{"type", "starlette.requests.ClientDisconnect"}});
  std::vector<Event> ev = {Ev("startup_complete", -1), Ev("batch_stats", 0), tb, Ev("batch_stats", 0)};
  Analysis a = Analyze(ev, Builtin());
  EXPECT_EQ(a.root_cause, "none") << a.verdict;
  // The same traceback as the last word of the run ended it.
  ev.pop_back();
  Analysis b = Analyze(ev, Builtin());
  EXPECT_EQ(b.root_cause, "unknown") << b.verdict;
  // A rank's traceback is answered only by that rank going on.
  Event r1 = Ev("exception", 1, {{"type", "RuntimeError"}});
  std::vector<Event> ev2 = {Ev("startup_complete", -1), r1, Ev("batch_stats", 0)};
  EXPECT_EQ(Analyze(ev2, Builtin()).root_cause, "unknown");
}

TEST(EngineTest, CtrlCAndFinalizerTracebacksEndNothing) {
  Event ctrl_c = Ev("exception", -1, {{"type", "KeyboardInterrupt"}});
  std::vector<Event> ev = {Ev("startup_complete", -1), ctrl_c};
  EXPECT_EQ(Analyze(ev, Builtin()).root_cause, "none");
  // "Exception ignored in: <function CustomAllreduce.__del__ ...>" at exit.
  Event fin = Ev("exception", -1, {{"type", "AttributeError"}});
  fin.extra_lines = {"  File \"/x/custom_all_reduce.py\", line 300, in __del__", "    self.close()",
                     "  File \"/x/custom_all_reduce.py\", line 290, in close", "    ops.dispose(self._ptr)"};
  std::vector<Event> ev2 = {Ev("startup_complete", -1), fin};
  EXPECT_EQ(Analyze(ev2, Builtin()).root_cause, "none");
  // The same error raised from ordinary code is a failure.
  fin.extra_lines = {"  File \"/x/engine.py\", line 10, in run", "    self.close()"};
  std::vector<Event> ev3 = {Ev("startup_complete", -1), fin};
  EXPECT_EQ(Analyze(ev3, Builtin()).root_cause, "unknown");
}

TEST(EngineTest, HealthyWithAlarmingLinesIsNone) {
  std::vector<Event> ev;
  ev.push_back(Ev("custom_ar_disabled", 0, {{"reason", "pcie_multi_gpu"}}));
  ev.push_back(Ev("weights_load_end", 0, {{"avail_bytes", 6.0 * kGiB}}));
  ev.push_back(Ev("memory_pool_end", 0, {{"avail_bytes", 0.0}}));
  ev.push_back(Ev("nccl_warn", 0, {{"message", "soft watchdog"}}));
  ev.push_back(Ev("startup_complete", 0));
  ev.push_back(Ev("retraction", 0, {{"count", 1}}));
  Analysis a = Analyze(ev, Builtin());
  EXPECT_EQ(a.root_cause, "none") << a.verdict;
  EXPECT_EQ(ExitCodeFor(a), kExitHealthy);
}

TEST(EngineTest, UnclassifiedFailureIsUnknown) {
  std::vector<Event> ev;
  ev.push_back(Ev("startup_complete", 0));
  ev.push_back(Ev("exception", 0, {{"type", "KeyError"}, {"message", "'foo'"}}));
  Analysis a = Analyze(ev, Builtin());
  EXPECT_EQ(a.root_cause, "unknown") << a.verdict;
  EXPECT_EQ(ExitCodeFor(a), kExitUnclassified);
  EXPECT_NE(a.verdict.find("exception"), std::string::npos);
}

TEST(EngineTest, RanksRecordPhasesAndFirstError) {
  Analysis a = Analyze(Founding(0.5), Builtin());
  ASSERT_EQ(a.ranks.size(), 8u);
  EXPECT_EQ(a.ranks[3].rank, 3);
  EXPECT_EQ(a.ranks[3].last_phase, "weights");
  EXPECT_EQ(a.ranks[3].first_error, "not_enough_memory");
  ASSERT_EQ(a.ledger.size(), 8u);
  EXPECT_NEAR(a.ledger[0].free_at_init_bytes / kGiB, 94.0, 1e-6);
  EXPECT_NEAR(a.ledger[0].reserved_bytes / kGiB, 47.0, 1e-6);
}

TEST(EngineTest, InlineRulesRankByTierThenTime) {
  const char* cause = R"({"id": "c", "title": "t", "root_cause": "runtime_oom", "anchor": "cuda_oom",
                          "explanation": "oom"})";
  const char* symptom = R"({"id": "s", "title": "t", "root_cause": "nccl_timeout_hang", "tier": "symptom",
                            "anchor": "watchdog_timeout", "explanation": "hang"})";
  auto set = RuleSet::LoadTexts({{"c.json", cause}, {"s.json", symptom}});
  ASSERT_TRUE(set.ok()) << set.status().message();
  std::vector<Event> ev = {Ev("watchdog_timeout", 0), Ev("cuda_oom", 1)};
  Analysis a = Analyze(ev, *set);
  EXPECT_EQ(a.root_cause, "runtime_oom");  // a cause outranks an earlier symptom
  ASSERT_EQ(a.diagnoses.size(), 2u);
  EXPECT_EQ(a.diagnoses[1].id, "nccl_timeout_hang");
}

// Lines of no rank are marked by what printed them (rules/line_source.h):
// each TGI shard's "Shard ready" is a mark of its own, a line of no prefix
// continues the rank-less line before it, never a rank's.
TEST(EngineTest, RanklessMarksKeepWhatPrintedThem) {
  auto timed = [](Event e, std::string text) {
    e.family = "tgi";
    e.text = std::move(text);
    e.ts = 1716192841.0 + e.line;
    return e;
  };
  std::vector<Event> ev;
  ev.push_back(timed(Ev("server_args", -1, {{"framework", "tgi"}, {"tp_size", 2}}),
                     "INFO text_generation_launcher: Args { model_id: \"m\", num_shard: Some(2) }"));
  ev.push_back(timed(Ev("startup_complete", -1, {{"shard", 0}}),
                     "INFO shard-manager: text_generation_launcher: Shard ready in 13.02s rank=0"));
  ev.push_back(timed(Ev("startup_complete", -1, {{"shard", 1}}),
                     "INFO shard-manager: text_generation_launcher: Shard ready in 13.04s rank=1"));
  ev.push_back(timed(Ev("worker_exception", -1), "ERROR text_generation_launcher: Method Warmup encountered an error."));
  Event oom = Ev("cuda_oom", -1);  // the traceback's last line: no time, no prefix; GPU 0 is no shard
  oom.text = "torch.cuda.OutOfMemoryError: CUDA out of memory. GPU 0 has a total capacity of 22.06 GiB";
  ev.push_back(oom);
  Analysis a = Analyze(ev, Builtin());
  ASSERT_EQ(a.ranks.size(), 1u);
  std::vector<std::string> ready;
  for (const RankMark& m : a.ranks[0].marks) {
    if (m.type == "phase" && m.label == "ready") ready.push_back(m.source.label);
    if (m.label == "cuda_oom") EXPECT_EQ(m.source.label, "launcher") << "continues the launcher's line";
  }
  EXPECT_EQ(ready, (std::vector<std::string>{"shard 0", "shard 1"}));
  EXPECT_EQ(a.ranks[0].first_error_source.label, "launcher");
  EXPECT_EQ(a.ranks[0].last_source.label, "launcher");

  // Beside ranks: a process the prefix names, and a bare line after a rank's stays unnamed.
  std::vector<Event> ranked;
  ranked.push_back(Ev("weights_load_end", 0, {{"weights_bytes", 7.5 * kGiB}}));
  Event core = Ev("worker_exception", -1);
  core.process = "EngineCore_DP0";
  core.ts = 39749.0;
  ranked.push_back(core);
  ranked.push_back(Ev("cuda_oom", 1));
  ranked.push_back(Ev("exception", -1));
  Analysis b = Analyze(ranked, Builtin());
  ASSERT_FALSE(b.ranks.empty());
  ASSERT_EQ(b.ranks[0].rank, -1);
  EXPECT_EQ(b.ranks[0].first_error_source.label, "engine core");
  EXPECT_EQ(b.ranks[0].last_source.label, "") << "after rank 1's line: no source, no rank";
}

TEST(EngineTest, AnalysisRoundTripsThroughJson) {
  Analysis a = Analyze(Founding(0.5), Builtin());
  nlohmann::json j = a;
  EXPECT_EQ(j["schema_version"], 1);
  auto back = j.get<Analysis>();
  EXPECT_EQ(back.root_cause, a.root_cause);
  EXPECT_EQ(back.diagnoses.size(), a.diagnoses.size());
}

}  // namespace
}  // namespace tpt

namespace tpt {
namespace {

TEST(RunScopeTest, VersionConditions) {
  EXPECT_LT(CompareVersions("0.4.3.post4", "0.4.10"), 0);
  EXPECT_EQ(CompareVersions("v0.5.7", "0.5.7rc1"), 0);
  EXPECT_GT(CompareVersions("0.10.1", "0.9.9"), 0);
  std::vector<Event> ev = {Ev("framework_version", -1, {{"framework", "sglang"}, {"version", "0.5.9"}})};
  RunIndex run(ev);
  RunScope s(run, RunScope::kNoAnchor);
  EXPECT_TRUE(s.Call("version_ge", {"0.5.7"}).Truthy());
  EXPECT_FALSE(s.Call("version_lt", {"0.5.7"}).Truthy());
  std::vector<Event> none;
  RunIndex unknown(none);
  EXPECT_TRUE(RunScope(unknown, RunScope::kNoAnchor).Call("version_ge", {"0.5.7"}).is_null());
}

TEST(RunScopeTest, OrderAndCrossRankFunctions) {
  std::vector<Event> ev = {Ev("weights_load_begin", 0), Ev("weights_load_begin", 1), Ev("weights_load_end", 0),
                           Ev("cuda_oom", 1), Ev("weights_load_end", 1)};
  RunIndex run(ev);
  RunScope at_oom(run, 3);  // the OOM on rank 1
  EXPECT_TRUE(at_oom.Call("seen_before", {"weights_load_begin"}).Truthy());
  EXPECT_FALSE(at_oom.Call("seen_before", {"weights_load_end"}).Truthy());  // rank 0's end does not count
  EXPECT_TRUE(at_oom.Call("seen_after", {"weights_load_end"}).Truthy());
  EXPECT_DOUBLE_EQ(at_oom.Call("ranks", {"weights_load_end"}).number(), 2);
  EXPECT_DOUBLE_EQ(at_oom.Call("missing_ranks", {"cuda_oom"}).number(), 1);
  EXPECT_DOUBLE_EQ(at_oom.Call("count_before", {"weights_load_end"}).number(), 1);
  EXPECT_TRUE(at_oom.Call("kind_before", {"weights_load_begin", "cuda_oom"}).Truthy());
}

TEST(RunScopeTest, TracebackFramesOfTheAnchorOrTheNearestTraceback) {
  Event oom = Ev("cuda_oom", 2);
  Event tb = Ev("exception", 2, {{"type", ""}, {"cut", true}});
  tb.text = "Traceback (most recent call last):";
  tb.extra_lines = {"  File \"/x/vllm/v1/engine/core.py\", line 102, in __init__",
                    "    self.model_executor = executor_class(vllm_config)",
                    "  File \"/x/vllm/v1/worker/gpu_worker.py\", line 588, in compile_or_warm_up_model",
                    "    cuda_graph_memory_bytes = self.model_runner.capture_model()",
                    "                              ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^"};
  Event other = Ev("exception", 5, {{"type", "ValueError"}});
  other.extra_lines = {"  File \"/y.py\", line 1, in elsewhere", "    boom()"};
  std::vector<Event> ev = {oom, tb, other};
  RunIndex run(ev);
  RunScope at_oom(run, 0);  // frames come from the traceback beside the OOM, same rank
  EXPECT_EQ(at_oom.Call("frames", {}).str(), "__init__ > compile_or_warm_up_model");
  EXPECT_EQ(at_oom.Call("innermost_function", {}).str(), "compile_or_warm_up_model");
  // The ^^^ marker line (Python 3.11+) is not code.
  EXPECT_EQ(at_oom.Call("innermost_code", {}).str(), "cuda_graph_memory_bytes = self.model_runner.capture_model()");
  EXPECT_EQ(at_oom.Call("innermost_file", {}).str(), "/x/vllm/v1/worker/gpu_worker.py");
  RunScope at_other(run, 2);  // its own frames, not rank 2's
  EXPECT_EQ(at_other.Call("innermost_function", {}).str(), "elsewhere");
  // A traceback cut inside its first File line has no frame to name.
  Event cut = Ev("exception", 7, {{"cut", true}});
  cut.extra_lines = {"  File \"/usr/lib/pyth"};
  std::vector<Event> ev2 = {cut};
  RunIndex run2(ev2);
  EXPECT_TRUE(RunScope(run2, 0).Call("innermost_function", {}).is_null());
  // A frame line hard-wrapped inside its path (a terminal or a paste) is one
  // frame again: its file, function and stage are read whole.
  Event wrapped = Ev("exception", 3, {{"type", "KeyError"}});
  wrapped.extra_lines = {"  File \"/usr/local/lib/python3.10/dist-packages/vllm-0.7.4.dev8 ",
                         "+g981f3c83.cu124-py3.10-linux-x86_64.egg/vllm/model_executor/models/deepseek_v2.py\", line 773, "
                         "in load_weights ",
                         "    param = params_dict[name] "};
  std::vector<Event> ev3 = {wrapped};
  RunIndex run3(ev3);
  RunScope at_wrapped(run3, 0);
  EXPECT_EQ(at_wrapped.Call("innermost_function", {}).str(), "load_weights");
  EXPECT_EQ(at_wrapped.Call("innermost_file", {}).str(),
            "/usr/local/lib/python3.10/dist-packages/vllm-0.7.4.dev8+g981f3c83.cu124-py3.10-linux-x86_64.egg/vllm/"
            "model_executor/models/deepseek_v2.py");
  EXPECT_EQ(at_wrapped.Call("stage", {}).str(), "weights");
}

// A log printed a traceback a line an event (vLLM's `ERROR ... [core.py:842]   File ...`),
// and a terminal cut every line of the paste: the joined lines keep their numbers, so the
// frame naming the stage sits 16 lines below the OOM with three lines of events between.
// Near by the lines events sit on (4), not by the blank ones the joins left; far when the
// events between are as many as a real gap.
TEST(RunScopeTest, FramesNearTheAnchorInAPasteCutByATerminal) {
  auto at = [](const char* kind, uint64_t line, const std::string& text) {
    Event e = Ev(kind, 0);
    e.line = line;
    e.text = text;
    return e;
  };
  const std::string frame =
      "  File \"/x/vllm/v1/worker/gpu_worker.py\", line 507, in compile_or_warm_up_model";
  std::vector<Event> cut = {at("cuda_oom", 6, "torch.OutOfMemoryError: CUDA out of memory."),
                            at("error_line", 14, "ERROR 11"), at("error_line", 17, "^^^^^^^^"),
                            at("error_line", 19, "ERROR 11-19 12:16:36 [core.py:842]   File \"/x/torch/_contextlib.py\""),
                            at("error_line", 22, frame)};
  RunIndex run(cut);
  EXPECT_EQ(RunScope(run, 0).Call("stage", {}).str(), "warmup");
  // The same frame 16 lines below with more events between than a traceback's reach: not near.
  std::vector<Event> far = {at("cuda_oom", 6, "torch.OutOfMemoryError: CUDA out of memory.")};
  for (uint64_t l = 7; l < 22; ++l) far.push_back(at("error_line", l, "ERROR something else " + std::to_string(l)));
  far.push_back(at("error_line", 22, frame));
  RunIndex run_far(far);
  EXPECT_TRUE(RunScope(run_far, 0).Call("stage", {}).is_null() || RunScope(run_far, 0).Call("stage", {}).str() != "warmup");
}

TEST(RunScopeTest, RanksWhereCountsRanksNotLines) {
  std::vector<Event> ev = {Ev("watchdog_timeout", 0, {{"seq", 7}}), Ev("watchdog_timeout", 0, {{"seq", 7}}),
                           Ev("watchdog_timeout", 1, {{"seq", 7}}), Ev("watchdog_timeout", 2, {{"seq", 6}})};
  RunIndex run(ev);
  RunScope s(run, RunScope::kNoAnchor);
  EXPECT_DOUBLE_EQ(s.Call("ranks_where", {"watchdog_timeout", "seq", 7.0}).number(), 2);
  EXPECT_DOUBLE_EQ(s.Call("count_where", {"watchdog_timeout", "seq", 7.0}).number(), 3);
  EXPECT_DOUBLE_EQ(s.Call("ranks_where", {"watchdog_timeout", "seq", 6.0}).number(), 1);
}

TEST(RunScopeTest, UntimedStreamsCountAsBeforeTheError) {
  Event phase = Ev("weights_load_end", -1);
  phase.source = 1;  // stderr of the same run, no timestamps
  std::vector<Event> ev = {Ev("cuda_oom", -1), phase};
  RunIndex run(ev);
  RunScope s(run, 0);
  EXPECT_TRUE(s.Call("seen_before", {"weights_load_end"}).Truthy());
  EXPECT_FALSE(s.Call("seen_after", {"weights_load_end"}).Truthy());
}

}  // namespace
}  // namespace tpt
