// event_json_test.cc: the JSON Lines writer of `tptriage events` against the
// JSON object it replaces, byte for byte: every event of every sample log and
// of every pattern's samples, written from their captures (not decoded) as
// `tptriage events` writes them, and events built by hand with the strings
// and numbers that escape.
#include "parser/event_json.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <string>

#include <unistd.h>

#include <gtest/gtest.h>

#include "parser/format_set.h"
#include "parser/json_text.h"
#include "parser/parser.h"
#include "parser/record_writer.h"

namespace {

namespace fs = std::filesystem;

std::string ViaObject(const tpt::Event& e) {
  return tpt::EventToJson(e).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}
std::string ViaWriter(const tpt::Event& e) {
  std::string out;
  tpt::AppendEventJsonLine(e, &out);
  return out;
}

// Events as `tptriage events` gets them (streamed, fields still to decode):
// the writer's record before anything decodes them, against the object's.
class CompareSink : public tpt::EventSink {
 public:
  bool OnEvent(const tpt::Event& e) override {
    const bool pending = e.deferred_fields_.pending || e.deferred_prefix_.pending;
    std::string written = ViaWriter(e);  // from the captures when pending
    EXPECT_EQ(pending, e.deferred_fields_.pending || e.deferred_prefix_.pending) << "the writer decoded the event";
    std::string object = ViaObject(e);  // decodes
    EXPECT_EQ(written, object) << e.file << ":" << e.line;
    if (written != object) ++differ;
    EXPECT_EQ(ViaWriter(e), object) << e.file << ":" << e.line << " (decoded)";
    ++events;
    pending_fields += pending;
    kinds.insert(e.kind);
    return differ < 5;
  }
  size_t events = 0, pending_fields = 0, differ = 0;
  std::set<std::string> kinds;
};

void Stream(const std::string& path, const tpt::FormatSet& formats, CompareSink* sink) {
  std::vector<tpt::InputReport> reports;
  tpt::Status s = tpt::ParseRun({path}, formats, tpt::ParseOptions(), sink, &reports);
  EXPECT_TRUE(s.ok()) << path << ": " << s.message();
}

TEST(EventJsonLine, SameBytesAsTheObjectOnEverySample) {
  auto formats = tpt::FormatSet::LoadBuiltin();
  ASSERT_TRUE(formats.ok());
  CompareSink sink;
  size_t files = 0;
  for (const auto& ent : fs::recursive_directory_iterator(std::string(TPT_SOURCE_DIR) + "/samples")) {
    if (!ent.is_regular_file() || !tpt::ReadFromDirectory(ent.path().string())) continue;
    ++files;
    Stream(ent.path().string(), *formats, &sink);
    // Also as analyze holds them (rank resolution decodes some).
    auto run = tpt::ParseRunToMemory({ent.path().string()}, *formats, tpt::ParseOptions());
    if (!run.ok()) continue;
    for (const tpt::Event& e : run->events) ASSERT_EQ(ViaWriter(e), ViaObject(e)) << ent.path() << ":" << e.line;
  }
  EXPECT_GT(files, 50u);
  EXPECT_GT(sink.events, 5000u);
  EXPECT_GT(sink.pending_fields, sink.events / 2);  // the captures' path is the one taken
}

// The writer thread (record_writer.h) against the records written in place:
// the events of every sample log, from the parser's own recycled slots (each
// changes right after it is handed over), through more batches than may exist
// at once, give the same bytes in the same order.
class InPlaceAndThreadSink : public tpt::EventSink {
 public:
  explicit InPlaceAndThreadSink(tpt::RecordWriter* writer) : writer_(writer) {}
  bool OnEvent(const tpt::Event& e) override {
    tpt::AppendEventJsonLine(e, &in_place);
    writer_->Add(e);
    ++events;
    return true;
  }
  std::string in_place;
  size_t events = 0;

 private:
  tpt::RecordWriter* writer_;
};

TEST(EventJsonLine, WriterThreadWritesTheSameBytesInOrder) {
  auto formats = tpt::FormatSet::LoadBuiltin();
  ASSERT_TRUE(formats.ok());
  std::FILE* out = std::tmpfile();
  ASSERT_NE(out, nullptr);
  tpt::RecordWriter writer(out);
  InPlaceAndThreadSink sink(&writer);
  for (const auto& ent : fs::recursive_directory_iterator(std::string(TPT_SOURCE_DIR) + "/samples")) {
    if (!ent.is_regular_file() || !tpt::ReadFromDirectory(ent.path().string())) continue;
    std::vector<tpt::InputReport> reports;
    (void)tpt::ParseRun({ent.path().string()}, *formats, tpt::ParseOptions(), &sink, &reports);
  }
  writer.Finish();
  EXPECT_GT(sink.events, tpt::RecordWriter::kBatch * tpt::RecordWriter::kInFlight);
  std::string written;
  std::rewind(out);
  char buf[1 << 16];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, out)) > 0;) written.append(buf, n);
  std::fclose(out);
  EXPECT_EQ(written.size(), sink.in_place.size());
  EXPECT_TRUE(written == sink.in_place) << "the writer thread's records differ from those written in place";
}

