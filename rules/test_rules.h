// test_rules.h: the built-in rule set, loaded once per test binary (a failed
// load fails the test that asked for it).
#pragma once

#include <gtest/gtest.h>

#include "rules/engine.h"

namespace tpt::testing {

inline const RuleSet& BuiltinRules() {
  static const RuleSet* set = [] {
    auto s = RuleSet::LoadBuiltin();
    if (!s.ok()) ADD_FAILURE() << s.status().message();
    return new RuleSet(std::move(*s));
  }();
  return *set;
}

}  // namespace tpt::testing
