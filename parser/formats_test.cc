// Every format file in parser/formats/ loads cleanly: its regexes compile, each
// sample yields its fields, no near miss matches, and its kinds are listed in
// parser/EVENTS.md (the contract with rules/).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "parser/event_json.h"
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

// LoadBuiltin compiles a pattern's regex on its first use (LazyRe), its group
// numbers read from the text meanwhile. Every pattern on every sample line of
// every built-in file (and on the other patterns' samples, which it mostly
// must not match) gives what the eagerly compiled, checked set gives.
TEST(Formats, DeferredRegexesMatchLikeEagerOnes) {
  auto eager = FormatSet::LoadBuiltinChecked(/*strict=*/true);
  ASSERT_TRUE(eager.ok()) << eager.status().ToString();
  auto lazy = FormatSet::LoadBuiltin(/*strict=*/true);
  ASSERT_TRUE(lazy.ok()) << lazy.status().ToString();
  ASSERT_EQ(lazy->patterns().size(), eager->patterns().size());
  size_t deferred = 0;
  for (const PatternSpec& p : lazy->patterns()) deferred += !p.re.compiled();
  EXPECT_GT(deferred, lazy->patterns().size() * 9 / 10);
  std::vector<std::string> lines;
  for (const FormatSource& src : FormatSet::BuiltinSources()) {
    auto doc = nlohmann::json::parse(src.text);
    if (!doc.contains("patterns")) continue;
    for (const auto& item : doc["patterns"]) {
      for (const auto& sample : item["samples"]) lines.push_back(sample["line"].get<std::string>());
      for (const auto& miss : item["near_misses"]) lines.push_back(miss.is_string() ? miss.get<std::string>() : miss.dump());
    }
  }
  ASSERT_GT(lines.size(), 400u);
  size_t matched = 0;
  for (size_t i = 0; i < lazy->patterns().size(); ++i) {
    const PatternSpec& lp = lazy->patterns()[i];
    const PatternSpec& ep = eager->patterns()[i];
    ASSERT_EQ(lp.family + "." + lp.id, ep.family + "." + ep.id);
    for (const std::string& line : lines) {
      Event le, ee;
      std::string lerr, eerr;
      bool l = lazy->MatchPattern(lp, line, &le, &lerr);
      bool e = eager->MatchPattern(ep, line, &ee, &eerr);
      ASSERT_EQ(l, e) << lp.id << " on " << line;
      if (!l) continue;
      ++matched;
      EXPECT_EQ(EventToJson(le).dump(), EventToJson(ee).dump()) << lp.id << " on " << line;
      EXPECT_EQ(lerr, eerr);
    }
  }
  EXPECT_GT(matched, lazy->patterns().size());
  for (const PatternSpec& p : lazy->patterns()) EXPECT_TRUE(p.re.compiled()) << p.id;
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

// HasLineStart (the paste layer's "is this a line of its own?") is StripLine's
// answer without the prefix's fields: the same on every line of every sample,
// and on each line with its first bytes cut (a start that no longer matches).
TEST(Formats, HasLineStartAnswersAsStripLineDoes) {
  auto fs = FormatSet::LoadBuiltin();
  ASSERT_TRUE(fs.ok()) << fs.status().ToString();
  size_t lines = 0, with_start = 0;
  for (const auto& ent : std::filesystem::recursive_directory_iterator(std::string(TPT_SOURCE_DIR) + "/samples")) {
    if (!ent.is_regular_file() || ent.path().extension() != ".log") continue;
    std::ifstream in(ent.path());
    std::string line;
    while (std::getline(in, line)) {
      for (size_t cut : {size_t{0}, size_t{1}, size_t{5}}) {
        if (cut > line.size()) continue;
        const std::string_view text = std::string_view(line).substr(cut);
        LineMeta meta;
        const FormatSet::Stripped st = fs->StripLine(text, &meta);
        const bool expected = st.begin > 0 || meta.HasProducer();
        ASSERT_EQ(fs->HasLineStart(text), expected) << ent.path() << ": " << text;
        ++lines;
        with_start += expected;
      }
    }
  }
  // A suffix (Ray's dedup note) moves the line's end before the prefixes are tried.
  for (std::string_view text : {"[repeated 7x across cluster]", "(RayWorkerWrapper pid=12) x [repeated 7x across cluster]",
                                "INFO 05-01 10:00:00 llm_engine.py:1] y [repeated 2x across cluster] (Ray deduplicates logs"
                                " by default. Set RAY_DEDUP_LOGS=0 to disable log deduplication)"}) {
    LineMeta meta;
    const FormatSet::Stripped st = fs->StripLine(text, &meta);
    EXPECT_EQ(fs->HasLineStart(text), st.begin > 0 || meta.HasProducer()) << text;
  }
  EXPECT_GT(lines, 10000u);
  EXPECT_GT(with_start, lines / 4) << "the samples hold prefixed lines";
  EXPECT_LT(with_start, lines) << "and lines without a start";
}

}  // namespace
}  // namespace tpt
