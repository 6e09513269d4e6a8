// PrefixDfa answers exactly what RE2::Set(ANCHOR_START) answers: on the
// built-in wrappers and prefixes over every sample, near miss and sample log
// line (whole and cut), on mutations of them, and on small sets for each
// construct; refuses what it does not support; survives cache flushes and
// threads.
#include "parser/match/prefix_dfa.h"

#include "parser/format_set.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <re2/re2.h>
#include <re2/set.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

namespace tpt {
namespace {

std::unique_ptr<RE2::Set> Re2SetOf(const std::vector<std::string>& regexes) {
  RE2::Options o;
  o.set_log_errors(false);
  auto set = std::make_unique<RE2::Set>(o, RE2::ANCHOR_START);
  for (const std::string& r : regexes) {
    if (set->Add(r, nullptr) < 0) return nullptr;
  }
  if (!set->Compile()) return nullptr;
  return set;
}

std::vector<int> Re2Answer(const RE2::Set& set, std::string_view text) {
  std::vector<int> v;
  set.Match(re2::StringPiece(text.data(), text.size()), &v);
  std::sort(v.begin(), v.end());
  return v;
}

std::string Show(const std::vector<int>& v) {
  std::string s = "{";
  for (int x : v) {
    if (s.size() > 1) s += ',';
    s += std::to_string(x);
  }
  return s + "}";
}

std::string Quoted(std::string_view t) {
  std::string s = "\"";
  for (unsigned char c : t) {
    if (c < 0x20 || c == 0x7f || c == '"' || c == '\\') {
      char buf[8];
      snprintf(buf, sizeof buf, "\\x%02x", c);
      s += buf;
    } else {
      s.push_back(static_cast<char>(c));
    }
  }
  return s + "\"";
}

// Counts the texts on which the automaton and RE2::Set disagree, printing
// each (up to a few) with the regexes, the text and both answers.
size_t Disagreements(const std::vector<std::string>& regexes, const PrefixDfa& dfa, const RE2::Set& set,
                     const std::vector<std::string>& texts, size_t* matched = nullptr) {
  size_t bad = 0;
  std::vector<int> mine;
  for (const std::string& t : texts) {
    bool any = dfa.Match(t, &mine);
    std::vector<int> want = Re2Answer(set, t);
    if (mine != want || any != !want.empty()) {
      if (++bad <= 5) {
        std::string list;
        for (int m : want) list += "\n  RE2 member " + std::to_string(m) + ": " + regexes[static_cast<size_t>(m)];
        for (int m : mine) list += "\n  ours member " + std::to_string(m) + ": " + regexes[static_cast<size_t>(m)];
        ADD_FAILURE() << "text " << Quoted(t) << ": PrefixDfa " << Show(mine) << " vs RE2::Set " << Show(want) << list
                      << (regexes.size() <= 8 ? "\n  regexes: " + [&] {
                           std::string r;
                           for (const auto& x : regexes) r += "`" + x + "` ";
                           return r;
                         }()
                                              : "");
      }
    }
    if (matched && !want.empty()) ++*matched;
  }
  return bad;
}

// Builds both and compares them on `texts`.
void ExpectAlike(const std::vector<std::string>& regexes, const std::vector<std::string>& texts) {
  auto dfa = PrefixDfa::Build(regexes);
  ASSERT_TRUE(dfa.ok()) << dfa.status().ToString();
  auto set = Re2SetOf(regexes);
  ASSERT_TRUE(set) << "RE2 refuses one of the regexes";
  EXPECT_EQ(Disagreements(regexes, **dfa, *set, texts), 0u);
}

// The set members of FormatSet::BuildPrefixSets: wrappers, then prefixes.
std::vector<std::string> BuiltinMembers() {
  auto fs = FormatSet::LoadBuiltin();
  EXPECT_TRUE(fs.ok());
  std::vector<std::string> members;
  if (!fs.ok()) return members;
  for (const auto* list : {&fs->wrappers(), &fs->prefixes()}) {
    for (const auto& p : *list) members.push_back(p.re->pattern());
  }
  return members;
}

void CollectLines(const nlohmann::json& j, bool take, std::vector<std::string>* out) {
  if (j.is_string()) {
    if (take) out->push_back(j.get<std::string>());
  } else if (j.is_array()) {
    for (const auto& x : j) CollectLines(x, take, out);
  } else if (j.is_object()) {
    for (const auto& [k, v] : j.items()) {
      CollectLines(v, take || k == "line" || k == "lines" || k == "previous" || k == "rest" || k == "near_misses", out);
    }
  }
}

// Every sample, near miss and remainder of the format files, and every line of
// samples/**/*.log.
std::vector<std::string> CorpusLines() {
  std::vector<std::string> lines;
  for (const FormatSource& src : FormatSet::BuiltinSources()) CollectLines(nlohmann::json::parse(src.text), false, &lines);
  namespace fs = std::filesystem;
  for (const auto& e : fs::recursive_directory_iterator(std::string(TPT_SOURCE_DIR) + "/samples")) {
    if (!e.is_regular_file() || e.path().extension() != ".log") continue;
    std::ifstream in(e.path(), std::ios::binary);
    std::string line;
    while (std::getline(in, line)) lines.push_back(line);
  }
  return lines;
}

// Each line, and its tails at every offset of its first 48 bytes and after
// every space, bracket, bar, colon and ANSI escape (where a stripped wrapper
// or prefix may end).
std::vector<std::string> Cuts(const std::vector<std::string>& lines) {
  std::vector<std::string> texts;
  for (const std::string& l : lines) {
    for (size_t at = 0; at < l.size(); ++at) {
      char p = at ? l[at - 1] : ' ';
      if (at < 48 || p == ' ' || p == ']' || p == '|' || p == ':' || p == 'm' || p == ')') texts.push_back(l.substr(at));
    }
    texts.push_back("");
  }
  std::sort(texts.begin(), texts.end());
  texts.erase(std::unique(texts.begin(), texts.end()), texts.end());
  return texts;
}

TEST(PrefixDfa, BuiltinMembersMatchLikeRe2SetOnSamplesAndLogLines) {
  std::vector<std::string> members = BuiltinMembers();
  ASSERT_GE(members.size(), 39u);
  auto dfa = PrefixDfa::Build(members);
  ASSERT_TRUE(dfa.ok()) << dfa.status().ToString();
  auto set = Re2SetOf(members);
  ASSERT_TRUE(set);
  std::vector<std::string> lines = CorpusLines();
  ASSERT_GT(lines.size(), 5000u);
  std::vector<std::string> texts = Cuts(lines);
  size_t matched = 0;
  EXPECT_EQ(Disagreements(members, **dfa, *set, texts, &matched), 0u) << texts.size() << " texts";
  EXPECT_GT(matched, 3000u);  // the comparison covers many matches, not only misses
}

// Byte flips, insertions of digits, spaces, brackets and multibyte
// characters, deletions and truncations of the corpus lines' first bytes.
TEST(PrefixDfa, BuiltinMembersMatchLikeRe2SetOnMutatedLines) {
  std::vector<std::string> members = BuiltinMembers();
  auto dfa = PrefixDfa::Build(members);
  ASSERT_TRUE(dfa.ok()) << dfa.status().ToString();
  auto set = Re2SetOf(members);
  ASSERT_TRUE(set);
  std::vector<std::string> lines = CorpusLines();
  std::mt19937 rng(20261129);
  static const char* kInserts[] = {"0", "7", "12", " ", "  ", "[", "]", "(", ")", "|", ":", "-", ".", "\t", "é", "【", "】",
                                   "😀", "\x1b[0m", "_", "a", "Z", "\xc2\xa0", "/", ",", "=", "T", "Z", "\n"};
  std::vector<std::string> texts;
  for (int n = 0; n < 60000; ++n) {
    std::string t = lines[rng() % lines.size()];
    if (t.size() > 120) t.resize(120 + rng() % 8);
    int edits = 1 + static_cast<int>(rng() % 3);
    for (int e = 0; e < edits; ++e) {
      size_t at = t.empty() ? 0 : rng() % std::min<size_t>(t.size() + 1, 64);
      switch (rng() % 5) {
        case 0:  // an ASCII byte changed
          if (at < t.size()) t[at] = static_cast<char>(0x20 + rng() % 0x5f);
          break;
        case 1:
        case 2:
          t.insert(at, kInserts[rng() % (sizeof kInserts / sizeof *kInserts)]);
          break;
        case 3:
          if (at < t.size()) t.erase(at, 1 + rng() % 3);
          break;
        default:
          t.resize(std::min(t.size(), at));
          break;
      }
    }
    if (rng() % 4 == 0 && !t.empty()) t = t.substr(rng() % std::min<size_t>(t.size(), 40));
    texts.push_back(std::move(t));
  }
  size_t matched = 0;
  EXPECT_EQ(Disagreements(members, **dfa, *set, texts, &matched), 0u);
  EXPECT_GT(matched, 10000u);
}

// Lines of one shape, as a serving log prints them, are answered from the
// walk kept for the first (same classes byte by byte); a byte of another
// class anywhere, a line cut short, or one ending where the kept walk was
// still alive must each get their own answer.
TEST(PrefixDfa, LinesOfOneShapeReuseAKeptWalkAndAnswerLikeRe2) {
  std::vector<std::string> members = BuiltinMembers();
  auto dfa = PrefixDfa::Build(members);
  ASSERT_TRUE(dfa.ok()) << dfa.status().ToString();
  auto set = Re2SetOf(members);
  ASSERT_TRUE(set);
  std::mt19937 rng(7);
  const std::string shapes[] = {"[2025-10-14 10:00:20 TP7] Decode batch.", "[2025-10-14 10:00:20 DP1 TP3] Prefill",
                                "INFO 10-14 10:04:59 [loggers.py:116] Engine", "(VllmWorker rank=3 pid=123) INFO 10-14 10:00:01",
                                "[rank3]: Traceback", "2025-10-14T10:00:20.123456789Z [default0]:x", "node1:12:34 [0] NCCL INFO"};
  const std::string kOther = "aZ.:- [](|=\t\x1b";
  std::vector<std::string> texts;
  for (int n = 0; n < 20000; ++n) {
    std::string t = shapes[rng() % (sizeof shapes / sizeof *shapes)];
    for (char& ch : t) {  // same class, other byte
      if (ch >= '0' && ch <= '9') ch = static_cast<char>('0' + rng() % 10);
    }
    switch (rng() % 4) {
      case 0:  // a byte of another class
        t[rng() % t.size()] = kOther[rng() % kOther.size()];
        break;
      case 1:  // cut short
        t.resize(rng() % (t.size() + 1));
        break;
      default:
        break;
    }
    texts.push_back(std::move(t));
  }
  const int64_t before = (*dfa)->WalksReusedOnThisThread();
  size_t matched = 0;
  EXPECT_EQ(Disagreements(members, **dfa, *set, texts, &matched), 0u);
  EXPECT_GT(matched, 5000u);
  EXPECT_GT((*dfa)->WalksReusedOnThisThread() - before, 3000);
}

// Texts of the characters a hand-written set cares about, every length up to 6.
std::vector<std::string> AllTexts(const std::vector<std::string>& alphabet, size_t max_len) {
  std::vector<std::string> texts = {""}, layer = {""};
  for (size_t len = 1; len <= max_len; ++len) {
    std::vector<std::string> next;
    for (const std::string& t : layer) {
      for (const std::string& a : alphabet) next.push_back(t + a);
    }
    texts.insert(texts.end(), next.begin(), next.end());
    layer = std::move(next);
  }
  return texts;
}

TEST(PrefixDfa, ClassesAndPerlClassesMatchLikeRe2) {
  std::vector<std::string> alphabet = {"a", "Z", "5", "_", " ", "\t", "\n", "\v", "\f", "-", "]", "^", "é", "【", "😀", "\x7f"};
  ExpectAlike({R"(\d)", R"(\w)", R"(\s)", R"(\D)", R"(\W)", R"(\S)", "."}, AllTexts(alphabet, 2));
  ExpectAlike({"[a-z5]", "[^a-z5]", R"([\d\s])", R"([^\d\s])", R"([\W])", R"([^\W])", R"([]^-])", R"([^]a])", R"([\w.-]+x)",
               R"([\t-\r])", R"([\x00-\x1f\x7f])"},
              AllTexts(alphabet, 3));
}

// Lines are repaired to valid UTF-8 before matching, but bytes RE2 would
// read as a character anyway (overlong, surrogate, past U+10FFFF: RE2 reads
// U+0080-U+10FFFF loosely) or not at all (lone continuation or lead bytes)
// get the same answer.
TEST(PrefixDfa, InvalidUtf8AnswersLikeRe2) {
  std::vector<std::string> alphabet = {"a", "\x80", "\xbf", "\xc0", "\xc2", "\xe0", "\xed\xa0", "\xf4\x90", "\xf5", "\xff", "é"};
  ExpectAlike({".", "..", R"(\S{2})", "[^a]", R"(\W)", "a.a", R"(.*\xff)"}, AllTexts(alphabet, 4));
}

TEST(PrefixDfa, CountedRepeatsCountCharactersOverMultibyteText) {
  std::vector<std::string> alphabet = {"a", "1", "é", "【", "😀", "|", " "};
  ExpectAlike({R"(.{3}\|)", R"(\S{2,4} )", R"([^|]{0,2}\|)", R"(\W{2})", R"(.{4,})",
               R"(【\d{1,2}】)", "(?:é|😀){2}a"},
              AllTexts(alphabet, 5));
}

TEST(PrefixDfa, AlternationNestedQuantifiersEmptyAndNeverDyingMembers) {
  std::vector<std::string> alphabet = {"a", "b", "1", "|", " ", "é"};
  ExpectAlike({"a|ab|abc", "(?:a|b)*b", "((a+)?b)+", "(?:a*)*", "x?", "[^|]*\\|", "(?:a|)(?:b|)1", "a{2}b{0,2}?1", "(?:(?:ab)+?|1)|"},
              AllTexts(alphabet, 6));
  ExpectAlike({"^(?:> ?)+", "(?P<n>a)(?P<m>b)?(c)*", "a{0}", "(?:a{2,3}){2}", "(|a)b"}, AllTexts({"a", "b", "c", ">", " "}, 7));
}

TEST(PrefixDfa, EscapesAndMultibyteLiterals) {
  ExpectAlike({R"(\[\.\|\(\)\*\+\?\{\}\\\^\$)", R"(\x1b\[\d+m)", R"(\x{1F600}!)", "【x】", R"(\t\n\r\f\v\a)", "a{", "a{1", "a{,2}", "{x"},
              {"[.|()*+?{}\\^$", "\x1b[31mhi", "\x1b[m", "😀!", "【x】", "【x", "\t\n\r\f\v\a", "a{", "a{1", "a{,2}", "{x", "aa"});
}

TEST(PrefixDfa, MoreThan64Members) {
  std::vector<std::string> regexes;
  for (int i = 0; i < 150; ++i) {
    regexes.push_back(i % 3 == 0   ? "a{" + std::to_string(i % 11) + "}b"
                      : i % 3 == 1 ? "\\d{" + std::to_string(i % 7) + ",}x?"
                                   : "(?:a|1){" + std::to_string(i % 5) + "," + std::to_string(i % 5 + 2) + "}");
  }
  std::vector<std::string> texts = AllTexts({"a", "1", "b", "x"}, 6);
  for (int n = 0; n < 12; ++n) texts.push_back(std::string(static_cast<size_t>(n), 'a') + "b");
  ExpectAlike(regexes, texts);
  auto dfa = PrefixDfa::Build(regexes);
  ASSERT_TRUE(dfa.ok());
  std::vector<int> m;
  ASSERT_TRUE((*dfa)->Match("aaaaaaaaab", &m));
  EXPECT_TRUE(std::find(m.begin(), m.end(), 149) != m.end()) << Show(m);  // (?:a|1){4,6}
  EXPECT_TRUE(std::find(m.begin(), m.end(), 147) == m.end()) << Show(m);  // a{4}b
}

TEST(PrefixDfa, NoMembersAndNoMatch) {
  auto dfa = PrefixDfa::Build({});
  ASSERT_TRUE(dfa.ok());
  std::vector<int> m = {7};
  EXPECT_FALSE((*dfa)->Match("anything", &m));
  EXPECT_TRUE(m.empty());
  auto one = PrefixDfa::Build({"ab"});
  ASSERT_TRUE(one.ok());
  EXPECT_FALSE((*one)->Match("a", &m));
  EXPECT_TRUE((*one)->Match("abc", &m));
  EXPECT_EQ(m, std::vector<int>{0});
}

TEST(PrefixDfa, RefusesUnsupportedSyntaxNamingTheRegex) {
  for (const char* re : {"(?i)abc", "a$", R"(\bword)", R"(x\B)", R"(\Ax)", R"(x\z)", R"(\pL)", R"(\p{Greek})", R"((a)\1)", "a^b",
                         "[é]", "[a-é]", "a{1,1001}", "a{2000}", "[[:alpha:]]", R"(\Qa\E)", R"(\C)", "(?s:.)", "(?P=n)", R"(\0)",
                         "(?:(?:a{1000}){1000}){2}"}) {
    auto dfa = PrefixDfa::Build({"ok", re});
    ASSERT_FALSE(dfa.ok()) << re;
    EXPECT_NE(dfa.status().message().find(std::string("prefix regex 1 `") + re + "`"), std::string::npos) << dfa.status().message();
  }
}

TEST(PrefixDfa, RefusesGarbageWithoutCrashing) {
  for (const char* re : {"(", ")", "a)", "(?P<x", "(?P<>a)", "[a", "[]", "[^]", "*a", "a**", "a+*", "{2}", "a{2}{3}", "\\", "a\\",
                         "[b-a]", R"(\x)", R"(\xZZ)", R"(\x{110000})", R"(\x{})", "\xff", "\xc3", "a|*", "(?:"}) {
    auto dfa = PrefixDfa::Build({re});
    EXPECT_FALSE(dfa.ok()) << re;
  }
  // Random regexes of regex characters: whatever both accept answers alike.
  std::mt19937 rng(7);
  static const char kChars[] = "ab1.|()[]^-*+?{},\\dswDSW:P<>é";
  std::vector<std::string> texts = AllTexts({"a", "b", "1", " ", "é", "-"}, 4);
  int both = 0;
  for (int n = 0; n < 3000; ++n) {
    std::string re;
    for (size_t k = 1 + rng() % 10; k > 0; --k) re.push_back(kChars[rng() % (sizeof kChars - 1)]);
    auto dfa = PrefixDfa::Build({re});
    auto set = Re2SetOf({re});
    if (dfa.ok() && set) {
      ++both;
      EXPECT_EQ(Disagreements({re}, **dfa, *set, texts), 0u) << re;
    } else if (dfa.ok()) {
      // RE2 refuses it: the caller compiles every member with RE2 first, so an
      // automaton is never asked about it; only make sure it runs.
      std::vector<int> m;
      for (const std::string& t : texts) (*dfa)->Match(t, &m);
    }
  }
  EXPECT_GT(both, 300);
}

// (a|b)*a(a|b){9} has ~1000 DFA states: with a cache of 16 it is flushed
// again and again and still answers like RE2.
TEST(PrefixDfa, TinyCacheFlushesAndStillAnswersLikeRe2) {
  std::vector<std::string> regexes = {"(?:a|b)*a(?:a|b){9}c", "(?:a|b)*b(?:a|b){4}c", "b+"};
  auto set = Re2SetOf(regexes);
  ASSERT_TRUE(set);
  std::mt19937 rng(3);
  std::vector<std::string> texts;
  for (int n = 0; n < 3000; ++n) {
    std::string t;
    for (size_t k = rng() % 40; k > 0; --k) t.push_back("ab"[rng() % 2]);
    if (rng() % 2) t.push_back('c');
    texts.push_back(t);
  }
  // 4: the state being left when the cache is flushed has the row of a new
  // state (the stale row must not be written to).
  for (int max_states : {4, 5, 16}) {
    auto dfa = PrefixDfa::Build(regexes, max_states);
    ASSERT_TRUE(dfa.ok());
    EXPECT_EQ(Disagreements(regexes, **dfa, *set, texts), 0u) << max_states << " states";
    EXPECT_GT((*dfa)->FlushesOnThisThread(), 10) << max_states << " states";
  }
  // The default bound holds all of them: no flush.
  auto roomy = PrefixDfa::Build(regexes);
  ASSERT_TRUE(roomy.ok());
  EXPECT_EQ(Disagreements(regexes, **roomy, *set, texts), 0u);
  EXPECT_EQ((*roomy)->FlushesOnThisThread(), 0);
}

TEST(PrefixDfa, ThreadsMatchingAtOnceAgree) {
  std::vector<std::string> members = BuiltinMembers();
  auto dfa = PrefixDfa::Build(members, /*max_states=*/64);  // small: flushes happen while others match
  ASSERT_TRUE(dfa.ok());
  auto set = Re2SetOf(members);
  ASSERT_TRUE(set);
  std::vector<std::string> texts = Cuts(CorpusLines());
  if (texts.size() > 40000) texts.resize(40000);
  std::vector<std::vector<int>> want;
  for (const std::string& t : texts) want.push_back(Re2Answer(*set, t));
  std::vector<size_t> wrong(4, 0);
  std::vector<std::thread> threads;
  for (size_t k = 0; k < wrong.size(); ++k) {
    threads.emplace_back([&, k] {
      std::vector<int> m;
      for (size_t i = 0; i < texts.size(); ++i) {
        size_t j = (i * (k + 1) * 7919) % texts.size();  // each thread in its own order
        (*dfa)->Match(texts[j], &m);
        wrong[k] += m != want[j];
      }
    });
  }
  for (auto& t : threads) t.join();
  for (size_t k = 0; k < wrong.size(); ++k) EXPECT_EQ(wrong[k], 0u) << "thread " << k;
}

// Instructions per call, for callgrind (run by hand):
//   valgrind --tool=callgrind --toggle-collect='*PrefixDfaBench*'
//     build/parser/match/prefix_dfa_test --gtest_also_run_disabled_tests --gtest_filter='*Bench*'
// then compare the inclusive cost of PrefixDfa::Match and RE2::Set::Match
// (both called kCalls times).
void PrefixDfaBenchLoop(const PrefixDfa& dfa, const RE2::Set& set, const std::vector<std::string>& lines, int calls) {
  std::vector<int> m;
  size_t hits = 0;
  for (int i = 0; i < calls; ++i) {
    for (const std::string& l : lines) hits += dfa.Match(l, &m);
  }
  for (int i = 0; i < calls; ++i) {
    for (const std::string& l : lines) hits += set.Match(l, &m);
  }
  EXPECT_GT(hits, 0u);
}

TEST(PrefixDfa, DISABLED_Bench) {
  std::vector<std::string> members = BuiltinMembers();
  auto dfa = PrefixDfa::Build(members);
  ASSERT_TRUE(dfa.ok());
  auto set = Re2SetOf(members);
  ASSERT_TRUE(set);
  std::vector<std::string> lines = {
      "[2025-10-14 10:00:20 TP7] Decode batch. #running-req: 27, #token: 1234, token usage: 0.05, gen throughput (token/s): 987.65",
      "INFO:     10.0.33.135:37478 - \"POST /v1/chat/completions HTTP/1.1\" 200 OK",
      "INFO 10-14 10:00:20 [loggers.py:116] Engine 000: Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 12.3"};
  std::vector<int> m;
  for (const std::string& l : lines) {  // warm both caches
    dfa.value()->Match(l, &m);
    set->Match(l, &m);
  }
  PrefixDfaBenchLoop(**dfa, *set, lines, 10000);
}

}  // namespace
}  // namespace tpt
