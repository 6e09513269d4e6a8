// regex_groups.h: the capturing groups of an RE2 pattern, read from its text
// without compiling it.
//
// Loading the compiled-in format files compiles ~230 pattern regexes, most of
// which never meet a line of a given log; their group numbers (which the
// fields, `kv_group` and fast layouts refer to) are all the loader needs of
// them. formats_test checks this reader against RE2 on every built-in regex.
//
//   auto g = tpt::ReadRegexGroups(R"(x (?P<a>\d+)(y|z))");  // count 2, named {a: 1}
//   if (!g) CompileItAndAskRe2();
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace tpt {

struct RegexGroups {
  int count = 0;                     // as RE2::NumberOfCapturingGroups()
  std::map<std::string, int> named;  // as RE2::NamedCapturingGroups()
};

// Groups of `pattern` in RE2 syntax; nullopt for text this reader does not
// follow (`\Q...\E`, an unclosed class or group, a malformed name): compile
// it and ask RE2 instead.
std::optional<RegexGroups> ReadRegexGroups(std::string_view pattern);

}  // namespace tpt
