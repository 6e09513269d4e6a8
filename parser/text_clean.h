// text_clean.h: text hygiene: ANSI colour codes, invalid UTF-8, plain lines.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace tpt {

// Removes ANSI escape sequences (CSI "\x1b[...m" and friends). Returns true if any.
bool StripAnsi(std::string* text);

// Replaces invalid UTF-8 sequences with U+FFFD so the text is valid JSON.
std::string SanitizeUtf8(std::string_view text);
bool IsValidUtf8Slow(std::string_view text);
// Short ASCII texts (a field's value, a date) answer in a few instructions.
inline bool IsValidUtf8(std::string_view text) {
  const size_t n = text.size();
  if (n >= 8 && n <= 16) {
    uint64_t a, b;
    std::memcpy(&a, text.data(), 8);
    std::memcpy(&b, text.data() + n - 8, 8);
    if (((a | b) & 0x8080808080808080ULL) == 0) return true;
  }
  return IsValidUtf8Slow(text);
}
// True when `text` holds no '\r', no ESC and no byte >= 0x80: a line with
// nothing to split, strip of colour codes or repair (most log lines). One
// pass of 16 bytes at a time instead of three searches.
bool IsPlainLine(std::string_view text);

}  // namespace tpt
