#include "parser/regex_groups.h"

#include <gtest/gtest.h>
#include <re2/re2.h>
#include <re2/set.h>

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

TEST(RegexGroups, ConcatenableFormRewritesGroupsAndLeadingCaret) {
  EXPECT_EQ(ConcatenableForm(R"(^\[(?P<a>\d+)\]: (?:x|y)(z))"), R"(\[(?:\d+)\]: (?:x|y)(z))");
  EXPECT_EQ(ConcatenableForm(R"([\^$(?P<n>] \$ (?P<n>\^))"), R"([\^$(?P<n>] \$ (?:\^))");
  for (const char* bad : {"a^b", "a$", R"(\bword)", R"(x\B)", R"(\Ax)", R"(x\z)", "(?i)x", "(?s:.)", R"(\Q(\E)"}) {
    EXPECT_FALSE(ConcatenableForm(bad)) << bad;
  }
}

// Each built-in wrapper and prefix and its concatenable form, each alone in an
// anchored RE2::Set, answer alike on every sample line of every built-in file
// (and on the line's tail after each space).
TEST(RegexGroups, ConcatenableFormsOfTheBuiltinPrefixesMatchAlike) {
  std::vector<std::string> members, lines;
  for (const FormatSource& src : FormatSet::BuiltinSources()) {
    auto doc = nlohmann::json::parse(src.text);
    for (const char* section : {"wrappers", "prefixes"}) {
      if (!doc.contains(section)) continue;
      for (const auto& item : doc[section]) {
        if (!item.value("suffix", false)) members.push_back(item["regex"].get<std::string>());
      }
    }
    for (const char* section : {"patterns", "wrappers", "prefixes"}) {
      if (!doc.contains(section)) continue;
      for (const auto& item : doc[section]) {
        for (const auto& sample : item["samples"]) {
          if (sample.contains("line")) lines.push_back(sample["line"].get<std::string>());
        }
      }
    }
  }
  ASSERT_GT(members.size(), 30u);
  std::vector<std::string> texts;
  for (const std::string& l : lines) {
    for (size_t at = 0; at != std::string::npos; at = l.find(' ', at + 1)) texts.push_back(l.substr(at == 0 ? 0 : at + 1));
  }
  size_t hits = 0;
  for (const std::string& m : members) {
    auto c = ConcatenableForm(m);
    ASSERT_TRUE(c) << m;
    RE2::Options o;
    RE2::Set a(o, RE2::ANCHOR_START), b(o, RE2::ANCHOR_START);
    ASSERT_GE(a.Add(m, nullptr), 0);
    ASSERT_GE(b.Add(*c, nullptr), 0) << *c;
    ASSERT_TRUE(a.Compile() && b.Compile());
    for (const std::string& t : texts) {
      bool x = a.Match(t, nullptr);
      ASSERT_EQ(x, b.Match(t, nullptr)) << m << " vs " << *c << " on " << t;
      hits += x;
    }
  }
  EXPECT_GT(hits, 100u);
}

}  // namespace
}  // namespace tpt
