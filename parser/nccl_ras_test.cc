// nccl_ras_test.cc: ncclras output (text, JSON, monitor) as ras_* events.
#include "parser/nccl_ras.h"

#include <gtest/gtest.h>

#include "parser/test_files.h"

namespace tpt {
namespace {

// Written by us in NCCL 2.30.7's layout (src/ras/client_support.cc), samples/hangs/README.md.
const char* kText = "samples/hangs/ras/ncclras_rank5_dead.txt";
const char* kJson = "samples/hangs/ras/ncclras_rank5_dead.json";

std::vector<const Event*> OfKind(const std::vector<Event>& events, const std::string& kind) {
  std::vector<const Event*> out;
  for (const Event& e : events)
    if (e.kind == kind) out.push_back(&e);
  return out;
}

TEST(NcclRas, DetectedByContent) {
  EXPECT_TRUE(LooksLikeNcclRas(SourceFile(kText)));
  EXPECT_TRUE(LooksLikeNcclRas(SourceFile(kJson)));
  EXPECT_TRUE(LooksLikeNcclRas("RAS Monitor Mode - watching for peer changes (Ctrl+C to exit)...\n"));
  // NCCL's own INFO banner in a log is not a RAS report.
  EXPECT_FALSE(LooksLikeNcclRas("NCCL version 2.21.5+cuda12.4\nnode1:123:456 [0] NCCL INFO Bootstrap\n"));
  EXPECT_FALSE(LooksLikeNcclRas("{\"version\": \"2.10\", \"pg_config\": {}, \"communicators\": [], \"nccl_version\": \"\"}"));
}

TEST(NcclRas, TextReportNamesTheDeadProcessAndTheMissingRank) {
  std::string error;
  auto events = NcclRasEvents(SourceFile(kText), "ras.txt", 2, &error);
  EXPECT_TRUE(error.empty()) << error;
  auto status = OfKind(events, "ras_status");
  ASSERT_EQ(status.size(), 1u);
  EXPECT_EQ(status[0]->Get("nccl_version").string(), "2.30.7");
  EXPECT_EQ(status[0]->Get("nodes").number(), 2);
  EXPECT_EQ(status[0]->Get("gpus").number(), 8);
  auto dead = OfKind(events, "ras_process");
  ASSERT_EQ(dead.size(), 1u);
  EXPECT_EQ(dead[0]->Get("state").string(), "dead");
  EXPECT_EQ(dead[0]->Get("pid").string(), "3487984");
  EXPECT_EQ(dead[0]->Get("node").string(), "172.16.64.213");
  auto missing = OfKind(events, "ras_missing_rank");
  ASSERT_EQ(missing.size(), 1u);
  EXPECT_EQ(missing[0]->rank, 5);
  EXPECT_EQ(missing[0]->Get("comm").string(), "#0-0");
  EXPECT_EQ(missing[0]->Get("comm_hash").string(), "cf264af53edbe986");
  EXPECT_EQ(missing[0]->Get("comm_size").number(), 8);
  EXPECT_EQ(missing[0]->Get("gpu").string(), "1");
  EXPECT_TRUE(missing[0]->Get("dead").boolean());
  EXPECT_EQ(missing[0]->line, 28u);
}

// A MISMATCH warning (ranks of one communicator at different operation
// counts: a live hang) is the collective_mismatch event a log line of it gives,
// so the rule that reads it (nccl_ras_lagging_ranks) fires on a whole report.
TEST(NcclRas, MismatchWarningIsTheCollectiveMismatchEvent) {
  const std::string report =
      "NCCL version 2.26.2 compiled with CUDA 12.6\n"
      "CUDA runtime version 12060, driver version 12060\n\n"
      "Job summary\n===========\n\n"
      "Errors\n======\n\nWarnings\n========\n\n"
      "#0-0 (fa93daea854b060b) MISMATCH\n"
      "  Communicator ranks have different AllGather operation counts\n"
      "  30 ranks have launched up to operation 640\n"
      "  2 ranks have launched up to operation 641\n";
  ASSERT_TRUE(LooksLikeNcclRas(report));
  std::string error;
  auto events = NcclRasEvents(report, "ras.txt", 0, &error);
  auto m = OfKind(events, "collective_mismatch");
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0]->Get("message").string(), "Communicator ranks have different AllGather operation counts");
  EXPECT_EQ(m[0]->Get("comm").string(), "#0-0");
  EXPECT_EQ(m[0]->line, 14u);
  // Pasted indented (a code block): the same event, the same line.
  std::string indented;
  for (size_t from = 0; from < report.size();) {
    size_t nl = report.find('\n', from);
    indented += "    " + report.substr(from, nl - from + 1);
    from = nl + 1;
  }
  ASSERT_TRUE(LooksLikeNcclRas(indented));
  auto events2 = NcclRasEvents(indented, "ras.txt", 0, &error);
  auto again = OfKind(events2, "collective_mismatch");
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0]->Get("message").string(), m[0]->Get("message").string());
  EXPECT_EQ(again[0]->line, 14u);
}

