// catalog_test.cc: the message catalogue (samples/catalog/*.jsonl) through the
// parser and the rules.
//
// Each entry is a message as its framework prints it (prefix included), the lines
// printed before and after it that its meaning depends on (`context`, `after`), the
// event kind the message must yield and the root cause the excerpt must give
// (`none` for a harmless warning). An entry is covered when both hold. The test
// prints the coverage per family and fails when any entry is not covered,
// unless kKnownMisses names it with the reason; a known miss that is covered
// again fails too, so the list only shrinks (a ratchet). A harmless entry
// reported as a failure is never allowed (a warning is never a root cause by
// itself).
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include "parser/format_set.h"
#include "parser/parser.h"
#include "rules/analyzer.h"

namespace tpt {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

// Entries not covered today, each with why (empty: 183/183 failure and 33/33
// harmless entries are covered). Add one only in a commit that says why.
const std::map<std::string, std::string> kKnownMisses = {};

struct Entry {
  std::string family, id, kind, root_cause;
  std::vector<std::string> lines;  // context + message + after
  size_t msg_first = 0, msg_last = 0;  // 1-based lines of the message
};

std::vector<std::string> SplitLines(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  std::string l;
  while (std::getline(in, l)) out.push_back(l);
  return out;
}

std::vector<Entry> LoadCatalog() {
  std::vector<Entry> out;
  fs::path dir = fs::path(TPT_SOURCE_DIR) / "samples" / "catalog";
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".jsonl") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const fs::path& f : files) {
    std::ifstream in(f);
    std::string line;
    int n = 0;
    while (std::getline(in, line)) {
      ++n;
      if (line.empty()) continue;
      json j = json::parse(line, nullptr, false);
      EXPECT_FALSE(j.is_discarded()) << f << ":" << n << ": not JSON";
      if (j.is_discarded()) continue;
      Entry e;
      e.family = f.stem().string();
      e.id = j.value("id", "");
      EXPECT_FALSE(e.id.empty()) << f << ":" << n << ": no id";
      EXPECT_EQ(e.id.rfind(e.family + ".", 0), 0u) << f << ":" << n << ": id " << e.id << " outside family " << e.family;
      EXPECT_TRUE(j.contains("source") && j["source"].contains("file") && j["source"].contains("versions"))
          << e.id << ": name the source file and the versions";
      e.kind = j["kind"].is_string() ? j["kind"].get<std::string>() : "";
      e.root_cause = j.value("root_cause", "");
      for (const auto& c : j.value("context", json::array()))
        for (const std::string& l : SplitLines(c.get<std::string>())) e.lines.push_back(l);
      e.msg_first = e.lines.size() + 1;
      for (const std::string& l : SplitLines(j.value("message", ""))) e.lines.push_back(l);
      e.msg_last = e.lines.size();
      for (const auto& c : j.value("after", json::array()))
        for (const std::string& l : SplitLines(c.get<std::string>())) e.lines.push_back(l);
      out.push_back(std::move(e));
    }
  }
  return out;
}

TEST(Catalog, EveryEntryIsRecognisedAndClassified) {
  std::vector<Entry> entries = LoadCatalog();
  ASSERT_GE(entries.size(), 150u);
  auto an = Analyzer::Create({});
  ASSERT_TRUE(an.ok()) << an.status().message();
  auto formats = FormatSet::LoadBuiltin();
  ASSERT_TRUE(formats.ok()) << formats.status().message();
  fs::path tmp = fs::temp_directory_path() / ("tpt_catalog_" + std::to_string(getpid()));
  fs::create_directories(tmp);

  struct Tally {
    int fail_ok = 0, fail_all = 0, harmless_ok = 0, harmless_all = 0;
  };
  std::map<std::string, Tally> by_family;
  Tally total;
  std::vector<std::string> misses;
  for (const Entry& e : entries) {
    fs::path log = tmp / (e.id + ".log");
    {
      std::ofstream out(log);
      for (const std::string& l : e.lines) out << l << "\n";
    }
    bool kind_ok = true;
    if (!e.kind.empty()) {
      auto run = ParseRunToMemory({log.string()}, *formats, {});
      ASSERT_TRUE(run.ok()) << e.id;
      kind_ok = std::any_of(run->events.begin(), run->events.end(), [&](const Event& ev) {
        return ev.kind == e.kind && ev.line >= e.msg_first && ev.line <= e.msg_last;
      });
    }
    auto a = an->Run({log.string()});
    ASSERT_TRUE(a.ok()) << e.id << ": " << a.status().message();
    bool harmless = e.root_cause == "none";
    // A harmless line alone may leave nothing that says a server ran
    // (`no_evidence`): neither is a failure.
    bool cause_ok = a->root_cause == e.root_cause || (harmless && a->root_cause == "no_evidence");
    bool ok = kind_ok && cause_ok;
    Tally& t = by_family[e.family];
    for (Tally* x : {&t, &total}) {
      (harmless ? x->harmless_all : x->fail_all)++;
      if (ok) (harmless ? x->harmless_ok : x->fail_ok)++;
    }
    if (!ok) {
      misses.push_back(e.id + ": " + (kind_ok ? "" : "no '" + e.kind + "' event on the message; ") +
                       (cause_ok ? "" : "root cause " + a->root_cause + " (want " + e.root_cause + ")"));
    }
    // A harmless line reported as a failure is a false alarm: never allowed.
    if (harmless) {
      EXPECT_TRUE(a->root_cause == "none" || a->root_cause == "no_evidence") << e.id << ": " << a->verdict;
    }
    fs::remove(log);
  }
  fs::remove_all(tmp);

  std::printf("catalogue coverage (recognised and classified right / all):\n");
  for (const auto& [fam, t] : by_family)
    std::printf("  %-9s failures %3d/%-3d harmless %2d/%-2d\n", fam.c_str(), t.fail_ok, t.fail_all, t.harmless_ok, t.harmless_all);
  double pct = total.fail_all ? 100.0 * total.fail_ok / total.fail_all : 100.0;
  std::printf("  total     failures %d/%d (%.1f%%), harmless %d/%d\n", total.fail_ok, total.fail_all, pct, total.harmless_ok,
              total.harmless_all);
  for (const std::string& m : misses) std::printf("  miss: %s\n", m.c_str());
  // Every entry, per family: no slack for a silent regression.
  std::set<std::string> missed;
  for (const std::string& m : misses) {
    std::string id = m.substr(0, m.find(':'));
    missed.insert(id);
    EXPECT_TRUE(kKnownMisses.count(id)) << "catalogue entry no longer recognised and classified right: " << m;
  }
  for (const auto& [id, why] : kKnownMisses)
    EXPECT_TRUE(missed.count(id)) << id << " is covered now: remove it from kKnownMisses (" << why << ")";
  EXPECT_GE(total.fail_all, 183) << "failure entries went missing from samples/catalog";
  EXPECT_GE(total.harmless_all, 33) << "harmless entries went missing from samples/catalog";
}

}  // namespace
}  // namespace tpt
