// multiproc_test.cc: the CPU side of one process per rank (no GPU needed):
// launcher layouts with shared GPUs, the NCCL rendezvous address of Open MPI
// jobs, which peer process is gone, why a run was cancelled, and the
// benchmark's crossovers, table and row files.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <map>

#include <gtest/gtest.h>

#include "repro/allreduce_bench.h"
#include "repro/launch.h"
#include "repro/runner.h"

namespace tpt::repro {
namespace {

EnvLookup Env(std::map<std::string, std::string> m) {
  return [m](const std::string& k) -> std::optional<std::string> {
    auto it = m.find(k);
    if (it == m.end()) return std::nullopt;
    return it->second;
  };
}

TEST(DetectLayout, RanksShareGpusOnlyWhenAskedTo) {
  const std::map<std::string, std::string> rank3 = {{"RANK", "3"}, {"WORLD_SIZE", "4"}, {"LOCAL_RANK", "3"}};
  auto refused = DetectLayout(Env(rank3), 4, 1);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("LOCAL_RANK=3"), std::string::npos);
  auto shared_env = rank3;
  shared_env["TPT_REPRO_SAME_GPU"] = "1";
  auto shared = DetectLayout(Env(shared_env), 4, 2);
  ASSERT_TRUE(shared.ok()) << shared.status().ToString();
  EXPECT_TRUE(shared->shared_gpu);
  EXPECT_EQ(shared->local_rank, 1);  // 3 mod 2
  EXPECT_FALSE(shared->colocated);
  // Rank 0 of the same launch shares too (its device has other ranks).
  auto r0 = DetectLayout(Env({{"RANK", "0"}, {"WORLD_SIZE", "4"}, {"LOCAL_RANK", "0"}, {"TPT_REPRO_SAME_GPU", "1"}}), 4, 2);
  ASSERT_TRUE(r0.ok());
  EXPECT_TRUE(r0->shared_gpu);
  // Enough GPUs: nothing is shared even when allowed.
  auto enough = DetectLayout(Env(shared_env), 4, 4);
  ASSERT_TRUE(enough.ok());
  EXPECT_FALSE(enough->shared_gpu);
  EXPECT_EQ(enough->local_rank, 3);
}

TEST(LaunchedWorld, OnlyForSeveralRanks) {
  EXPECT_EQ(LaunchedWorld(Env({{"OMPI_COMM_WORLD_RANK", "1"}, {"OMPI_COMM_WORLD_SIZE", "8"}})), 8);
  EXPECT_EQ(LaunchedWorld(Env({{"TPT_REPRO_RANK", "0"}, {"TPT_REPRO_WORLD", "2"}})), 2);
  EXPECT_FALSE(LaunchedWorld(Env({{"RANK", "0"}, {"WORLD_SIZE", "1"}})).has_value());
  EXPECT_FALSE(LaunchedWorld(Env({})).has_value());
}

TEST(NcclCommIdFromEnv, OpenMpiOnOneHostAgreesOnAPortFromTheJob) {
  auto rank = [](const char* r, const char* ns) {
    return Env({{"OMPI_COMM_WORLD_RANK", r}, {"OMPI_COMM_WORLD_SIZE", "4"}, {"OMPI_COMM_WORLD_LOCAL_SIZE", "4"},
                {"PMIX_NAMESPACE", ns}});
  };
  const std::string a0 = NcclCommIdFromEnv(rank("0", "prterun-vm-123@1"));
  ASSERT_EQ(a0.rfind("127.0.0.1:", 0), 0u) << a0;
  EXPECT_EQ(NcclCommIdFromEnv(rank("3", "prterun-vm-123@1")), a0);  // every rank the same
  EXPECT_NE(NcclCommIdFromEnv(rank("0", "prterun-vm-456@1")), a0);  // another job, another port
  const int port = std::stoi(a0.substr(10));
  EXPECT_GE(port, 30000);
  EXPECT_LT(port, 50000);
  // Ranks on several hosts: no loopback guess, MASTER_* is needed.
  EXPECT_EQ(NcclCommIdFromEnv(Env({{"OMPI_COMM_WORLD_SIZE", "16"}, {"OMPI_COMM_WORLD_LOCAL_SIZE", "8"},
                                   {"PMIX_NAMESPACE", "x"}})),
            "");
  // MASTER_* wins; a bad port is refused.
  EXPECT_EQ(NcclCommIdFromEnv(Env({{"MASTER_ADDR", "h"}, {"MASTER_PORT", "29500"}, {"PMIX_NAMESPACE", "x"}})), "h:29501");
  EXPECT_EQ(NcclCommIdFromEnv(Env({{"MASTER_ADDR", "h"}, {"MASTER_PORT", "x1"}})), "");
}

TEST(DeadPeers, NamesTheRankWhoseProcessEnded) {
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    pause();
    _exit(0);
  }
  SetPeers({{0, getpid(), HostKey()}, {1, child, HostKey()}, {2, child, HostKey() + 1}});
  EXPECT_TRUE(ProcessAlive(child));
  EXPECT_EQ(DeadPeers(), "");
  kill(child, SIGKILL);
  // Until it is reaped the child is a zombie: gone all the same.
  for (int i = 0; i < 200 && ProcessAlive(child); ++i) usleep(5000);
  EXPECT_FALSE(ProcessAlive(child));
  const std::string dead = DeadPeers();
  EXPECT_NE(dead.find("rank 1 (pid " + std::to_string(child) + ") is gone"), std::string::npos) << dead;
  EXPECT_EQ(dead.find("rank 2"), std::string::npos) << dead;  // another host: not checkable here
  EXPECT_EQ(dead.find("rank 0"), std::string::npos) << dead;
  waitpid(child, nullptr, 0);
  EXPECT_FALSE(ProcessAlive(child));
  SetPeers({});
}

