#include "parser/reader.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

namespace tpt {
namespace {

std::string Gzip(const std::string& data) {
  z_stream z{};
  deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&z, data.size()) + 32, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = data.size();
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = out.size();
  deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

struct Collected {
  std::vector<std::string> lines;  // each block split into lines
  std::vector<uint64_t> offsets;
  int truncated = 0;
  std::string error;
};

Collected ReadAll(ByteSource* src, size_t buffer, size_t max_line) {
  Collected c;
  BlockReader r(src, buffer, max_line);
  Block b;
  for (;;) {
    auto more = r.Next(&b);
    if (!more.ok()) {
      c.error = more.status().message();
      break;
    }
    if (!*more) break;
    if (b.truncated) {
      ++c.truncated;
      c.lines.emplace_back(b.text);
      c.offsets.push_back(b.offset);
      continue;
    }
    size_t pos = 0;
    while (pos < b.text.size()) {
      size_t nl = b.text.find('\n', pos);
      size_t end = nl == std::string_view::npos ? b.text.size() : nl;
      c.lines.emplace_back(b.text.substr(pos, end - pos));
      c.offsets.push_back(b.offset + pos);
      pos = end + 1;
    }
  }
  return c;
}

TEST(BlockReader, SameLinesWhateverTheBufferSize) {
  std::string input = "first\n\nthird line\r\n" + std::string(300, 'x') + "\nno newline at end";
  Collected want;
  for (size_t buffer : {1, 7, 4096, 65536}) {
    StringSource src(input);
    Collected got = ReadAll(&src, buffer, 1 << 20);
    if (buffer == 1) {
      want = got;
      ASSERT_EQ(want.lines.size(), 5u);
      EXPECT_EQ(want.lines[2], "third line\r");
      EXPECT_EQ(want.lines[4], "no newline at end");
      EXPECT_EQ(want.offsets[3], 19u);
      continue;
    }
    EXPECT_EQ(got.lines, want.lines) << "buffer " << buffer;
    EXPECT_EQ(got.offsets, want.offsets) << "buffer " << buffer;
  }
}

TEST(BlockReader, LongLineIsCutAndTheRestSkipped) {
  std::string input = "a\n" + std::string(10000, 'y') + "\nb\n";
  StringSource src(input);
  Collected c = ReadAll(&src, 64, 100);
  ASSERT_EQ(c.lines.size(), 3u);
  EXPECT_EQ(c.lines[1], std::string(100, 'y'));
  EXPECT_EQ(c.truncated, 1);
  EXPECT_EQ(c.lines[2], "b");
  EXPECT_EQ(c.offsets[2], 10003u);
}

TEST(OpenInput, GzipIsDetectedByMagicAndInflated) {
  std::string text = "line one\nline two\n";
  auto opened = WrapInput(std::make_unique<StringSource>(Gzip(text)), "mem.gz");
  ASSERT_TRUE(opened.ok());
  EXPECT_TRUE(opened->gzip);
  EXPECT_FALSE(opened->looks_binary);
  Collected c = ReadAll(opened->source.get(), 5, 1 << 20);
  EXPECT_TRUE(c.error.empty()) << c.error;
  EXPECT_EQ(c.lines, (std::vector<std::string>{"line one", "line two"}));
}

TEST(OpenInput, ConcatenatedGzipMembers) {
  auto opened = WrapInput(std::make_unique<StringSource>(Gzip("a\n") + Gzip("b\n")), "cat.gz");
  ASSERT_TRUE(opened.ok());
  Collected c = ReadAll(opened->source.get(), 4096, 1 << 20);
  EXPECT_EQ(c.lines, (std::vector<std::string>{"a", "b"}));
}

TEST(OpenInput, TruncatedGzipIsDataLossAfterTheReadableLines) {
  std::string text;
  for (int i = 0; i < 2000; ++i) text += "line " + std::to_string(i) + " of a log that was cut\n";
  std::string gz = Gzip(text);
  gz.resize(gz.size() / 2);
  auto opened = WrapInput(std::make_unique<StringSource>(gz), "cut.gz");
  ASSERT_TRUE(opened.ok());
  Collected c = ReadAll(opened->source.get(), 4096, 1 << 20);
  EXPECT_NE(c.error.find("cut.gz"), std::string::npos);
  EXPECT_NE(c.error.find("truncated"), std::string::npos);
  EXPECT_GT(c.lines.size(), 100u);
  EXPECT_EQ(c.lines[0], "line 0 of a log that was cut");
}

TEST(OpenInput, BinaryAndEmptyAreFlagged) {
  std::string bin(4096, '\0');
  for (size_t i = 0; i < bin.size(); i += 3) bin[i] = static_cast<char>(i);
  auto b = WrapInput(std::make_unique<StringSource>(bin), "x.bin");
  ASSERT_TRUE(b.ok());
  EXPECT_TRUE(b->looks_binary);
  auto e = WrapInput(std::make_unique<StringSource>(""), "empty.log");
  ASSERT_TRUE(e.ok());
  EXPECT_TRUE(e->empty);
  // A text log with a stray NUL and invalid UTF-8 is still text.
  std::string text(2000, 'a');
  text[10] = '\0';
  text[20] = '\xff';
  EXPECT_TRUE(LooksLikeText(text));
}

// random and compressed bytes passed the sniff one time in three
// (only NUL/C0 bytes were counted; uniform bytes are ~10% C0).
TEST(OpenInput, RandomBytesAreBinaryWhateverTheSeed) {
  uint64_t x = 0x9e3779b97f4a7c15ull;
  for (int seed = 0; seed < 200; ++seed) {
    std::string head(8192, '\0');
    for (char& c : head) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;  // xorshift64
      c = static_cast<char>(x >> 24);
    }
    EXPECT_FALSE(LooksLikeText(head)) << "seed " << seed;
  }
  // Random bytes with no control byte at all (the old check's blind spot).
  std::string high;
  for (int i = 0; i < 8192; ++i) high.push_back(static_cast<char>(0x80 + (i * 37) % 128));
  EXPECT_FALSE(LooksLikeText(high));
  // Compressed data looks like random bytes.
  std::string text;
  for (int i = 0; i < 5000; ++i) text += "[2025-11-20 09:14:09 TP" + std::to_string(i % 8) + "] step " + std::to_string(i * 7919) + "\n";
  std::string gz = Gzip(text);
  EXPECT_FALSE(LooksLikeText(std::string_view(gz).substr(10)));
}

TEST(OpenInput, TextInOtherScriptsAndAFewBadBytesIsText) {
  std::string cjk;
  while (cjk.size() < 8192) cjk += "\xe6\x98\xbe\xe5\xad\x98\xe4\xb8\x8d\xe8\xb6\xb3 out of memory \xf0\x9f\x94\xa5\n";
  cjk.resize(8191);  // cut inside a character: not counted against it
  EXPECT_TRUE(LooksLikeText(cjk));
  std::string latin1;
  while (latin1.size() < 8192) latin1 += "user Jos\xe9 M\xfcller started rank 0 on node gpu-07 at 09:14:09\n";
  EXPECT_TRUE(LooksLikeText(latin1));  // ~3% invalid bytes
  EXPECT_TRUE(LooksLikeText("caf\xe9\n"));
}

// the buffer was allocated (and zero-filled) at --buffer-bytes
// for every input, and a long line arriving in pieces was searched again from
// its start after each piece.
class DribbleSource : public ByteSource {
 public:
  DribbleSource(std::string data, size_t chunk) : data_(std::move(data)), chunk_(chunk) {}
  StatusOr<size_t> Read(char* buf, size_t n) override {
    size_t k = std::min({n, chunk_, data_.size() - pos_});
    std::memcpy(buf, data_.data() + pos_, k);
    pos_ += k;
    return k;
  }

