// renderers_test.cc: every format renders the same records correctly, escapes
// hostile log text, and validates against its published schema.
#include <gtest/gtest.h>

#include "tests/temp_dir_test.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "report/common.h"
#include "report/renderers.h"
#include "report/report.h"
#include "report/test_fixtures.h"

namespace tpt::report {
namespace {

using testing::AsRun;

std::string Render(Format f, const Report& r) {
  std::ostringstream out;
  MakeReporter(f)->Write(r, out);
  return out.str();
}

Report One(Analysis a) {
  std::vector<RunResult> runs;
  runs.push_back(AsRun("run-a", std::move(a)));
  return MakeReport(std::move(runs), false, "0.1.0");
}

// A healthy verdict names no rank as "failed first", though a rank logged an
// error line the run went on after (SGLang's caught custom all-reduce setup).
TEST(Renderers, HealthyRunNamesNoFailedRank) {
  Analysis a = testing::KvNoRoom({.seed = 1});
  ASSERT_NE(Render(Format::kText, One(a)).find("failed first"), std::string::npos);
  a.diagnoses.clear();
  a.root_cause = "none";
  EXPECT_EQ(RankNote(a), "");
  EXPECT_EQ(ShownFirstRank(a), nullptr);
  for (Format f : {Format::kText, Format::kMarkdown, Format::kHtml}) {
    EXPECT_EQ(Render(f, One(a)).find("failed first"), std::string::npos) << FormatName(f);
  }
}

Report Many() {
  std::vector<RunResult> runs;
  runs.push_back(AsRun("r1", testing::KvNoRoom({.seed = 1})));
  runs.push_back(AsRun("r2", testing::KvNoRoom({.seed = 2, .hostile_text = true})));
  runs.push_back(AsRun("r3", testing::NcclTimeout(1)));
  runs.push_back(AsRun("r4", testing::Healthy()));
  runs.push_back(AsRun("r5", testing::Unexplained(4)));
  RunResult bad;
  bad.name = "r6";
  bad.error = "r6/server.log: not a text log (binary data); give the server's stdout/stderr log";
  bad.exit_code = kExitUsage;
  runs.push_back(bad);
  return MakeReport(std::move(runs), true, "0.1.0");
}

size_t Count(const std::string& hay, const std::string& needle) {
  size_t n = 0;
  for (size_t p = hay.find(needle); p != std::string::npos; p = hay.find(needle, p + 1)) ++n;
  return n;
}

std::string TempFile(const std::string& name, const std::string& content) {
  auto dir = std::filesystem::temp_directory_path() / ("tpt_report_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::string path = (dir / name).string();
  std::ofstream(path, std::ios::binary) << content;
  return path;
}

// The folder goes when this process's tests end (hundreds were left in /tmp).
[[maybe_unused]] ::testing::Environment* const kRemoveTempDir = tpt::test::RemoveAtExit(std::filesystem::temp_directory_path() / ("tpt_report_test_" + std::to_string(::getpid())));

int Shell(const std::string& cmd) {
  int rc = std::system(cmd.c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

TEST(TextReporter, AnswerFirstThenEvidenceLedgerRanks) {
  std::string out = Render(Format::kText, One(testing::KvNoRoom({.seed = 1})));
  // The first three lines: the verdict once, the fix, the confidence.
  std::istringstream lines(out);
  std::string l1, l2, l3;
  std::getline(lines, l1);
  std::getline(lines, l2);
  std::getline(lines, l3);
  EXPECT_EQ(l1.rfind("Verdict: KV cache pool has no room: rank 1 is", 0), 0u) << out;
  EXPECT_EQ(l2.rfind("Fix: --mem-fraction-static 0.93: the reserved slice", 0), 0u) << out;
  EXPECT_EQ(l3.rfind("Confidence: 92% (kv_pool_no_room)", 0), 0u) << out;
  EXPECT_EQ(Count(out, "KV cache pool has no room: rank 1 is"), 1u) << "the verdict is printed once";
  EXPECT_EQ(out.find("Root cause ["), std::string::npos);
  // Then evidence, what it is NOT, the ledger, the ranks, in that order.
  size_t ev = out.find("\nEvidence:\n"), nt = out.find("\nWhat it is NOT:\n"), led = out.find("\nMemory ledger"),
         rk = out.find("\nRanks and phases");
  ASSERT_NE(ev, std::string::npos);
  ASSERT_NE(nt, std::string::npos);
  ASSERT_NE(led, std::string::npos);
  ASSERT_NE(rk, std::string::npos);
  EXPECT_LT(ev, nt);
  EXPECT_LT(nt, led);
  EXPECT_LT(led, rk);
  EXPECT_EQ(Count(out, "SHORT"), 1u) << "only rank 1 is short";
  EXPECT_TRUE(std::regex_search(out, std::regex(R"(\d\.\d\d +-\d+\.\d\d  SHORT)"))) << out;
  // Identical ledger rows collapse; the odd rank keeps its own line.
  EXPECT_NE(out.find("\n  0,2,3     target"), std::string::npos) << out;
  EXPECT_NE(out.find("\n  1         target"), std::string::npos) << out;
  EXPECT_NE(out.find("<- failed first"), std::string::npos);
  EXPECT_NE(out.find("logs/run-1001/server.log:829 rank 1: [2026-"), std::string::npos) << out;
  EXPECT_NE(out.find("What it is NOT:\n  - custom_allreduce_buffers: allocates ~24 MiB"), std::string::npos);
  EXPECT_NE(out.find("Also try:\n  --tp-size 8\n      halves the weight shard"), std::string::npos) << out;
  // repro's plan code accepts this run: the command, and --dry-run for a box with no GPU.
  EXPECT_NE(out.find("tptriage repro logs/run-1001/server.log\n  tptriage repro logs/run-1001/server.log --dry-run\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("[warning] Custom all-reduce disabled"), std::string::npos);
  EXPECT_NE(out.find("process_crashed (consequence)"), std::string::npos);
}

TEST(TextReporter, FindingsAndReasonsAreWrappedWholeNeverCut) {
  Analysis a = testing::KvNoRoom({.seed = 1});
  std::string advice;
  for (int i = 0; i < 60; ++i) advice += "word" + std::to_string(i) + " ";
  advice += "THE-END";
  a.findings.front().advice = advice;
  a.diagnoses.front().ruled_out.front().reason = advice;
  std::string out = Render(Format::kText, One(a));
  EXPECT_EQ(Count(out, "THE-END"), 2u) << out;
  EXPECT_EQ(out.find("word59 THE-END..."), std::string::npos);
  std::istringstream lines(out);
  std::string line;
  int n = 0;
  while (std::getline(lines, line)) {
    if (line.find("word") != std::string::npos) {
      EXPECT_LE(line.size(), 100u) << line;
      ++n;
    }
  }
  EXPECT_GE(n, 6) << "wrapped over several lines";
}

TEST(TextReporter, RemediesThatAreNotFlagsAreLinesToCopy) {
  Analysis a = testing::NcclTimeout(3);
  Diagnosis& d = a.diagnoses.front();
  d.remedy = {{"TORCH_NCCL_DUMP_ON_TIMEOUT", "1", "set", "dump each rank's collectives", ""},
              {"dmesg", "", "set", "look for Xid errors", "dmesg -T | grep -i xid"},
              {"SOME_FLAG", "", "unset", "drop it", ""},
              {"BIOS ACS / IOMMU", "off", "set", "advice only", ""}};
  std::string out = Render(Format::kText, One(a));
  EXPECT_NE(out.find("\nFix: export TORCH_NCCL_DUMP_ON_TIMEOUT=1: dump"), std::string::npos) << out;
  EXPECT_NE(out.find("\n  dmesg -T | grep -i xid\n"), std::string::npos) << out;
  EXPECT_NE(out.find("\n  unset SOME_FLAG\n"), std::string::npos) << out;
  EXPECT_NE(out.find("  - BIOS ACS / IOMMU off: advice only"), std::string::npos) << out;
  EXPECT_EQ(out.find("(set)"), std::string::npos) << "advice in words, not the direction field";
  EXPECT_EQ(out.find("(set)\n"), std::string::npos) << out;
}

TEST(TextReporter, HangShowsPerRankTimelineAndMissingRanks) {
  Analysis a = testing::NcclTimeout(3);
  a.run.tp = 4;
  a.root_cause = "nccl_timeout_hang";
  const std::string file = a.run.inputs.front();
  for (int r : {0, 1, 3}) {
    RankState s;
    s.rank = r;
    s.phases = {"init", "dist_init"};
    s.last_phase = "dist_init";
    s.marks.push_back({100, false, "phase", "init", {file, 1, r, "start"}, {}});
    if (r != 3) {
      s.first_error = "watchdog_timeout";
      s.first_error_evidence = {file, static_cast<uint64_t>(700 + r), r, "Watchdog caught collective timeout"};
      s.marks.push_back({700, false, "timeout", "watchdog_timeout", s.first_error_evidence, {}});
    }
    s.last_evidence = {file, static_cast<uint64_t>(800 + r), r, "last words of rank " + std::to_string(r)};
    s.last_line_ts = 710;
    a.ranks.push_back(s);
  }
  a.ranks.erase(a.ranks.begin());  // the fixture's own rank
  std::string out = Render(Format::kText, One(a));
  EXPECT_EQ(out.find("Ranks and phases"), std::string::npos) << "a hang is about time, not phases";
  EXPECT_NE(out.find("Ranks: first error and last line"), std::string::npos) << out;
  EXPECT_NE(out.find("rank 0    error +600 s    watchdog_timeout"), std::string::npos) << out;
  EXPECT_NE(out.find("rank 3    no error"), std::string::npos) << out;
  EXPECT_NE(out.find("last words of rank 3"), std::string::npos) << out;
  EXPECT_NE(out.find("missing   rank 2:"), std::string::npos) << out;
  std::string md = Render(Format::kMarkdown, One(a));
  EXPECT_NE(md.find("**Missing:** rank 2 "), std::string::npos) << md;
  std::string html = Render(Format::kHtml, One(a));
  EXPECT_EQ(Count(html, "<g class=\"lane"), 4u) << "ranks 0-3, the missing one as an empty lane";
  EXPECT_EQ(Count(html, "<g class=\"lane missing\" data-rank=\"2\">"), 1u);
  EXPECT_NE(html.find(">600 s wait, then the timeout<"), std::string::npos) << "the watchdog wait is visible";
  EXPECT_NE(out.find("~ 600 s wait, then the timeout ~"), std::string::npos) << out;
}

// Flight-recorder dumps given: a hung group's lanes replace each rank's last
// record as prose, in every format, the log text in them neutralised, at most
// kMaxLaneRows rows shown (JSON has all).
TEST(TextReporter, CollectiveLanesShowEachRankAgainstTheStuckSeq) {
  Analysis a = testing::NcclTimeout(3);
  a.root_cause = "nccl_timeout_hang";
  CollectiveLanes l;
  l.pg = "0";
  l.pg_desc = "default_pg";
  l.seq = 4;
  l.op = "nccl:all_reduce";
  l.input_sizes = "[[4096]]";
  LaneRow waiting{"0-2, 4, 5, 7", 6, "waiting", 4, false, "nccl:all_reduce", "[[4096]]", "started",
                  "worker (m.py:44)", "", {"d/nccl_trace_rank_0", 4, 0, "record 3"}};
  LaneRow missing{"3, 6", 2, "missing", 3, false, "nccl:all_reduce", "[[4096]]", "completed",
                  "worker (m.py:34)", "load\x1b[31m_next | <script>@x (m.py:16)", {"d/nccl_trace_rank_3", 3, 3, "record 2"}};
  l.rows = {waiting, missing};
  for (int r = 8; r < 8 + 20; ++r) {  // more rows than are shown
    LaneRow odd = waiting;
    odd.ranks = std::to_string(r);
    odd.count = 1;
    odd.called_from = "f" + std::to_string(r) + " (m.py:1)";
    l.rows.push_back(odd);
  }
  a.collective_lanes = {l};
  std::string out = Render(Format::kText, One(a));
  EXPECT_NE(out.find("Lanes of process group 0 (default_pg), read against collective 4 (nccl:all_reduce [[4096]])"),
            std::string::npos) << out;
  EXPECT_NE(out.find("  0-2, 4, 5, 7  waits in it  seq 4 nccl:all_reduce [[4096]] started    called from worker (m.py:44)\n"),
            std::string::npos) << out;
  EXPECT_NE(out.find("  3, 6          MISSING      seq 3 nccl:all_reduce [[4096]] completed  stack: load [31m_next"),
            std::string::npos) << out;
  EXPECT_EQ(out.find('\x1b'), std::string::npos) << "no escape reaches the terminal";
  EXPECT_NE(out.find("... and " + std::to_string(22 - kMaxLaneRows) + " more rows (--format json has them all)"),
            std::string::npos) << out;
  EXPECT_EQ(out.find("Ranks: first error and last line"), std::string::npos) << "the lanes say where each rank stood";
  std::string md = Render(Format::kMarkdown, One(a));
  EXPECT_NE(md.find("| 3, 6 | **MISSING** | seq 3 nccl:all\\_reduce"), std::string::npos) << md;
  EXPECT_EQ(md.find("_next | <script>"), std::string::npos) << "a pipe in log text splits no cell, no markup passes";
  std::string html = Render(Format::kHtml, One(a));
  EXPECT_NE(html.find("<tr><td>3, 6</td><td><b>MISSING</b></td>"), std::string::npos);
  EXPECT_EQ(html.find("<script>@x"), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;"), std::string::npos);
  auto j = nlohmann::json::parse(Render(Format::kJson, One(a)));
  ASSERT_EQ(j["collective_lanes"].size(), 1u);
  EXPECT_EQ(j["collective_lanes"][0]["rows"].size(), 22u) << "JSON has every row";
  EXPECT_EQ(j["collective_lanes"][0]["rows"][1]["mark"], "missing");
  EXPECT_EQ(j.get<Analysis>().collective_lanes[0].rows[1].ranks, "3, 6") << "and reads back";
}

TEST(TextReporter, NeverLeadsWithARemedyItsFiguresRefute) {
  Analysis a = testing::KvNoRoom({.seed = 1});
  a.diagnoses.front().figures["mem_fraction_static"] = 0.95;  // "increase" to 0.93 would lower it
  std::string out = Render(Format::kText, One(a));
  EXPECT_EQ(out.find("Fix: --mem-fraction-static 0.93"), std::string::npos) << out;
  EXPECT_NE(out.find("\nFix: --tp-size 8"), std::string::npos) << out;
  std::string html = Render(Format::kHtml, One(a));
  EXPECT_EQ(html.find("with the fix (0.93)"), std::string::npos);
  a.diagnoses.front().remedy.pop_back();  // only the refuted one left
  out = Render(Format::kText, One(a));
  EXPECT_NE(out.find("\nFix: unknown: the remedy the rule computed contradicts"), std::string::npos) << out;
}

// A diagnosis without a remedy, and a run no rule explains, lead with a next step, never
// with "Fix:" (issue #31: "Fix" only for fixes), in every format that writes the line.
TEST(TextReporter, NoRemedyIsANextStepNotAFix) {
  Analysis a = testing::NcclTimeout(3);
  a.diagnoses.front().remedy.clear();
  std::string out = Render(Format::kText, One(a));
  EXPECT_EQ(out.find("\nFix:"), std::string::npos) << out;
  EXPECT_NE(out.find("\nNext step: read the evidence lines below: no remedy is known for this cause"), std::string::npos) << out;
  EXPECT_NE(Render(Format::kMarkdown, One(a)).find("**Next step:** read the evidence lines below"), std::string::npos);
  EXPECT_NE(Render(Format::kHtml, One(a)).find("<h3>Next step</h3><p>Read the evidence lines below"), std::string::npos);
  Analysis unknown = testing::NcclTimeout(3);
  unknown.root_cause = "unknown";
  unknown.diagnoses.clear();
  out = Render(Format::kText, One(unknown));
  EXPECT_EQ(out.find("\nFix:"), std::string::npos) << out;
  EXPECT_NE(out.find("\nNext step: read the lines below: no rule explains this failure"), std::string::npos) << out;
}

TEST(TextReporter, ReproOnlyWhenReproSupportsTheRun) {
  Analysis a = testing::KvNoRoom({.seed = 1});
  a.diagnoses.front().repro = {{"framework", "torch"}, {"tp", 4}};  // repro knows sglang and vllm only
  for (Format f : {Format::kText, Format::kMarkdown, Format::kHtml}) {
    std::string out = Render(f, One(a));
    EXPECT_EQ(out.find("tptriage repro"), std::string::npos) << out;
  }
}

// Rank-less lines beside ranks: a row named by what printed them ("launcher"
// only when a line says so, else "no rank"), its X where the ranks were when
// its first error came, not at init.
TEST(TextReporter, RanklessLinesShowByWhatPrintedThem) {
  Analysis a = testing::KvNoRoom({.seed = 1});
  RankState& r0 = a.ranks.front();
  ASSERT_GE(r0.rank, 0);
  const std::string file = a.run.inputs.at(0);
  r0.marks.push_back({0, false, "phase", "weights", {file, 10, r0.rank, "Load weight end."}, {}});
  Evidence after = r0.marks.back().evidence;
  RankState s;
  s.rank = -1;
  s.role = "launcher";
  s.phases = {"init"};
  s.last_phase = "init";
  s.first_error = "signal";
  s.first_error_evidence = {after.file, after.line + 1000, -1, "Killed"};
  s.marks.push_back({0, false, "error", "signal", s.first_error_evidence, {}});
  a.ranks.push_back(s);
  std::string out = Render(Format::kText, One(a));
  EXPECT_EQ(out.find("\n  launcher "), std::string::npos) << out;
  size_t row = out.find("\n  no rank   ");
  ASSERT_NE(row, std::string::npos) << out;
  std::string line = out.substr(row + 1, out.find('\n', row + 1) - row - 1);
  EXPECT_EQ(line.find("X         .         .         .         .         .         .         init"), std::string::npos)
      << line;
  EXPECT_NE(line.find("weights  signal"), std::string::npos) << line << "\n" << out;
  std::string html = Render(Format::kHtml, One(a));
  EXPECT_NE(html.find(">no rank</text>"), std::string::npos);
  EXPECT_EQ(html.find(">launcher</text>"), std::string::npos);
  // A line that says it is the launcher's (torchrun's elastic agent) is.
  a.ranks.back().marks.back().source = {"launcher", "lines of torchrun's elastic agent"};
  a.ranks.back().first_error_source = a.ranks.back().marks.back().source;
  EXPECT_NE(Render(Format::kText, One(a)).find("\n  launcher "), std::string::npos);
}

TEST(TextReporter, ControlBytesNeverReachTheTerminal) {
  std::string out = Render(Format::kText, One(testing::KvNoRoom({.seed = 1, .hostile_text = true})));
  EXPECT_EQ(out.find('\x1b'), std::string::npos);
  EXPECT_EQ(out.find("\xff"), std::string::npos);
  // C1 CSI (U+009B) and the line separator U+2028 are controls too.
  Analysis a = testing::KvNoRoom({.seed = 1});
  a.diagnoses[0].explanation = "csi\xC2\x9B" "2J ls\xE2\x80\xA8 end";
  a.verdict = a.diagnoses[0].explanation;  // the text report prints the verdict, once
  std::string c1 = Render(Format::kText, One(a));
  EXPECT_EQ(c1.find("\xC2\x9B"), std::string::npos);
  EXPECT_EQ(c1.find("\xE2\x80\xA8"), std::string::npos);
  EXPECT_NE(c1.find("csi 2J ls  end"), std::string::npos) << c1;
}

TEST(TextReporter, ManyRunsListsGroupsWithCounts) {
  std::string out = Render(Format::kText, Many());
  EXPECT_NE(out.find("6 runs: 3 diagnosed, 1 unexplained, 1 healthy, 1 unreadable; 3 distinct failures"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("x2  kv_pool_no_room"), std::string::npos);
  EXPECT_NE(out.find("runs: r1 r2"), std::string::npos);
  EXPECT_NE(out.find("error: r6/server.log: not a text log"), std::string::npos);
}

TEST(JsonReporter, OneRunIsTheAnalysisAndRoundTrips) {
  Analysis a = testing::KvNoRoom({.seed = 2});
  std::string out = Render(Format::kJson, One(a));
  auto j = nlohmann::json::parse(out);
  EXPECT_EQ(j["schema_version"], 1);
  EXPECT_EQ(j["root_cause"], "kv_pool_no_room");
  EXPECT_EQ(j["signature"].get<std::string>().size(), 12u);
  Analysis back = j.get<Analysis>();
  EXPECT_EQ(back.ledger.size(), a.ledger.size());
  EXPECT_EQ(back.diagnoses[0].remedy[0].value, "0.93");
}

TEST(JsonReporter, ManyRunsHaveRunsAndGroupsAndSurviveBadUtf8) {
  auto j = nlohmann::json::parse(Render(Format::kJson, Many()));
  EXPECT_EQ(j["schema_version"], 1);
  EXPECT_EQ(j["runs"].size(), 6u);
  EXPECT_EQ(j["summary"]["exit_code"], kExitUsage);
  ASSERT_EQ(j["groups"].size(), 3u);
  EXPECT_EQ(j["groups"][0]["count"], 2);
  EXPECT_EQ(j["groups"][0]["runs"], nlohmann::json({"r1", "r2"}));
  EXPECT_EQ(j["runs"][5]["error"].get<std::string>().substr(0, 3), "r6/");
}

TEST(MarkdownReporter, TablesAndEscapedCells) {
  Analysis a = testing::KvNoRoom({.seed = 1});
  a.verdict = "pipe | and <b>tag</b>";
  std::string out = Render(Format::kMarkdown, One(a));
  EXPECT_NE(out.find("**pipe \\| and &lt;b&gt;tag&lt;/b&gt;**"), std::string::npos) << out;
  EXPECT_NE(out.find("| ranks | role | free at init | weights | reserved | KV pool | graphs | left |"), std::string::npos);
  EXPECT_NE(out.find("(short)"), std::string::npos);
  EXPECT_NE(out.find("**Fix:** `--mem-fraction-static 0.93`"), std::string::npos) << out;
  // The answer leads: the fix comes before the evidence and the ledger.
  EXPECT_LT(out.find("**Fix:**"), out.find("Evidence"));
  EXPECT_LT(out.find("Evidence"), out.find("| ranks | role"));
  std::string many = Render(Format::kMarkdown, Many());
  EXPECT_NE(many.find("## tptriage: 6 runs, 3 distinct failures"), std::string::npos);
  EXPECT_NE(many.find("| 2 | `kv_pool_no_room` |"), std::string::npos) << many;
}

TEST(JunitReporter, OneTestcasePerRunFailureIsDiagnosis) {
  std::string out = Render(Format::kJunit, Many());
  EXPECT_EQ(Count(out, "<testcase "), 6u);
  EXPECT_EQ(Count(out, "<failure "), 4u);
  EXPECT_EQ(Count(out, "<error "), 1u);
  EXPECT_NE(out.find("failures=\"4\" errors=\"1\""), std::string::npos);
  EXPECT_NE(out.find("<failure type=\"kv_pool_no_room\" message=\"After 62.30 GiB of weights"), std::string::npos);
  EXPECT_EQ(out.find("<script>"), std::string::npos);
  EXPECT_EQ(out.find('\x1b'), std::string::npos);
}

TEST(JunitReporter, ValidAgainstJunitXsd) {
  if (Shell("command -v xmllint >/dev/null 2>&1") != 0) GTEST_SKIP() << "xmllint (libxml2-utils) not installed";
  std::string path = TempFile("junit.xml", Render(Format::kJunit, Many()));
  std::string schema = std::string(TPT_SOURCE_DIR) + "/tests/schemas/junit-10.xsd";
  EXPECT_EQ(Shell("xmllint --noout --schema '" + schema + "' '" + path + "'"), 0);
  // The check can fail: a testcase without its required name is rejected.
  std::string broken = TempFile("broken.xml", "<testsuites><testsuite name=\"x\" tests=\"1\" failures=\"0\" "
                                              "errors=\"0\"><testcase/></testsuite></testsuites>");
  EXPECT_NE(Shell("xmllint --noout --schema '" + schema + "' '" + broken + "' 2>/dev/null"), 0);
}

TEST(SarifReporter, OneResultPerDiagnosisWithLogLocations) {
  auto j = nlohmann::json::parse(Render(Format::kSarif, One(testing::KvNoRoom({.seed = 1}))));
  EXPECT_EQ(j["version"], "2.1.0");
  const auto& run = j["runs"][0];
  ASSERT_EQ(run["results"].size(), 3u);  // primary, consequence, finding
  const auto& r0 = run["results"][0];
  EXPECT_EQ(r0["ruleId"], "kv_pool_no_room");
  EXPECT_EQ(r0["level"], "error");
  EXPECT_EQ(r0["locations"][0]["physicalLocation"]["artifactLocation"]["uri"], "logs/run-1001/server.log");
  EXPECT_EQ(r0["locations"][0]["physicalLocation"]["region"]["startLine"], 829);
  EXPECT_EQ(r0["partialFingerprints"]["tptriageSignature/v1"].get<std::string>().size(), 12u);
  EXPECT_EQ(run["results"][1]["level"], "warning");
  EXPECT_EQ(run["results"][2]["ruleId"], "custom_ar_pcie");
  EXPECT_EQ(run["tool"]["driver"]["rules"][r0["ruleIndex"].get<int>()]["id"], "kv_pool_no_room");
}

TEST(SarifReporter, ValidAgainstSarif210Schema) {
  std::string validator = std::string(TPT_SOURCE_DIR) + "/tests/schemas/validate_json.py";
  std::string schema = std::string(TPT_SOURCE_DIR) + "/tests/schemas/sarif-schema-2.1.0.json";
  std::string path = TempFile("report.sarif", Render(Format::kSarif, Many()));
  int rc = Shell("python3 '" + validator + "' '" + schema + "' '" + path + "'");
  if (rc == 77) GTEST_SKIP() << "python3-jsonschema not installed";
  EXPECT_EQ(rc, 0);
  // And the check can fail: a result with a non-SARIF level is rejected.
  auto j = nlohmann::json::parse(Render(Format::kSarif, Many()));
  j["runs"][0]["results"][0]["level"] = "fatal";
  std::string broken = TempFile("broken.sarif", j.dump());
  EXPECT_EQ(Shell("python3 '" + validator + "' '" + schema + "' '" + broken + "' 2>/dev/null"), 1);
}

TEST(GithubReporter, EscapesDataAndProperties) {
  EXPECT_EQ(GithubEscapeData("50% done\r\nnext"), "50%25 done%0D%0Anext");
  EXPECT_EQ(GithubEscapeProperty("a:b,c%d\n"), "a%3Ab%2Cc%25d%0A");
  std::string out = Render(Format::kGithub, One(testing::KvNoRoom({.seed = 1})));
  EXPECT_EQ(out.rfind("::error file=logs/run-1001/server.log,line=829,title=tptriage%3A kv_pool_no_room::[run-a] After", 0),
            0u)
      << out;
  // One rendering of a remedy in every format: its label, the line to copy, why.
  EXPECT_NE(out.find("%0AFix: --mem-fraction-static 0.93: "), std::string::npos) << out;
  EXPECT_NE(out.find("::warning file=logs/run-1001/server.log,line=120,title=tptriage finding%3A custom_ar_pcie::"),
            std::string::npos);
  // Every workflow command is one line.
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    EXPECT_TRUE(line.starts_with("::") || line.starts_with("tptriage: ")) << line;
  }
}

TEST(GithubReporter, StaysWithinTenErrorsAndSummarisesTheRest) {
  std::vector<RunResult> runs;
  for (int i = 0; i < 15; ++i) {
    Analysis a = testing::Unexplained(i);
    // Distinct messages make 15 distinct groups.
    a.ranks[0].first_error_evidence.text = "distinct failure kind " + std::string(1, static_cast<char>('a' + i));
    runs.push_back(AsRun("run" + std::to_string(i), a));
  }
  std::string out = Render(Format::kGithub, MakeReport(std::move(runs), true, ""));
  EXPECT_EQ(Count(out, "::error "), static_cast<size_t>(kGithubMaxErrors));
  EXPECT_EQ(Count(out, "::notice "), 1u);
  EXPECT_NE(out.find("5 more error(s) and 0 more warning(s)"), std::string::npos) << out;
}

TEST(GithubReporter, OneErrorPerGroupWithCount) {
  std::string out = Render(Format::kGithub, Many());
  EXPECT_EQ(Count(out, "::error "), 4u);  // 3 groups + the unreadable run
  EXPECT_NE(out.find("title=tptriage%3A kv_pool_no_room (2 runs)::"), std::string::npos) << out;
}

TEST(HtmlReporter, HostileLogTextIsEscaped) {
  std::string out = Render(Format::kHtml, One(testing::KvNoRoom({.seed = 1, .hostile_text = true})));
  EXPECT_NE(out.find("&lt;script&gt;document.documentElement.setAttribute(&#39;data-pwned&#39;"), std::string::npos);
  EXPECT_EQ(out.find("<script>document"), std::string::npos);
  EXPECT_EQ(Count(out, "<script"), 1u) << "only the page's own script";
  EXPECT_EQ(out.find('\x1b'), std::string::npos);
  EXPECT_NE(out.find("default-src 'none'"), std::string::npos);
}

TEST(HtmlReporter, FixBesideVerdictLedgerWithTheFixTimeAxisAndGroups) {
  std::string one = Render(Format::kHtml, One(testing::KvNoRoom({.seed = 1})));
  // The fix call-out sits in the answer block, before every chart.
  size_t fix = one.find("<aside class=\"fix\">");
  ASSERT_NE(fix, std::string::npos);
  EXPECT_LT(one.find("<div class=\"answer\">"), fix);
  EXPECT_LT(fix, one.find("<svg class=\"ledger\""));
  // The flag is kept on one line (a browser breaks after any hyphen otherwise).
  EXPECT_NE(one.find("<pre class=\"copy\"><span class=\"nw\">--mem-fraction-static</span> 0.93</pre>"),
            std::string::npos);
  EXPECT_EQ(Count(one, "<svg class=\"ledger\""), 1u);
  EXPECT_EQ(Count(one, "<svg class=\"timeline\""), 1u);
  // The card's total drawn, the failing rank highlighted, and its bar with the fix.
  EXPECT_EQ(Count(one, "<line class=\"card\""), 1u);
  EXPECT_EQ(Count(one, "<rect class=\"hot\""), 1u);
  EXPECT_NE(one.find(">rank 1 as logged</text>"), std::string::npos) << one;
  EXPECT_EQ(Count(one, ">with the fix (0.93)</text>"), 1u);
  EXPECT_EQ(Count(one, "class=\"shortfall\""), 1u) << "the fixed bar has no shortfall";
  EXPECT_EQ(Count(one, "<g class=\"lane"), 4u);
  EXPECT_NE(one.find("failed first"), std::string::npos);
  std::string many = Render(Format::kHtml, Many());
  EXPECT_NE(many.find("<table class=\"groups\">"), std::string::npos);
  // Details on demand: one folded section a group, plus the unreadable run; the
  // healthy run is only a row of the runs table.
  EXPECT_EQ(Count(many, "<section class=\"run\""), 4u);
  EXPECT_EQ(Count(many, "<details class=\"group\""), 4u);
  EXPECT_NE(many.find("<summary>All 6 runs</summary>"), std::string::npos);
  EXPECT_EQ(many.find("http://") == std::string::npos || many.find("src=\"http") == std::string::npos, true);
}

TEST(HtmlReporter, NoLedgerChartWhereMemoryDoesNotExplainTheFailure) {
  Analysis a = testing::NcclTimeout(3);
  a.root_cause = "nccl_timeout_hang";
  LedgerRow row;
  row.rank = 0;
  row.free_at_init_bytes = 70.0 * (1 << 30);
  row.weights_bytes = 30.0 * (1 << 30);
  row.left_bytes = 40.0 * (1 << 30);
  a.ledger.push_back(row);
  std::string html = Render(Format::kHtml, One(a));
  EXPECT_EQ(html.find("<svg class=\"ledger\""), std::string::npos);
  EXPECT_NE(html.find("<svg class=\"timeline\""), std::string::npos);
}

// A healthy run's ledger adds up to the logged figures' rounding: free 78.50,
// weights 32.87, ... leave -5.1 MiB, which is "nothing left", not a shortfall.
TEST(Reporters, LeftWithinRoundingReadsZeroNotMinusMiB) {
  Analysis a = testing::KvNoRoom({.seed = 1});
  a.root_cause = "none";
  a.diagnoses.clear();
  a.ledger.clear();
  LedgerRow row;
  row.rank = 0;
  row.free_at_init_bytes = 78.5 * (1 << 30);
  row.weights_bytes = 32.87 * (1 << 30);
  row.reserved_bytes = 11.78 * (1 << 30);
  row.kv_pool_bytes = 33.86 * (1 << 30);
  row.graphs_bytes = 1.0 * (1 << 30);
  row.left_bytes = -5368709;  // -5.1 MiB
  a.ledger.push_back(row);
  for (Format f : {Format::kHtml, Format::kMarkdown}) {
    std::string out = Render(f, One(a));
    EXPECT_EQ(out.find("-5.1 MiB"), std::string::npos) << out;
    EXPECT_NE(out.find("0 GiB"), std::string::npos) << out;
  }
  a.ledger[0].left_bytes = -0.3 * (1 << 30);  // beyond rounding: a real shortfall keeps its figure
  EXPECT_NE(Render(Format::kMarkdown, One(a)).find("-307.2 MiB"), std::string::npos);
}

// ---- Hostile log text in every format ----

// U+FFFE/U+FFFF are valid UTF-8 but not XML 1.0 characters.
TEST(JunitReporter, NoCharacterXmlForbids) {
  Analysis a = testing::KvNoRoom({.seed = 1});
  a.diagnoses[0].explanation = "X\xEF\xBF\xBEY\xEF\xBF\xBFZ \x01\x7F end";
  a.diagnoses[0].evidence[0].text = "calloc \xEF\xBF\xBE bytes";
  std::string xml = Render(Format::kJunit, One(a));
  EXPECT_EQ(xml.find("\xEF\xBF\xBE"), std::string::npos);
  EXPECT_EQ(xml.find("\xEF\xBF\xBF"), std::string::npos);
  EXPECT_NE(xml.find("X\xEF\xBF\xBDY\xEF\xBF\xBDZ"), std::string::npos);  // U+FFFD in their place
  EXPECT_NE(XmlEscape("\xEF\xBF\xBD ok").find("\xEF\xBF\xBD ok"), std::string::npos);  // U+FFFD itself stays
  if (Shell("command -v xmllint >/dev/null 2>&1") != 0) GTEST_SKIP() << "xmllint not installed";
  EXPECT_EQ(Shell("xmllint --noout '" + TempFile("ffff.xml", xml) + "'"), 0);
}

// github annotations carried raw C0 controls, DEL and U+2028/2029.
TEST(GithubReporter, NoRawControlCharacters) {
  Analysis a = testing::KvNoRoom({.seed = 1});
  a.diagnoses[0].explanation = "bell\x07 bs\x08 vt\x0b ff\x0c del\x7f ls\xE2\x80\xA8 ps\xE2\x80\xA9 nel\xC2\x85 end";
  std::string out = Render(Format::kGithub, One(a));
  for (char c : out) {
    unsigned char u = static_cast<unsigned char>(c);
    EXPECT_FALSE((u < 0x20 && c != '\n') || u == 0x7F) << "control byte " << int(u);
  }
  EXPECT_EQ(out.find("\xE2\x80\xA8"), std::string::npos);
  EXPECT_EQ(out.find("\xE2\x80\xA9"), std::string::npos);
  EXPECT_EQ(out.find("\xC2\x85"), std::string::npos);
  EXPECT_NE(out.find("bell  bs  vt  ff  del  ls  ps  nel  end"), std::string::npos) << out;
}

// HTML tooltips said "rank -1" where every other format says "?".
TEST(HtmlReporter, RanklessRowsNeverSayRankMinusOne) {
  Analysis a = testing::KvNoRoom({.seed = 1});
  a.ledger[0].rank = -1;
  a.ranks[0].rank = -1;
  std::string html = Render(Format::kHtml, One(a));
  EXPECT_EQ(html.find("rank -1"), std::string::npos);
  EXPECT_NE(html.find("rank ? "), std::string::npos);
}

// SARIF URIs normalised, relative ones against %SRCROOT%.
TEST(SarifReporter, UrisAreNormalisedWithABase) {
  Analysis a = testing::KvNoRoom({.seed = 1});
  a.diagnoses[0].evidence[0].file = "logs/./run/../server.log";
  a.diagnoses[0].evidence.push_back(a.diagnoses[0].evidence[0]);
  a.diagnoses[0].evidence[1].file = "../outside/rank1.log";
  auto j = nlohmann::json::parse(Render(Format::kSarif, One(a)));
  const auto& locs = j["runs"][0]["results"][0]["locations"];
  EXPECT_EQ(locs[0]["physicalLocation"]["artifactLocation"]["uri"], "logs/server.log");
  EXPECT_EQ(locs[0]["physicalLocation"]["artifactLocation"]["uriBaseId"], "%SRCROOT%");
  std::string abs = locs[1]["physicalLocation"]["artifactLocation"]["uri"];
  EXPECT_EQ(abs.rfind("file:///", 0), 0u) << abs;
  EXPECT_EQ(abs.find(".."), std::string::npos) << abs;
  EXPECT_FALSE(locs[1]["physicalLocation"]["artifactLocation"].contains("uriBaseId"));
}

// '|' in a table's code span cut the cell; mentions, refs and URLs from
// log text stayed live in a PR comment.
TEST(MarkdownReporter, PipesInTableCodeSpansAndNoLiveMentions) {
  Report r = Many();
  ASSERT_FALSE(r.groups.empty());
  r.groups[0].message = "calloc `a|b` c|d <n>";
  r.runs[0].analysis.diagnoses[0].explanation = "ping @octocat and @github/security about #1, see https://evil.example/x or www.evil.example; it's <b>";
  r.runs[0].analysis.verdict = r.runs[0].analysis.diagnoses[0].explanation;  // what markdown prints
  std::string md = Render(Format::kMarkdown, r);
  std::istringstream lines(md);
  std::string line, row;
  while (std::getline(lines, line)) {
    if (line.find("calloc") != std::string::npos && line.rfind("| `", 0) == 0) row = line;
  }
  ASSERT_FALSE(row.empty()) << md;
  // Every '|' inside the row's cells is escaped: the row has exactly the 6 cell separators.
  size_t bars = 0;
  for (size_t i = 0; i < row.size(); ++i) bars += row[i] == '|' && (i == 0 || row[i - 1] != '\\');
  EXPECT_EQ(bars, 6u) << row;
  EXPECT_NE(row.find("a\\|b"), std::string::npos) << row;
  for (const char* live : {"@octocat", "@github", "#1", "https://", "www.evil"}) {
    EXPECT_EQ(md.find(live), std::string::npos) << live;
  }
  EXPECT_NE(md.find("it&#39;s"), std::string::npos);  // entities kept whole
}

// warnings about inputs read only in part reached only text and JSON.
TEST(Reporters, EveryFormatCarriesInputWarnings) {
  const std::string w = "r1/cut.log.gz: the gzip stream is truncated (ends mid-member)";
  Report many = Many();
  many.runs[0].analysis.warnings.push_back(w);
  std::vector<RunResult> one_runs;
  Analysis healthy = testing::Healthy();
  healthy.warnings.push_back(w);
  one_runs.push_back(AsRun("run-a", healthy));
  Report one = MakeReport(std::move(one_runs), false, "0.1.0");
  for (Format f : {Format::kText, Format::kJson, Format::kMarkdown, Format::kJunit, Format::kSarif, Format::kGithub,
                   Format::kHtml}) {
    EXPECT_NE(Render(f, many).find("the gzip stream is truncated"), std::string::npos) << FormatName(f) << " --runs";
    EXPECT_NE(Render(f, one).find("the gzip stream is truncated"), std::string::npos) << FormatName(f);
  }
}

}  // namespace
}  // namespace tpt::report
