#include "parser/parser.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <sys/resource.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "parser/event_json.h"
#include "parser/format_set.h"
#include "parser/stream_parser.h"
#include "parser/test_formats.h"

namespace tpt {
namespace {

namespace fs = std::filesystem;

class ParseRunTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("tpt_parser_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    auto f = testing::TestFormats();
    ASSERT_TRUE(f.ok()) << f.status().ToString();
    formats_ = std::make_unique<FormatSet>(std::move(*f));
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Write(const std::string& name, const std::string& data) {
    fs::path p = dir_ / name;
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << data;
    return p.string();
  }
  std::string WriteGz(const std::string& name, const std::string& data) {
    std::string p = (dir_ / name).string();
    gzFile g = gzopen(p.c_str(), "wb");
    gzwrite(g, data.data(), data.size());
    gzclose(g);
    return p;
  }

  fs::path dir_;
  std::unique_ptr<FormatSet> formats_;
};

std::string LoadLine(int sec, int tp, double gb) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "[2025-10-14 10:00:%02d TP%d] Load weight end. t=X, avail mem=%.2f GB\n", sec, tp, gb);
  return buf;
}

TEST_F(ParseRunTest, MergesStreamsByTimestampAndReadsGzip) {
  std::string r0 = Write("rank0.log", LoadLine(1, 0, 1) + "no time here\n" + LoadLine(4, 0, 4));
  std::string r1 = WriteGz("rank1.log.gz", LoadLine(2, 1, 2) + LoadLine(3, 1, 3) + LoadLine(5, 1, 5));
  auto run = ParseRunToMemory({r0, r1}, *formats_, ParseOptions());
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  std::vector<int> secs;
  for (const Event& e : run->events) secs.push_back(static_cast<int>(*e.ts) % 60);
  EXPECT_EQ(secs, (std::vector<int>{1, 2, 3, 4, 5}));
  EXPECT_EQ(run->events[1].file, r1);
  EXPECT_EQ(run->events[1].source, 1);
  EXPECT_EQ(run->events[1].tp_rank, 1);
  ASSERT_EQ(run->inputs.size(), 2u);
  EXPECT_EQ(run->inputs[0].lines, 3u);
  EXPECT_EQ(run->inputs[0].events, 2u);
  EXPECT_EQ(run->inputs[1].events, 3u);
  EXPECT_TRUE(run->inputs[1].error.empty());
}

TEST_F(ParseRunTest, UntimedStreamsKeepFileOrder) {
  std::string a = Write("a.out", "Decode batch. #running-req: 1\nDecode batch. #running-req: 2\n");
  std::string b = Write("b.err", "Decode batch. #running-req: 3\n");
  auto run = ParseRunToMemory({a, b}, *formats_, ParseOptions());
  ASSERT_TRUE(run.ok());
  std::vector<int> n;
  for (const Event& e : run->events) n.push_back(e.fields()["running_reqs"]);
  EXPECT_EQ(n, (std::vector<int>{1, 2, 3}));
}

TEST_F(ParseRunTest, DirectoriesAreWalkedForLogs) {
  Write("logs/node0/rank0.log", LoadLine(1, 0, 1));
  Write("logs/node1/stdout", LoadLine(2, 1, 1));  // text without extension
  Write("logs/node1/model.bin", std::string(1000, '\0'));
  Write("logs/.hidden.log", LoadLine(3, 2, 1));
  auto run = ParseRunToMemory({(dir_ / "logs").string()}, *formats_, ParseOptions());
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  ASSERT_EQ(run->inputs.size(), 2u);
  EXPECT_EQ(run->events.size(), 2u);
}

