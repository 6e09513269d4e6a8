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
