// The SearcherTester idea (ripgrep): one input through read buffers of 1, 7,
// 4096 and 64 KiB bytes must give the very same events and counters.
#include "parser/stream_parser.h"

#include <gtest/gtest.h>

#include <thread>

#include "parser/event_json.h"
#include "parser/test_formats.h"

namespace tpt {
namespace {

std::string TrickyLog() {
  std::string s;
  s += "[2025-10-14 10:00:01 TP0] Load weight end. type=X, avail mem=2.00 GB\n";                     // 1
  s += "\x1b[32m[2025-10-14 10:00:02 TP1]\x1b[0m Load \x1b[1mweight\x1b[0m end. t=X, avail mem=3.00 GB\r\n";  // 2 ANSI + CRLF
  s += "Loading shards:  50%|\xe2\x96\x88    | 1/2\r[2025-10-14 10:00:03 TP0] Load weight end. t=X, avail mem=4.00 GB\n";  // 3 tqdm
  s += "[rank1]: Traceback (most recent call last):\n";                                              // 4
  s += "[rank0]: an unrelated line from another rank\n";                                              // 5
  s += "[rank1]:   File \"a.py\", line 3, in f\n";                                                    // 6
  s += "[rank1]: RuntimeError: bad \xff byte\n";                                                      // 7
  s += std::string("NUL ") + '\0' + " in the line: Load weight end. t=X, avail mem=5.00 GB\n";        // 8 (NUL)
  s += "Load weight end. t=X, avail mem=6.00 GB " + std::string(5000, 'p') + "\n";                    // 9 long
  s += std::string(3000, 'q') + " Load weight end. t=X, avail mem=9.00 GB\n";                        // 10 literal past the cut
  s += "(RayWorkerWrapper pid=7, ip=10.0.0.2) Decode batch. #running-req: 5 [repeated 3x across cluster]\n";  // 11
  s += "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 512.00 MiB\n";                 // 12
  s += "last line without newline Load weight end. t=X, avail mem=7.00 GB";                          // 13
  return s;
}

struct Result {
  std::vector<std::string> events;  // JSON dumps
  std::vector<Event> raw;
  uint64_t lines = 0, long_lines = 0, bytes = 0;
};

Result ParseAll(const FormatSet& fs, const std::string& input, size_t buffer, size_t max_line = 1000) {
  ParseOptions opt;
  opt.max_line_bytes = max_line;
  StreamEvents stream(std::make_unique<StringSource>(input), fs, opt, buffer, 0, "tricky.log");
  Result r;
  Event e;
  while (stream.Next(&e)) {
    r.events.push_back(EventToJson(e).dump());
    r.raw.push_back(e);
  }
  r.lines = stream.lines();
  r.long_lines = stream.long_lines();
  r.bytes = stream.bytes();
  return r;
}

TEST(StreamParser, SameEventsWhateverTheBufferSize) {
  auto fs = testing::TestFormats();
  ASSERT_TRUE(fs.ok()) << fs.status().ToString();
  std::string input = TrickyLog();
  Result want = ParseAll(*fs, input, 1);
  for (size_t buffer : {7, 4096, 65536}) {
    Result got = ParseAll(*fs, input, buffer);
    EXPECT_EQ(got.events, want.events) << "buffer " << buffer;
    EXPECT_EQ(got.lines, want.lines) << "buffer " << buffer;
    EXPECT_EQ(got.long_lines, want.long_lines) << "buffer " << buffer;
    EXPECT_EQ(got.bytes, input.size());
  }
}

// NextRef hands out the pending event in place (what ParseRun's merge reads);
// Next swaps it into the caller's: the same events either way, whatever the
// buffer (pieces of a block share one literal scan of the whole block).
TEST(StreamParser, NextRefGivesWhatNextGives) {
  auto fs = testing::TestFormats();
  ASSERT_TRUE(fs.ok()) << fs.status().ToString();
  std::string input;
  for (int i = 0; i < 60; ++i) input += TrickyLog() + "\n";
  for (size_t buffer : {7, 4096, 1 << 20}) {
    Result want = ParseAll(*fs, input, buffer);
    ParseOptions opt;
    opt.max_line_bytes = 1000;
    StreamEvents stream(std::make_unique<StringSource>(input), *fs, opt, buffer, 0, "tricky.log");
    std::vector<std::string> got;
    while (const Event* e = stream.NextRef()) got.push_back(EventToJson(*e).dump());
    EXPECT_EQ(got, want.events) << "buffer " << buffer;
    EXPECT_EQ(stream.lines(), want.lines);
    EXPECT_GE(got.size(), 500u);
  }
}

// StreamEvents recycles events (the caller's last one comes back and the next
// is parsed into it, fields and wrapper refilled in place). Lines that change
// pattern, prefix, optional groups and timestamps from one event to the next
// must give exactly what fresh events give (StreamParser into a vector).
TEST(StreamParser, RecycledEventsEqualFreshOnes) {
  auto fs = testing::TestFormats();
  ASSERT_TRUE(fs.ok()) << fs.status().ToString();
  std::string input;
  input += "[2025-10-14 10:00:01 TP0] Decode batch. #running-req: 3\n";
  input += "[2025-10-14 10:00:01] Load weight end. t=X, avail mem=2.00 GB\n";   // no TP group
  input += "Decode batch. #running-req: 4\n";                                    // no prefix, no ts
  input += "(RayWorkerWrapper pid=7, ip=10.0.0.2) Decode batch. #running-req: 5\n";  // a wrapper
  input += "[2025-10-14 10:00:02 TP1] torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n";
  input += "[rank1]: Traceback (most recent call last):\n";
  input += "[rank1]:   File \"a.py\", line 3, in f\n";
  input += "[rank1]: RuntimeError: boom\n";
  input += "[2025-10-14 10:00:03 TP2] Decode batch. #running-req: 6\n";
  input += "Load weight end. t=X, avail mem=1.00 GB\n";
  std::string twice = input + input;
  Result recycled = ParseAll(*fs, twice, 4096);

  ParseOptions opt;
  StreamParser fresh(*fs, opt, 0, "tricky.log");
  std::vector<Event> out;
  Block block;
  block.text = twice;
  fresh.ParseBlock(block, &out);
  fresh.Finish(&out);
  std::vector<std::string> want;
  for (const Event& e : out) want.push_back(EventToJson(e).dump());
  ASSERT_EQ(want.size(), 16u);  // 7 lines + 1 traceback, twice
  EXPECT_EQ(recycled.events, want);
}

// Fields and the producer prefix's metadata are decoded on first read
// (Event::Deferred), from places in the event's own text: events kept past
// the stream's end, after its buffers were reused many times (a 7-byte read
// buffer), must read exactly what was in their lines.
TEST(StreamParser, FieldsAndPrefixAreDecodedFromTheEventsOwnText) {
  auto fs = testing::TestFormats();
  ASSERT_TRUE(fs.ok()) << fs.status().ToString();
  std::string input;
  for (int i = 0; i < 40; ++i) {
    input += "[2025-10-14 10:00:" + std::to_string(10 + i) + " TP" + std::to_string(i % 8) +
             "] Decode batch. #running-req: " + std::to_string(100 + i) + "\n";
    input += "Load weight end. t=X, avail mem=" + std::to_string(i) + ".50 GB\n";  // no prefix
  }
  std::vector<Event> kept;
  {
    ParseOptions opt;
    StreamEvents stream(std::make_unique<StringSource>(input), *fs, opt, 7, 0, "x.log");
    Event e;
    while (stream.Next(&e)) kept.push_back(e);
  }
  ASSERT_EQ(kept.size(), 80u);
  for (int i = 0; i < 40; ++i) {
    const Event& decode = kept[2 * i];
    const Event& load = kept[2 * i + 1];
    // Typed at parse: kind, rank, time. Still to decode: fields and prefix.
    EXPECT_EQ(decode.tp_rank, i % 8);
    ASSERT_TRUE(decode.ts);
    EXPECT_DOUBLE_EQ(*decode.ts, 1760436010 + i);
    EXPECT_TRUE(decode.deferred_fields_.pending);
    EXPECT_TRUE(decode.deferred_prefix_.pending);
    EXPECT_TRUE(load.deferred_fields_.pending);
    EXPECT_FALSE(load.deferred_prefix_.pending);  // no prefix on that line

    EXPECT_EQ(decode.fields(), nlohmann::json({{"running_reqs", 100 + i}, {"phase", "decode"}}));
    nlohmann::json prefix = {{"id", "demo.sglang_like"},
                             {"date", "2025-10-14"},
                             {"time", "10:00:" + std::to_string(10 + i)},
                             {"tp_rank", i % 8}};
    EXPECT_EQ(decode.wrapper(), nlohmann::json({{"prefix", prefix}}));
    EXPECT_FALSE(decode.deferred_fields_.pending);
    EXPECT_FALSE(decode.deferred_prefix_.pending);
    EXPECT_DOUBLE_EQ(load.fields()["avail_bytes"].get<double>(), (i + 0.5) * (1 << 30));
    EXPECT_EQ(load.wrapper(), nlohmann::json::object());
  }
}

// The decoders are shared with the FormatSet, not borrowed from it: events
// read after their FormatSet is gone still decode (ASan checks the rest).
TEST(StreamParser, EventsDecodeAfterTheirFormatSetIsGone) {
  std::vector<Event> kept;
  {
    auto fs = testing::TestFormats();
    ASSERT_TRUE(fs.ok()) << fs.status().ToString();
    ParseOptions opt;
    StreamEvents stream(std::make_unique<StringSource>(std::string(
                            "[2025-10-14 10:00:01 TP5] Decode batch. #running-req: 42\n")),
                        *fs, opt, 4096, 0, "x.log");
    Event e;
    while (stream.Next(&e)) kept.push_back(e);
  }
  ASSERT_EQ(kept.size(), 1u);
  ASSERT_TRUE(kept[0].deferred_fields_.pending);
  Event copy = kept[0];
  EXPECT_EQ(copy.fields()["running_reqs"], 42);
  EXPECT_EQ(copy.wrapper()["prefix"]["tp_rank"], 5);
  EXPECT_EQ(EventToJson(kept[0]), EventToJson(copy));
}

// Decoding takes nodes its thread kept aside (the wrapper filler's): events
// parsed on one thread and read on others, many at once in a recycled batch,
// read the same as events read where they were parsed.
TEST(StreamParser, EventsDecodeTheSameOnAnotherThread) {
  auto fs = testing::TestFormats();
  ASSERT_TRUE(fs.ok()) << fs.status().ToString();
  std::string input;
  for (int i = 0; i < 300; ++i) {
    input += "[2025-10-14 10:00:" + std::to_string(10 + i % 50) + " TP" + std::to_string(i % 8) +
             "] Decode batch. #running-req: " + std::to_string(i) + "\n";
    if (i % 3 == 0) input += "no prefix here: Decode batch. #running-req: 7\n";
  }
  ParseOptions opt;
  std::vector<Event> pending;  // copies, not yet decoded
  std::vector<std::string> here;
  {
    StreamEvents stream(std::make_unique<StringSource>(input), *fs, opt, 64, 0, "x.log");
    Event e;
    while (stream.Next(&e)) {
      pending.push_back(e);
      here.push_back(EventToJson(e).dump());  // decoded on this thread
    }
  }
  ASSERT_EQ(pending.size(), 400u);
  ASSERT_TRUE(pending[0].deferred_prefix_.pending);
  std::vector<std::string> there(pending.size());
  std::thread t([&] {
    for (size_t i = 0; i < pending.size(); ++i) there[i] = EventToJson(pending[i]).dump();
  });
  t.join();
  EXPECT_EQ(here, there);
  EXPECT_FALSE(pending[1].wrapper().contains("prefix"));  // the line without one
  EXPECT_EQ(pending[2].wrapper()["prefix"]["tp_rank"], 1);
}

// A capture past the text an event keeps (kMaxTextBytes) cannot be decoded
// from it later: such a line's fields are decoded at once, and right.
TEST(StreamParser, CapturesPastTheKeptTextAreDecodedAtOnce) {
  auto fs = testing::TestFormats();
  ASSERT_TRUE(fs.ok()) << fs.status().ToString();
  std::string input = "[2025-10-14 10:00:01 TP2] " + std::string(StreamParser::kMaxTextBytes + 100, 'q') +
                      " Load weight end. t=X, avail mem=9.00 GB\n";
  ParseOptions opt;
  opt.max_line_bytes = 1 << 20;
  StreamEvents stream(std::make_unique<StringSource>(input), *fs, opt, 4096, 0, "x.log");
  Event e;
  ASSERT_TRUE(stream.Next(&e));
  EXPECT_FALSE(stream.Next(&e));
  EXPECT_EQ(e.kind, "weights_load_end");
  EXPECT_EQ(e.text.size(), StreamParser::kMaxTextBytes);
  EXPECT_FALSE(e.deferred_fields_.pending);
  EXPECT_TRUE(e.deferred_prefix_.pending);  // the prefix lies in the kept text
  EXPECT_DOUBLE_EQ(e.fields()["avail_bytes"].get<double>(), 9.0 * (1 << 30));
  EXPECT_EQ(e.wrapper()["prefix"]["tp_rank"], 2);
}

// A traceback takes its producer from its first line, but its text from the
// exception line: the first line's prefix must be decoded before that.
TEST(StreamParser, ATracebackKeepsTheMetadataOfItsFirstLine) {
  auto fs = testing::TestFormats();
  ASSERT_TRUE(fs.ok()) << fs.status().ToString();
  std::string input =
      "[2025-10-14 10:00:01 TP1] Traceback (most recent call last):\n"
      "[2025-10-14 10:00:07 TP1]   File \"a.py\", line 3, in f\n"
      "[2025-10-14 10:00:09 TP1] RuntimeError: boom\n";
  Result r = ParseAll(*fs, input, 4096);
  ASSERT_EQ(r.raw.size(), 1u);
  const Event& ex = r.raw[0];
  EXPECT_EQ(ex.kind, "exception");
  EXPECT_EQ(ex.fields()["type"], "RuntimeError");
  EXPECT_EQ(ex.wrapper()["prefix"]["time"], "10:00:01") << ex.wrapper().dump();
  EXPECT_EQ(ex.wrapper()["prefix"]["tp_rank"], 1);
}

TEST(StreamParser, UnderstandsTheTrickyLog) {
  auto fs = testing::TestFormats();
  ASSERT_TRUE(fs.ok()) << fs.status().ToString();
  Result r = ParseAll(*fs, TrickyLog(), 4096);
  EXPECT_EQ(r.lines, 13u);
  EXPECT_EQ(r.long_lines, 2u);  // lines 9 and 10
  std::vector<std::string> kinds;
  for (const Event& e : r.raw) kinds.push_back(e.kind + "@" + std::to_string(e.line));
  EXPECT_EQ(kinds, (std::vector<std::string>{"weights_load_end@1", "weights_load_end@2", "weights_load_end@3",
                                             "exception@7", "weights_load_end@8", "weights_load_end@9",
                                             "batch_stats@11", "cuda_oom@12", "weights_load_end@13"}));
  // Line 1: producer prefix gives TP rank and time.
  EXPECT_EQ(r.raw[0].tp_rank, 0);
  EXPECT_EQ(r.raw[0].rank, 0);
  ASSERT_TRUE(r.raw[0].ts);
  EXPECT_DOUBLE_EQ(*r.raw[0].ts, 1760436001);
  EXPECT_DOUBLE_EQ(r.raw[0].fields()["avail_bytes"].get<double>(), 2.0 * (1 << 30));
  // Line 2: ANSI removed (a literal split by colour codes still found), CR dropped.
  EXPECT_EQ(r.raw[1].tp_rank, 1);
  EXPECT_EQ(r.raw[1].text.find('\x1b'), std::string::npos);
  EXPECT_EQ(r.raw[1].text.back(), 'B');
  // Line 3: the log line glued behind a progress bar is found.
  EXPECT_DOUBLE_EQ(r.raw[2].fields()["avail_bytes"].get<double>(), 4.0 * (1 << 30));
  // Lines 4-7: traceback of rank 1, rank 0's line not in it, invalid byte replaced.
  const Event& ex = r.raw[3];
  EXPECT_EQ(ex.rank, 1);
  EXPECT_EQ(ex.fields()["type"], "RuntimeError");
  EXPECT_EQ(ex.fields()["message"], "bad \xef\xbf\xbd byte");
  EXPECT_EQ(ex.fields()["traceback_line"], 4);
  ASSERT_EQ(ex.extra_lines.size(), 1u);
  EXPECT_EQ(ex.extra_lines[0], "  File \"a.py\", line 3, in f");
  // Line 9: a long line is cut, but what is before the cut still matches.
  EXPECT_DOUBLE_EQ(r.raw[5].fields()["avail_bytes"].get<double>(), 6.0 * (1 << 30));
  EXPECT_LE(r.raw[5].text.size(), 1000u);
  // Line 11: Ray prefix and dedup suffix are wrapper metadata.
  const Event& ray = r.raw[6];
  EXPECT_EQ(ray.pid, 7);
  EXPECT_EQ(ray.host, "10.0.0.2");
  EXPECT_EQ(ray.process, "RayWorkerWrapper");
  EXPECT_EQ(ray.wrapper()["ray_repeated"]["repeated"], 3);
  EXPECT_EQ(ray.fields()["running_reqs"], 5);
  EXPECT_EQ(ray.fields()["phase"], "decode");
  // Line 12: unit from a group.
  EXPECT_DOUBLE_EQ(r.raw[7].fields()["tried_bytes"].get<double>(), 512.0 * (1 << 20));
  // Offsets point at the line start.
  std::string input = TrickyLog();
  EXPECT_EQ(input.compare(r.raw[7].offset, 5, "torch"), 0);
}

// The line's producer metadata is moved into its last event (not copied):
// every event of a line must still carry all of it.
TEST(StreamParser, EveryEventOfALineCarriesItsProducer) {
  auto fs = testing::TestFormats();
  ASSERT_TRUE(fs.ok()) << fs.status().ToString();
  std::string input =
      "(RayWorkerWrapper pid=7, ip=10.0.0.2) [2025-10-14 10:00:01 TP3] Load weight end. t=X, avail mem=2.00 GB "
      "Decode batch. #running-req: 5\n";
  Result r = ParseAll(*fs, input, 4096);
  ASSERT_EQ(r.raw.size(), 2u);
  EXPECT_EQ(r.raw[0].kind, "weights_load_end");
  EXPECT_EQ(r.raw[1].kind, "batch_stats");
  for (const Event& e : r.raw) {
    EXPECT_EQ(e.tp_rank, 3) << e.kind;
    EXPECT_EQ(e.rank, 3) << e.kind;
    EXPECT_EQ(e.pid, 7) << e.kind;
    EXPECT_EQ(e.host, "10.0.0.2") << e.kind;
    EXPECT_TRUE(e.ts.has_value()) << e.kind;
    EXPECT_TRUE(e.wrapper().contains("prefix")) << e.wrapper().dump();
  }
  EXPECT_EQ(r.raw[0].wrapper(), r.raw[1].wrapper());
  EXPECT_EQ(r.raw[0].text, r.raw[1].text);
}

TEST(StreamParser, KindsFilterSkipsOtherPatterns) {
  auto fs = testing::TestFormats();
  ASSERT_TRUE(fs.ok());
  ParseOptions opt;
  opt.kinds = {"cuda_oom"};
  StreamEvents stream(std::make_unique<StringSource>(TrickyLog()), *fs, opt, 4096, 0, "x");
  Event e;
  int n = 0;
  while (stream.Next(&e)) {
    EXPECT_EQ(e.kind, "cuda_oom");
    ++n;
  }
  EXPECT_EQ(n, 1);
}

// The log ends inside a traceback: one exception, cut, with its frame (not dropped, not leaked).
// A traceback running past its block's max_lines (python.json: 2000) was
// dropped; it is an exception cut there, with the frames kept (capped).
TEST(StreamParser, TracebackPastMaxLinesIsEmittedCut) {
  auto fs = testing::TestFormats();
  ASSERT_TRUE(fs.ok());
  size_t max_lines = 0;
  for (const auto& b : fs->blocks()) {
    if (b.kind == "exception") max_lines = b.max_lines;
  }
  ASSERT_GT(max_lines, 0u);
  std::string input = "first line\nTraceback (most recent call last):\n";
  for (size_t k = 0; k < max_lines + 5; ++k) input += "  File \"a.py\", line " + std::to_string(k) + ", in f\n";
  input += "RuntimeError: too late to end it\n";
  Result r = ParseAll(*fs, input, 4096);
  ASSERT_EQ(r.events.size(), 1u);
  const Event& e = r.raw[0];
  EXPECT_EQ(e.kind, "exception");
  EXPECT_EQ(e.fields()["cut"], true);
  EXPECT_EQ(e.fields()["type"], "");
  EXPECT_EQ(e.fields()["traceback_line"], 2);
  EXPECT_EQ(e.line, 2u);
  EXPECT_EQ(e.extra_lines.size(), StreamParser::kMaxExtraLines);
  EXPECT_EQ(e.extra_lines.front(), "  File \"a.py\", line 0, in f");
}

TEST(StreamParser, TracebackWithoutEndIsEmittedCut) {
  auto fs = testing::TestFormats();
  ASSERT_TRUE(fs.ok());
  std::string input = "Traceback (most recent call last):\n  File \"x\", line 1\n";
  Result r = ParseAll(*fs, input, 4096);
  ASSERT_EQ(r.events.size(), 1u);
  EXPECT_EQ(r.raw[0].kind, "exception");
  EXPECT_EQ(r.raw[0].fields()["cut"], true);
  EXPECT_EQ(r.raw[0].fields()["type"], "");
  EXPECT_EQ(r.raw[0].extra_lines, std::vector<std::string>{"  File \"x\", line 1"});
  EXPECT_EQ(r.lines, 2u);
}

// StreamEvents parses a read block a few lines at a time (stream_parser.cc,
// ParsePiece): line numbers, offsets and multi-line records must not notice.
TEST(StreamParser, ABlockParsedInPiecesKeepsLinesOffsetsAndTracebacks) {
  auto fs = testing::TestFormats();
  ASSERT_TRUE(fs.ok()) << fs.status().ToString();
  std::string input;
  struct Want {
    uint64_t line, offset;
    double avail;
  };
  std::vector<Want> want;
  uint64_t line = 0;
  for (int i = 0; i < 400; ++i) {
    if (i % 50 == 7) {  // a traceback across piece boundaries
      input += "Traceback (most recent call last):\n";
      for (int k = 0; k < 30; ++k) input += "  File \"a.py\", line " + std::to_string(k) + ", in f\n";
      input += "RuntimeError: boom\n";
      line += 32;
    }
    ++line;
    want.push_back({line, input.size(), static_cast<double>(i) * (1 << 30)});
    input += "[2025-10-14 10:00:01 TP0] Load weight end. t=" + std::string(static_cast<size_t>(i * 37 % 1500), 'x') +
             ", avail mem=" + std::to_string(i) + ".00 GB\n";
  }
  Result r = ParseAll(*fs, input, 1 << 20, 1 << 20);
  std::vector<const Event*> loads, tracebacks;
  for (const Event& e : r.raw) (e.kind == "weights_load_end" ? loads : tracebacks).push_back(&e);
  ASSERT_EQ(loads.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(loads[i]->line, want[i].line) << i;
    EXPECT_EQ(loads[i]->offset, want[i].offset) << i;
    EXPECT_DOUBLE_EQ(loads[i]->fields()["avail_bytes"].get<double>(), want[i].avail) << i;
  }
  ASSERT_EQ(tracebacks.size(), 8u);
  for (const Event* t : tracebacks) {
    EXPECT_EQ(t->kind, "exception");
    EXPECT_EQ(t->extra_lines.size(), 30u);
    EXPECT_EQ(t->fields()["type"], "RuntimeError");
  }
  EXPECT_EQ(r.lines, line);
  EXPECT_EQ(r.bytes, input.size());
}

// pdsh / DeepSpeed multi-node: "host: " is stripped (and gives the host) only
// when the previous line of the stream starts with the same text; "INFO: ",
// "Traceback: ", "ValueError: " never are, repeated or not.
TEST(StreamParser, PdshHostPrefixNeedsTheSameHostOnThePreviousLine) {
  auto fs = testing::TestFormats();
  ASSERT_TRUE(fs.ok()) << fs.status().ToString();
  std::string input =
      "node-1: Load weight end. t=X, avail mem=1.00 GB\n"          // no previous line: kept
      "node-1: Load weight end. t=X, avail mem=2.00 GB\n"          // stripped
      "node-1: Traceback (most recent call last):\n"
      "node-1:   File \"a.py\", line 3, in f\n"
      "node-1: RuntimeError: boom\n"
      "node-2: Load weight end. t=X, avail mem=3.00 GB\n"          // another host before it: kept
      "INFO: Load weight end. t=X, avail mem=4.00 GB\n"
      "INFO: Load weight end. t=X, avail mem=5.00 GB\n"
      "Traceback: Load weight end. t=X, avail mem=6.00 GB\n"
      "Traceback: Load weight end. t=X, avail mem=7.00 GB\n"
      "ValueError: Load weight end. t=X, avail mem=8.00 GB\n"
      "ValueError: Load weight end. t=X, avail mem=9.00 GB\n";
  Result want = ParseAll(*fs, input, 1 << 16);
  ASSERT_EQ(want.raw.size(), 10u);
  auto host_of = [&](size_t i) { return want.raw[i].host; };
  EXPECT_EQ(host_of(0), "");
  EXPECT_EQ(want.raw[0].text.rfind("node-1: ", 0), 0u);
  EXPECT_EQ(host_of(1), "node-1");
  EXPECT_EQ(want.raw[1].text.rfind("Load weight end.", 0), 0u);
  EXPECT_TRUE(want.raw[1].wrapper().contains("pdsh_host")) << want.raw[1].wrapper().dump();
  EXPECT_EQ(want.raw[2].kind, "exception");
  EXPECT_EQ(want.raw[2].fields()["type"], "RuntimeError");
  EXPECT_EQ(want.raw[2].extra_lines, std::vector<std::string>{"  File \"a.py\", line 3, in f"});
  EXPECT_EQ(host_of(2), "node-1");
  EXPECT_EQ(host_of(3), "");
  EXPECT_EQ(want.raw[3].text.rfind("node-2: ", 0), 0u);
  for (size_t i = 4; i < 10; ++i) {
    EXPECT_EQ(host_of(i), "") << i;
    EXPECT_FALSE(want.raw[i].wrapper().contains("pdsh_host")) << i << " " << want.raw[i].text;
  }
  // The previous line is carried across read blocks and pieces.
  for (size_t buffer : {7, 50, 4096}) {
    EXPECT_EQ(ParseAll(*fs, input, buffer).events, want.events) << "buffer " << buffer;
  }
}

}  // namespace
}  // namespace tpt