// Every pattern's sample lines of every built-in format file, streamed: each
// kind a pattern gives is written from its captures and compared.
TEST(EventJsonLine, SameBytesForEveryPatternsSamples) {
  auto formats = tpt::FormatSet::LoadBuiltin();
  ASSERT_TRUE(formats.ok());
  std::string lines;
  for (const tpt::FormatSource& src : tpt::FormatSet::BuiltinSources()) {
    auto doc = nlohmann::json::parse(src.text);
    if (!doc.contains("patterns")) continue;
    for (const auto& item : doc["patterns"])
      for (const auto& sample : item["samples"]) lines += sample["line"].get<std::string>() + "\n";
  }
  const fs::path dir = fs::temp_directory_path() / ("event_json_test_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string path = (dir / "samples.log").string();
  std::ofstream(path, std::ios::binary) << lines;
  CompareSink sink;
  Stream(path, *formats, &sink);
  fs::remove_all(dir);
  std::set<std::string> missing;
  for (const tpt::PatternSpec& p : formats->patterns())
    if (!sink.kinds.count(p.kind)) missing.insert(p.kind);
  EXPECT_TRUE(missing.empty()) << "kinds never written: " << nlohmann::json(missing).dump();
  EXPECT_GT(sink.pending_fields, sink.events / 2);
}

TEST(EventJsonLine, SameBytesForStringsAndNumbersThatEscape) {
  tpt::Event e;
  e.kind = "cuda_oom";
  e.text = std::string("quote \" back \\ nl \n cr \r tab \t bell \a esc \x1b del \x7f nul ") + '\0' +
           " utf8 \xe2\x96\x88 bad \xff\xfe cut \xe2\x96";
  e.file = "dir/\xc3\xa9t\xc3\xa9.log";
  e.extra_lines = {"", "  File \"x.py\", line 3", "\xed\xa0\x80 surrogate"};
  e.host = "node-1";
  e.process = "EngineCore_DP0";
  e.rank = 3;
  e.tp_rank = 0;
  e.pid = 12345;
  e.line = std::numeric_limits<uint64_t>::max();
  e.offset = 0;
  e.Set("bytes", 1.5e12);
  e.Set("name", "\x01weird\xff");
  e.Set("list", nlohmann::json::array({1, "a", nullptr}));
  for (double ts : {1732094049.0, 1732094049.123456, 0.0, -1.5, 1e21, 5e-324, 37230.25,
                    std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity()}) {
    e.ts = ts;
    EXPECT_EQ(ViaWriter(e), ViaObject(e)) << ts;
  }
  e.ts.reset();
  e.ts_is_time_of_day = true;
  e.consequence = true;
  EXPECT_EQ(ViaWriter(e), ViaObject(e));
  tpt::Event empty;
  EXPECT_EQ(ViaWriter(empty), ViaObject(empty));
}

// Strings are scanned 16, 8 and 4 bytes at a time with overlapping tails: a
// byte to escape (or a UTF-8 sequence, valid or not) at every position of
// every length up to 40 is found, against nlohmann's dump.
TEST(JsonText, EveryPositionOfAByteToEscapeInEveryLength) {
  const std::string specials[] = {"\"", "\\", "\n", std::string(1, '\0'), "\x1f", "\x7f", "\xc3\xa9", "\xff"};
  size_t checked = 0;
  for (size_t len = 0; len <= 40; ++len) {
    const std::string plain(len, 'k');
    tpt::JsonOut out;
    tpt::AppendJsonString(plain, &out);
    ASSERT_EQ(out.view(), nlohmann::json(plain).dump()) << len;
    for (size_t pos = 0; pos < len; ++pos) {
      for (const std::string& special : specials) {
        std::string s = plain;
        s.replace(pos, 1, special);
        out.clear();
        tpt::AppendJsonString(s, &out);
        ASSERT_EQ(out.view(), nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace))
            << "length " << len << ", position " << pos;
        ++checked;
      }
    }
  }
  EXPECT_EQ(checked, 8u * 40 * 41 / 2);
}

// The buffer the records are written into: what was written survives each
// growth, in-place writes count once committed, literals lose their NUL.
TEST(JsonOut, GrowsKeepingWhatWasWritten) {
  tpt::JsonOut out;
  std::string expect;
  EXPECT_TRUE(out.empty());
  out.append(std::string_view());  // an empty view's null data()
  for (int i = 0; i < 5000; ++i) {
    const std::string piece = std::to_string(i) + std::string(i % 37, 'x');
    out.append(piece);
    out.Lit(",");
    out.push_back(';');
    expect += piece + ",;";
  }
  char* p = out.Reserve(100000);  // more than it holds: grows, then written in place
  std::memcpy(p, "abc", 3);
  out.Commit(p + 3);
  expect += "abc";
  ASSERT_EQ(out.size(), expect.size());
  EXPECT_EQ(out.view(), expect);
  out.resize(4);
  EXPECT_EQ(out.view(), expect.substr(0, 4));
  out.clear();
  EXPECT_TRUE(out.empty());
}

// A record longer than the buffer's first room, written straight into a
// JsonOut (as `tptriage events` does), and after other records.
TEST(EventJsonLine, LongRecordIntoAJsonOutMatchesTheObject) {
  tpt::Event e;
  e.kind = "traceback";
  e.text = std::string(70000, 'a') + "\"\xe2\x96\x88";
  e.extra_lines.assign(300, std::string(50, 'l'));
  e.rank = 1;
  e.ts = 1760436000.25;
  tpt::JsonOut out;
  tpt::AppendEventJsonLine(tpt::Event(), &out);
  tpt::AppendEventJsonLine(e, &out);
  EXPECT_EQ(out.view(), ViaObject(tpt::Event()) + ViaObject(e));
}

}  // namespace
