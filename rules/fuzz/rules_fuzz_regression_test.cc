// Replays every input in rules/fuzz/regressions/ (crashes rules_fuzzer
// found, plus seeds) through the rule/finding/expression fuzz iteration.
#include <gtest/gtest.h>

#include "parser/fuzz/replay.h"
#include "rules/fuzz/rules_fuzz_one.h"

namespace tpt::fuzz {
namespace {

TEST(RulesFuzzRegressions, EveryStoredInputRunsClean) {
  EXPECT_GT(ReplayDir(std::string(TPT_SOURCE_DIR) + "/rules/fuzz/regressions", FuzzRulesOne), 0);
}

}  // namespace
}  // namespace tpt::fuzz
