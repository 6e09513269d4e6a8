// events_cli_test.cc: the built `tptriage events` on logs written here: JSON
// Lines, --kinds, .gz, stdin, missing files and exit codes, --summary.
#include <unistd.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/cli_run.h"

namespace {

namespace fs = std::filesystem;

using Result = tpt::test::CmdResult;

Result RunEvents(const std::string& args, bool merge_stderr = false) {
  return tpt::test::RunCmd(std::string("'") + TPTRIAGE_BIN + "' events " + args, merge_stderr);
}

std::vector<nlohmann::json> JsonLines(const std::string& out) {
  std::vector<nlohmann::json> v;
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line)) v.push_back(nlohmann::json::parse(line));  // throws (test fails) if not JSON
  return v;
}

// Two SGLang ranks: weights loaded, then rank 1 runs out of memory.
const char kLog[] =
    "[2025-10-14 10:00:01 TP0] Load weight end. type=LlamaForCausalLM, dtype=torch.bfloat16, avail mem=60.00 GB, "
    "mem usage=15.00 GB.\n"
    "some unrelated line\n"
    "[2025-10-14 10:00:02 TP1] Load weight end. type=LlamaForCausalLM, dtype=torch.bfloat16, avail mem=59.00 GB, "
    "mem usage=15.00 GB.\n"
    "[2025-10-14 10:00:03 TP1] torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 1 has a "
    "total capacity of 79.19 GiB of which 1.00 GiB is free.\n";

class EventsCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("tpt_events_cli_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
    log_ = (dir_ / "server.log").string();
    std::ofstream(log_) << kLog;
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Q(const std::string& p) { return "'" + p + "'"; }
  fs::path dir_;
  std::string log_;
};

TEST_F(EventsCliTest, JsonLinesCarryKindFileAndLine) {
  Result r = RunEvents(Q(log_));
  ASSERT_EQ(r.rc, 0) << r.out;
  auto ev = JsonLines(r.out);
  // The OOM line is also a line that says it is an error (generic.json error_message:
  // an exception's own line), as a vLLM 'ERROR ...' line is.
  ASSERT_EQ(ev.size(), 4u) << r.out;
  EXPECT_EQ(ev[3]["kind"], "error_line");
  EXPECT_EQ(ev[3]["line"], 4);
  EXPECT_EQ(ev[0]["kind"], "weights_load_end");
  EXPECT_EQ(ev[0]["tp_rank"], 0);
  EXPECT_EQ(ev[1]["line"], 3);
  EXPECT_EQ(ev[2]["kind"], "cuda_oom");
  EXPECT_EQ(ev[2]["file"], log_);
  EXPECT_EQ(ev[2]["fields"]["tried_bytes"], 2.0 * (1 << 30));
}

TEST_F(EventsCliTest, KindsFilterKeepsOnlyThoseKinds) {
  Result r = RunEvents("--kinds cuda_oom " + Q(log_));
  ASSERT_EQ(r.rc, 0) << r.out;
  auto ev = JsonLines(r.out);
  ASSERT_EQ(ev.size(), 1u) << r.out;
  EXPECT_EQ(ev[0]["kind"], "cuda_oom");
  EXPECT_EQ(ev[0]["tp_rank"], 1);
}

TEST_F(EventsCliTest, GzipAndStdinGiveTheSameEvents) {
  std::string gz = (dir_ / "server.log.gz").string();
  gzFile g = gzopen(gz.c_str(), "wb");
  gzwrite(g, kLog, sizeof kLog - 1);
  gzclose(g);
  auto plain = JsonLines(RunEvents(Q(log_)).out);
  Result rg = RunEvents(Q(gz));
  ASSERT_EQ(rg.rc, 0) << rg.out;
  Result rs = RunEvents("- < " + Q(log_));
  ASSERT_EQ(rs.rc, 0) << rs.out;
  auto zipped = JsonLines(rg.out), piped = JsonLines(rs.out);
  ASSERT_EQ(zipped.size(), plain.size());
  ASSERT_EQ(piped.size(), plain.size());
  for (size_t i = 0; i < plain.size(); ++i) {
    EXPECT_EQ(zipped[i]["kind"], plain[i]["kind"]);
    EXPECT_EQ(zipped[i]["fields"], plain[i]["fields"]);
    EXPECT_EQ(piped[i]["fields"], plain[i]["fields"]);
  }
  EXPECT_EQ(piped[0]["file"], "-");
}

