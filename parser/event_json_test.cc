// event_json_test.cc: the JSON Lines writer of `tptriage events` against the
// JSON object it replaces, byte for byte: every event of every sample log,
// and events built by hand with the strings and numbers that escape.
#include "parser/event_json.h"

#include <cmath>
#include <filesystem>
#include <limits>
#include <string>

#include <gtest/gtest.h>

#include "parser/format_set.h"
#include "parser/parser.h"

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

TEST(EventJsonLine, SameBytesAsTheObjectOnEverySample) {
  auto formats = tpt::FormatSet::LoadBuiltin();
  ASSERT_TRUE(formats.ok());
  size_t events = 0, files = 0;
  for (const auto& ent : fs::recursive_directory_iterator(std::string(TPT_SOURCE_DIR) + "/samples")) {
    if (!ent.is_regular_file() || !tpt::ReadFromDirectory(ent.path().string())) continue;
    tpt::ParseOptions opts;
    auto run = tpt::ParseRunToMemory({ent.path().string()}, *formats, opts);
    if (!run.ok()) continue;
    ++files;
    for (const tpt::Event& e : run->events) {
      ASSERT_EQ(ViaWriter(e), ViaObject(e)) << ent.path() << ":" << e.line;
      ++events;
    }
  }
  EXPECT_GT(files, 50u);
  EXPECT_GT(events, 5000u);
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

}  // namespace
