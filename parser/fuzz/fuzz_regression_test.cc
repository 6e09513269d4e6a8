// Replays every input in parser/fuzz/regressions/ (crashes the fuzzer found,
// plus seeds) through the fuzz iteration; a regression aborts the test.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "parser/fuzz/fuzz_one.h"

namespace tpt::fuzz {
namespace {

TEST(FuzzRegressions, EveryStoredInputRunsClean) {
  std::filesystem::path dir = std::string(TPT_SOURCE_DIR) + "/parser/fuzz/regressions";
  int n = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    std::ifstream in(entry.path(), std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    std::string data = ss.str();
    SCOPED_TRACE(entry.path().string());
    FuzzOne(reinterpret_cast<const uint8_t*>(data.data()), data.size());
    ++n;
  }
  EXPECT_GT(n, 0);
}

}  // namespace
}  // namespace tpt::fuzz
