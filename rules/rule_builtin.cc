// rule_builtin.cc: RuleSet::LoadBuiltin over the rule files embedded at build time.
#include "rules/generated_defs.h"
#include "rules/rule.h"

namespace tpt {

StatusOr<RuleSet> RuleSet::LoadBuiltin() {
  return LoadTexts(EmbeddedFiles(generated::kRuleDefs, generated::kRuleDefsCount));
}

}  // namespace tpt
