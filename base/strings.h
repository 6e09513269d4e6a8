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

// Length of the valid UTF-8 sequence at s[i] (1 for ASCII), 0 when it is not
// one (overlong forms, surrogates, code points past U+10FFFF, cut sequences).
inline size_t Utf8SequenceLength(std::string_view s, size_t i) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char c = byte(i);
  if (c < 0x80) return 1;
  size_t n;
  unsigned char lo = 0x80, hi = 0xBF;
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  if (byte(i + 1) < lo || byte(i + 1) > hi) return 0;
  for (size_t k = 2; k < n; ++k) {
    if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
  }
  return n;
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
