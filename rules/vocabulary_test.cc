// vocabulary_test.cc: parser/events.json and rules/taxonomy.json as the code
// reads them, and parser/EVENTS.md (the readable table) agreeing with
// events.json row for row.
#include "rules/vocabulary.h"

#include <cstdlib>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include <gtest/gtest.h>

#include "rules/rule.h"

namespace tpt {
namespace {

std::string SourceDir() {
  const char* d = std::getenv("TPT_SOURCE_DIR");
  return d ? d : ".";
}

TEST(Vocabulary, EventsMdListsTheKindsOfEventsJson) {
  std::ifstream in(SourceDir() + "/parser/EVENTS.md");
  ASSERT_TRUE(in) << "parser/EVENTS.md";
  struct Row {
    std::string kind, section, fields;
  };
  std::vector<Row> md;
  std::string line, section;
  const std::regex row(R"(^\| `([a-z0-9_]+)` \|(.*)\|$)");
  while (std::getline(in, line)) {
    if (line.rfind("## ", 0) == 0) section = line.substr(3);
    std::smatch m;
    if (std::regex_match(line, m, row)) {
      std::string f = m[2].str();
      while (!f.empty() && f.front() == ' ') f.erase(0, 1);
      while (!f.empty() && f.back() == ' ') f.pop_back();
      md.push_back({m[1].str(), section, f});
    }
  }
  const auto& kinds = EventKinds();
  ASSERT_EQ(md.size(), kinds.size()) << "EVENTS.md and events.json list different numbers of kinds";
  for (size_t i = 0; i < md.size(); ++i) {
    EXPECT_EQ(md[i].kind, kinds[i].kind) << "row " << i;
    EXPECT_EQ(md[i].section, kinds[i].section) << md[i].kind;
    EXPECT_EQ(md[i].fields, kinds[i].fields) << md[i].kind;
  }
}

TEST(Vocabulary, EventKindsAreConsistent) {
  std::set<std::string> seen;
  for (const EventKind& k : EventKinds()) {
    EXPECT_TRUE(seen.insert(k.kind).second) << "kind listed twice: " << k.kind;
    for (const std::string* p : {&k.phase, &k.phase_completed, &k.phase_intrinsic})
      EXPECT_TRUE(p->empty() || PhaseIndex(*p) >= 0) << k.kind << ": phase '" << *p << "'";
    if (k.consequence) EXPECT_TRUE(k.failure) << k.kind << ": a consequence is a failure";
    // An intrinsic phase is for errors, and for memory_imbalance, which SGLang
    // prints as a warning or raises as an error depending on the version.
    if (!k.phase_intrinsic.empty()) EXPECT_TRUE(k.failure || k.kind == "memory_imbalance") << k.kind;
    for (const auto& [field, unit] : k.units) EXPECT_TRUE(unit == "bytes" || unit == "seconds") << k.kind << "." << field;
  }
  EXPECT_EQ(Phases().front(), "init");
  EXPECT_EQ(PhaseIndex("kv_pool") + 1, PhaseIndex("graphs"));
  ASSERT_NE(FindEventKind("cuda_oom"), nullptr);
  EXPECT_TRUE(FindEventKind("cuda_oom")->failure);
  EXPECT_FALSE(FindEventKind("weights_load_end")->failure);
  EXPECT_EQ(FindEventKind("no_such_kind"), nullptr);
}

TEST(Vocabulary, EveryRuleNamesATaxonomyRootCause) {
  auto rules = RuleSet::LoadBuiltin();
  ASSERT_TRUE(rules.ok()) << rules.status().message();
  std::set<std::string> used;
  for (const Rule& r : rules->rules()) {
    EXPECT_NE(FindRootCause(r.root_cause), nullptr) << r.id;
    used.insert(r.root_cause);
  }
  for (const RootCause& rc : RootCauses()) {
    EXPECT_FALSE(rc.title.empty()) << rc.id;
    EXPECT_TRUE(rc.id == "other" || used.count(rc.id)) << rc.id << ": a root cause no rule reports";
  }
  EXPECT_EQ(FindRootCause("kv_pool_no_room")->repro_step, "kv_formula");
}

}  // namespace
}  // namespace tpt