 private:
  std::string data_;
  size_t chunk_, pos_ = 0;
};

TEST(BlockReader, BufferGrowsOnlyAsTheInputNeeds) {
  StringSource small("a short log\nof two lines\n");
  BlockReader r(&small, size_t{1} << 30, 1 << 20);
  Block b;
  while (*r.Next(&b)) {
  }
  EXPECT_LE(r.buffer_capacity(), 64u * 1024);
  // A big file read at once grows it, up to the limit.
  StringSource big(std::string(1 << 20, 'x') + "\n");
  BlockReader r2(&big, 256 * 1024, 4 << 20);
  int blocks = 0;
  while (*r2.Next(&b)) ++blocks;
  EXPECT_EQ(r2.buffer_capacity(), 256u * 1024);
  EXPECT_EQ(blocks, 1);
}

TEST(BlockReader, LongLineFromAPipeIsSearchedOnce) {
  const size_t n = 4 << 20;
  DribbleSource pipe(std::string(n, 'a') + "\nb\n", 4096);
  BlockReader r(&pipe, size_t{1} << 30, size_t{1} << 30);
  Block b;
  std::vector<size_t> sizes;
  while (*r.Next(&b)) sizes.push_back(b.text.size());
  ASSERT_EQ(sizes.size(), 1u);
  EXPECT_EQ(sizes[0], n + 3);
  EXPECT_LE(r.bytes_searched(), 2 * (n + 3));  // was ~n^2 / 8192
}

TEST(BlockReader, LineLongerThanThePolicyIsNotHeldInTheBuffer) {
  DribbleSource pipe(std::string(3 << 20, 'a') + "\nb\n", 65536);
  BlockReader r(&pipe, size_t{1} << 30, 1 << 20);
  Block b;
  std::vector<std::pair<size_t, bool>> got;
  while (*r.Next(&b)) got.push_back({b.text.size(), b.truncated});
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0], std::make_pair(size_t{1} << 20, true));
  EXPECT_EQ(got[1].first, 2u);
  EXPECT_LE(r.buffer_capacity(), 2u << 20);
}

// A line past the policy whose newline only comes with the next read: the
// block is cut and says so (the flag is set when the line is first set aside).
TEST(BlockReader, LineCutJustBeforeItsNewlineArrivesIsFlagged) {
  DribbleSource pipe(std::string(5000, 'a') + "\nb\n", 1000);
  BlockReader r(&pipe, size_t{1} << 30, 4096);
  Block b;
  std::vector<std::pair<size_t, bool>> got;
  while (*r.Next(&b)) got.push_back({b.text.size(), b.truncated});
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0], std::make_pair(size_t{4096}, true));
  EXPECT_EQ(got[1], std::make_pair(size_t{2}, false));
}

TEST(OpenInput, MissingFileNamesThePath) {
  auto r = OpenInput("/nonexistent/rank0.log");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("/nonexistent/rank0.log"), std::string::npos);
}

}  // namespace
}  // namespace tpt
