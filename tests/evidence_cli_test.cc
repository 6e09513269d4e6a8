// evidence_cli_test.cc: the built binary on the bundled samples: evidence lines
// are whole (the value the diagnosis used is on the line), the same line of
// several ranks is shown once with its ranks, different lines stay apart, and
// findings are whole, in text, markdown and HTML.
#include <regex>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/cli_run.h"

namespace {

tpt::test::CmdResult Tpt(const std::string& args) {
  return tpt::test::RunCmd(std::string("'") + TPTRIAGE_BIN + "' " + args);
}

std::string Sample(const std::string& rel) { return std::string(TPT_SOURCE_DIR) + "/samples/" + rel; }

const std::vector<std::string> kFormats = {"text", "markdown", "html"};

// The evidence section of a report, wrapped lines joined with one space.
std::string EvidenceOf(const std::string& out, const std::string& format) {
  std::string begin = format == "text" ? "\nEvidence:\n" : format == "markdown" ? "<summary>Evidence</summary>" : "<h3>Evidence</h3>";
  std::string end = format == "text" ? "\n\n" : format == "markdown" ? "</details>" : "</pre>";
  size_t b = out.find(begin);
  if (b == std::string::npos) return "";
  size_t e = out.find(end, b + begin.size());
  std::string s = out.substr(b, e == std::string::npos ? std::string::npos : e - b);
  s = std::regex_replace(s, std::regex("\n {4,6}"), " ");  // continuation lines
  s = std::regex_replace(s, std::regex(" {2,}"), " ");      // the log's own double spaces
  s = std::regex_replace(s, std::regex("&#39;"), "'");
  return std::regex_replace(s, std::regex("&quot;"), "\"");
}

size_t Count(const std::string& hay, const std::string& needle) {
  size_t n = 0;
  for (size_t p = hay.find(needle); p != std::string::npos; p = hay.find(needle, p + 1)) ++n;
  return n;
}

std::string Analyze(const std::string& log, const std::string& format) {
  return Tpt("analyze '" + Sample(log) + "' --format " + format).out;
}

TEST(EvidenceLines, FoundingServerArgsShowTheFractionTheVerdictUses) {
  for (const std::string& f : kFormats) {
    SCOPED_TRACE(f);
    std::string ev = EvidenceOf(Analyze("founding/sglang-tp8-rtxpro6000-mfs050.log", f), f);
    ASSERT_FALSE(ev.empty());
    EXPECT_TRUE(std::regex_search(ev, std::regex("server_args=ServerArgs\\(model_path='/models/ckpt-580b'.*"
                                                 "mem_fraction_static=0\\.5, .*tp_size=8")))
        << ev;
    EXPECT_EQ(ev.find("mem_fraction_..."), std::string::npos) << ev;
    EXPECT_NE(ev.find("--format json"), std::string::npos) << "says where the whole line is: " << ev;
  }
}

TEST(EvidenceLines, FoundingNotEnoughMemoryOnceWithRanksOneToSeven) {
  for (const std::string& f : kFormats) {
    SCOPED_TRACE(f);
    std::string ev = EvidenceOf(Analyze("founding/sglang-tp8-rtxpro6000-mfs050.log", f), f);
    EXPECT_EQ(Count(ev, "RuntimeError: Not enough memory"), 1u) << ev;
    EXPECT_NE(ev.find(":52 rank 0: RuntimeError: Not enough memory"), std::string::npos) << ev;
    EXPECT_NE(ev.find("(same line on ranks 1-7: lines 68, 83, 98, 113, 128, 143, 158)"), std::string::npos) << ev;
    EXPECT_EQ(ev.find("more lines"), std::string::npos) << "nothing left out: " << ev;
  }
}

TEST(EvidenceLines, TorchOomMessageIsWhole) {
  for (const std::string& f : kFormats) {
    SCOPED_TRACE(f);
    std::string ev = EvidenceOf(Analyze("logs/torch-childfailed-oom-rank1.log", f), f);
    EXPECT_NE(ev.find("try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation. See "
                      "documentation for Memory Management"),
              std::string::npos)
        << ev;
    EXPECT_EQ(ev.find("CO..."), std::string::npos) << ev;
  }
}

TEST(EvidenceLines, TgiArgsLineIsWhole) {
  for (const std::string& f : kFormats) {
    SCOPED_TRACE(f);
    std::string ev = EvidenceOf(Analyze("logs/tgi-warmup-oom-2shards.log", f), f);
    EXPECT_NE(ev.find("master_addr: \"localhost\", master_port: 29500 }"), std::string::npos) << ev;
  }
}

TEST(EvidenceLines, NcclWatchdogTimeoutsThatDifferStayApart) {
  for (const std::string& f : kFormats) {
    SCOPED_TRACE(f);
    std::string ev = EvidenceOf(Analyze("logs/nccl-warn-hang-tp4.log", f), f);
    EXPECT_EQ(Count(ev, "Watchdog caught collective operation timeout"), 3u) << ev;
    EXPECT_EQ(Count(ev, "NCCL WARN"), 1u) << ev;
    EXPECT_EQ(Count(ev, "nccl-warn-hang-tp4.log:"), 4u) << "4 lines: " << ev;
    EXPECT_EQ(ev.find("same line"), std::string::npos) << ev;
  }
}

TEST(EvidenceLines, InfoFindingsAreWholeInEveryFormat) {
  for (const std::string& f : kFormats) {
    SCOPED_TRACE(f);
    std::string out = Analyze("logs/sglang-tp4-healthy.log", f);
    out = std::regex_replace(out, std::regex("\n {2,6}"), " ");
    EXPECT_NE(out.find("took decode from 82 to 89.5 tok/s through the larger KV pool."), std::string::npos) << out;
    EXPECT_NE(out.find("Compare runs with"), std::string::npos) << out;
  }
}

}  // namespace
