// format_set_internal.h: helpers format_set.cc shares with format_check.cc.
// Not an API: only those two files include it.
#pragma once

#include <re2/re2.h>

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "parser/status.h"

namespace tpt::format_internal {

// Error at a JSON path of a file: "file: path: why".
Status At(const std::string& file, const std::string& path, const std::string& why);
// "base[i]".
std::string Idx(const std::string& base, size_t i);
// Runs `re` with all captures from text[pos]; `groups` receives n+1 views
// (data() == nullptr: did not participate). `precheck` first asks the DFA
// whether there is a match at all (most tries fail).
bool RunRe(const re2::RE2& re, std::string_view text, size_t pos, re2::RE2::Anchor anchor,
           std::vector<std::string_view>* groups, bool precheck = true);
// A string or an array of strings as a list (other values are left out).
std::vector<std::string> StringList(const nlohmann::json& j);

}  // namespace tpt::format_internal
