// redteam_samples_test.cc: every hand-written variant under samples/logs/redteam/
// (logs written from the knowledge files, never from the corpus) gives the root
// cause its file name states: `<root_cause>--<what it shows>.log`. A variant
// listed in kKnownDisagreements (README.md of that folder says why) is skipped.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
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

// samples/logs/redteam/labels.tsv holds every variant's label apart from its
// file name; a label that is not the variant's first says why it changed.
TEST(RedteamSamples, LabelsAreTheTableAndEveryChangeSaysWhy) {
  fs::path dir = fs::path(TPT_SOURCE_DIR) / "samples" / "logs" / "redteam";
  std::ifstream in(dir / "labels.tsv");
  ASSERT_TRUE(in) << (dir / "labels.tsv");
  struct Row {
    std::string label, first, why;
  };
  std::map<std::string, Row> rows;
  std::string line;
  bool header = false;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> f;
    for (size_t p = 0;;) {
      size_t t = line.find('\t', p);
      f.push_back(line.substr(p, t - p));
      if (t == std::string::npos) break;
      p = t + 1;
    }
    if (!header) {
      header = true;
      ASSERT_EQ(line, "variant\tlabel\tfirst_label\twhy_changed");
      continue;
    }
    ASSERT_EQ(f.size(), 4u) << "labels.tsv: " << line;
    EXPECT_TRUE(rows.emplace(f[0], Row{f[1], f[2], f[3]}).second) << f[0] << " listed twice";
    if (f[1] != f[2]) {
      EXPECT_GE(f[3].size(), 20u) << f[0] << ": label " << f[2] << " -> " << f[1] << " without a reason (commit and why)";
    }
  }
  std::set<std::string> files;
  for (const auto& e : fs::directory_iterator(dir)) {
    std::string name = e.path().filename().string();
    if (e.path().extension() != ".log") continue;
    size_t sep = name.find("--");
    ASSERT_NE(sep, std::string::npos) << name;
    std::string variant = name.substr(sep + 2), label = name.substr(0, sep);
    files.insert(variant);
    auto it = rows.find(variant);
    if (it == rows.end()) {
      ADD_FAILURE() << name << ": not in labels.tsv (add `" << variant << "\t" << label << "\t" << label << "\t`)";
      continue;
    }
    EXPECT_EQ(label, it->second.label) << name << ": the file name's label is not labels.tsv's; a label changes only "
                                       << "with its row (first_label stays, why_changed says why)";
  }
  for (const auto& [variant, row] : rows) EXPECT_TRUE(files.count(variant)) << variant << ": in labels.tsv, no such file";
}

}  // namespace
}  // namespace tpt
