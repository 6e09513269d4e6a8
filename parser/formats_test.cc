// Every format file in parser/formats/ loads cleanly: its regexes compile, each
// sample yields its fields, no near miss matches, and its kinds are listed in
// parser/EVENTS.md (the contract with rules/).
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>

#include "parser/format_set.h"

namespace tpt {
namespace {

TEST(Formats, EveryFileInTheTreeLoadsStrictly) {
  auto fs = FormatSet::LoadDir(std::string(TPT_SOURCE_DIR) + "/parser/formats", /*strict=*/true);
  ASSERT_TRUE(fs.ok()) << fs.status().ToString();
  EXPECT_TRUE(fs->problems().empty());
  auto families = fs->families();
  EXPECT_NE(std::find(families.begin(), families.end(), "wrappers"), families.end());
  EXPECT_NE(std::find(families.begin(), families.end(), "python"), families.end());
}

// LoadBuiltin() skips the samples and near misses (a run need not repeat
// them); this is where the compiled-in copy is checked in full, so a broken
// built-in sample fails the build's tests.
TEST(Formats, BuiltinFilesPassTheirSamplesAndNearMisses) {
  auto checked = FormatSet::LoadBuiltinChecked(/*strict=*/true);
  ASSERT_TRUE(checked.ok()) << checked.status().ToString();
  EXPECT_TRUE(checked->problems().empty());
  auto fast = FormatSet::LoadBuiltin(/*strict=*/true);
  ASSERT_TRUE(fast.ok()) << fast.status().ToString();
  EXPECT_EQ(fast->patterns().size(), checked->patterns().size());
  EXPECT_EQ(fast->prefixes().size(), checked->prefixes().size());
  EXPECT_EQ(fast->wrappers().size(), checked->wrappers().size());
  EXPECT_EQ(fast->blocks().size(), checked->blocks().size());
}

TEST(Formats, BuiltinCopyMatchesTheTree) {
  auto fs = FormatSet::LoadBuiltin(/*strict=*/true);
  ASSERT_TRUE(fs.ok()) << fs.status().ToString();
  auto tree = FormatSet::LoadDir(std::string(TPT_SOURCE_DIR) + "/parser/formats", true);
  ASSERT_TRUE(tree.ok());
  EXPECT_EQ(fs->patterns().size(), tree->patterns().size());
}

TEST(Formats, EveryKindIsDocumentedInEventsMd) {
  std::ifstream in(std::string(TPT_SOURCE_DIR) + "/parser/EVENTS.md");
  std::stringstream ss;
  ss << in.rdbuf();
  std::string doc = ss.str();
  ASSERT_FALSE(doc.empty());
  auto fs = FormatSet::LoadDir(std::string(TPT_SOURCE_DIR) + "/parser/formats", false);
  ASSERT_TRUE(fs.ok());
  std::set<std::string> missing;
  for (const auto& p : fs->patterns()) {
    if (doc.find("`" + p.kind + "`") == std::string::npos) missing.insert(p.family + ":" + p.kind);
  }
  for (const auto& b : fs->blocks()) {
    if (doc.find("`" + b.kind + "`") == std::string::npos) missing.insert(b.family + ":" + b.kind);
  }
  EXPECT_TRUE(missing.empty()) << "kinds not in parser/EVENTS.md: " << ::testing::PrintToString(missing);
}

}  // namespace
}  // namespace tpt
