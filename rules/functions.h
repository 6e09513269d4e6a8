// functions.h: the one table of functions rule and finding expressions may
// call (rules/README.md lists them): name, how many arguments it takes, and
// what it computes. The loader checks names and argument counts against it
// (rules/rule_file.cc); RunScope::Call evaluates through it.
//
//   const tpt::FunctionDef* f = tpt::FindFunction("count");   // {count, 1, 1, fn}
//   tpt::Value v = f->fn(scope, {tpt::Value("cuda_oom")});
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "rules/expr.h"

namespace tpt {

class RunScope;

struct FunctionDef {
  const char* name;
  int min_args;
  int max_args;  // -1: any number
  // Null for the pure ones of rules/expr.h (min, max, gib, ...), which the
  // expression evaluates itself.
  Value (*fn)(const RunScope& scope, const std::vector<Value>& args);
};

// The argument of `name` that is an RE2 pattern (matches, extract, find_text,
// env_match); -1 when it takes none. PatternError: "" when `re` compiles as
// the functions compile it, else RE2's reason.
int RegexArgument(std::string_view name);
std::string PatternError(const std::string& re);

// The entry of `name`, or null when there is no such function.
const FunctionDef* FindFunction(std::string_view name);
// Every function, in table order.
const std::vector<FunctionDef>& AllFunctions();
// "1 argument", "2 or 3 arguments", "1 or more arguments".
std::string ArityText(const FunctionDef& f);

// The rank of the scope's anchor, or for a rank-less last line of a traceback
// the rank of the "... hit an exception" header that opened it; -1 when
// neither (findings read anchor.rank so).
int TracebackRank(const RunScope& s);
// TracebackRank(), else the lowest rank seen, else -1.
int AnchorRank(const RunScope& s);

}  // namespace tpt
