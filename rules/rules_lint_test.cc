// rules_lint_test.cc: every built-in rule is checked against its own samples.
//
// samples/rules/<rule-id>/pos*.log must make the rule fire as the primary
// diagnosis (root_cause = the rule's root_cause); neg*.log must not make it
// fire at all. Ids are unique (RuleSet rejects duplicates) and every rule has
// at least one sample of each kind, so a rule cannot land untested.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "rules/analyzer.h"

namespace tpt {
namespace {

namespace fs = std::filesystem;

fs::path SamplesDir() {
  const char* src = std::getenv("TPT_SOURCE_DIR");
  return fs::path(src ? src : ".") / "samples" / "rules";
}

std::vector<fs::path> Logs(const fs::path& dir, const std::string& prefix) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    std::string name = e.path().filename().string();
    if (name.rfind(prefix, 0) == 0 && e.path().extension() == ".log") out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

const Analyzer& TheAnalyzer() {
  static const Analyzer* an = [] {
    auto a = Analyzer::Create({});
    if (!a.ok()) {
      ADD_FAILURE() << a.status().message();
      std::abort();
    }
    return new Analyzer(std::move(*a));
  }();
  return *an;
}

std::string Summary(const Analysis& a) {
  std::string s = "root_cause=" + a.root_cause + " verdict=" + a.verdict + " diagnoses:";
  for (const auto& d : a.diagnoses) s += " " + d.rule + "(" + d.id + ")";
  return s;
}

TEST(RulesLintTest, EveryRuleHasPositiveAndNegativeSamples) {
  for (const Rule& r : TheAnalyzer().rules().rules()) {
    fs::path dir = SamplesDir() / r.id;
    EXPECT_FALSE(Logs(dir, "pos").empty()) << r.id << ": add " << dir.string() << "/pos*.log";
    EXPECT_FALSE(Logs(dir, "neg").empty()) << r.id << ": add " << dir.string() << "/neg*.log";
  }
}

TEST(RulesLintTest, NoSampleFolderWithoutItsRule) {
  std::set<std::string> ids;
  for (const Rule& r : TheAnalyzer().rules().rules()) ids.insert(r.id);
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(SamplesDir(), ec))
    if (e.is_directory()) {
      EXPECT_TRUE(ids.count(e.path().filename().string())) << e.path() << " names no rule";
    }
}

TEST(RulesLintTest, SamplesGiveTheExpectedResult) {
  for (const Rule& r : TheAnalyzer().rules().rules()) {
    fs::path dir = SamplesDir() / r.id;
    for (const auto& log : Logs(dir, "pos")) {
      auto a = TheAnalyzer().Run({log.string()});
      ASSERT_TRUE(a.ok()) << log << ": " << a.status().message();
      ASSERT_FALSE(a->diagnoses.empty()) << log << ": " << Summary(*a);
      EXPECT_EQ(a->diagnoses.front().rule, r.id) << log << ": " << Summary(*a);
      EXPECT_EQ(a->root_cause, r.root_cause) << log << ": " << Summary(*a);
    }
    for (const auto& log : Logs(dir, "neg")) {
      auto a = TheAnalyzer().Run({log.string()});
      ASSERT_TRUE(a.ok()) << log << ": " << a.status().message();
      for (const auto& d : a->diagnoses) EXPECT_NE(d.rule, r.id) << log << ": " << Summary(*a);
    }
  }
}

}  // namespace
}  // namespace tpt
