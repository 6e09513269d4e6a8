// report_test.cc: exit codes, grouping into a Report, the format registry.
#include "report/report.h"

#include <gtest/gtest.h>

#include "report/common.h"
#include "report/test_fixtures.h"

namespace tpt::report {
namespace {

using testing::AsRun;

std::vector<RunResult> SixRuns() {
  std::vector<RunResult> runs;
  runs.push_back(AsRun("a-oom-1", testing::KvNoRoom({.seed = 1})));
  runs.push_back(AsRun("b-hang-1", testing::NcclTimeout(3)));
  runs.push_back(AsRun("c-oom-2", testing::KvNoRoom({.seed = 5, .log_dir = "/x"})));
  runs.push_back(AsRun("d-healthy", testing::Healthy()));
  runs.push_back(AsRun("e-hang-2", testing::NcclTimeout(4)));
  runs.push_back(AsRun("f-oom-3", testing::KvNoRoom({.seed = 7})));
  return runs;
}

TEST(ExitCodes, WorstOfManyRuns) {
  std::vector<RunResult> runs = {AsRun("h", testing::Healthy())};
  EXPECT_EQ(WorstExitCode(runs), kExitHealthy);
  runs.push_back(AsRun("d", testing::KvNoRoom({})));
  EXPECT_EQ(WorstExitCode(runs), kExitDiagnosed);
  runs.push_back(AsRun("u", testing::Unexplained(1)));
  EXPECT_EQ(WorstExitCode(runs), kExitUnclassified);
  RunResult bad;
  bad.name = "x";
  bad.error = "x: cannot read";
  bad.exit_code = kExitUsage;
  runs.insert(runs.begin(), bad);
  EXPECT_EQ(WorstExitCode(runs), kExitUsage);
  EXPECT_EQ(WorstExitCode({}), kExitHealthy);
}

TEST(MakeReport, GroupsRepeatsAndCounts) {
  Report r = MakeReport(SixRuns(), true, "0.1.0");
  ASSERT_EQ(r.groups.size(), 2u);
  EXPECT_EQ(r.groups[0].root_cause, "kv_pool_no_room");
  EXPECT_EQ(r.groups[0].runs, (std::vector<size_t>{0, 2, 5}));
  EXPECT_EQ(r.groups[1].root_cause, "nccl_timeout_hang");
  EXPECT_EQ(r.groups[1].runs, (std::vector<size_t>{1, 4}));
  EXPECT_EQ(r.diagnosed, 5u);
  EXPECT_EQ(r.healthy, 1u);
  EXPECT_TRUE(r.runs[3].analysis.signature.empty());
  EXPECT_EQ(r.runs[0].analysis.signature, r.groups[0].signature);
  EXPECT_EQ(r.runs[5].analysis.signature, r.groups[0].signature);
}

TEST(MakeReport, GroupIdsDoNotDependOnRunOrderOrNames) {
  Report a = MakeReport(SixRuns(), true, "");
  auto reversed = SixRuns();
  std::reverse(reversed.begin(), reversed.end());
  for (auto& run : reversed) run.name = "renamed-" + run.name;
  Report b = MakeReport(std::move(reversed), true, "");
  ASSERT_EQ(a.groups.size(), b.groups.size());
  EXPECT_EQ(a.groups[0].signature, b.groups[0].signature);
  EXPECT_EQ(a.groups[1].signature, b.groups[1].signature);
}

TEST(MakeReport, UnreadableRunIsCountedNotGrouped) {
  std::vector<RunResult> runs;
  RunResult bad;
  bad.name = "broken";
  bad.error = "broken: not a log";
  bad.exit_code = kExitUsage;
  runs.push_back(bad);
  runs.push_back(AsRun("u", testing::Unexplained(2)));
  Report r = MakeReport(std::move(runs), true, "");
  EXPECT_EQ(r.errors, 1u);
  EXPECT_EQ(r.unclassified, 1u);
  ASSERT_EQ(r.groups.size(), 1u);
  EXPECT_EQ(r.groups[0].runs, std::vector<size_t>{1});
}

TEST(ParseFormat, NamesAndErrors) {
  for (const char* name : {"text", "json", "markdown", "junit", "sarif", "github", "html"}) {
    auto f = ParseFormat(name);
    ASSERT_TRUE(f.ok()) << name;
    EXPECT_STREQ(FormatName(*f), name);
  }
  EXPECT_EQ(*ParseFormat("md"), Format::kMarkdown);
  auto bad = ParseFormat("yaml");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("yaml"), std::string::npos);
  EXPECT_NE(bad.status().message().find("sarif"), std::string::npos);
}

}  // namespace
}  // namespace tpt::report

namespace tpt::report {
namespace {

TEST(FirstFailingRank, PrefersDiagnosedRankThenNumberedRanks) {
  Analysis a = testing::KvNoRoom({.seed = 1});  // rank 1 fails; rank 2 quits later
  ASSERT_NE(FirstFailingRank(a), nullptr);
  EXPECT_EQ(FirstFailingRank(a)->rank, 1);
  // A rank-less line that comes earlier in time does not win over ranks.
  RankState none;
  none.rank = -1;
  none.first_error = "signal";
  none.first_error_ts = 1.0;
  a.ranks.push_back(none);
  a.diagnoses.clear();
  EXPECT_EQ(FirstFailingRank(a)->rank, 1);
  // Without a timestamp on either, the first numbered rank with an error.
  for (auto& r : a.ranks) r.first_error_ts = 0;
  EXPECT_EQ(FirstFailingRank(a)->rank, 1);
  a.ranks.erase(a.ranks.begin(), a.ranks.end() - 1);
  EXPECT_EQ(FirstFailingRank(a)->rank, -1);
  a.ranks.clear();
  EXPECT_EQ(FirstFailingRank(a), nullptr);
}

}  // namespace
}  // namespace tpt::report