TEST(NcclRas, JsonGivesTheSameRank) {
  std::string error;
  auto events = NcclRasEvents(SourceFile(kJson), "ras.json", 0, &error);
  EXPECT_TRUE(error.empty()) << error;
  auto missing = OfKind(events, "ras_missing_rank");
  ASSERT_EQ(missing.size(), 1u);
  EXPECT_EQ(missing[0]->rank, 5);
  EXPECT_TRUE(missing[0]->Get("dead").boolean());
  EXPECT_EQ(missing[0]->Get("pid").string(), "3487984");
  ASSERT_EQ(OfKind(events, "ras_process").size(), 1u);
  // A cut JSON report says so and gives nothing.
  std::string cut(SourceFile(kJson));
  cut.resize(cut.size() / 2);
  EXPECT_TRUE(NcclRasEvents(cut, "ras.json", 0, &error).empty());
  EXPECT_NE(error.find("ras.json: NCCL RAS JSON output that does not parse"), std::string::npos) << error;
}

// NCCL 2.24's "The missing rank: N", a smaller communicator's ranks (not the
// job's: comm_rank only), and monitor mode's PEER_DEAD with its time.
TEST(NcclRas, OlderLayoutSubCommunicatorsAndMonitorMode) {
  const std::string text =
      "NCCL version 2.24.3 compiled with CUDA 12.6\n\nCommunicators... (2.05s)\n=============\n\n"
      "Group     Comms     Nodes     Ranks     Ranks     Ranks    Status  Errors\n"
      "    #  in group  per comm  per node  per comm  in group\n"
      "    0         1         4       7-8        32        32   RUNNING  INCOMPLETE\n"
      "    1         8         1         4         4        32   RUNNING  INCOMPLETE\n\n"
      "Errors\n======\n\n"
      "#0-0 (cf264af53edbe986) INCOMPLETE\n  Missing communicator data from 1 rank\n  The missing rank: 21\n\n"
      "#1-5 (0123456789abcdef) INCOMPLETE\n  Missing communicator data from 1 rank\n  The missing rank: 1\n";
  std::string error;
  const auto events = NcclRasEvents(text, "ras.txt", 0, &error);
  auto missing = OfKind(events, "ras_missing_rank");
  ASSERT_EQ(missing.size(), 2u);
  EXPECT_EQ(missing[0]->rank, 21);
  EXPECT_EQ(missing[1]->rank, -1) << "rank 1 of a 4-rank communicator is not global rank 1";
  EXPECT_EQ(missing[1]->Get("comm_rank").number(), 1);
  const auto monitor = NcclRasEvents("RAS Monitor Mode - watching for peer changes (Ctrl+C to exit)...\n"
                                   "================================================================\n\n"
                                   "[2025-12-19 13:07:07] PEER_DEAD: Process 1524345 on node 172.16.64.245 managing GPU 1\n",
                                   "ras_monitor.txt", 0, &error);
  auto dead = OfKind(monitor, "ras_process");
  ASSERT_EQ(dead.size(), 1u);
  EXPECT_EQ(dead[0]->Get("pid").string(), "1524345");
  ASSERT_TRUE(dead[0]->ts.has_value());
  EXPECT_DOUBLE_EQ(*dead[0]->ts, 1766149627.0);
}

}  // namespace
}  // namespace tpt