// A traceback pasted from its middle: the first frame opens the record (no
// header), the exception line closes it; frames quoted inside a producer's
// other lines (torch.fx's 'Original traceback:') and leading to no exception
// are dropped, not reported as a cut exception; the log's end cuts a record.
namespace tpt {
namespace {
TEST(StreamParser, HeaderlessTracebackOpensAtItsFirstFrame) {
  auto fs = testing::TestFormats();
  ASSERT_TRUE(fs.ok());
  Result r = ParseAll(*fs,
                      "  File \"/srt/model_runner.py\", line 300, in init_memory_pool\n"
                      "    raise RuntimeError(\n"
                      "RuntimeError: Not enough memory.\n",
                      4096);
  ASSERT_EQ(r.raw.size(), 1u);
  EXPECT_EQ(r.raw[0].kind, "exception");
  EXPECT_EQ(r.raw[0].fields()["type"], "RuntimeError");
  EXPECT_EQ(r.raw[0].fields()["headerless"], true);
  ASSERT_FALSE(r.raw[0].extra_lines.empty());
  EXPECT_NE(r.raw[0].extra_lines[0].find("in init_memory_pool"), std::string::npos);  // its first frame kept

  Result quoted = ParseAll(*fs,
                           "[rank0]: Original traceback:\n"
                           "[rank0]:   File \"/m/deepseek_v2.py\", line 1475, in forward\n"
                           "[rank0]:     hidden_states, residual = layer(\n"
                           "[rank0]: Use tlparse to see the full graph.\n",
                           4096);
  EXPECT_TRUE(quoted.raw.empty());

  Result cut = ParseAll(*fs, "  File \"/srt/a.py\", line 3, in f\n    g()\n", 4096);
  ASSERT_EQ(cut.raw.size(), 1u);
  EXPECT_EQ(cut.raw[0].fields()["cut"], true);
}
}  // namespace
}  // namespace tpt