TEST(CancelReason, QuotesTheLauncherOrTheSignal) {
  CancelSignal().store(SIGTERM);
  unsetenv("TPT_REPRO_ABORT_FILE");
  EXPECT_EQ(CancelReason(), "interrupted (SIGTERM)");
  CancelSignal().store(SIGINT);
  EXPECT_EQ(CancelReason(), "interrupted (SIGINT, Ctrl-C)");
  const std::string file = ::testing::TempDir() + "/tpt_abort_" + std::to_string(getpid());
  std::ofstream(file) << "rank 1 (pid 4242) was killed by SIGKILL\n";
  setenv("TPT_REPRO_ABORT_FILE", file.c_str(), 1);
  EXPECT_EQ(CancelReason(), "stopped by tptriage's launcher: rank 1 (pid 4242) was killed by SIGKILL");
  // The verdict of a cancelled run carries it.
  CancelFlag().store(true);
  auto be = MakeSimulatedBackend(SimulatedDevice{});
  Plan p;
  p.framework = "sglang";
  p.tp = 2;
  p.card_total_bytes = 96 * kGiB;
  p.free_at_init_bytes = 94 * kGiB;
  p.weights_bytes = 72 * kGiB;
  p.mem_fraction_static = 0.5;
  p.kv_bytes_per_token = 65536;
  p.failed_step = kStepKvFormula;
  RankLayout l;
  l.world = 2;
  l.colocated = true;
  ReproReport rep = Reproduce(p, *be, l, ReproOptions{});
  CancelFlag().store(false);
  unsetenv("TPT_REPRO_ABORT_FILE");
  std::remove(file.c_str());
  CancelSignal().store(0);
  EXPECT_EQ(rep.verdict.outcome, "inconclusive");
  EXPECT_NE(rep.verdict.reason.find("rank 1 (pid 4242) was killed by SIGKILL"), std::string::npos) << rep.verdict.reason;
}

BenchRow Row(int n, int64_t bytes, double one, double two, double nccl) {
  BenchRow r;
  r.ranks = n;
  r.bytes = bytes;
  r.one_shot = {one, 1, 1, 0};
  r.two_shot = {two, 1, 1, 0};
  if (nccl > 0) r.nccl = {nccl, 1, 1, 0};
  return r;
}