TEST_F(ParseRunTest, BadInputsAreReportedAndTheRestIsRead) {
  std::string good = Write("good.log", LoadLine(1, 0, 1));
  std::string empty = Write("empty.log", "");
  std::string bin = Write("core.log", std::string(5000, '\0'));
  Write("nologs/readme.md.x", "x");
  std::vector<InputReport> reports;
  struct Count : EventSink {
    int n = 0;
    bool OnEvent(const Event&) override { return ++n, true; }
  } sink;
  Status s = ParseRun({good, empty, bin, (dir_ / "missing.log").string(), (dir_ / "nologs").string()}, *formats_,
                      ParseOptions(), &sink, &reports);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(sink.n, 1);
  ASSERT_EQ(reports.size(), 5u);
  EXPECT_TRUE(reports[0].error.empty());
  EXPECT_NE(reports[1].error.find("empty"), std::string::npos);
  EXPECT_NE(reports[2].error.find("binary"), std::string::npos);
  EXPECT_NE(reports[3].error.find("missing.log"), std::string::npos);
  EXPECT_NE(reports[4].error.find("no logs"), std::string::npos);
}

TEST_F(ParseRunTest, NothingReadableIsAnError) {
  std::string empty = Write("empty.log", "");
  auto run = ParseRunToMemory({empty, (dir_ / "nope.log").string()}, *formats_, ParseOptions());
  ASSERT_FALSE(run.ok());
  EXPECT_NE(run.status().message().find("empty.log"), std::string::npos);
  EXPECT_FALSE(ParseRunToMemory({}, *formats_, ParseOptions()).ok());
}

TEST_F(ParseRunTest, TruncatedGzipKeepsWhatWasRead) {
  std::string text;
  for (int i = 0; i < 3000; ++i) text += "Decode batch. #running-req: " + std::to_string(i) + "\n";
  std::string p = WriteGz("cut.log.gz", text);
  fs::resize_file(p, fs::file_size(p) / 2);
  auto run = ParseRunToMemory({p}, *formats_, ParseOptions());
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  EXPECT_NE(run->inputs[0].error.find("truncated"), std::string::npos);
  EXPECT_GT(run->inputs[0].events, 100u);
}

TEST_F(ParseRunTest, HighVolumeKindsAreCappedFirstAndLast) {
  std::string text = LoadLine(0, 0, 1);
  for (int i = 0; i < 100; ++i) text += "Decode batch. #running-req: " + std::to_string(i) + "\n";
  text += "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.00 GiB\n";
  ParseOptions opt;
  opt.keep_high_volume = 5;
  auto run = ParseRunToMemory({Write("x.log", text)}, *formats_, opt);
  ASSERT_TRUE(run.ok());
  std::vector<int> kept;
  for (const Event& e : run->events) {
    if (e.kind == "batch_stats") kept.push_back(e.fields()["running_reqs"]);
  }
  EXPECT_EQ(kept, (std::vector<int>{0, 1, 2, 3, 4, 95, 96, 97, 98, 99}));
  EXPECT_EQ(run->dropped["batch_stats"], 90);
  EXPECT_EQ(run->events.front().kind, "weights_load_end");
  EXPECT_EQ(run->events.back().kind, "cuda_oom");
}

