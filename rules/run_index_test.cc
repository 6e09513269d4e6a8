// run_index_test.cc: RunIndex over a run of which only part was kept in
// memory (parser.h ParsedRun::totals): counts are of the whole run.
#include "rules/run_index.h"

#include <gtest/gtest.h>

#include "rules/test_rules.h"

#include "rules/engine.h"

namespace tpt {
namespace {

Event Ev(const std::string& kind, int rank) {
  static uint64_t line = 0;
  Event e;
  e.kind = kind;
  e.family = "sglang";
  e.rank = rank;
  e.file = "run.log";
  e.line = ++line;
  e.text = kind + " line";
  return e;
}

const RuleSet& Builtin() { return testing::BuiltinRules(); }

// Kept: retraction (rank 0) x2, the error, retraction (rank 0); 500 more
// retractions of rank 0 were printed between the second and the last.
struct Fixture {
  std::vector<Event> events = {Ev("retraction", 0), Ev("retraction", 0), Ev("retraction", 1), Ev("retraction", 0)};
  RunTotals totals;
  Fixture() {
    totals.events = 504;
    totals.dropped.push_back({"retraction", 3, 500});
  }
};

TEST(RunIndexTotals, CountsAreOfTheWholeRun) {
  Fixture f;
  RunIndex kept_only(f.events);
  EXPECT_EQ(kept_only.CountOf("retraction"), 4u);
  EXPECT_EQ(kept_only.total_events(), 4u);
  RunIndex run(f.events, &f.totals);
  EXPECT_EQ(run.total_events(), 504u);
  EXPECT_EQ(run.CountOf("retraction"), 504u);
  EXPECT_EQ(run.DroppedOfRank(0), 500u);
  EXPECT_EQ(run.DroppedOfRank(1), 0u);
  // The dropped ones all came before events[3].
  EXPECT_EQ(run.CountBefore("retraction", 2), 2u);
  EXPECT_EQ(run.CountBefore("retraction", 3), 503u);
  RunScope s(run, RunScope::kNoAnchor);
  EXPECT_EQ(s.Call("count", {Value("retraction")}).number(), 504);
  RunScope at(run, 3);
  EXPECT_EQ(at.Call("count_before", {Value("retraction")}).number(), 503);
}

TEST(RunIndexTotals, AnalysisCountsEveryEvent) {
  Fixture f;
  AnalyzeOptions o;
  o.totals = &f.totals;
  Analysis a = Analyze(f.events, Builtin(), o);
  EXPECT_EQ(a.root_cause, "none");
  EXPECT_NE(a.verdict.find("no failure seen in 504 events"), std::string::npos) << a.verdict;
  ASSERT_EQ(a.ranks.size(), 2u);
  EXPECT_EQ(a.ranks[0].events, 503u);
  EXPECT_EQ(a.ranks[1].events, 1u);
}

}  // namespace
}  // namespace tpt
