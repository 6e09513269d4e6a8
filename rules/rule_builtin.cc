// rule_builtin.cc: RuleSet::LoadBuiltin over the rule files embedded at build time.
#include "rules/generated_defs.h"
#include "rules/rule.h"

namespace tpt {

StatusOr<RuleSet> RuleSet::LoadBuiltin() {
  std::vector<std::pair<std::string, std::string>> files;
  for (size_t i = 0; i < generated::kNumRuleDefs; ++i)
    files.emplace_back(generated::kRuleDefs[i].name, generated::kRuleDefs[i].text);
  return LoadTexts(files);
}

}  // namespace tpt
