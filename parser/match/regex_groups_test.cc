#include "parser/match/regex_groups.h"

#include <gtest/gtest.h>
#include <re2/re2.h>

#include <nlohmann/json.hpp>

#include "parser/format_set.h"

namespace tpt {
namespace {

// What RE2 says, as a RegexGroups (nullopt when it does not compile).
std::optional<RegexGroups> Re2Groups(const std::string& pattern) {
  RE2::Options o;
  o.set_log_errors(false);
  RE2 re(pattern, o);
  if (!re.ok()) return std::nullopt;
  RegexGroups g;
  g.count = re.NumberOfCapturingGroups();
  for (const auto& [name, index] : re.NamedCapturingGroups()) g.named[name] = index;
  return g;
}

void ExpectSameAsRe2(const std::string& pattern) {
  auto want = Re2Groups(pattern);
  ASSERT_TRUE(want) << "RE2 rejects " << pattern;
  auto got = ReadRegexGroups(pattern);
  ASSERT_TRUE(got) << pattern;
  EXPECT_EQ(got->count, want->count) << pattern;
  EXPECT_EQ(got->named, want->named) << pattern;
}

TEST(RegexGroups, CountsLikeRe2) {
  for (const char* p : {
           R"(plain text)",
           R"(x (?P<a>\d+)(y|z))",
           R"((?:a)(?i)(?i:b)(?P<n1>c)(d(?P<n2>e)))",
           R"(\(not a group\) (?P<g>\)))",
           R"([(] [)(]+ [\]()] []()] [^]()] (?P<after>x))",
           R"([[:alpha:](] (?P<p>[[:digit:]]+))",
           R"(\\(?P<after_backslash>x))",
           R"(a{2,3}(b)*(?:c|(?P<d>d))?$)",
           R"(\x1b\[[\d;]*m(?P<lvl>INFO|WARN))",
       }) {
    ExpectSameAsRe2(p);
  }
}

TEST(RegexGroups, DeclinesWhatItDoesNotFollow) {
  EXPECT_FALSE(ReadRegexGroups(R"(\Q(\E(x))"));
  EXPECT_FALSE(ReadRegexGroups("(unclosed"));
  EXPECT_FALSE(ReadRegexGroups("closed)"));
  EXPECT_FALSE(ReadRegexGroups("[unclosed class"));
  EXPECT_FALSE(ReadRegexGroups("(?P<bad name>x)"));
  EXPECT_FALSE(ReadRegexGroups("(?P<a>x)(?P<a>y)"));
  EXPECT_FALSE(ReadRegexGroups("trailing\\"));
}

// Every regex of the compiled-in format files: what the loader trusts when it
// takes group numbers from this reader instead of compiling.
TEST(RegexGroups, EveryBuiltinRegexReadsLikeRe2) {
  size_t n = 0;
  for (const FormatSource& src : FormatSet::BuiltinSources()) {
    auto doc = nlohmann::json::parse(src.text);
    for (const char* section : {"patterns", "prefixes", "wrappers", "blocks"}) {
      if (!doc.contains(section)) continue;
      for (const auto& item : doc[section]) {
        for (const char* key : {"regex", "then", "start", "continuation", "end"}) {
          if (!item.contains(key)) continue;
          SCOPED_TRACE(src.name + " " + item.value("id", "") + "." + key);
          ExpectSameAsRe2(item[key].get<std::string>());
          ++n;
        }
      }
    }
  }
  EXPECT_GT(n, 250u);
}

}  // namespace
}  // namespace tpt
