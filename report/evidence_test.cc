// evidence_test.cc: evidence lines as text, markdown and HTML show them: the
// same line of several ranks once with the exact ranks, long argument dumps
// by their start and the values read, everything else whole.
#include "report/evidence.h"

#include <gtest/gtest.h>

namespace tpt::report {
namespace {

Evidence Ev(int rank, uint64_t line, std::string text, std::vector<std::string> read = {}) {
  Evidence e;
  e.file = "server.log";
  e.line = line;
  e.rank = rank;
  e.text = std::move(text);
  e.read = std::move(read);
  return e;
}

TEST(EvidenceRows, SameLineOfEveryRankIsOneRowNamingTheRanksAndLines) {
  std::vector<Evidence> ev;
  for (int r = 0; r < 8; ++r) ev.push_back(Ev(r, 52 + 15 * r, "RuntimeError: Not enough memory."));
  ev.insert(ev.begin() + 1, Ev(-1, 2, "server_args=ServerArgs(tp_size=8)"));
  size_t left = 99;
  auto rows = EvidenceRows(ev, 8, &left);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(left, 0u);
  EXPECT_EQ(rows[0].line->rank, 0);
  EXPECT_EQ(rows[0].same.size(), 7u);
  EXPECT_EQ(SameLineNote(rows[0]), "(same line on ranks 1-7: lines 67, 82, 97, 112, 127, 142, 157)");
  EXPECT_EQ(SameLineNote(rows[1]), "");
}

TEST(EvidenceRows, OnlyRanksWhoseLineIsThereAndNeverARanklessLine) {
  std::vector<Evidence> ev = {Ev(0, 10, "boom"), Ev(2, 12, "boom"), Ev(5, 15, "boom"), Ev(-1, 20, "boom"),
                              Ev(2, 30, "boom"), Ev(3, 40, "boom!")};
  auto rows = EvidenceRows(ev, 8);
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(SameLineNote(rows[0]), "(same line on ranks 2,5: lines 12, 15)");
  EXPECT_EQ(rows[1].line->rank, -1) << "a rank-less line stays on its own";
  EXPECT_EQ(rows[2].line->line, 30u) << "rank 2's second line is not claimed as another rank";
  EXPECT_EQ(rows[3].line->text, "boom!");
}

TEST(EvidenceRows, OtherFilesAreNamedAndRowsAreCapped) {
  std::vector<Evidence> ev = {Ev(0, 10, "boom"), Ev(1, 11, "boom"), Ev(0, 1, "a"), Ev(0, 2, "b"), Ev(0, 3, "c")};
  ev[1].file = "rank1.log";
  size_t left = 0;
  auto rows = EvidenceRows(ev, 2, &left);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(SameLineNote(rows[0]), "(same line on rank 1: rank1.log:11)");
  EXPECT_EQ(left, 2u) << "lines, not rows, left out";
}

TEST(EvidenceRows, OnlyTheLeadingTimeAndRankPrefixMayDiffer) {
  EXPECT_EQ(SameLineKey("[2025-11-20 09:14:14 TP0] Load weight begin. avail mem=94.00 GB"),
            SameLineKey("[2025-11-20 09:14:15 TP3] Load weight begin. avail mem=94.00 GB"));
  EXPECT_NE(SameLineKey("[2025-11-20 09:14:14 TP0] Load weight begin. avail mem=94.00 GB"),
            SameLineKey("[2025-11-20 09:14:14 TP0] Load weight begin. avail mem=93.00 GB"));
  EXPECT_EQ(SameLineKey("INFO 10-14 11:02:29 [gpu_worker.py:298] x"), "INFO ##-## ##:##:## [gpu_worker.py:###] x");
  EXPECT_NE(SameLineKey("RuntimeError: rank 1 failed"), SameLineKey("RuntimeError: rank 2 failed"));
  // NCCL watchdog timeouts differ past their prefix (ran for N ms): kept apart.
  std::string a = "[E304 02:27:08.408 ProcessGroupNCCL.cpp:632] [PG ID 0 Rank 0] Watchdog caught ... ran for 600068 ms";
  std::string b = "[E304 02:27:08.414 ProcessGroupNCCL.cpp:632] [PG ID 0 Rank 1] Watchdog caught ... ran for 600071 ms";
  EXPECT_NE(SameLineKey(a), SameLineKey(b));
}

std::string Dump(const std::string& tail) {
  std::string s = "[2025-11-20 09:14:02] server_args=ServerArgs(model_path='/models/ckpt-580b', tokenizer_path='/m', ";
  for (int i = 0; i < 30; ++i) s += "option_" + std::to_string(i) + "='v" + std::to_string(i) + "', ";
  return s + tail;
}

TEST(ShowEvidence, LongDumpShowsItsStartAndTheValuesRead) {
  Evidence e = Ev(-1, 2, Dump("mem_fraction_static=0.5, cuda_graph_bs=[1, 2, 4], tp_size=8, last=None)"),
                  {"cuda_graph_bs", "mem_fraction_static", "tp_size"});
  ASSERT_GT(e.text.size(), kDumpBytes);
  ShownEvidence s = ShowEvidence(e);
  EXPECT_EQ(s.text.rfind("[2025-11-20 09:14:02] server_args=ServerArgs(model_path='/models/ckpt-580b'", 0), 0u) << s.text;
  EXPECT_NE(s.text.find(", … mem_fraction_static=0.5, … cuda_graph_bs=[1, 2, 4], … tp_size=8, …)"),
            std::string::npos)
      << s.text;
  EXPECT_LT(s.text.size(), 300u);
  EXPECT_NE(s.note.find("line 2 of the file, or --format json"), std::string::npos) << s.note;
}

TEST(ShowEvidence, AValueReadThatCannotBeFoundKeepsTheLineWhole) {
  Evidence e = Ev(-1, 2, Dump("tp_size=8)"), {"tp_size", "num_shard"});
  ShownEvidence s = ShowEvidence(e);
  EXPECT_EQ(s.text, e.text);
  EXPECT_EQ(s.note, "");
}

TEST(ShowEvidence, OrdinaryLongLinesAndShortDumpsAreWhole) {
  std::string oom = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.95 GiB.";
  while (oom.size() < 900) oom += " Of the allocated memory 74.02 GiB is allocated by PyTorch.";
  oom += " PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.";
  EXPECT_EQ(ShowEvidence(Ev(1, 8, oom)).text, oom);
  std::string args = "Args { model_id: \"m\", num_shard: Some(2), port: 80, master_port: 29500 }";
  EXPECT_EQ(ShowEvidence(Ev(-1, 1, args, {"tp_size"})).text, args);
}

}  // namespace
}  // namespace tpt::report
