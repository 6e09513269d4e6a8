// functions_groups.h: rule-expression functions over groups of events
// (rules/functions_groups.cc says what each computes and why).
#pragma once

#include <vector>

#include "rules/expr.h"

namespace tpt {

class RunScope;

// group_duplicate(kind, group_field, member_field, value_field[, 'members']).
Value GroupDuplicate(const RunScope& s, const std::vector<Value>& args);

// oom_card_shared(['pids']).
Value OomCardShared(const RunScope& s, const std::vector<Value>& args);

}  // namespace tpt
