// Replays every input in memory/fuzz/regressions/ (crashes model_config_fuzzer found,
// plus seeds: the sample configs of each family) through the fuzz iteration.
#include <gtest/gtest.h>

#include "memory/fuzz/model_config_fuzz_one.h"
#include "parser/fuzz/replay.h"

namespace tpt::fuzz {
namespace {

TEST(ModelConfigFuzzRegressions, EveryStoredInputRunsClean) {
  EXPECT_GT(ReplayDir(std::string(TPT_SOURCE_DIR) + "/memory/fuzz/regressions", FuzzModelConfigAllEras), 0);
}

}  // namespace
}  // namespace tpt::fuzz