TEST(SummarizeBench, CrossoversAndTheSmallMessageRatio) {
  // 8 ranks: one-shot best to 128 KiB, two-shot from 256 KiB, NCCL from 4 MiB
  // (a one-off NCCL win at 512 KiB is not a crossover).
  std::vector<BenchRow> rows = {
      Row(8, 8 << 10, 6, 9, 20),        Row(8, 64 << 10, 7, 9, 21),      Row(8, 128 << 10, 8, 9, 22),
      Row(8, 256 << 10, 12, 11, 24),    Row(8, 512 << 10, 20, 15, 14),   Row(8, 1 << 20, 30, 20, 25),
      Row(8, 4 << 20, 90, 60, 50),      Row(8, 16 << 20, 300, 200, 150),
  };
  rows.push_back(Row(2, 8 << 10, 4, 5, 0));  // NCCL not measured
  rows[3].two_shot.wrong = 2;
  auto s = SummarizeBench(rows);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].ranks, 2);
  EXPECT_FALSE(s[0].nccl_measured);
  EXPECT_EQ(s[0].two_shot_from, -1);
  EXPECT_EQ(s[1].ranks, 8);
  EXPECT_EQ(s[1].two_shot_from, 256 << 10);
  EXPECT_EQ(s[1].nccl_from, 4 << 20);
  EXPECT_EQ(s[1].small_rows, 4);  // 8, 64, 128, 256 KiB
  EXPECT_DOUBLE_EQ(s[1].small_ratio_min, 6.0 / 20);
  EXPECT_DOUBLE_EQ(s[1].small_ratio_max, 12.0 / 24);
  EXPECT_EQ(s[1].wrong, 2);
}

TEST(RenderBenchTable, SaysWhatWasMeasured) {
  BenchOptions o;
  o.mode = "processes";
  o.shared_gpu = true;
  const std::vector<BenchRow> shared = {Row(2, 8 << 10, 4500, 4510, 0)};
  const std::string t = RenderBenchTable(o, shared, "H200");
  EXPECT_NE(t.find("NCCL: NOT MEASURED"), std::string::npos) << t;
  EXPECT_NE(t.find("NOT a timing"), std::string::npos) << t;
  EXPECT_NE(t.find("n/m"), std::string::npos) << t;
  o.shared_gpu = false;
  const std::vector<BenchRow> nvlink = {Row(8, 8 << 10, 7, 9, 20), Row(8, 256 << 10, 15, 12, 22),
                                        Row(8, 8 << 20, 90, 60, 50)};
  const std::string u = RenderBenchTable(o, nvlink, "H200 x 8");
  EXPECT_NE(u.find("ONE PROCESS PER RANK, one GPU each"), std::string::npos) << u;
  EXPECT_NE(u.find("NCCL faster than the best custom kernel from 8 MiB"), std::string::npos) << u;
  EXPECT_NE(u.find("two-shot faster than one-shot from 256 KiB"), std::string::npos) << u;
  EXPECT_NE(u.find("0.35-0.68x (goal <= 0.60: NOT met)"), std::string::npos) << u;
  EXPECT_NE(u.find("0.35x"), std::string::npos) << u;  // the per-row ratio column
}

TEST(BenchRowsJson, RoundTripAndBadInput) {
  std::vector<BenchRow> rows = {Row(4, 1 << 20, 10.5, 9.25, 30), Row(4, 2 << 20, 20, 18, 0)};
  rows[1].one_shot.wrong = 7;
  auto back = BenchRowsFromJson(BenchRowsToJson(rows));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ASSERT_EQ(back->size(), 2u);
  EXPECT_EQ((*back)[0].bytes, 1 << 20);
  EXPECT_DOUBLE_EQ((*back)[0].two_shot.time_us, 9.25);
  EXPECT_EQ((*back)[1].one_shot.wrong, 7);
  EXPECT_EQ((*back)[1].nccl.time_us, 0);
  EXPECT_FALSE(BenchRowsFromJson(nlohmann::json::object()).ok());
  EXPECT_FALSE(BenchRowsFromJson(nlohmann::json::parse(R"([{"ranks": 2}])")).ok());
}

TEST(ApplyOverrides, NewMemoryFiguresDropTheLogsFigures) {
  Plan p;
  p.logged_free_after[kStepWeights] = 21 * kGiB;
  Overrides o;
  o.weights_bytes = 40 * kGiB;
  ASSERT_TRUE(ApplyOverrides(o, &p).ok());
  EXPECT_TRUE(p.logged_free_after.empty());
}

}  // namespace
}  // namespace tpt::repro
