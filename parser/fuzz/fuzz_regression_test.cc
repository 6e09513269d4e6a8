// Replays every stored input of the parser's fuzz targets (crashes the
// fuzzers found, plus seeds): parser/fuzz/regressions/ through the reader +
// parser iteration, parser/fuzz/formats_regressions/ through the format loader.
#include <gtest/gtest.h>

#include "parser/fuzz/formats_fuzz_one.h"
#include "parser/fuzz/fuzz_one.h"
#include "parser/fuzz/replay.h"

namespace tpt::fuzz {
namespace {

TEST(FuzzRegressions, EveryStoredInputRunsClean) {
  EXPECT_GT(ReplayDir(std::string(TPT_SOURCE_DIR) + "/parser/fuzz/regressions", FuzzOne), 0);
}

TEST(FuzzRegressions, EveryStoredFormatFileLoadsOrFailsCleanly) {
  EXPECT_GT(ReplayDir(std::string(TPT_SOURCE_DIR) + "/parser/fuzz/formats_regressions", FuzzFormatsOne), 0);
}

}  // namespace
}  // namespace tpt::fuzz
