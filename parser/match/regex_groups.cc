// regex_groups.cc: see regex_groups.h.
#include "parser/match/regex_groups.h"

namespace tpt {
namespace {

bool IsNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// Skips a character class starting at p[i] == '['; returns the index after
// its closing ']', or npos when it is not closed.
size_t SkipClass(std::string_view p, size_t i) {
  ++i;
  if (i < p.size() && p[i] == '^') ++i;
  if (i < p.size() && p[i] == ']') ++i;  // a leading ']' is a literal
  while (i < p.size()) {
    char c = p[i];
    if (c == '\\') {
      i += 2;
    } else if (c == '[' && i + 1 < p.size() && p[i + 1] == ':') {  // [:alpha:]
      size_t end = p.find(":]", i + 2);
      if (end == std::string_view::npos) return std::string_view::npos;
      i = end + 2;
    } else if (c == ']') {
      return i + 1;
    } else {
      ++i;
    }
  }
  return std::string_view::npos;
}

}  // namespace

std::optional<RegexGroups> ReadRegexGroups(std::string_view p) {
  RegexGroups g;
  int depth = 0;
  size_t i = 0;
  while (i < p.size()) {
    char c = p[i];
    if (c == '\\') {
      if (i + 1 >= p.size() || p[i + 1] == 'Q') return std::nullopt;  // \Q...\E quotes parentheses
      i += 2;
    } else if (c == '[') {
      i = SkipClass(p, i);
      if (i == std::string_view::npos) return std::nullopt;
    } else if (c == '(') {
      ++depth;
      if (i + 1 < p.size() && p[i + 1] == '?') {
        size_t name_at = std::string_view::npos;
        if (p.substr(i + 2, 2) == "P<") name_at = i + 4;
        if (p.substr(i + 2, 1) == "<") name_at = i + 3;
        if (name_at != std::string_view::npos) {
          size_t end = name_at;
          while (end < p.size() && IsNameChar(p[end])) ++end;
          if (end == name_at || end >= p.size() || p[end] != '>') return std::nullopt;
          std::string name(p.substr(name_at, end - name_at));
          if (g.named.count(name)) return std::nullopt;  // RE2 rejects a duplicate name
          g.named[name] = ++g.count;
          i = end + 1;
        } else {
          i += 2;  // (?: (?i) (?i: ... : not capturing
        }
      } else {
        ++g.count;
        ++i;
      }
    } else if (c == ')') {
      if (--depth < 0) return std::nullopt;
      ++i;
    } else {
      ++i;
    }
  }
  if (depth != 0) return std::nullopt;
  return g;
}

}  // namespace tpt
