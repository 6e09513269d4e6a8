#include "parser/rank_resolve.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "parser/format_set.h"
#include "parser/parser.h"

namespace tpt {
namespace {

Event Ev(int dp, int tp, std::string process = "") {
  Event e;
  e.kind = "cuda_oom";
  e.dp_rank = dp;
  e.tp_rank = tp;
  e.process = std::move(process);
  return e;
}

TEST(ResolveRanks, DpAttentionTpIsAlreadyGlobal) {
  // SGLang DP attention: tp 0..3 over dp 0..1, each tp under one dp.
  std::vector<Event> ev = {Ev(0, 0), Ev(0, 1), Ev(1, 2), Ev(1, 3), Ev(1, 3)};
  ResolveRanks(&ev);
  EXPECT_EQ(ev[0].rank, 0);
  EXPECT_EQ(ev[2].rank, 2);
  EXPECT_EQ(ev[4].rank, 3);
}

Event At(std::string kind, std::string file, uint64_t line, int tp = -1, int traceback_line = 0) {
  Event e = Ev(-1, tp);
  e.kind = std::move(kind);
  e.file = std::move(file);
  e.line = line;
  if (traceback_line > 0) e.fields()["traceback_line"] = traceback_line;
  return e;
}

TEST(ResolveRanks, TracebackTakesTheRankOfTheLineThatAnnouncedIt) {
  // "[23:17:08 TP4] Exception in run_tp_server:" (line 18), then an unprefixed
  // traceback from line 19; another rank's traceback elsewhere stays unknown.
  std::vector<Event> ev = {At("weights_load_end", "run.log", 17, 0), At("worker_exception", "run.log", 18, 4),
                           At("exception", "run.log", 25, -1, 19), At("exception", "run.log", 60, -1, 50),
                           At("exception", "other.log", 25, -1, 19)};
  ResolveRanks(&ev);
  EXPECT_EQ(ev[2].tp_rank, 4);
  EXPECT_EQ(ev[2].rank, 4);
  EXPECT_EQ(ev[3].rank, -1);  // not next to a ranked line
  EXPECT_EQ(ev[4].rank, -1);  // another file
  // "[TP2] Scheduler hit an exception: Traceback ..." starts on the header's own line.
  std::vector<Event> ev2 = {At("worker_exception", "b.log", 7, 2), At("exception", "b.log", 12, -1, 7)};
  ResolveRanks(&ev2);
  EXPECT_EQ(ev2[1].tp_rank, 2);
}

// Each file keeps its last 16 ranked events (a ring): the announcing line is
// found among them after many more, across files taking turns; one 16 ranked
// events back is forgotten, as before.
TEST(ResolveRanks, TracebackFindsItsLineAmongTheLast16OfItsFile) {
  std::vector<Event> ev;
  for (uint64_t line = 1; line <= 40; ++line) {
    ev.push_back(At("batch_stats", "a.log", line, static_cast<int>(line % 8)));
    ev.push_back(At("batch_stats", "b.log", line, static_cast<int>((line + 3) % 8)));
  }
  ev.push_back(At("exception", "a.log", 45, -1, 40));  // line 40 of a.log: tp 0
  ev.push_back(At("exception", "b.log", 46, -1, 33));  // b.log's 33: 8 events back, tp 4
  ev.push_back(At("exception", "a.log", 47, -1, 24));  // a.log's 24: 17 events back, forgotten
  ResolveRanks(&ev);
  EXPECT_EQ(ev[80].tp_rank, 0);
  EXPECT_EQ(ev[81].tp_rank, 4);
  EXPECT_EQ(ev[82].tp_rank, -1);
  EXPECT_EQ(ev[82].rank, -1);
}

TEST(ResolveRanks, EventsOfOneLineShareTheirRank) {
  // A traceback's last line is its exception (ranked by the announcing line)
  // and a cuda_oom parsed from the same line.
  std::vector<Event> ev = {At("worker_exception", "run.log", 18, 3), At("cuda_oom", "run.log", 22),
                           At("exception", "run.log", 22, -1, 19), At("cuda_oom", "run.log", 40)};
  ResolveRanks(&ev);
  EXPECT_EQ(ev[2].tp_rank, 3);
  EXPECT_EQ(ev[1].tp_rank, 3);
  EXPECT_EQ(ev[1].rank, 3);
  EXPECT_EQ(ev[3].rank, -1);  // another line
}

TEST(ResolveRanks, TorchRankInTheDefaultGroupIsTheGlobalRank) {
  // torchrun "[default1]:" gives the local rank; "[Rank 5] Watchdog caught ..."
  // in the default process group is the global rank; in a named group it is not.
  Event wd = At("watchdog_timeout", "a.log", 3);
  wd.local_rank = 1;
  wd.fields()["pg_rank"] = 5;
  Event sub = wd;
  sub.line = 4;
  sub.fields()["pg"] = "ID 3 PG GUID 3(tp_group)";
  Event def = wd;
  def.line = 5;
  def.fields()["pg"] = "ID 0 PG GUID 0(default_pg)";
  std::vector<Event> ev = {wd, sub, def};
  ResolveRanks(&ev);
  EXPECT_EQ(ev[0].rank, 5);
  EXPECT_EQ(ev[1].rank, -1);
  EXPECT_EQ(ev[2].rank, 5);
}

TEST(ResolveRanks, DpReplicasUseServerArgsSizes) {
  // Two replicas of TP 0..1; server_args says tp_size 4 (ranks 2, 3 printed nothing).
  Event args;
  args.kind = "server_args";
  args.fields()["tp_size"] = 4;
  std::vector<Event> ev = {args, Ev(0, 0), Ev(0, 1), Ev(1, 0), Ev(1, 1)};
  ResolveRanks(&ev);
  EXPECT_EQ(ev[0].rank, -1);  // no tp rank: untouched
  EXPECT_EQ(ev[1].rank, 0);
  EXPECT_EQ(ev[2].rank, 1);
  EXPECT_EQ(ev[3].rank, 4);
  EXPECT_EQ(ev[4].rank, 5);
}

TEST(ResolveRanks, DpReplicasWithoutServerArgsUseLargestSeen) {
  std::vector<Event> ev = {Ev(0, 0), Ev(0, 1), Ev(1, 0), Ev(1, 1)};
  ResolveRanks(&ev);
  EXPECT_EQ(ev[2].rank, 2);
  EXPECT_EQ(ev[3].rank, 3);
}

TEST(ResolveRanks, VllmProcessNamesFillParallelRanks) {
  std::vector<Event> ev = {Ev(-1, -1, "Worker_PP0_TP1"), Ev(-1, -1, "Worker_PP1_TP1"), Ev(-1, -1, "Worker_PP1_TP0"),
                           Ev(-1, -1, "EngineCore_DP2"), Ev(-1, -1, "Worker_TP1_EP1")};
  ev[4].rank = 7;  // a prefix that gave a rank keeps it
  ResolveRanks(&ev);
  EXPECT_EQ(ev[0].pp_rank, 0);
  EXPECT_EQ(ev[0].tp_rank, 1);
  EXPECT_EQ(ev[1].pp_rank, 1);
  EXPECT_EQ(ev[3].dp_rank, 2);
  EXPECT_EQ(ev[3].tp_rank, -1);
  EXPECT_EQ(ev[3].rank, -1);
  EXPECT_EQ(ev[4].ep_rank, 1);
  EXPECT_EQ(ev[4].rank, 7);
  // tp 1 is seen under pp 0 and pp 1: not global, so pp * tp_size + tp (tp_size 2).
  EXPECT_EQ(ev[0].rank, 1);
  EXPECT_EQ(ev[1].rank, 3);
  EXPECT_EQ(ev[2].rank, 2);
}

TEST(ResolveRanks, NoTpRanksLeavesEventsAlone) {
  std::vector<Event> ev = {Ev(-1, -1, "APIServer"), Ev(3, -1)};
  ResolveRanks(&ev);
  EXPECT_EQ(ev[0].rank, -1);
  EXPECT_EQ(ev[1].rank, -1);
}

Event Nccl(std::string kind, std::string host, int pid, int dev, int comm_rank = -1, int nranks = 0) {
  Event e;
  e.kind = std::move(kind);
  e.host = std::move(host);
  e.pid = pid;
  e.local_rank = dev;
  if (comm_rank >= 0) {
    e.fields()["comm_rank"] = comm_rank;
    e.fields()["nranks"] = nranks;
  }
  return e;
}

// NCCL's `host:pid:tid [dev]`: [dev] is the CUDA device, the rank is what the
// process's own ncclCommInitRank line says, in its largest communicator.
TEST(ResolveRanks, NcclLinesTakeTheRankOfTheirProcessInitLine) {
  std::vector<Event> ev = {
      Nccl("nccl_warn", "node7", 40213, 0),               // before its init line: the run is resolved whole
      Nccl("nccl_comm_init", "node7", 40213, 0, 1, 2),    // a TP subgroup of 2: rank 1 there
      Nccl("nccl_comm_init", "node7", 40213, 0, 6, 8),    // the world of 8: rank 6
      Nccl("nccl_comm_init", "node8", 40213, 0, 2, 8),    // same pid on another host: another process
      Nccl("nccl_warn", "node8", 40213, 0),
      Nccl("nccl_warn", "node9", 5, 1),                   // no init line: unknown, not device 1
      Nccl("nccl_comm_init", "node9", 7, 0, 1, 4),        // one pid that names two ranks at one size
      Nccl("nccl_comm_init", "node9", 7, 0, 3, 4),
      Nccl("nccl_warn", "node9", 7, 0)};
  ResolveRanks(&ev);
  EXPECT_EQ(ev[0].rank, 6);
  EXPECT_EQ(ev[4].rank, 2);
  EXPECT_EQ(ev[5].rank, -1);
  EXPECT_EQ(ev[8].rank, -1);
}

// A file that names only its process (vLLM's VLLM_TRACE_FUNCTION trace is
// named by pid) takes the ranks that process's prefixed lines named.
TEST(ResolveRanks, AProcessesOtherFilesTakeTheRanksItsPrefixedLinesNamed) {
  std::vector<Event> ev = {Ev(-1, -1, "VllmWorker_TP0"), Ev(-1, -1, "VllmWorker_TP1"), Ev(-1, -1), Ev(-1, -1),
                           Ev(-1, -1, "VllmWorker_TP0"), Ev(-1, -1, "VllmWorker_TP1"), Ev(-1, -1)};
  ev[0].pid = 4241, ev[1].pid = 4242;
  ev[2].pid = 4242, ev[2].file = "VLLM_TRACE_FUNCTION_for_process_4242_thread_140_at_x.log";
  ev[3].pid = 999;                   // a pid no prefixed line named
  ev[4].pid = 77, ev[5].pid = 77;    // one pid, two tp ranks: left alone
  ev[6].pid = 77;
  ResolveRanks(&ev);
  EXPECT_EQ(ev[1].rank, 1);
  EXPECT_EQ(ev[2].tp_rank, 1);
  EXPECT_EQ(ev[2].rank, 1);
  EXPECT_EQ(ev[3].rank, -1);
  EXPECT_EQ(ev[6].rank, -1);
}

// Whole parser: real line shapes through the builtin formats get a rank.
TEST(ResolveRanks, ParseRunToMemoryResolvesPrefixRanks) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("tpt_rank_resolve_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::string sglang = (dir / "sglang.log").string(), vllm = (dir / "vllm.log").string();
  const char* oom =
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.19 "
      "GiB of which 1.00 GiB is free.\n";
  std::ofstream(sglang) << "[2025-10-14 10:00:01 DP1 TP0] " << oom << "[2025-10-14 10:00:01 DP0 TP0] " << oom
                        << "[2025-10-14 10:00:01 DP1 TP1] " << oom;
  std::ofstream(vllm) << "(Worker_TP1 pid=123) ERROR 10-14 10:00:01 [gpu_worker.py:1] " << oom;
  auto formats = FormatSet::LoadBuiltin();
  ASSERT_TRUE(formats.ok()) << formats.status().ToString();
  for (const auto& [path, want] : std::vector<std::pair<std::string, std::vector<int>>>{
           {sglang, {2, 0, 3}}, {vllm, {1}}}) {
    auto run = ParseRunToMemory({path}, *formats, ParseOptions());
    ASSERT_TRUE(run.ok()) << run.status().ToString();
    std::vector<int> got;
    for (const Event& e : run->events) {
      if (e.kind == "cuda_oom") got.push_back(e.rank);
    }
    EXPECT_EQ(got, want) << path;
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace tpt
