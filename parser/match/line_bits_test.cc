// line_bits_test.cc: LineBits answers as a byte-by-byte reading of the text does.
#include "parser/match/line_bits.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

#include "parser/values.h"

namespace tpt {
namespace {

size_t NaiveNext(const std::string& s, size_t pos) {
  size_t at = s.find('\n', pos);
  return at == std::string::npos ? s.size() : at;
}

size_t NaivePrev(const std::string& s, size_t from, size_t to) {
  for (size_t i = to; i-- > from;) {
    if (s[i] == '\n') return i;
  }
  return std::string_view::npos;
}

uint64_t NaiveCount(const std::string& s, size_t from, size_t to) {
  uint64_t n = 0;
  for (size_t i = from; i < to; ++i) n += s[i] == '\n';
  return n;
}

// Text with lines of many lengths (across word edges) and, now and then, a
// '\r', ESC, NUL or non-ASCII byte.
std::string RandomText(std::mt19937* rng, size_t size) {
  std::string s;
  std::uniform_int_distribution<int> kind(0, 99), letter('a', 'z'), high(0x80, 0xff);
  for (size_t i = 0; i < size; ++i) {
    int k = kind(*rng);
    if (k < 6) {
      s += '\n';
    } else if (k == 6) {
      s += '\r';
    } else if (k == 7) {
      s += '\x1b';
    } else if (k == 8) {
      s += static_cast<char>(high(*rng));
    } else if (k == 9) {
      s += '\0';
    } else {
      s += static_cast<char>(letter(*rng));
    }
  }
  return s;
}

void CheckAll(const std::string& s, bool baseline) {
  LineBits bits;
  bits.Build(s, baseline);
  ASSERT_EQ(bits.size(), s.size());
  for (size_t pos = 0; pos <= s.size(); ++pos) {
    ASSERT_EQ(bits.NextNewline(pos), NaiveNext(s, pos)) << "pos " << pos << " size " << s.size();
  }
  // Every range of short texts; a sample of ranges of long ones.
  std::mt19937 rng(static_cast<unsigned>(s.size()));
  auto check = [&](size_t from, size_t to) {
    ASSERT_EQ(bits.PrevNewline(from, to), NaivePrev(s, from, to)) << from << ".." << to;
    ASSERT_EQ(bits.CountNewlines(from, to), NaiveCount(s, from, to)) << from << ".." << to;
    ASSERT_EQ(bits.Plain(from, to), IsPlainLine(std::string_view(s).substr(from, to - from))) << from << ".." << to;
  };
  if (s.size() <= 200) {
    for (size_t from = 0; from <= s.size(); ++from) {
      for (size_t to = from; to <= s.size(); ++to) check(from, to);
    }
  } else {
    std::uniform_int_distribution<size_t> at(0, s.size());
    for (int i = 0; i < 3000; ++i) {
      size_t a = at(rng), b = at(rng);
      check(std::min(a, b), std::max(a, b));
    }
  }
}

TEST(LineBits, AgreesWithAByteByByteReading) {
  std::mt19937 rng(7);
  for (size_t size : {0, 1, 2, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129, 191, 200, 1000, 4097, 70000}) {
    std::string s = RandomText(&rng, size);
    for (bool baseline : {false, true}) {
      SCOPED_TRACE(std::to_string(size) + (baseline ? " baseline" : " best"));
      CheckAll(s, baseline);
    }
  }
}

TEST(LineBits, LongRunsWithoutNewlinesOrOddBytes) {
  // Whole words with no bit set: the searches must cross them.
  std::string s(1000, 'x');
  s[3] = '\n';
  s[990] = '\n';
  s[500] = '\xc3';
  LineBits bits;
  bits.Build(s);
  EXPECT_EQ(bits.NextNewline(4), 990u);
  EXPECT_EQ(bits.NextNewline(991), 1000u);
  EXPECT_EQ(bits.PrevNewline(0, 990), 3u);
  EXPECT_EQ(bits.PrevNewline(4, 990), std::string_view::npos);
  EXPECT_EQ(bits.CountNewlines(0, 1000), 2u);
  EXPECT_FALSE(bits.Plain(4, 990));
  EXPECT_TRUE(bits.Plain(4, 500));
  EXPECT_TRUE(bits.Plain(501, 1000));
}

TEST(LineBits, ReusedForAShorterTextForgetsTheLongerOne) {
  LineBits bits;
  bits.Build(std::string(300, '\n'));
  std::string s = "abc";
  bits.Build(s);
  EXPECT_EQ(bits.size(), 3u);
  EXPECT_EQ(bits.NextNewline(0), 3u);
  EXPECT_EQ(bits.CountNewlines(0, 3), 0u);
}

}  // namespace
}  // namespace tpt
