// fast_layout_internal.h: what fast_layout_compile.cc (building a layout's
// program) and fast_layout.cc (running it) share. Not an API.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace tpt::fast_layout_internal {

template <typename T>
T Load(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// The first (up to) 8 bytes of `lit` as TextAt loads them, and the mask of those bytes.
inline void Head(std::string_view lit, uint64_t* head, uint64_t* mask) {
  char bytes[8] = {0}, ones[8] = {0};
  size_t n = std::min<size_t>(lit.size(), 8);
  std::memcpy(bytes, lit.data(), n);
  std::memset(ones, 0xff, n);
  *head = Load<uint64_t>(bytes);
  *mask = Load<uint64_t>(ones);
}

// ---- 8 bytes at a time (little-endian loads: byte k of the text is bits 8k..8k+7) ----

constexpr bool kLittleEndian = std::endian::native == std::endian::little;
constexpr uint64_t kEach = 0x0101010101010101ull;
constexpr uint64_t kHigh = 0x8080808080808080ull;

// Run classes taken 8 bytes at a time.
enum Wide : uint8_t {
  kNarrow = 0,
  kDigits = 1,    // \d: up to the first non-digit
  kNumber = 2,    // [\d.]: up to the first byte neither digit nor '.'
  kNonSpace = 3,  // \S: 8 bytes at a time while none is below '!', then byte by byte
};

// ---- the steps' tests, shared by the interpreter (fast_layout.cc) and the
// code generated from layouts (fast_layout_emit.cc) ----

// a[0, n) == b[0, n), in word-sized loads (literals are short; a memcmp call costs more).
[[gnu::always_inline]] inline bool Equal(const char* a, const char* b, size_t n) {
  if (n >= 8) {
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
      if (Load<uint64_t>(a + i) != Load<uint64_t>(b + i)) return false;
    }
    return i == n || Load<uint64_t>(a + n - 8) == Load<uint64_t>(b + n - 8);
  }
  if (n >= 4) return Load<uint32_t>(a) == Load<uint32_t>(b) && Load<uint32_t>(a + n - 4) == Load<uint32_t>(b + n - 4);
  if (n >= 2) return Load<uint16_t>(a) == Load<uint16_t>(b) && a[n - 1] == b[n - 1];
  return n == 0 || a[0] == b[0];
}

// Whether lit[0, len) is at text[pos] (pos <= size).
inline bool LiteralAt(const char* text, size_t size, size_t pos, const char* lit, size_t len) {
  return size - pos >= len && text[pos] == lit[0] && Equal(text + pos, lit, len);
}

// Whether lit[0, len) is at text[pos] (pos <= size), `head` being its first
// bytes as Head() makes them.
[[gnu::always_inline]] inline bool TextAt(const char* text, size_t size, size_t pos, const char* lit, size_t len, uint64_t head, uint64_t mask) {
  if (size - pos >= 8) {
    if ((Load<uint64_t>(text + pos) & mask) != head) return false;
    return len <= 8 || (size - pos >= len && Equal(text + pos + 8, lit + 8, len - 8));
  }
  return size - pos >= len && Equal(text + pos, lit, len);
}

constexpr size_t kNone = std::string_view::npos;

// A section's first skips note where they stopped, so that a failure later in
// the section can ask whether their literal occurs again; later skips ask at once.
constexpr int kPendingSkips = 4;

// The high bit of each byte of x that is not a digit (exact: no byte borrows
// from another).
inline uint64_t NotDigit(uint64_t x) {
  uint64_t z = x ^ (0x30 * kEach);  // a digit is 0..9 now
  return (((z & (0x7f * kEach)) + 0x76 * kEach) | z) & kHigh;
}

// The high bit of each byte of x that is not `c` (exact).
inline uint64_t NotByte(uint64_t x, unsigned char c) {
  uint64_t z = x ^ (c * kEach);
  return (((z & (0x7f * kEach)) + 0x7f * kEach) | z) & kHigh;
}

// The first lit[0, len) (len > 0; head, mask as for TextAt) in text[from,
// size), kNone when there is none.
inline size_t Find(const char* text, size_t size, size_t from, const char* lit, size_t len, uint64_t head, uint64_t mask) {
  if (size < len) return kNone;
  const char* p = text + from;
  const char* const end = text + (size - len) + 1;  // where a match can no longer start
  while (p < end) {
    p = static_cast<const char*>(std::memchr(p, static_cast<unsigned char>(lit[0]), static_cast<size_t>(end - p)));
    if (p == nullptr) return kNone;
    if (TextAt(text, size, static_cast<size_t>(p - text), lit, len, head, mask)) return static_cast<size_t>(p - text);
    ++p;
  }
  return kNone;
}

}  // namespace tpt::fast_layout_internal
