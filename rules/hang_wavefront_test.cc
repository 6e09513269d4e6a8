// hang_wavefront_test.cc: the stuck collective and the missing ranks, from
// the flight-recorder dumps of samples/rules (real dumps, samples/hangs/README.md).
#include "rules/hang_wavefront.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include <gtest/gtest.h>

#include "rules/analyzer.h"

namespace tpt {
namespace {

std::string Sample(const std::string& rel) {
  const char* src = std::getenv("TPT_SOURCE_DIR");
  return std::string(src ? src : ".") + "/samples/rules/" + rel;
}

const Analyzer& TheAnalyzer() {
  static const Analyzer* an = [] {
    auto a = Analyzer::Create({});
    if (!a.ok()) std::abort();
    return new Analyzer(std::move(*a));
  }();
  return *an;
}

struct Want {
  const char* folder;
  int seq;
  const char* op;
  const char* missing;
  int rank;
};

TEST(HangWavefront, EachSampleNamesTheStuckCollectiveAndTheMissingRanks) {
  for (const Want& w : {Want{"fr_hang_wavefront/pos_hang_2ranks_pickle", 4, "gloo:all_reduce", "1", 1},
                        Want{"fr_hang_wavefront/pos_hang_2ranks_json", 4, "gloo:all_reduce", "1", 1},
                        Want{"fr_hang_wavefront/pos_hang_8ranks", 4, "gloo:all_reduce", "3, 6", 3},
                        Want{"fr_hang_wavefront/pos_cut_rank1", 4, "gloo:all_reduce", "1", 1},
                        Want{"fr_hang_wavefront/pos_hang_64ranks", 4, "gloo:all_reduce", "17, 42", 17},
                        Want{"fr_hang_wavefront/pos_real_torchrun_2ranks", 4, "gloo:all_reduce", "1", 1}}) {
    auto a = TheAnalyzer().Run({Sample(w.folder)});
    ASSERT_TRUE(a.ok()) << w.folder << ": " << a.status().message();
    ASSERT_FALSE(a->diagnoses.empty()) << w.folder;
    const Diagnosis& d = a->diagnoses.front();
    EXPECT_EQ(a->root_cause, "nccl_timeout_hang") << w.folder;
    EXPECT_EQ(d.rule, "fr_hang_wavefront") << w.folder;
    EXPECT_EQ(d.figures.value("seq", -1), w.seq) << w.folder;
    EXPECT_EQ(d.figures.value("op", ""), w.op) << w.folder;
    EXPECT_EQ(d.figures.value("input_sizes", ""), "[[4096]]") << w.folder;
    EXPECT_EQ(d.figures.value("missing_ranks", ""), w.missing) << w.folder;
    EXPECT_EQ(d.rank, w.rank) << w.folder;
    // Evidence points at the missing rank's own dump record.
    ASSERT_FALSE(d.evidence.empty());
    EXPECT_NE(d.evidence[0].file.find("_rank_" + std::to_string(w.rank)), std::string::npos) << d.evidence[0].file;
    EXPECT_GT(d.evidence[0].line, 0u) << w.folder;
  }
}

TEST(HangWavefront, WhereEachMissingRankWasFromItsFrames) {
  auto a = TheAnalyzer().Run({Sample("fr_hang_wavefront/pos_hang_8ranks")});
  ASSERT_TRUE(a.ok()) << a.status().message();
  const std::string where = a->diagnoses.front().figures.value("where", "");
  EXPECT_NE(where.find("rank 3 last scheduled collective 3 (gloo:all_reduce, scheduled), called from worker (/tmp/m.py:34)"),
            std::string::npos) << where;
  EXPECT_NE(where.find("rank 6 last scheduled collective 3"), std::string::npos) << where;
  // ... and from each missing rank's own stack dump beside the dumps (faulthandler, real).
  EXPECT_NE(where.find("rank 6 last scheduled collective 3 (gloo:all_reduce, scheduled), called from worker (/tmp/m.py:34); "
                       "its stack (faulthandler, main thread): load_next_batch (/tmp/m.py:16) < worker (/tmp/m.py:38)"),
            std::string::npos) << where;
  // Real py-spy dumps of the hung processes (py-spy 0.4.3 on the GPU box,
  // beside torchrun's own log and the dumps of the same run).
  auto r = TheAnalyzer().Run({Sample("fr_hang_wavefront/pos_real_torchrun_2ranks")});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_NE(r->verdict.find("its stack (py-spy, thread MainThread): load_next_batch (train.py:3) < main (train.py:15)"),
            std::string::npos) << r->verdict;
  // py-spy's dump names the thread.
  auto b = TheAnalyzer().Run({Sample("fr_hang_wavefront/pos_hang_2ranks_pickle")});
  ASSERT_TRUE(b.ok()) << b.status().message();
  EXPECT_NE(b->verdict.find("its stack (py-spy, thread MainThread): load_next_batch (/tmp/m.py:16) < worker (/tmp/m.py:38)."),
            std::string::npos) << b->verdict;
  EXPECT_NE(a->verdict.find("2 ranks (3, 6) never called it"), std::string::npos) << a->verdict;
}

TEST(HangWavefront, ACutDumpIsSaidAndItsRankStillPlaced) {
  auto a = TheAnalyzer().Run({Sample("fr_hang_wavefront/pos_cut_rank1")});
  ASSERT_TRUE(a.ok()) << a.status().message();
  bool said = false;
  for (const std::string& w : a->warnings) said |= w.find("nccl_trace_rank_1: the pickle ends at byte 1650") != std::string::npos;
  EXPECT_TRUE(said);
  // Its records stop at 2; its pg_status (read before the cut) says 3.
  EXPECT_NE(a->diagnoses.front().figures.value("where", "").find("rank 1 last scheduled collective 2"), std::string::npos);
}

TEST(HangWavefront, DesyncNamesWhichRankCalledWhat) {
  auto a = TheAnalyzer().Run({Sample("collective_desync/pos_fr_desync_4ranks")});
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_EQ(a->root_cause, "collective_desync");
  EXPECT_EQ(a->diagnoses.front().rank, 2);
  EXPECT_NE(a->verdict.find("rank 2 called gloo:all_gather (in [[4096]]) where ranks 0, 1, 3 called gloo:all_reduce"),
            std::string::npos) << a->verdict;
  for (const auto& d : a->diagnoses) EXPECT_NE(d.rule, "fr_hang_wavefront") << "every rank scheduled collective 4";
}

// The log alone guesses (rank 1 printed no timeout); with the dumps beside it
// the verdict names the collective and where rank 1 was.
TEST(HangWavefront, BesideTheLogTheDumpsMakeTheHangExact) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("tpt_wavefront_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "train.log")
      << "[rank0]:[E1205 15:57:51.100000000 ProcessGroupNCCL.cpp:632] [Rank 0] Watchdog caught collective operation "
         "timeout: WorkNCCL(SeqNum=4, OpType=ALLREDUCE, NumelIn=4096, NumelOut=4096, Timeout(ms)=600000) ran for "
         "600010 milliseconds before timing out.\n";
  auto alone = TheAnalyzer().Run({(dir / "train.log").string()});
  ASSERT_TRUE(alone.ok()) << alone.status().message();
  EXPECT_EQ(alone->root_cause, "nccl_timeout_hang");
  EXPECT_EQ(alone->diagnoses.front().rule, "nccl_timeout_hang");
  for (const char* r : {"nccl_trace_rank_0", "nccl_trace_rank_1"})
    fs::copy_file(Sample(std::string("fr_hang_wavefront/pos_hang_2ranks_pickle/") + r), dir / r);
  auto both = TheAnalyzer().Run({dir.string()});
  ASSERT_TRUE(both.ok()) << both.status().message();
  EXPECT_EQ(both->root_cause, "nccl_timeout_hang");
  EXPECT_EQ(both->diagnoses.front().rule, "fr_hang_wavefront");
  EXPECT_EQ(both->diagnoses.front().rank, 1);
  EXPECT_NE(both->verdict.find("Collective 4 of process group 0 (gloo:all_reduce, input sizes [[4096]]) hangs"),
            std::string::npos) << both->verdict;
  fs::remove_all(dir);
}

// Real gloo dumps of ranks 0, 1, 3 (samples/hangs/make_more_dumps.py): rank 2
// left none, and pg_config names it.
TEST(HangWavefront, TheRankThatLeftNoDumpIsTheMissingOne) {
  auto a = TheAnalyzer().Run({Sample("fr_hang_wavefront/pos_nodump_4ranks")});
  ASSERT_TRUE(a.ok()) << a.status().message();
  ASSERT_FALSE(a->diagnoses.empty());
  const Diagnosis& d = a->diagnoses.front();
  EXPECT_EQ(d.rule, "fr_hang_wavefront");
  EXPECT_EQ(d.rank, 2);
  EXPECT_EQ(d.figures.value("seq", -1), 4);
  EXPECT_EQ(d.figures.value("missing_ranks", ""), "2");
  EXPECT_NE(a->verdict.find("rank(s) 0, 1, 3 scheduled it and wait in it, rank(s) 2 never reached it (rank(s) 2 left no dump)"),
            std::string::npos) << a->verdict;
}

// The p2p sample (NCCL's record shape, samples/hangs/make_p2p_sample.py): rank
// 2's second send to rank 3 waits; rank 3 posted one recv.
TEST(HangWavefront, TheP2pSampleNamesThePairAndTheMissingRank) {
  auto a = TheAnalyzer().Run({Sample("fr_hang_wavefront/pos_p2p_4ranks")});
  ASSERT_TRUE(a.ok()) << a.status().message();
  ASSERT_FALSE(a->diagnoses.empty());
  EXPECT_EQ(a->diagnoses.front().rank, 3);
  EXPECT_NE(a->verdict.find("Point-to-point nccl:send 2->3 (p2p seq 2, input sizes [[8,4096]]) of process group 0 hangs: "
                            "rank 2 waits in it, rank 3 never posted the matching op"),
            std::string::npos) << a->verdict;
  size_t p2p = 0;
  for (const auto& d : a->diagnoses) p2p += d.rule == "fr_hang_wavefront";
  EXPECT_EQ(p2p, 1u) << "the 0->1 pair is in step";
}

// gdb's stacks beside the dumps place the missing rank like py-spy's do.
TEST(HangWavefront, GdbStacksSayWhereTheMissingRankWas) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("tpt_wavefront_gdb_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  for (const char* r : {"nccl_trace_rank_0", "nccl_trace_rank_1"})
    fs::copy_file(Sample(std::string("fr_hang_wavefront/pos_hang_2ranks_pickle/") + r), dir / r);
  fs::copy_file(Sample("../hangs/stacks/gdb/gdb_rank_1.txt"), dir / "gdb_rank_1.txt");
  auto a = TheAnalyzer().Run({dir.string()});
  fs::remove_all(dir);
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_NE(a->verdict.find("its stack (gdb, thread python3): pysleep (../Modules/timemodule.c:2159) < time_sleep"),
            std::string::npos) << a->verdict;
}

// vLLM's function-call trace of the missing rank (VLLM_TRACE_FUNCTION=1,
// parser/vllm_trace.h; traced under the job's own directory, as
// enable_trace_function_call's root_dir allows), renamed after its rank,
// places it like a py-spy dump does, and is read as a folder's file by content.
TEST(HangWavefront, AVllmTraceSaysWhereTheMissingRankWas) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("tpt_wavefront_vllm_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  for (const char* r : {"nccl_trace_rank_0", "nccl_trace_rank_1"})
    fs::copy_file(Sample(std::string("fr_hang_wavefront/pos_hang_2ranks_pickle/") + r), dir / r);
  std::ofstream(dir / "vllm_trace_rank_1.log")
      << "2026-12-05 15:56:51.213000 Call to worker in /tmp/m.py:20 from _wrap in /tmp/spawn.py:87\n"
         "2026-12-05 15:56:51.213100 Call to load_next_batch in /tmp/m.py:14 from worker in /tmp/m.py:38\n";
  auto a = TheAnalyzer().Run({dir.string()});
  fs::remove_all(dir);
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_NE(a->verdict.find("its stack (vllm_trace, the traced thread): load_next_batch"), std::string::npos) << a->verdict;
  EXPECT_NE(a->verdict.find("load_next_batch (/tmp/m.py:14) < worker (/tmp/m.py:38)"), std::string::npos) << a->verdict;
  ASSERT_EQ(a->collective_lanes.size(), 1u);
  EXPECT_EQ(a->collective_lanes[0].rows.back().stack, "load_next_batch (/tmp/m.py:14)");
}

// SGLang's watchdog's py-spy dump in the server log places the missing rank.
TEST(HangWavefront, SGLangWatchdogStacksInTheLogSayWhereTheMissingRankWas) {
  auto a = TheAnalyzer().Run({Sample("fr_hang_wavefront/pos_hang_2ranks_pickle/nccl_trace_rank_0"),
                              Sample("fr_hang_wavefront/pos_hang_2ranks_pickle/nccl_trace_rank_1"),
                              Sample("../hangs/stacks/sglang_watchdog_tp1.log")});
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_NE(a->verdict.find("its stack (py-spy logged by SGLang's watchdog, thread MainThread): load_next_batch (/tmp/m.py:16)"),
            std::string::npos) << a->verdict;
}

// NCCL RAS alone (ncclras text and JSON, written by us in NCCL 2.30.7's
// layout): the rank of the dead process is the missing one.
TEST(HangWavefront, NcclRasAloneNamesTheDeadRank) {
  for (const char* f : {"../hangs/ras/ncclras_rank5_dead.txt", "../hangs/ras/ncclras_rank5_dead.json"}) {
    auto a = TheAnalyzer().Run({Sample(f)});
    ASSERT_TRUE(a.ok()) << a.status().message();
    ASSERT_FALSE(a->diagnoses.empty()) << f;
    EXPECT_EQ(a->diagnoses.front().rule, "fr_hang_wavefront") << f;
    EXPECT_EQ(a->diagnoses.front().rank, 5) << f;
    EXPECT_NE(a->verdict.find("cf264af53edbe986"), std::string::npos) << f << ": " << a->verdict;
    EXPECT_NE(a->verdict.find("is missing rank(s) 5;"), std::string::npos) << f << ": " << a->verdict;
    EXPECT_NE(a->verdict.find("process 3487984 on node 172.16.64.213 (GPU 1) is considered dead"), std::string::npos)
        << f << ": " << a->verdict;
  }
}

// With the dumps, RAS says which missing rank died: it leads the verdict
// (ranks 3 and 6 never called collective 4; RAS calls rank 6's process dead).
TEST(HangWavefront, TheRankNcclRasCallsDeadLeads) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("tpt_wavefront_ras_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  for (const auto& f : fs::directory_iterator(Sample("fr_hang_wavefront/pos_hang_8ranks")))
    if (f.path().filename().string().rfind("nccl_trace_rank_", 0) == 0) fs::copy_file(f.path(), dir / f.path().filename());
  std::ofstream(dir / "ncclras.txt") << "NCCL version 2.30.7 compiled with CUDA 13.0\n\nCommunicators... (2.051s)\n=============\n\n"
                                        "Errors\n======\n\nDEAD\n  1 job process is considered dead (unreachable via the RAS network)\n"
                                        "  Process 5106 on node 10.0.0.2 managing GPU 6\n\n"
                                        "#0-0 (cf264af53edbe986) INCOMPLETE\n  Missing communicator data from 1 rank\n"
                                        "  Rank 6 -- GPU 6 managed by process 5106 on node 10.0.0.2\n";
  auto a = TheAnalyzer().Run({dir.string()});
  fs::remove_all(dir);
  ASSERT_TRUE(a.ok()) << a.status().message();
  ASSERT_FALSE(a->diagnoses.empty());
  EXPECT_EQ(a->diagnoses.front().rank, 6) << a->verdict;
  EXPECT_EQ(a->diagnoses.front().figures.value("missing_ranks", ""), "3, 6");
  EXPECT_NE(a->verdict.find("NCCL RAS: process 5106 on node 10.0.0.2 (GPU 6) is considered dead"), std::string::npos)
      << a->verdict;
}

Event Record(int rank, int64_t seq, const std::string& op) {
  Event e;
  e.kind = "fr_collective";
  e.rank = rank;
  e.file = "nccl_trace_rank_" + std::to_string(rank);
  e.Set("seq", seq);
  e.Set("op", op);
  e.Set("pg", "0");
  e.Set("state", "completed");
  e.Set("is_p2p", false);
  return e;
}

TEST(HangWavefront, ACutDumpWithoutStatusIsNotCalledMissing) {
  std::vector<Event> events = {Record(0, 7, "nccl:all_reduce"), Record(1, 7, "nccl:all_reduce"), Record(2, 5, "nccl:all_reduce")};
  Event cut;
  cut.kind = "fr_dump";
  cut.rank = 2;
  cut.Set("cut", true);
  events.push_back(cut);
  RunTotals totals;
  EXPECT_EQ(AddCollectiveWavefront(&events, &totals), 0u) << "rank 2's records stop at a cut: its place is unknown";
  events.pop_back();
  EXPECT_EQ(AddCollectiveWavefront(&events, &totals), 1u);
  EXPECT_EQ(events.back().kind, "collective_wavefront");
  EXPECT_EQ(events.back().rank, 2);
  EXPECT_EQ(events.back().Get("ranks_reached").string(), "0, 1");
  EXPECT_EQ(totals.events, 1u);
  // One rank's dump alone says nothing about the others.
  std::vector<Event> one = {Record(0, 7, "nccl:all_reduce")};
  EXPECT_EQ(AddCollectiveWavefront(&one, nullptr), 0u);
}

// Per process group: a TP group that is in step does not hide the stuck one,
// and p2p records (their own sequence) are not collectives.
TEST(HangWavefront, EachProcessGroupHasItsOwnFront) {
  auto rec = [](int rank, const char* pg, int64_t seq, const char* op) {
    Event e = Record(rank, seq, op);
    e.Set("pg", pg);
    return e;
  };
  std::vector<Event> events = {rec(0, "tp", 90, "nccl:all_reduce"), rec(1, "tp", 90, "nccl:all_reduce"),
                               rec(0, "dp", 12, "nccl:all_gather"), rec(1, "dp", 11, "nccl:all_gather")};
  Event p2p = rec(1, "dp", 40, "nccl:send 0->1");
  p2p.Set("is_p2p", true);
  events.push_back(p2p);
  ASSERT_EQ(AddCollectiveWavefront(&events, nullptr), 1u);
  const Event& w = events.back();
  EXPECT_EQ(w.Get("pg").string(), "dp");
  EXPECT_EQ(w.Get("seq").number(), 12);
  EXPECT_EQ(w.Get("op").string(), "nccl:all_gather");
  EXPECT_EQ(w.Get("missing_ranks").string(), "1");
  EXPECT_EQ(w.rank, 1);
}


Event Dump(int rank, const std::string& ranks) {
  Event d;
  d.kind = "fr_dump";
  d.rank = rank;
  d.file = "nccl_trace_rank_" + std::to_string(rank);
  d.Set("pg_ranks", nlohmann::json{{"0", ranks}});
  d.Set("wrapped", false);
  return d;
}

Event P2p(int rank, const std::string& op, int64_t peer, int64_t nth, const char* state) {
  Event e = Record(rank, 0, "nccl:" + op + " " +
                                (op == "send" ? std::to_string(rank) + "->" + std::to_string(peer)
                                              : std::to_string(rank) + "<-" + std::to_string(peer)));
  e.Set("is_p2p", true);
  e.Set("p2p_op", op);
  e.Set("peer", peer);
  e.Set("p2p_nth", nth);
  e.Set("p2p_seq", nth);
  e.Set("state", state);
  return e;
}

// Pipeline stages 0->1 and 2->3: rank 2's second send waits, rank 3 posted
// one recv from it; the 0/1 pair is in step. Rank 3 is the missing one.
TEST(HangWavefront, P2pNamesThePeerThatNeverPostedTheMatchingOp) {
  std::vector<Event> events;
  for (int r = 0; r < 4; ++r) events.push_back(Dump(r, "[0, 1, 2, 3]"));
  events.push_back(P2p(0, "send", 1, 2, "completed"));
  events.push_back(P2p(1, "recv", 0, 2, "completed"));
  events.push_back(P2p(2, "send", 3, 2, "started"));
  events.push_back(P2p(3, "recv", 2, 1, "completed"));
  ASSERT_EQ(AddCollectiveWavefront(&events, nullptr), 1u);
  const Event& w = events.back();
  EXPECT_EQ(w.rank, 3);
  EXPECT_TRUE(w.Get("p2p").boolean());
  EXPECT_EQ(w.Get("ranks_reached").string(), "2");
  EXPECT_EQ(w.Get("op").string(), "nccl:send 2->3");
  EXPECT_NE(w.Get("where").string().find("rank 3 posted 1 recv(s) from rank 2 where rank 2 posted 2 send(s)"),
            std::string::npos) << w.Get("where").string();
  // Both send first and wait on each other: each is named as the other's missing peer.
  std::vector<Event> deadlock = {Dump(0, "[0, 1]"), Dump(1, "[0, 1]"), P2p(0, "send", 1, 1, "started"),
                                 P2p(1, "send", 0, 1, "started")};
  ASSERT_EQ(AddCollectiveWavefront(&deadlock, nullptr), 2u);
  EXPECT_EQ(deadlock[4].rank + deadlock[5].rank, 1);
}

// A rank that pg_config names but that left no dump is missing "with no
// dump", never silently absent; when the front completed, nothing is said.
TEST(HangWavefront, ARankWithoutADumpIsNamedMissing) {
  auto events_at = [](const char* state) {
    std::vector<Event> events;
    for (int r : {0, 1, 3}) {
      events.push_back(Dump(r, "[0, 1, 2, 3]"));
      Event rec = Record(r, 5, "nccl:all_reduce");
      rec.Set("state", state);
      events.push_back(rec);
    }
    return events;
  };
  std::vector<Event> events = events_at("started");
  ASSERT_EQ(AddCollectiveWavefront(&events, nullptr), 1u);
  const Event& w = events.back();
  EXPECT_EQ(w.rank, 2);
  EXPECT_TRUE(w.Get("no_dump").boolean());
  EXPECT_EQ(w.Get("missing_ranks").string(), "2");
  EXPECT_EQ(w.Get("ranks_reached").string(), "0, 1, 3");
  EXPECT_NE(w.Get("where_all").string().find("rank 2 left no flight-recorder dump"), std::string::npos);
  std::vector<Event> done = events_at("completed");
  EXPECT_EQ(AddCollectiveWavefront(&done, nullptr), 0u);
  // With a rank behind as well, both are named: the one behind and the one without a dump.
  events = events_at("started");
  events.push_back(Record(1, 6, "nccl:all_reduce"));
  events.back().Set("state", "started");
  events.push_back(Record(0, 6, "nccl:all_reduce"));
  events.back().Set("state", "started");
  ASSERT_EQ(AddCollectiveWavefront(&events, nullptr), 2u);
  EXPECT_EQ(events.back().Get("missing_ranks").string(), "2, 3");
}

}  // namespace
}  // namespace tpt
