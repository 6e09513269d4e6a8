// collective_lanes_test.cc: the report's lane per rank of a hung process
// group (Analysis::collective_lanes), from the flight-recorder samples of
// samples/rules (samples/hangs/README.md).
#include "rules/collective_lanes.h"

#include <cstdlib>
#include <string>

#include <gtest/gtest.h>

#include "rules/analyzer.h"

namespace tpt {
namespace {

std::string Sample(const std::string& rel) {
  const char* src = std::getenv("TPT_SOURCE_DIR");
  return std::string(src ? src : ".") + "/samples/rules/" + rel;
}

Analysis Analyse(const std::string& folder) {
  static const Analyzer* an = [] {
    auto a = Analyzer::Create({});
    if (!a.ok()) std::abort();
    return new Analyzer(std::move(*a));
  }();
  auto a = an->Run({Sample(folder)});
  if (!a.ok()) ADD_FAILURE() << folder << ": " << a.status().message();
  return a.ok() ? std::move(*a) : Analysis{};
}

TEST(CollectiveLanes, EightRanksAreTwoRowsTheMissingMarked) {
  Analysis a = Analyse("fr_hang_wavefront/pos_hang_8ranks");
  ASSERT_EQ(a.collective_lanes.size(), 1u);
  const CollectiveLanes& l = a.collective_lanes[0];
  EXPECT_EQ(l.pg, "0");
  EXPECT_EQ(l.pg_desc, "default_pg");
  EXPECT_FALSE(l.p2p);
  EXPECT_EQ(l.seq, 4);
  EXPECT_EQ(l.op, "gloo:all_reduce");
  EXPECT_EQ(l.input_sizes, "[[4096]]");
  ASSERT_EQ(l.rows.size(), 2u);
  EXPECT_EQ(l.rows[0].ranks, "0-2, 4, 5, 7");
  EXPECT_EQ(l.rows[0].count, 6);
  EXPECT_EQ(l.rows[0].mark, "waiting");
  EXPECT_EQ(l.rows[0].seq, 4);
  EXPECT_EQ(l.rows[0].state, "scheduled");
  EXPECT_EQ(l.rows[0].called_from, "worker (/tmp/m.py:44)");
  EXPECT_EQ(l.rows[1].ranks, "3, 6");
  EXPECT_EQ(l.rows[1].mark, "missing");
  EXPECT_EQ(l.rows[1].seq, 3);
  EXPECT_EQ(l.rows[1].called_from, "worker (/tmp/m.py:34)");
  EXPECT_EQ(l.rows[1].stack, "load_next_batch (/tmp/m.py:16)") << "from its faulthandler dump";
  EXPECT_EQ(l.rows[1].evidence.rank, 3);
  EXPECT_NE(l.rows[1].evidence.file.find("nccl_trace_rank_3"), std::string::npos) << l.rows[1].evidence.file;
  EXPECT_EQ(l.rows[1].evidence.line, 3u) << "its last record, seq 3";
}

TEST(CollectiveLanes, SixtyFourRanksStayTwoRows) {
  Analysis a = Analyse("fr_hang_wavefront/pos_hang_64ranks");
  ASSERT_EQ(a.collective_lanes.size(), 1u);
  const CollectiveLanes& l = a.collective_lanes[0];
  EXPECT_EQ(l.seq, 4);
  ASSERT_EQ(l.rows.size(), 2u);
  EXPECT_EQ(l.rows[0].ranks, "0-16, 18-41, 43-63");
  EXPECT_EQ(l.rows[0].count, 62);
  EXPECT_EQ(l.rows[0].mark, "waiting");
  EXPECT_EQ(l.rows[1].ranks, "17, 42");
  EXPECT_EQ(l.rows[1].mark, "missing");
  EXPECT_EQ(l.rows[1].seq, 3);
  EXPECT_EQ(l.rows[1].stack.rfind("load_next_batch (", 0), 0u) << l.rows[1].stack;
}

TEST(CollectiveLanes, P2pLanesAreReadAgainstTheWaitingSend) {
  Analysis a = Analyse("fr_hang_wavefront/pos_p2p_4ranks");
  ASSERT_EQ(a.collective_lanes.size(), 1u);
  const CollectiveLanes& l = a.collective_lanes[0];
  EXPECT_TRUE(l.p2p);
  EXPECT_EQ(l.seq, 2);
  EXPECT_EQ(l.op, "nccl:send 2->3");
  ASSERT_EQ(l.rows.size(), 4u) << "every rank's newest record differs";
  EXPECT_EQ(l.rows[0].mark, "") << "the 0->1 pair is in step";
  EXPECT_EQ(l.rows[1].mark, "");
  EXPECT_EQ(l.rows[2].ranks, "2");
  EXPECT_EQ(l.rows[2].mark, "waiting");
  EXPECT_EQ(l.rows[2].op, "nccl:send 2->3");
  EXPECT_EQ(l.rows[2].state, "started");
  EXPECT_EQ(l.rows[3].ranks, "3");
  EXPECT_EQ(l.rows[3].mark, "missing");
  EXPECT_TRUE(l.rows[3].p2p);
  EXPECT_EQ(l.rows[3].seq, 1) << "its p2p seq";
  EXPECT_EQ(l.rows[3].op, "nccl:recv 3<-2");
}

TEST(CollectiveLanes, ARankWithNoDumpHasItsOwnRow) {
  Analysis a = Analyse("fr_hang_wavefront/pos_nodump_4ranks");
  ASSERT_EQ(a.collective_lanes.size(), 1u);
  const CollectiveLanes& l = a.collective_lanes[0];
  ASSERT_EQ(l.rows.size(), 2u);
  EXPECT_EQ(l.rows[0].ranks, "0, 1, 3");
  EXPECT_EQ(l.rows[0].mark, "waiting");
  EXPECT_EQ(l.rows[1].ranks, "2");
  EXPECT_EQ(l.rows[1].mark, "no_dump");
  EXPECT_EQ(l.rows[1].op, "");
  EXPECT_TRUE(l.rows[1].evidence.file.empty());
}

TEST(CollectiveLanes, ADesyncMarksTheRankThatCalledAnother) {
  Analysis a = Analyse("collective_desync/pos_fr_desync_4ranks");
  ASSERT_EQ(a.collective_lanes.size(), 1u);
  const CollectiveLanes& l = a.collective_lanes[0];
  EXPECT_EQ(l.seq, 4);
  EXPECT_EQ(l.op, "gloo:all_reduce") << "the call most ranks made";
  ASSERT_EQ(l.rows.size(), 2u);
  EXPECT_EQ(l.rows[0].ranks, "0, 1, 3");
  EXPECT_EQ(l.rows[0].mark, "");
  EXPECT_EQ(l.rows[1].ranks, "2");
  EXPECT_EQ(l.rows[1].mark, "mismatch");
  EXPECT_EQ(l.rows[1].op, "gloo:all_gather");
}

TEST(CollectiveLanes, NoLanesWhereNobodyIsMissing) {
  EXPECT_TRUE(Analyse("fr_hang_wavefront/neg_both_ranks_at_front").collective_lanes.empty());
}

// Ranks in the same place share a row whatever order they come in; a row
// of one rank whose place differs stays apart.
TEST(CollectiveLanes, RowsGroupRanksInTheSamePlace) {
  Event rec;
  rec.kind = "fr_collective";
  rec.Set("seq", 7);
  rec.Set("op", "nccl:all_reduce");
  rec.Set("state", "started");
  Event other = rec;
  other.Set("state", "completed");
  std::vector<LanePlace> places;
  for (int r : {5, 0, 1, 2, 4}) places.push_back({r, "waiting", 7, &rec});
  places.push_back({3, "waiting", 7, &other});
  std::vector<LaneRow> rows = LaneRows(places, {});
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].ranks, "0-2, 4, 5");
  EXPECT_EQ(rows[0].count, 5);
  EXPECT_EQ(rows[1].ranks, "3");
  EXPECT_EQ(rows[1].state, "completed");
  EXPECT_EQ(RankList({0, 1, 2, 3, 5, 7, 8}), "0-3, 5, 7, 8");
}

}  // namespace
}  // namespace tpt
