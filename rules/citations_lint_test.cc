// citations_lint_test.cc: every knowledge citation in the data files resolves.
//
// Format, rule and finding files carry "sources" such as
// "knowledge/sglang-source.md sections 1.2, 1.5, 2.1-2.3, 3". Each named note
// must exist under docs/knowledge/, and each leading section number must be a
// heading of that note ("## 3." or "### 2.1 ..."), so a reader of a fresh
// clone can open what a rule says it follows from.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace {

namespace fs = std::filesystem;

fs::path SourceDir() {
  const char* src = std::getenv("TPT_SOURCE_DIR");
  return src ? fs::path(src) : fs::current_path();
}

std::string ReadFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The section numbers a note has headings for: "## 3. Title" gives "3",
// "### 2.1 Title" gives "2.1".
std::set<std::string> Headings(const std::string& text) {
  static const std::regex kHeading(R"(^#{2,4}\s+(\d+(?:\.\d+)*)\.?(?:\s|$))");
  std::set<std::string> out;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    std::smatch m;
    if (std::regex_search(line, m, kHeading)) out.insert(m[1]);
  }
  return out;
}

// The section numbers a citation starts with: after the note's name, an
// optional "section(s)" or "§", then numbers joined by ", ", " and " or "-"
// (a range: both ends must exist); "1.2(e)" cites 1.2. Reading stops at the
// first word that is not a number (prose, a parenthesis, "step 6").
std::vector<std::string> CitedSections(std::string rest) {
  static const std::regex kLead(R"(^\s*(?:sections?\s+|§\s*)?)");
  static const std::regex kNumber(R"(^(\d+(?:\.\d+)*)(?:\([a-z]\))?)");
  static const std::regex kJoin(R"(^(?:\s*,\s*|\s+and\s+|\s*-\s*))");
  rest = std::regex_replace(rest, kLead, "", std::regex_constants::format_first_only);
  std::vector<std::string> out;
  std::smatch m;
  while (std::regex_search(rest, m, kNumber)) {
    out.push_back(m[1]);
    rest = m.suffix();
    if (!std::regex_search(rest, m, kJoin)) break;
    rest = m.suffix();
  }
  return out;
}

struct Citation {
  std::string file;  // the data file, relative to the source dir
  std::string text;  // the whole source string
};

void CollectSources(const nlohmann::json& j, const std::string& file, std::vector<Citation>* out) {
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) {
      if (it.key() == "sources" && it.value().is_array()) {
        for (const auto& s : it.value())
          if (s.is_string()) out->push_back({file, s.get<std::string>()});
      } else {
        CollectSources(it.value(), file, out);
      }
    }
  } else if (j.is_array()) {
    for (const auto& v : j) CollectSources(v, file, out);
  }
}

std::vector<Citation> AllCitations() {
  std::vector<Citation> out;
  const fs::path root = SourceDir();
  for (const char* dir : {"parser/formats", "rules/defs", "rules/findings"}) {
    for (const auto& entry : fs::directory_iterator(root / dir)) {
      if (entry.path().extension() != ".json") continue;
      const auto j = nlohmann::json::parse(ReadFile(entry.path()), nullptr, false);
      if (j.is_discarded()) continue;  // the loaders' own tests report bad JSON
      CollectSources(j, fs::relative(entry.path(), root).string(), &out);
    }
  }
  return out;
}

TEST(CitationsLint, ReadsSectionNumbersTheWayDataFilesWriteThem) {
  EXPECT_EQ(CitedSections(" sections 1.2, 1.5, 2.1-2.3, 3"),
            (std::vector<std::string>{"1.2", "1.5", "2.1", "2.3", "3"}));
  EXPECT_EQ(CitedSections(" 1.2(e), 2.2"), (std::vector<std::string>{"1.2", "2.2"}));
  EXPECT_EQ(CitedSections(" 1.4 and 7 (transport/nvls.cc)"), (std::vector<std::string>{"1.4", "7"}));
  EXPECT_EQ(CitedSections(" 1.5 step 6 (the draft worker)"), (std::vector<std::string>{"1.5"}));
  EXPECT_EQ(CitedSections(" 2.1, issue #5347)"), (std::vector<std::string>{"2.1"}));
  EXPECT_TRUE(CitedSections("").empty());
  EXPECT_EQ(Headings("## 3. Custom\n### 2.1 The prefix\n# 1. not a section\n"),
            (std::set<std::string>{"3", "2.1"}));
}

TEST(CitationsLint, EveryCitedNoteAndSectionExists) {
  static const std::regex kNote(R"(knowledge/([A-Za-z0-9_-]+\.md))");
  const fs::path notes = SourceDir() / "docs" / "knowledge";
  const std::vector<Citation> citations = AllCitations();
  ASSERT_GT(citations.size(), 20u) << "the data files cite knowledge notes; none found under " << SourceDir();
  size_t sections_checked = 0;
  for (const Citation& c : citations) {
    for (std::sregex_iterator it(c.text.begin(), c.text.end(), kNote), end; it != end; ++it) {
      const fs::path note = notes / (*it)[1].str();
      ASSERT_TRUE(fs::exists(note)) << c.file << " cites " << (*it)[0] << ", which is not in docs/knowledge/";
      const std::set<std::string> headings = Headings(ReadFile(note));
      const std::string rest = c.text.substr(it->position() + it->length());
      for (const std::string& section : CitedSections(rest)) {
        EXPECT_TRUE(headings.count(section))
            << c.file << " cites section " << section << " of " << (*it)[1] << ", which has no such heading ("
            << c.text << ")";
        ++sections_checked;
      }
    }
  }
  EXPECT_GT(sections_checked, 20u);
}

}  // namespace
