// line_bits.h: where a piece of text has its line ends and its "odd" bytes,
// one bit per byte, found in one vector pass.
//
// The stream parser walks a read block line by line: it finds each line's end,
// asks whether the line has a byte that needs work ('\r', ESC, a non-ASCII
// byte), and counts the lines it skips. Done one call at a time (memchr,
// IsPlainLine, a newline count) each call pays its own setup on ~180-byte
// lines; here one pass over the piece answers all three with a few word
// operations each.
//
//   LineBits bits;
//   bits.Build(piece);                        // piece: a few hundred bytes to 1 MiB
//   size_t end = bits.NextNewline(pos);       // piece.size() when there is none
//   bool plain = bits.Plain(pos, end);        // no '\r', ESC or byte >= 0x80
//   uint64_t n = bits.CountNewlines(pos, end);
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace tpt {

class LineBits {
 public:
  // Indexes `text` (which must outlive the queries). Reuses its memory.
  // `baseline` uses the instructions every CPU of the target has (SSE2 on
  // x86-64) instead of the best the CPU has (AVX2): tests compare the two.
  void Build(std::string_view text, bool baseline = false);

  size_t size() const { return size_; }
  // The first '\n' at or after `pos` (pos <= size()), size() when there is none.
  size_t NextNewline(size_t pos) const {
    size_t w = pos / 64;
    if (w >= newline_.size()) return size_;
    uint64_t x = newline_[w] & From(pos % 64);
    while (x == 0) {
      if (++w == newline_.size()) return size_;
      x = newline_[w];
    }
    return 64 * w + static_cast<size_t>(std::countr_zero(x));
  }
  // The last '\n' in [from, to) (from <= to <= size()), npos when there is none.
  size_t PrevNewline(size_t from, size_t to) const {
    if (from >= to) return std::string_view::npos;
    size_t w = (to - 1) / 64;
    uint64_t x = newline_[w] & UpTo((to - 1) % 64);
    while (x == 0) {
      if (64 * w <= from) return std::string_view::npos;
      x = newline_[--w];
    }
    size_t at = 64 * w + 63 - static_cast<size_t>(std::countl_zero(x));
    return at >= from ? at : std::string_view::npos;
  }
  // The number of '\n' in [from, to).
  uint64_t CountNewlines(size_t from, size_t to) const {
    if (from >= to) return 0;
    size_t w = from / 64, last = (to - 1) / 64;
    uint64_t x = newline_[w] & From(from % 64), n = 0;
    for (; w < last; x = newline_[++w]) n += Ones(x);
    return n + Ones(x & UpTo((to - 1) % 64));
  }
  // Whether [from, to) holds no '\r', ESC (0x1b) or byte >= 0x80: what
  // IsPlainLine (values.h) says of that text.
  bool Plain(size_t from, size_t to) const {
    if (from >= to) return true;
    size_t w = from / 64, last = (to - 1) / 64;
    uint64_t x = odd_[w] & From(from % 64);
    for (; w < last; x = odd_[++w]) {
      if (x != 0) return false;
    }
    return (x & UpTo((to - 1) % 64)) == 0;
  }

 private:
  // Bits [lo, 64) of a word (lo < 64), bits [0, hi] (hi < 64).
  static uint64_t From(size_t lo) { return ~uint64_t{0} << lo; }
  static uint64_t UpTo(size_t hi) { return ~uint64_t{0} >> (63 - hi); }
  // Set bits of x, without the popcnt instruction (the build targets plain
  // x86-64, where std::popcount would call libgcc).
  static uint64_t Ones(uint64_t x) {
    x -= (x >> 1) & 0x5555555555555555ULL;
    x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
    x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0fULL;
    return (x * 0x0101010101010101ULL) >> 56;
  }

  size_t size_ = 0;
  // Bit b of word w is byte 64w + b; bits past size_ are 0.
  std::vector<uint64_t> newline_;
  std::vector<uint64_t> odd_;
};

}  // namespace tpt
