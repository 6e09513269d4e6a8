#include "parser/reader.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <string>

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

TEST(OpenInput, MissingFileNamesThePath) {
  auto r = OpenInput("/nonexistent/rank0.log");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("/nonexistent/rank0.log"), std::string::npos);
}

}  // namespace
}  // namespace tpt