// The last N of a high-volume kind are kept in a ring whose slots are
// refilled in place (CopyEventReusing): whatever the count, the kept events
// come out oldest first, each with its own fields and producer (lines with and
// without a prefix alternate, so slots change shape).
TEST_F(ParseRunTest, TheLastHighVolumeEventsKeepTheirOrderAndValues) {
  for (int count : {3, 5, 6, 7, 100, 103}) {
    for (size_t keep : {size_t{0}, size_t{1}, size_t{2}, size_t{5}}) {
      std::string text;
      for (int i = 0; i < count; ++i) {
        if (i % 3 != 2) text += "[2025-10-14 10:00:01 TP" + std::to_string(i % 8) + "] ";
        text += "Decode batch. #running-req: " + std::to_string(i) + "\n";
      }
      ParseOptions opt;
      opt.keep_high_volume = keep;
      auto run = ParseRunToMemory({Write("x.log", text)}, *formats_, opt);
      ASSERT_TRUE(run.ok());
      std::vector<int> want;
      for (int i = 0; i < count; ++i) {
        if (static_cast<size_t>(i) < keep || static_cast<size_t>(i) >= std::max<size_t>(keep, count - keep)) want.push_back(i);
      }
      std::vector<int> got;
      for (const Event& e : run->events) {
        int i = e.fields()["running_reqs"];
        got.push_back(i);
        if (i % 3 != 2) {
          EXPECT_EQ(e.tp_rank, i % 8);
          EXPECT_EQ(e.wrapper()["prefix"]["tp_rank"], i % 8) << e.wrapper().dump();
          EXPECT_EQ(e.text.rfind("[2025-10-14", 0), 0u) << e.text;
        } else {
          EXPECT_EQ(e.tp_rank, -1);
          EXPECT_FALSE(e.wrapper().contains("prefix")) << e.wrapper().dump();
          EXPECT_EQ(e.text.rfind("Decode batch", 0), 0u) << e.text;
        }
      }
      EXPECT_EQ(got, want) << "count " << count << " keep " << keep;
      uint64_t dropped = run->dropped.value("batch_stats", uint64_t{0});
      EXPECT_EQ(dropped, count - want.size()) << "count " << count << " keep " << keep;
    }
  }
}

// Line i of a flood from TP rank `tp` (a weights_load_end whose number is i).
std::string FloodLine(int tp, int i) { return LoadLine(0, tp, i); }
int FloodNumber(const Event& e) { return static_cast<int>(e.fields()["avail_bytes"].get<double>() / (1 << 30)); }

// A flood of one kind keeps, per producer, its first and last N events in
// stream order; the ones between are counted, and told where they were.
TEST_F(ParseRunTest, EachProducerKeepsItsFirstAndLastEvents) {
  std::string text = "Decode batch. #running-req: 1\n";
  for (int i = 0; i < 3000; ++i) text += FloodLine(i % 2, i);
  text += "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.00 GiB\n";
  ParseOptions opt;
  opt.keep_per_group = 10;
  auto run = ParseRunToMemory({Write("x.log", text)}, *formats_, opt);
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  std::map<int, std::vector<int>> kept;  // tp rank -> numbers kept
  for (const Event& e : run->events)
    if (e.kind == "weights_load_end") kept[e.tp_rank].push_back(FloodNumber(e));
  ASSERT_EQ(kept.size(), 2u);
  for (int dev : {0, 1}) {
    std::vector<int> want;
    for (int k = 0; k < 10; ++k) want.push_back(dev + 2 * k);
    for (int k = 1490; k < 1500; ++k) want.push_back(dev + 2 * k);
    EXPECT_EQ(kept[dev], want) << "device " << dev;
  }
  EXPECT_EQ(run->events.front().kind, "batch_stats");
  EXPECT_EQ(run->events.back().kind, "cuda_oom");
  EXPECT_EQ(run->totals.events, 3002u);
  EXPECT_EQ(run->dropped["weights_load_end"], 2960);
  ASSERT_EQ(run->totals.dropped.size(), 2u);
  for (const auto& d : run->totals.dropped) {
    EXPECT_EQ(d.kind, "weights_load_end");
    EXPECT_EQ(d.count, 1480u);
    // The producer's first kept event after its gap.
    ASSERT_LT(d.before, run->events.size());
    const Event& after = run->events[d.before];
    EXPECT_EQ(after.kind, "weights_load_end");
    EXPECT_EQ(FloodNumber(after), 2980 + after.tp_rank);
  }
}

