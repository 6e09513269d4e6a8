// rule.h: one diagnosis rule (rules/defs/<id>.json) and the set of them.
//
// A rule names the event kinds that anchor it (the error it explains), the
// figures it computes (expressions and memory-model calls), the condition
// under which it holds, and the explanation, remedy and ruled-out suspects it
// reports. The language is described in rules/README.md.
//
//   auto rules = tpt::RuleSet::LoadBuiltin();             // compiled-in defs
//   auto mine = tpt::RuleSet::LoadDir("my_rules/");       // --rules DIR
//   if (!mine.ok()) Die(mine.status().message());         // "x.json: $.when: col 3: ..."
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "rules/expr.h"
#include "rules/rule_file.h"

namespace tpt {

// How a diagnosis ranks against others: a cause outranks a symptom (a
// watchdog timeout, a generic crash), which outranks launcher noise.
enum class Tier { kCause = 0, kSymptom = 1, kConsequence = 2 };

struct Template {
  std::string text;  // "{rest_gib:.1f} GiB"; placeholders checked at load time
};

struct RemedyDef {
  std::string flag, value, direction, why;
  std::string command;  // a line to copy when the remedy is not a flag (`dmesg -T | grep -i xid`)
  std::string kind;     // "fix" (default), "next_step", "action" (memory/remedy.h)
  ExprPtr when;  // null: always
};

struct RuledOutDef {
  std::string id, reason;
  ExprPtr when;
};

// A diagnosis rule: the shared keys (rules/rule_file.h) plus what a
// diagnosis reports.
struct Rule : RuleBody {
  std::string root_cause;             // a taxonomy id
  double confidence = 0.8;             // the last (default) value of `confidences`
  // The first whose condition holds is used (the last has no "when"): how sure a
  // reading is can depend on what the log shows (one rank's view, a cut line).
  std::vector<std::pair<ExprPtr, double>> confidences;
  Tier tier = Tier::kCause;
  int priority = 0;                   // among rules on the same anchor, higher wins
  std::string explanation;            // the last (default) text of `explanations`
  // The first whose condition holds is used (the last one should have no "when").
  std::vector<std::pair<ExprPtr, std::string>> explanations;
  std::vector<RemedyDef> remedy;
  std::vector<RuledOutDef> ruled_out;
};

class RuleSet {
 public:
  // The rules compiled into the binary from rules/defs/*.json.
  static StatusOr<RuleSet> LoadBuiltin();
  // Every *.json in `dir`.
  static StatusOr<RuleSet> LoadDir(const std::string& dir);
  // (file name, JSON text) pairs: the common path of both loaders.
  static StatusOr<RuleSet> LoadTexts(const RuleFiles& files);

  const std::vector<Rule>& rules() const { return rules_; }

 private:
  std::vector<Rule> rules_;
};

// Parses one rule file; errors name `file`, the JSON path and the reason.
StatusOr<Rule> ParseRule(const std::string& file, const std::string& text);

// Fills {name} / {name:.1f} placeholders from `scope`; a missing value prints "?".
std::string FillTemplate(const std::string& text, const Scope& scope);

}  // namespace tpt
