// The built-in formats' fast layouts compiled to C++ by the build
// (fast_layout_emit.cc, parser/match/tools/gen_fast_code.cc) against the
// interpreter (fast_layout.cc) on the same lines: the lines of every bundled
// sample log and every string of the format files, then many edits of the
// lines a layout takes.
#include <gtest/gtest.h>
#include <re2/re2.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "parser/match/fast_layout.h"
#include "parser/format_set.h"

namespace tpt {
namespace {

namespace fs = std::filesystem;

const FormatSet& Builtin() {
  static const FormatSet* set = [] {
    auto f = FormatSet::LoadBuiltin();
    if (!f.ok()) ADD_FAILURE() << f.status().ToString();
    return new FormatSet(std::move(*f));
  }();
  return *set;
}

// Every line of the repository's sample logs and every string in the format
// files (samples, near misses, regexes: anything is a fair input).
const std::vector<std::string>& Lines() {
  static const std::vector<std::string>* lines = [] {
    std::set<std::string> seen;
    auto add = [&](const std::string& s) {
      if (!s.empty()) seen.insert(s);
    };
    for (const auto& e : fs::recursive_directory_iterator(fs::path(TPT_SOURCE_DIR) / "samples")) {
      if (!e.is_regular_file() || e.path().extension() != ".log") continue;
      std::ifstream in(e.path(), std::ios::binary);
      std::string line;
      while (std::getline(in, line)) add(line);
    }
    std::vector<const nlohmann::json*> stack;
    std::vector<nlohmann::json> docs;
    for (const auto& e : fs::directory_iterator(fs::path(TPT_SOURCE_DIR) / "parser/formats")) {
      if (e.path().extension() != ".json") continue;
      std::ifstream in(e.path(), std::ios::binary);
      docs.push_back(nlohmann::json::parse(in));
    }
    for (const auto& d : docs) stack.push_back(&d);
    while (!stack.empty()) {
      const nlohmann::json* j = stack.back();
      stack.pop_back();
      if (j->is_string()) add(j->get<std::string>());
      if (j->is_structured()) {
        for (const auto& v : *j) stack.push_back(&v);
      }
    }
    return new std::vector<std::string>(seen.begin(), seen.end());
  }();
  return *lines;
}

// What both ways give on `text`: "" when they agree, else how they differ.
std::string Compare(const FastLayout& fl, std::string_view text, bool* matched) {
  std::vector<std::string_view> code, interp;
  const bool a = fl.Match(text, &code);
  const bool b = fl.MatchInterpreted(text, &interp);
  *matched = b;
  if (a != b) return std::string("compiled ") + (a ? "matches" : "declines") + ", interpreter " + (b ? "matches" : "declines");
  if (!a) return "";
  for (size_t g = 0; g < interp.size(); ++g) {
    const bool same = (code[g].data() == nullptr) == (interp[g].data() == nullptr) &&
                      (interp[g].data() == nullptr || (code[g].data() == interp[g].data() && code[g].size() == interp[g].size()));
    if (!same) return "group " + std::to_string(g) + " differs";
  }
  return "";
}

TEST(FastLayoutCode, EveryBuiltinLayoutIsCompiled) {
  std::vector<const FastLayout*> layouts = Builtin().FastLayouts();
  ASSERT_GE(layouts.size(), 6u);
  for (const FastLayout* fl : layouts) EXPECT_TRUE(fl->compiled()) << fl->source();
}

TEST(FastLayoutCode, AgreesWithTheInterpreterOnEveryBundledLine) {
  const auto& lines = Lines();
  ASSERT_GT(lines.size(), 3000u);
  for (const FastLayout* fl : Builtin().FastLayouts()) {
    size_t matched = 0;
    for (const std::string& line : lines) {
      bool m = false;
      std::string diff = Compare(*fl, line, &m);
      ASSERT_EQ(diff, "") << fl->source() << "\non: " << line;
      matched += m;
    }
    // Each layout's lines are among them, so the test compares matches too.
    EXPECT_GT(matched, 0u) << fl->source();
  }
}

// Edits of lines a layout takes: every cut, and at every byte a deletion, a
// doubling and a replacement by bytes the layouts treat specially; then
// random edits (up to 4 each). Both results must occur, so both paths are compared.
TEST(FastLayoutCode, AgreesWithTheInterpreterOnEditedLines) {
  const std::string kBytes = std::string("09.,: ]-[xT\t\x1b", 13) + std::string(1, '\0') + "\xc3";
  std::mt19937 rng(7);
  for (const FastLayout* fl : Builtin().FastLayouts()) {
    std::vector<std::string> taken;
    for (const std::string& line : Lines()) {
      std::vector<std::string_view> g;
      if (fl->MatchInterpreted(line, &g)) taken.push_back(line);
    }
    ASSERT_FALSE(taken.empty()) << fl->source();
    std::shuffle(taken.begin(), taken.end(), rng);
    if (taken.size() > 40) taken.resize(40);
    size_t yes = 0, no = 0;
    auto check = [&](const std::string& text) {
      bool m = false;
      std::string diff = Compare(*fl, text, &m);
      ASSERT_EQ(diff, "") << fl->source() << "\non: " << text;
      (m ? yes : no) += 1;
    };
    for (const std::string& line : taken) {
      for (size_t i = 0; i <= line.size(); ++i) {
        check(line.substr(0, i));
        if (i == line.size()) break;
        check(line.substr(0, i) + line.substr(i + 1));
        check(line.substr(0, i + 1) + line.substr(i));
        for (char c : kBytes) {
          std::string t = line;
          t[i] = c;
          check(t);
        }
      }
      for (int r = 0; r < 1000; ++r) {
        std::string t = line;
        int edits = 1 + static_cast<int>(rng() % 4);
        for (int e = 0; e < edits && !t.empty(); ++e) {
          size_t at = rng() % t.size();
          switch (rng() % 4) {
            case 0:
              t[at] = kBytes[rng() % kBytes.size()];
              break;
            case 1:
              t.erase(at, 1 + rng() % 3);
              break;
            case 2:
              t.insert(at, t.substr(rng() % t.size(), 1 + rng() % 6));
              break;
            default:  // a stretch again, so that a skip's literal occurs twice
              t.insert(at, t.substr(rng() % t.size(), 1 + rng() % (t.size() / 2 + 1)));
          }
        }
        check(t);
      }
    }
    EXPECT_GT(yes, 0u) << fl->source();
    EXPECT_GT(no, 0u) << fl->source();
  }
}

// A layout the build did not see runs interpreted, with the same results;
// its code names the function asked for and is the same text each time.
TEST(FastLayoutCode, OtherLayoutsAreInterpreted) {
  RE2 re("Running: (?P<run>\\d+) reqs,(?: Swapped: (?P<sw>\\d+) reqs,)? (?:Pending|Waiting): (?P<wait>\\d+)");
  auto fl = FastLayout::Compile("Running: {run:digits} reqs,[ Swapped: {sw:digits} reqs,] {:Pending|Waiting}: {wait:digits}", re);
  ASSERT_TRUE(fl.ok()) << fl.status().ToString();
  EXPECT_FALSE(fl->compiled());
  std::vector<std::string_view> g;
  ASSERT_TRUE(fl->Match("x Running: 12 reqs, Waiting: 3 reqs", &g));
  EXPECT_EQ(g[1], "12");
  EXPECT_EQ(g[2].data(), nullptr);
  EXPECT_EQ(g[3], "3");
  std::string code = fl->EmitCode("MyLayout");
  EXPECT_NE(code.find("bool MyLayout(const char* const base"), std::string::npos) << code;
  EXPECT_EQ(code, fl->EmitCode("MyLayout"));
  EXPECT_NE(code.find("\"Running: \""), std::string::npos) << code;  // the leading literal, as an immediate
}

}  // namespace
}  // namespace tpt
