// text_clean.cc: colour codes and invalid UTF-8 (text_clean.h).
#include "parser/text_clean.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <string>

namespace tpt {

bool StripAnsi(std::string* text) {
  if (text->find('\x1b') == std::string::npos) return false;
  std::string out;
  out.reserve(text->size());
  const std::string& s = *text;
  for (size_t i = 0; i < s.size();) {
    if (s[i] != '\x1b') {
      out.push_back(s[i++]);
      continue;
    }
    ++i;
    if (i < s.size() && s[i] == '[') {  // CSI: parameters, then a final byte 0x40..0x7e
      ++i;
      while (i < s.size() && !(s[i] >= 0x40 && s[i] <= 0x7e)) ++i;
      if (i < s.size()) ++i;
    } else if (i < s.size() && s[i] == ']') {  // OSC: up to BEL or ESC '\'
      ++i;
      while (i < s.size() && s[i] != '\x07' && !(s[i] == '\x1b' && i + 1 < s.size() && s[i + 1] == '\\')) ++i;
      if (i < s.size()) i += s[i] == '\x07' ? 1 : 2;
    } else if (i < s.size()) {
      ++i;  // two-byte escape
    }
  }
  *text = std::move(out);
  return true;
}

namespace {
// Length of the valid UTF-8 sequence at s[i], or 0.
size_t Utf8SeqLen(std::string_view s, size_t i) {
  unsigned char c = static_cast<unsigned char>(s[i]);
  if (c < 0x80) return 1;
  size_t n;
  unsigned cp;
  if ((c & 0xe0) == 0xc0) {
    n = 2;
    cp = c & 0x1f;
  } else if ((c & 0xf0) == 0xe0) {
    n = 3;
    cp = c & 0x0f;
  } else if ((c & 0xf8) == 0xf0) {
    n = 4;
    cp = c & 0x07;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    unsigned char d = static_cast<unsigned char>(s[i + k]);
    if ((d & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (d & 0x3f);
  }
  if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
      (cp >= 0xd800 && cp <= 0xdfff)) {
    return 0;
  }
  return n;
}
}  // namespace

bool IsValidUtf8Slow(std::string_view s) {
  size_t i = 0;
  // Log lines are mostly ASCII: 32, then 8 bytes at a time while no high bit is set.
  for (uint64_t w[4]; i + 32 <= s.size(); i += 32) {
    std::memcpy(w, s.data() + i, 32);
    if ((w[0] | w[1] | w[2] | w[3]) & 0x8080808080808080ULL) break;
  }
  for (uint64_t w; i + 8 <= s.size(); i += 8) {
    std::memcpy(&w, s.data() + i, 8);
    if (w & 0x8080808080808080ULL) break;
  }
  while (i < s.size()) {
    if (static_cast<unsigned char>(s[i]) < 0x80) {
      ++i;
      continue;
    }
    size_t n = Utf8SeqLen(s, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

bool IsPlainLine(std::string_view s) {
  auto plain_byte = [](unsigned char c) { return c != '\r' && c != 0x1b && c < 0x80; };
#if defined(__SSE2__)
  if (s.size() >= 16) {
    const __m128i cr = _mm_set1_epi8('\r'), esc = _mm_set1_epi8(0x1b);
    // A byte is flagged when it is '\r' or ESC (all ones) or >= 0x80 (its own high bit).
    auto flagged = [&](size_t at) {
      __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s.data() + at));
      return _mm_movemask_epi8(_mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, cr), _mm_cmpeq_epi8(v, esc)), v)) != 0;
    };
    size_t i = 0;
    for (; i + 16 <= s.size(); i += 16) {
      if (flagged(i)) return false;
    }
    return i == s.size() || !flagged(s.size() - 16);  // the last bytes, overlapping
  }
#endif
  for (char c : s) {
    if (!plain_byte(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

std::string SanitizeUtf8(std::string_view s) {
  if (IsValidUtf8(s)) return std::string(s);
  std::string out;
  out.reserve(s.size() + 8);
  for (size_t i = 0; i < s.size();) {
    size_t n = Utf8SeqLen(s, i);
    if (n == 0) {
      out += "\xef\xbf\xbd";
      ++i;
    } else {
      out.append(s.substr(i, n));
      i += n;
    }
  }
  return out;
}

}  // namespace tpt