// Past the memory budget every producer's head and tail are halved, never
// below its first and last event; a log under the caps is kept whole.
TEST_F(ParseRunTest, KeptEventsStayWithinTheBudget) {
  std::string text;
  for (int i = 0; i < 20000; ++i) text += FloodLine(i % 4, i);
  ParseOptions opt;
  opt.keep_bytes = 256 * 1024;
  auto run = ParseRunToMemory({Write("x.log", text)}, *formats_, opt);
  ASSERT_TRUE(run.ok());
  EXPECT_LT(run->events.size(), 400u);
  EXPECT_EQ(run->totals.events, 20000u);
  std::map<int, std::pair<int, int>> ends;  // tp rank -> first, last number kept
  for (const Event& e : run->events) {
    int n = FloodNumber(e);
    if (!ends.count(e.tp_rank)) ends[e.tp_rank].first = n;
    ends[e.tp_rank].second = n;
  }
  for (int dev = 0; dev < 4; ++dev) {
    EXPECT_EQ(ends[dev].first, dev);
    EXPECT_EQ(ends[dev].second, 19996 + dev);
  }
  uint64_t dropped = 0;
  for (const auto& d : run->totals.dropped) dropped += d.count;
  EXPECT_EQ(dropped + run->events.size(), 20000u);

  std::string small;
  for (int i = 0; i < 1000; ++i) small += FloodLine(i % 4, i);
  auto whole = ParseRunToMemory({Write("y.log", small)}, *formats_, ParseOptions());
  ASSERT_TRUE(whole.ok());
  EXPECT_EQ(whole->events.size(), 1000u);
  EXPECT_TRUE(whole->totals.dropped.empty());
}

// More inputs than may be open at once are read a group at a time and merged
// by time as if all were open.
TEST_F(ParseRunTest, InputsAreOpenAGroupAtATimeAndMergedAsOne) {
  std::vector<std::string> files;
  for (int f = 0; f < 7; ++f) {
    std::string text;
    for (int k = 0; k < 5; ++k) text += LoadLine(k * 7 + f * 3, f, k);  // files interleave in time
    files.push_back(Write("r" + std::to_string(f) + ".log", text));
  }
  auto order = [&](size_t max_open) {
    ParseOptions opt;
    opt.max_open_inputs = max_open;
    auto run = ParseRunToMemory(files, *formats_, opt);
    EXPECT_TRUE(run.ok());
    std::vector<std::pair<int, uint64_t>> out;
    for (const Event& e : run->events) out.push_back({e.source, e.line});
    return out;
  };
  auto all_open = order(64);
  ASSERT_EQ(all_open.size(), 35u);
  EXPECT_EQ(order(2), all_open);
  EXPECT_EQ(order(1), all_open);
}

// A run of more files than the process may open (ulimit -n): every file is
// read, none skipped, and the error in the last one is found.
TEST_F(ParseRunTest, MoreFilesThanDescriptorsAreAllRead) {
  std::vector<std::string> files;
  for (int f = 0; f < 1100; ++f) {
    char name[32];
    std::snprintf(name, sizeof name, "d/r%04d.log", f);
    std::string text = LoadLine(1, 0, f);
    if (f == 1099) text += "[2025-10-14 10:00:02 TP0] torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.00 GiB\n";
    Write(name, text);
  }
  struct rlimit old;
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &old), 0);
  struct rlimit low = old;
  low.rlim_cur = std::min<rlim_t>(old.rlim_cur, 256);
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &low), 0);
  auto run = ParseRunToMemory({(dir_ / "d").string()}, *formats_, ParseOptions());
  setrlimit(RLIMIT_NOFILE, &old);
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  ASSERT_EQ(run->inputs.size(), 1100u);
  for (const auto& in : run->inputs) EXPECT_EQ(in.error, "") << in.path;
  EXPECT_EQ(run->events.size(), 1101u);
  EXPECT_EQ(run->events.back().kind, "cuda_oom");
  EXPECT_NE(run->events.back().file.find("r1099.log"), std::string::npos);
}

