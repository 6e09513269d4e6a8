// strings.h: the small ASCII string helpers every module used to define for
// itself (after absl/strings: AsciiStrToLower, StripAsciiWhitespace).
//
//   Lower("NCCL WARN")      -> "nccl warn"
//   Trim("  94 GiB \t")     -> "94 GiB"   (a view into the argument)
//
// ASCII only, on purpose: log keywords and units are ASCII, and a locale must
// not change what a rule matches.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace tpt {

inline std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

inline bool IsAsciiSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

inline std::string_view Trim(std::string_view s) {
  while (!s.empty() && IsAsciiSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsAsciiSpace(s.back())) s.remove_suffix(1);
  return s;
}

// The items of a repeatable list option: {"a,b", "c"} -> {"a", "b", "c"};
// empty items are dropped.
inline std::vector<std::string> SplitList(const std::vector<std::string>& values, char sep = ',') {
  std::vector<std::string> out;
  for (std::string_view v : values) {
    while (!v.empty()) {
      const size_t end = v.find(sep);
      std::string_view item = v.substr(0, end);
      if (!item.empty()) out.emplace_back(item);
      if (end == std::string_view::npos) break;
      v.remove_prefix(end + 1);
    }
  }
  return out;
}

}  // namespace tpt