TEST_F(EventsCliTest, MissingFileIsNamedAndExitCodesSayHowBad) {
  std::string missing = (dir_ / "nope.log").string();
  Result only = RunEvents(Q(missing), true);
  EXPECT_EQ(only.rc, 2) << only.out;
  EXPECT_NE(only.out.find(missing), std::string::npos) << only.out;
  EXPECT_NE(only.out.find("no such file"), std::string::npos) << only.out;
  // One missing, one readable: the readable one's events, exit 1.
  Result some = RunEvents(Q(missing) + " " + Q(log_));
  EXPECT_EQ(some.rc, 1);
  EXPECT_EQ(JsonLines(some.out).size(), 4u);
}

TEST_F(EventsCliTest, SummaryOnlyPrintsPerProducerTable) {
  Result r = RunEvents("--summary " + Q(log_));
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_EQ(r.out.find("{\"kind\""), std::string::npos) << r.out;  // no JSON Lines
  EXPECT_NE(r.out.find("phases reached"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("weights_load_end"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("2025-10-14T10:00:03Z"), std::string::npos) << r.out;
}

}  // namespace

namespace {

// SGLang with DP attention off: `DPx TPy` prefixes repeat tp ranks across dp
// ranks, so the global rank is dp * tp_size + tp (tp_size from server_args).
std::string DpTpLog(int filler_lines) {
  std::string s = "[2025-10-14 10:00:00] server_args=ServerArgs(model_path='/m', tp_size=2, dp_size=2)\n";
  for (int dp = 0; dp < 2; ++dp)
    for (int tp = 0; tp < 2; ++tp)
      s += "[2025-10-14 10:00:01 DP" + std::to_string(dp) + " TP" + std::to_string(tp) +
           "] Load weight begin. avail mem=70.00 GB\n";
  for (int i = 0; i < filler_lines; ++i)
    s += "[2025-10-14 10:00:02 DP1 TP1] Load weight begin. avail mem=70.00 GB\n";
  s += "[2025-10-14 10:00:03 DP1 TP0] Load weight end. type=LlamaForCausalLM, dtype=torch.bfloat16, avail mem=60.00 GB, "
       "mem usage=10.00 GB.\n";
  return s;
}

TEST_F(EventsCliTest, RanksResolveRunWideLikeAnalyze) {
  std::ofstream(log_, std::ios::trunc) << DpTpLog(0);
  Result r = RunEvents(Q(log_));
  ASSERT_EQ(r.rc, 0) << r.out;
  auto ev = JsonLines(r.out);
  ASSERT_EQ(ev.size(), 6u) << r.out;
  // DP0 TP0, DP0 TP1, DP1 TP0, DP1 TP1 -> global ranks 0..3, not tp 0/1 twice.
  for (int i = 0; i < 4; ++i) EXPECT_EQ(ev[1 + i]["rank"], i) << ev[1 + i].dump();
  EXPECT_EQ(ev[5]["rank"], 2);  // DP1 TP0
  // The summary names four ranks (the server_args line has none of its own).
  Result s = RunEvents("--summary " + Q(log_));
  for (int i = 0; i < 4; ++i) EXPECT_NE(s.out.find("rank " + std::to_string(i) + " "), std::string::npos) << s.out;
}

TEST_F(EventsCliTest, EventsAfterTheFirstWindowStreamWithTheLearnedLayout) {
  // More events than the window that waits for the layout: the later ones are
  // printed as they come, with the layout learned from the first ones.
  std::ofstream(log_, std::ios::trunc) << DpTpLog(12000);
  Result r = RunEvents("--kinds weights_load_end,weights_load_begin " + Q(log_));
  ASSERT_EQ(r.rc, 0);
  auto ev = JsonLines(r.out);
  ASSERT_EQ(ev.size(), 4u + 12000u + 1u);
  EXPECT_EQ(ev[10].value("rank", -1), 3);        // inside the window: DP1 TP1
  EXPECT_EQ(ev[11000].value("rank", -1), 3);     // after it
  EXPECT_EQ(ev.back()["kind"], "weights_load_end");
  EXPECT_EQ(ev.back()["rank"], 2);               // DP1 TP0, streamed
}

}  // namespace
