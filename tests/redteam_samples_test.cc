// redteam_samples_test.cc: every hand-written variant under samples/logs/redteam/
// (logs written from the knowledge files, never from the corpus) gives the root
// cause its file name states: `<root_cause>--<what it shows>.log`. A variant
// listed in kKnownDisagreements (README.md of that folder says why) is skipped.
#include <algorithm>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "rules/analyzer.h"

namespace tpt {
namespace {

namespace fs = std::filesystem;

const std::set<std::string> kKnownDisagreements = {
    "nccl_error--ib-completion-error-12.log",  // a fabric fault or a dead peer; no taxonomy class says which
};

TEST(RedteamSamples, EachVariantGivesTheRootCauseItsNameStates) {
  fs::path dir = fs::path(TPT_SOURCE_DIR) / "samples" / "logs" / "redteam";
  std::vector<fs::path> logs;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".log") logs.push_back(e.path());
  std::sort(logs.begin(), logs.end());
  ASSERT_GE(logs.size(), 100u) << dir;
  auto an = Analyzer::Create({});
  ASSERT_TRUE(an.ok()) << an.status().message();
  int checked = 0;
  for (const fs::path& log : logs) {
    std::string name = log.filename().string();
    size_t sep = name.find("--");
    ASSERT_NE(sep, std::string::npos) << name << ": name it <root_cause>--<what>.log";
    if (kKnownDisagreements.count(name)) continue;
    auto a = an->Run({log.string()});
    ASSERT_TRUE(a.ok()) << name << ": " << a.status().message();
    EXPECT_EQ(a->root_cause, name.substr(0, sep)) << name << ": " << a->verdict;
    ++checked;
  }
  EXPECT_EQ(checked + kKnownDisagreements.size(), logs.size());
}

}  // namespace
}  // namespace tpt