// A copy made in place equals its source, read before or after decoding,
// whatever the slot held before.
TEST(CopyEventReusing, GivesWhatACopyGives) {
  auto fs = testing::TestFormats();
  ASSERT_TRUE(fs.ok()) << fs.status().ToString();
  std::string input =
      "[2025-10-14 10:00:01 TP3] Decode batch. #running-req: 7\n"
      "(RayWorkerWrapper pid=7, ip=10.0.0.2) Load weight end. t=X, avail mem=2.00 GB\n"
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 512.00 MiB\n"
      "[2025-10-14 10:00:02 TP4] Load weight end. t=X, avail mem=3.50 GB\n";
  std::vector<Event> events;
  {
    // A temporary ParseOptions: the stream keeps a copy (ASan checks).
    StreamEvents stream(std::make_unique<StringSource>(input), *fs, ParseOptions(), 4096, 0, "x.log");
    Event e;
    while (stream.Next(&e)) events.push_back(e);
  }
  ASSERT_EQ(events.size(), 4u);
  EXPECT_TRUE(events[0].deferred_prefix_.pending);
  for (int pass = 0; pass < 2; ++pass) {
    if (pass == 1) {
      for (const Event& e : events) (void)e.fields();  // now copy decoded events
    }
    for (const Event& from : events) {
      for (const Event& before : events) {
        Event slot = before;
        if (&before != &events[0]) (void)slot.fields();  // some slots decoded, some not
        CopyEventReusing(from, &slot);
        Event plain = from;
        EXPECT_EQ(EventToJson(slot), EventToJson(plain)) << pass << ": " << from.text << " over " << before.text;
      }
    }
  }
}

TEST_F(ParseRunTest, SinkCanStopEarly) {
  std::string text;
  for (int i = 0; i < 50; ++i) text += "Decode batch. #running-req: 1\n";
  struct StopAt3 : EventSink {
    int n = 0;
    bool OnEvent(const Event&) override { return ++n < 3; }
  } sink;
  ASSERT_TRUE(ParseRun({Write("x.log", text)}, *formats_, ParseOptions(), &sink, nullptr).ok());
  EXPECT_EQ(sink.n, 3);
}

}  // namespace
}  // namespace tpt

namespace tpt {
namespace {

// Regression: a traceback cut before its exception line was dropped.
TEST_F(ParseRunTest, CutTracebackIsAnExceptionWithItsFrames) {
  auto builtin = FormatSet::LoadBuiltin();
  ASSERT_TRUE(builtin.ok()) << builtin.status().ToString();
  const std::string frames =
      "Traceback (most recent call last):\n"
      "  File \"/sglang/srt/managers/scheduler.py\", line 100, in init_memory_pool\n"
      "    self.alloc()\n";
  // 1. The log ends inside it; 2. its (prefixed) producer moves on; 3. a complete one.
  std::string ended = Write("ended.log", "[2025-10-14 10:00:01 TP0] Scheduler hit an exception: " + frames);
  std::string moved = Write("moved.log", "[2025-10-14 10:00:01 TP1] Scheduler hit an exception: " + frames +
                                             "[2025-10-14 10:00:02 TP1] Load weight end. avail mem=1.00 GB\n");
  std::string whole = Write("whole.log", frames + "RuntimeError: boom\n");
  for (const std::string& path : {ended, moved, whole}) {
    auto run = ParseRunToMemory({path}, *builtin, ParseOptions());
    ASSERT_TRUE(run.ok()) << run.status().ToString();
    std::vector<const Event*> exc;
    for (const Event& e : run->events) {
      if (e.kind == "exception") exc.push_back(&e);
    }
    ASSERT_EQ(exc.size(), 1u) << path;
    const Event& e = *exc[0];
    EXPECT_EQ(e.extra_lines.size(), 2u) << path;
    EXPECT_NE(e.extra_lines.at(0).find("in init_memory_pool"), std::string::npos) << path;
    if (path == whole) {
      EXPECT_EQ(e.fields()["type"], "RuntimeError");
      EXPECT_FALSE(e.fields().contains("cut"));
    } else {
      EXPECT_EQ(e.fields()["type"], "") << path;
      EXPECT_EQ(e.fields()["cut"], true) << path;
      EXPECT_EQ(e.line, 1u) << path;
      EXPECT_EQ(e.tp_rank, path == ended ? 0 : 1) << path;
    }
  }
}

}  // namespace
}  // namespace tpt
