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

}  // namespace tpt::fast_layout_internal
