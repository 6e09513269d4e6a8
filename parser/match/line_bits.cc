// line_bits.cc: see line_bits.h.
#include "parser/match/line_bits.h"

#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define TPT_LINE_BITS_X86 1
#endif

namespace tpt {
namespace {

// 64 bytes -> their '\n' bits and odd bits.
using BuildFn = void (*)(const char* p, size_t words, uint64_t* newline, uint64_t* odd);

#if TPT_LINE_BITS_X86
// SSE2 is in every x86-64: 16 bytes a compare.
void BuildSse2(const char* p, size_t words, uint64_t* newline, uint64_t* odd) {
  const __m128i nl = _mm_set1_epi8('\n'), cr = _mm_set1_epi8('\r'), esc = _mm_set1_epi8(0x1b);
  for (size_t w = 0; w < words; ++w, p += 64) {
    uint64_t n = 0, o = 0;
    for (int k = 0; k < 4; ++k) {
      __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * k));
      // A byte >= 0x80 flags itself by its high bit.
      uint64_t vn = static_cast<uint16_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, nl)));
      uint64_t vo = static_cast<uint16_t>(
          _mm_movemask_epi8(_mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, cr), _mm_cmpeq_epi8(v, esc)), v)));
      n |= vn << (16 * k);
      o |= vo << (16 * k);
    }
    newline[w] = n;
    odd[w] = o;
  }
}

// AVX2, where the CPU has it (chosen at run time: the build targets plain x86-64).
__attribute__((target("avx2"))) void BuildAvx2(const char* p, size_t words, uint64_t* newline, uint64_t* odd) {
  const __m256i nl = _mm256_set1_epi8('\n'), cr = _mm256_set1_epi8('\r'), esc = _mm256_set1_epi8(0x1b);
  for (size_t w = 0; w < words; ++w, p += 64) {
    __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 32));
    uint64_t na = static_cast<uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(a, nl)));
    uint64_t nb = static_cast<uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(b, nl)));
    uint64_t oa = static_cast<uint32_t>(_mm256_movemask_epi8(
        _mm256_or_si256(_mm256_or_si256(_mm256_cmpeq_epi8(a, cr), _mm256_cmpeq_epi8(a, esc)), a)));
    uint64_t ob = static_cast<uint32_t>(_mm256_movemask_epi8(
        _mm256_or_si256(_mm256_or_si256(_mm256_cmpeq_epi8(b, cr), _mm256_cmpeq_epi8(b, esc)), b)));
    newline[w] = na | nb << 32;
    odd[w] = oa | ob << 32;
  }
}

BuildFn ChooseBuild() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") ? BuildAvx2 : BuildSse2;
}
constexpr BuildFn kBaseline = BuildSse2;
#else
void BuildScalar(const char* p, size_t words, uint64_t* newline, uint64_t* odd) {
  for (size_t w = 0; w < words; ++w, p += 64) {
    uint64_t n = 0, o = 0;
    for (int k = 0; k < 64; ++k) {
      unsigned char c = static_cast<unsigned char>(p[k]);
      n |= static_cast<uint64_t>(c == '\n') << k;
      o |= static_cast<uint64_t>(c == '\r' || c == 0x1b || c >= 0x80) << k;
    }
    newline[w] = n;
    odd[w] = o;
  }
}

BuildFn ChooseBuild() { return BuildScalar; }
constexpr BuildFn kBaseline = BuildScalar;
#endif

const BuildFn kBuild = ChooseBuild();

}  // namespace

void LineBits::Build(std::string_view text, bool baseline) {
  const BuildFn build = baseline ? kBaseline : kBuild;
  size_ = text.size();
  const size_t words = (size_ + 63) / 64, full = size_ / 64;
  newline_.resize(words);
  odd_.resize(words);
  build(text.data(), full, newline_.data(), odd_.data());
  if (full < words) {
    // The last bytes, padded with NULs (neither '\n' nor odd).
    char tail[64] = {};
    std::memcpy(tail, text.data() + 64 * full, size_ - 64 * full);
    build(tail, 1, newline_.data() + full, odd_.data() + full);
  }
}

}  // namespace tpt
