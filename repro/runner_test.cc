// runner_test.cc: steps, the server's formula on measured numbers, and the
// verdict, against the simulated device backend (no GPU needed).
#include "repro/runner.h"

#include <gtest/gtest.h>

#include <csignal>

#include "repro/launch.h"
#include "repro/plan_scale.h"

namespace tpt::repro {
namespace {

const std::string kSamples = std::string(TPT_SOURCE_DIR) + "/samples/repro/";

Plan Founding() {
  auto p = LoadPlanFile(kSamples + "sglang_tp8_rtxpro6000.json");
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

const StepRecord* FindStep(const RunResult& r, const std::string& name) {
  for (const auto& s : r.steps) {
    if (s.step == name) return &s;
  }
  return nullptr;
}

// The fix check asks for a useful pool, not only a positive one. The floor
// 0.77 leaves about 81 MiB (1,300 tokens of 64 KiB): with a 32,768-token context the
// server would start and refuse every full-length request.
TEST(Reproduce, FixThatLeavesAUselessPoolFails) {
  auto be = MakeSimulatedBackend(SimulatedDevice{});
  Plan plan = Founding();
  plan.context_length = 32768;
  ReproReport rep = Reproduce(plan, *be, Colocated(8), ReproOptions{});
  ASSERT_TRUE(rep.fix.has_value());
  EXPECT_EQ(rep.verdict.fix_outcome, "fails") << rep.verdict.fix_reason;
  EXPECT_NE(rep.verdict.fix_reason.find("shorter than one request of the context length 32768"), std::string::npos)
      << rep.verdict.fix_reason;
  // A fix that holds the context passes and says by how much.
  plan.fix["mem_fraction_static"] = 0.80;
  rep = Reproduce(plan, *be, Colocated(8), ReproOptions{});
  EXPECT_EQ(rep.verdict.fix_outcome, "passes") << rep.verdict.fix_reason;
  EXPECT_NE(rep.verdict.fix_reason.find("the context length 32768"), std::string::npos) << rep.verdict.fix_reason;
}

TEST(Reproduce, FoundingCaseReproducesAndTheFixPasses) {
  auto be = MakeSimulatedBackend(SimulatedDevice{});
  ReproReport rep = Reproduce(Founding(), *be, Colocated(8), ReproOptions{});
  EXPECT_EQ(rep.verdict.outcome, "reproduced") << rep.verdict.reason;
  EXPECT_EQ(rep.original.failed_step, kStepKvFormula);
  EXPECT_NE(rep.original.failure.find("Not enough memory"), std::string::npos) << rep.original.failure;
  // The formula ran on the measured numbers: 21.7 - 94 x 0.5 = -25.3 GiB.
  EXPECT_NEAR(rep.original.kv.rest_bytes / double(kGiB), -25.3, 0.01);
  EXPECT_NEAR(rep.original.kv.min_viable, 0.77, 1e-9);
  // Free at init matched by the ballast within 64 MiB, on the measured rank.
  const StepRecord* init = FindStep(rep.original, kStepFreeAtInit);
  ASSERT_NE(init, nullptr);
  ASSERT_EQ(init->ranks.size(), 8u);
  EXPECT_TRUE(init->ranks[0].measured);
  EXPECT_FALSE(init->ranks[5].measured);
  EXPECT_LE(std::llabs(init->ranks[0].free_bytes - 94 * kGiB), 64 * kMiB);
  // After weights: measured vs logged 21.7 GiB side by side.
  const StepRecord* w = FindStep(rep.original, kStepWeights);
  ASSERT_NE(w, nullptr);
  ASSERT_TRUE(w->ranks[0].logged_free_bytes.has_value());
  EXPECT_LE(std::llabs(w->ranks[0].free_bytes - *w->ranks[0].logged_free_bytes), 64 * kMiB);
  // The fix (0.77) allocates a pool and captures graphs.
  ASSERT_TRUE(rep.fix.has_value());
  EXPECT_EQ(rep.verdict.fix_outcome, "passes") << rep.verdict.fix_reason;
  EXPECT_GT(rep.fix->kv.tokens, 0);
  EXPECT_NE(FindStep(*rep.fix, kStepKvPool), nullptr);
  ASSERT_TRUE(rep.fix->graphs.has_value());
  EXPECT_EQ(rep.fix->graphs->graphs, 23);
  EXPECT_EQ(ExitCodeOf(rep.verdict), kExitReproduced);
}

TEST(Reproduce, HigherFractionAsLoggedIsNotReproduced) {
  Plan p = Founding();
  p.mem_fraction_static = 0.80;  // the server would have started
  auto be = MakeSimulatedBackend(SimulatedDevice{});
  ReproReport rep = Reproduce(p, *be, Colocated(8), ReproOptions{});
  EXPECT_EQ(rep.verdict.outcome, "not reproduced");
  EXPECT_TRUE(rep.original.failed_step.empty());
  EXPECT_EQ(ExitCodeOf(rep.verdict), kExitNotReproduced);
}

TEST(Reproduce, FixBelowTheMinimumFails) {
  Plan p = Founding();
  p.mem_fraction_static = 0.55;
  p.fix["mem_fraction_static"] = 0.76;  // rest = 21.7 - 94 x 0.24 < 0
  auto be = MakeSimulatedBackend(SimulatedDevice{});
  ReproReport rep = Reproduce(p, *be, Colocated(8), ReproOptions{});
  EXPECT_EQ(rep.verdict.outcome, "reproduced");
  EXPECT_EQ(rep.verdict.fix_outcome, "fails");
  EXPECT_EQ(ExitCodeOf(rep.verdict), kExitFixFails);
}

TEST(Reproduce, SmallerGpuThanTheOriginalIsInconclusive) {
  SimulatedDevice small;
  small.total_bytes = 80 * kGiB;
  auto be = MakeSimulatedBackend(small);
  ReproReport rep = Reproduce(Founding(), *be, Colocated(8), ReproOptions{});
  EXPECT_EQ(rep.verdict.outcome, "inconclusive");
  EXPECT_EQ(rep.original.failed_step, kStepBallast);
  EXPECT_NE(rep.verdict.reason.find("cannot emulate"), std::string::npos);
}

TEST(Reproduce, RefusesABusyGpuUnlessForced) {
  SimulatedDevice busy;
  busy.other_processes_bytes = 10 * kGiB;
  auto be = MakeSimulatedBackend(busy);
  ReproReport rep = Reproduce(Founding(), *be, Colocated(8), ReproOptions{});
  EXPECT_EQ(rep.verdict.outcome, "inconclusive");
  EXPECT_NE(rep.original.failure.find("--force"), std::string::npos);
  EXPECT_FALSE(rep.fix.has_value());
  ReproOptions force;
  force.force = true;
  auto be2 = MakeSimulatedBackend(busy);
  EXPECT_EQ(Reproduce(Founding(), *be2, Colocated(8), force).verdict.outcome, "reproduced");
}

TEST(Reproduce, HangInGraphCaptureMakesTheFixInconclusive) {
  SimulatedDevice hang;
  hang.hang_in_graphs = true;
  auto be = MakeSimulatedBackend(hang);
  ReproReport rep = Reproduce(Founding(), *be, Colocated(8), ReproOptions{});
  EXPECT_EQ(rep.verdict.outcome, "reproduced");
  EXPECT_EQ(rep.verdict.fix_outcome, "inconclusive");
  EXPECT_NE(rep.verdict.fix_reason.find("DEADLINE_EXCEEDED"), std::string::npos);
}

TEST(Reproduce, WeightsThatDoNotFitReproduceAWeightsOom) {
  Plan p = Founding();
  p.root_cause = "weights_oom";
  p.failed_step = kStepWeights;
  p.free_at_init_bytes = 60 * kGiB;
  p.fix.clear();
  auto be = MakeSimulatedBackend(SimulatedDevice{});
  ReproReport rep = Reproduce(p, *be, Colocated(8), ReproOptions{});
  EXPECT_EQ(rep.verdict.outcome, "reproduced") << rep.verdict.reason;
  EXPECT_NE(rep.original.failure.find("out of memory"), std::string::npos);
  EXPECT_EQ(rep.verdict.fix_outcome, "not checked");
}

TEST(Reproduce, MinOverRanksUsesTheEmulatedRankWithLeastMemory) {
  Plan p = Founding();
  p.free_at_init_per_rank.assign(8, 94 * kGiB);
  p.free_at_init_per_rank[6] = 93 * kGiB;  // another process on GPU 6
  p.mem_fraction_static = 0.775;           // passes at 94 everywhere (rest +0.55 GiB)...
  auto be = MakeSimulatedBackend(SimulatedDevice{});
  ReproReport rep = Reproduce(p, *be, Colocated(8), ReproOptions{});
  // ...but rank 6 sees 93 at init and 20.7 after weights: min over ranks -> rest -0.23 GiB.
  EXPECT_NEAR(rep.original.kv.free_at_init_bytes / double(kGiB), 93.0, 0.07);
  EXPECT_NEAR(rep.original.kv.available_bytes / double(kGiB), 20.7, 0.07);
  EXPECT_EQ(rep.verdict.outcome, "reproduced") << rep.verdict.reason;
}

TEST(Reproduce, CommFailureIsTheToolsNotTheServers) {
  SimulatedDevice d;
  d.fail_step = "nccl_comm";
  auto be = MakeSimulatedBackend(d);
  ReproReport rep = Reproduce(Founding(), *be, Colocated(8), ReproOptions{});
  EXPECT_EQ(rep.verdict.outcome, "inconclusive");
  EXPECT_EQ(rep.original.failed_step, kStepComm);
}

TEST(Reproduce, VllmNoCacheBlocksAndAHigherUtilisationFix) {
  Plan p;
  p.source = "test";
  p.framework = "vllm";
  p.version = "0.11.0";
  p.tp = 2;
  p.card_total_bytes = 80 * kGiB;
  p.free_at_init_bytes = 78 * kGiB;
  p.weights_bytes = 73 * kGiB;  // util 0.9 -> 72 GiB budget < weights
  p.gpu_memory_utilization = 0.9;
  p.kv_bytes_per_token = 1 << 17;
  p.failed_step = kStepKvFormula;
  p.fix["gpu_memory_utilization"] = 0.97;  // 77.6 GiB: 4.6 GiB for KV, under the 78 GiB free
  auto be = MakeSimulatedBackend(SimulatedDevice{});
  ReproReport rep = Reproduce(p, *be, Colocated(2), ReproOptions{});
  EXPECT_EQ(rep.verdict.outcome, "reproduced") << rep.verdict.reason;
  EXPECT_TRUE(rep.original.kv.fails);
  EXPECT_EQ(rep.verdict.fix_outcome, "passes") << rep.verdict.fix_reason;
  EXPECT_GT(rep.fix->kv.tokens, 0);
}

TEST(Reproduce, CtrlCStopsTheRunAsInconclusive) {
  CancelFlag().store(true);
  auto be = MakeSimulatedBackend(SimulatedDevice{});
  ReproReport rep = Reproduce(Founding(), *be, Colocated(8), ReproOptions{});
  CancelFlag().store(false);
  EXPECT_EQ(rep.verdict.outcome, "inconclusive");
  EXPECT_NE(rep.original.failure.find("interrupted"), std::string::npos);
  EXPECT_FALSE(rep.fix.has_value());
}

// a SIGTERM was reported as "Ctrl-C", and the fix check as
// "disabled (--no-fix)" when the run was only interrupted.
TEST(Reproduce, SigtermIsNamedAndTheFixIsNotClaimedDisabled) {
  CancelSignal().store(SIGTERM);
  CancelFlag().store(true);
  auto be = MakeSimulatedBackend(SimulatedDevice{});
  ReproReport rep = Reproduce(Founding(), *be, Colocated(8), ReproOptions{});
  CancelFlag().store(false);
  CancelSignal().store(0);
  EXPECT_EQ(rep.verdict.outcome, "inconclusive");
  EXPECT_NE(rep.original.failure.find("SIGTERM"), std::string::npos) << rep.original.failure;
  EXPECT_EQ(rep.original.failure.find("Ctrl-C"), std::string::npos) << rep.original.failure;
  EXPECT_EQ(rep.verdict.fix_reason.find("--no-fix"), std::string::npos) << rep.verdict.fix_reason;
  EXPECT_NE(rep.verdict.fix_reason.find("interrupted (SIGTERM)"), std::string::npos) << rep.verdict.fix_reason;
}

TEST(Judge, NoFailingStepInThePlanIsInconclusive) {
  Plan p = Founding();
  p.failed_step.clear();
  p.root_cause = "nccl_timeout_hang";
  RunResult passed;
  Verdict v = Judge(p, passed, nullptr);
  EXPECT_EQ(v.outcome, "inconclusive");
  EXPECT_EQ(v.fix_outcome, "not checked");
}

TEST(Render, TextAndJsonCarryTheVerdictAndTheSideBySideFigures) {
  auto be = MakeSimulatedBackend(SimulatedDevice{});
  ReproReport rep = Reproduce(Founding(), *be, Colocated(8), ReproOptions{});
  const std::string text = RenderText(rep);
  EXPECT_NE(text.find("verdict: REPRODUCED"), std::string::npos) << text;
  EXPECT_NE(text.find("fix check: passes"), std::string::npos);
  EXPECT_NE(text.find("1-7"), std::string::npos);   // emulated ranks grouped
  EXPECT_NE(text.find("emul"), std::string::npos);
  EXPECT_NE(text.find("21.70 GiB"), std::string::npos);  // the logged figure
  const nlohmann::json j = RenderJson(rep);
  EXPECT_EQ(j["schema_version"], kReproSchemaVersion);
  EXPECT_EQ(j["verdict"]["outcome"], "reproduced");
  EXPECT_EQ(j["mode"], "colocated");
  EXPECT_EQ(j["original"]["steps"].back()["step"], kStepKvFormula);
}

TEST(DetectLayout, LaunchersAndFallbacks) {
  auto env = [](std::map<std::string, std::string> m) -> EnvLookup {
    return [m](const std::string& k) -> std::optional<std::string> {
      auto it = m.find(k);
      if (it == m.end()) return std::nullopt;
      return it->second;
    };
  };
  auto one_gpu = DetectLayout(env({}), 8, 1);
  ASSERT_TRUE(one_gpu.ok());
  EXPECT_TRUE(one_gpu->colocated);
  auto eight = DetectLayout(env({}), 8, 8);
  ASSERT_TRUE(eight.ok());
  EXPECT_FALSE(eight->colocated);
  EXPECT_EQ(eight->launcher, "spawn");
  auto torchrun = DetectLayout(env({{"RANK", "3"}, {"WORLD_SIZE", "8"}, {"LOCAL_RANK", "3"}}), 8, 8);
  ASSERT_TRUE(torchrun.ok());
  EXPECT_EQ(torchrun->rank, 3);
  EXPECT_EQ(torchrun->launcher, "torchrun");
  // A rank our own parent started is not a parent again.
  auto child = DetectLayout(env({{"TPT_REPRO_RANK", "1"}, {"TPT_REPRO_WORLD", "2"}, {"TPT_REPRO_LOCAL_RANK", "1"},
                                 {"TPT_REPRO_ID_FILE", "/tmp/x/nccl.id"}}),
                            2, 2);
  ASSERT_TRUE(child.ok());
  EXPECT_EQ(child->launcher, "spawned");
  EXPECT_EQ(child->nccl_id_file, "/tmp/x/nccl.id");
  auto slurm = DetectLayout(env({{"SLURM_PROCID", "9"}, {"SLURM_NTASKS", "16"}, {"SLURM_LOCALID", "1"}}), 16, 8);
  ASSERT_TRUE(slurm.ok());
  EXPECT_EQ(slurm->rank, 9);
  EXPECT_EQ(slurm->local_rank, 1);
  auto mpi = DetectLayout(env({{"OMPI_COMM_WORLD_RANK", "1"}, {"OMPI_COMM_WORLD_SIZE", "2"}}), 2, 2);
  ASSERT_TRUE(mpi.ok());
  EXPECT_EQ(mpi->launcher, "mpi");
  auto mismatch = DetectLayout(env({{"RANK", "0"}, {"WORLD_SIZE", "4"}}), 8, 8);
  ASSERT_FALSE(mismatch.ok());
  EXPECT_NE(mismatch.status().message().find("WORLD_SIZE=4"), std::string::npos);
  EXPECT_FALSE(DetectLayout(env({{"RANK", "x"}, {"WORLD_SIZE", "8"}}), 8, 8).ok());
  EXPECT_EQ(NcclCommIdFromEnv(env({{"MASTER_ADDR", "10.0.0.1"}, {"MASTER_PORT", "29500"}})), "10.0.0.1:29501");
}

// --scale-to-fit: a larger card replayed on a smaller GPU (plan_scale.h).
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
