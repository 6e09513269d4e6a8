// functions_quiet.h: rule-expression functions over what follows the anchor
// in time (rules/functions_quiet.cc says what each computes and why).
#pragma once

#include <vector>

#include "rules/expr.h"

namespace tpt {

class RunScope;

// quiet_for(kind): seconds the run went on after the anchor with no event of kind.
Value QuietFor(const RunScope& s, const std::vector<Value>& args);
// count_after(kind, field, value[, field2, value2]): such events after the anchor.
Value CountAfter(const RunScope& s, const std::vector<Value>& args);

}  // namespace tpt
