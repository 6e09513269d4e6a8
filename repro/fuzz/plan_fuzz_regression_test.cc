// Replays every input in repro/fuzz/regressions/ (crashes plan_fuzzer found,
// plus seeds) through the plan fuzz iteration.
#include <gtest/gtest.h>

#include "parser/fuzz/replay.h"
#include "repro/fuzz/plan_fuzz_one.h"

namespace tpt::fuzz {
namespace {

TEST(PlanFuzzRegressions, EveryStoredInputRunsClean) {
  EXPECT_GT(ReplayDir(std::string(TPT_SOURCE_DIR) + "/repro/fuzz/regressions", FuzzPlanOne), 0);
}

}  // namespace
}  // namespace tpt::fuzz
