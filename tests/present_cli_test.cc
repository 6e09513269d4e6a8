// present_cli_test.cc: the built binary on the bundled samples: every report
// leads with the answer (verdict, fix, confidence) in text, markdown and HTML;
// no internal reference name reaches any output; `tptriage log` merges a run's
// lines by time, tagged by rank, with -C context, --kinds and --rank filters.
#include <sys/resource.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/cli_run.h"

namespace {

namespace fs = std::filesystem;

tpt::test::CmdResult Tpt(const std::string& args) {
  return tpt::test::RunCmd(std::string("'") + TPTRIAGE_BIN + "' " + args);
}

std::string Sample(const std::string& rel) { return std::string(TPT_SOURCE_DIR) + "/samples/" + rel; }

// The hand-written samples of each framework and the founding case.
std::vector<std::string> BundledSamples() {
  std::vector<std::string> out;
  for (const char* dir : {"logs", "founding"}) {
    for (const auto& e : fs::directory_iterator(Sample(dir))) {
      if (e.is_regular_file() && e.path().extension() == ".log") out.push_back(e.path().string());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> Lines(const std::string& s) {
  std::vector<std::string> v;
  std::istringstream in(s);
  std::string line;
  while (std::getline(in, line)) v.push_back(line);
  return v;
}

TEST(AnswerFirst, EverySampleLeadsWithVerdictFixConfidence) {
  for (const std::string& log : BundledSamples()) {
    SCOPED_TRACE(log);
    auto text = Tpt("analyze '" + log + "'");
    ASSERT_FALSE(text.out.empty());
    auto lines = Lines(text.out);
    EXPECT_EQ(lines[0].rfind("Verdict: ", 0), 0u) << text.out;
    if (text.rc == 1) {  // diagnosed: the fix and the confidence next
      ASSERT_GE(lines.size(), 3u);
      // "Fix:" for a change that fixes; "Next step:" for one that gathers what
      // would settle it (changes nothing); "Action:" for the operator's action.
      EXPECT_TRUE(lines[1].rfind("Fix: ", 0) == 0 || lines[1].rfind("Next step: ", 0) == 0 ||
                  lines[1].rfind("Action: ", 0) == 0)
          << text.out;
      EXPECT_EQ(lines[2].rfind("Confidence: ", 0), 0u) << text.out;
      // The verdict once: its sentence is not repeated as a "root cause".
      EXPECT_EQ(text.out.find("Root cause ["), std::string::npos);
      EXPECT_EQ(text.out.find(" (set): "), std::string::npos) << "remedies are lines to copy, not 'X (set)'";
      auto md = Tpt("analyze '" + log + "' --format markdown");
      EXPECT_EQ(md.out.find("(set)"), std::string::npos) << "remedies in words, not 'X (set)'";
      size_t fix = md.out.find(std::string("**") + lines[1].substr(0, lines[1].find(':')) + ":**");
      ASSERT_NE(fix, std::string::npos) << md.out;
      size_t ev = md.out.find("<summary>Evidence</summary>");
      if (ev != std::string::npos) {
        EXPECT_LT(fix, ev);
      }
      auto html = Tpt("analyze '" + log + "' --format html");
      EXPECT_EQ(html.out.find("(set)"), std::string::npos);
      size_t aside = html.out.find("<aside class=\"fix");
      ASSERT_NE(aside, std::string::npos);
      EXPECT_LT(aside, html.out.find("<h3>"));
    }
  }
}

TEST(AnswerFirst, FoundingCaseCollapsesIdenticalRanksAndOffersReproWithDryRun) {
  auto r = Tpt("analyze '" + Sample("founding/sglang-tp8-rtxpro6000-mfs050.log") + "'");
  EXPECT_EQ(r.rc, 1);
  auto lines = Lines(r.out);
  EXPECT_EQ(lines[1].rfind("Fix: --mem-fraction-static 0.", 0), 0u) << r.out;
  EXPECT_NE(lines[1].find("(now 0.50, floor 0.77)"), std::string::npos) << r.out;
  EXPECT_TRUE(std::regex_search(r.out, std::regex("\n  0-7 +target +94\\.00"))) << r.out;
  EXPECT_NE(r.out.find("tptriage repro"), std::string::npos);
  EXPECT_NE(r.out.find("--dry-run\n"), std::string::npos) << r.out;
  // Findings whole: the custom all-reduce finding's last sentence is there.
  EXPECT_NE(r.out.find("tptriage repro --bench-allreduce --tp 8"), std::string::npos) << r.out;
}

// The fix's effect comes from the memory model on the run's own figures, as
// fields (JSON "fix") and on the text's second line.
TEST(AnswerFirst, FixCarriesItsEffectAndFloor) {
  auto j = nlohmann::json::parse(
      Tpt("analyze '" + Sample("founding/sglang-tp8-rtxpro6000-mfs050.log") + "' --format json").out);
  const auto& fix = j.at("fix");
  // The value that serves: SGLang's own headroom (14.5 GiB a rank at TP 8, prefill
  // chunk 8192, 512 graphs) out of 94 GiB free: 0.84, a pool of 21.7 - 0.16 x 94 =
  // 6.66 GiB a rank. The floor 0.77 only starts the server: 21.7 - 0.23 x 94 = 81.9 MiB.
  EXPECT_EQ(fix.at("line"), "--mem-fraction-static 0.84");
  EXPECT_EQ(fix.at("now"), "0.50");
  EXPECT_EQ(fix.at("floor").at("value"), "0.77") << "0.77 is the smallest fraction that starts";
  double pool = fix.at("effect").at("kv_pool_bytes").get<double>();
  EXPECT_NEAR(pool / (1024.0 * 1024 * 1024), 21.7 - 0.16 * 94.0, 0.01);
  double floor_pool = fix.at("floor").at("effect").at("kv_pool_bytes").get<double>();
  EXPECT_GT(floor_pool, 0.0);
  EXPECT_LT(floor_pool, 0.1 * 1024 * 1024 * 1024);
  EXPECT_TRUE(fix.at("effect").at("kv_tokens").is_null()) << "no bytes per token in this log: unknown, not 0";
  auto text = Lines(Tpt("analyze '" + Sample("founding/sglang-tp8-rtxpro6000-mfs050.log") + "'").out);
  EXPECT_EQ(text[1].rfind("Fix: --mem-fraction-static 0.84 (now 0.50, floor 0.77) gives KV pool 6.66 GiB a rank", 0), 0u)
      << text[1];
  EXPECT_NE(text[1].find("the floor gives KV pool 81.9 MiB a rank"), std::string::npos) << text[1];
  EXPECT_NE(text[1].find("each +0.01 adds 0.94 GiB a rank"), std::string::npos) << text[1];

  auto v = nlohmann::json::parse(
      Tpt("analyze '" + Sample("logs/vllm-v1-tp2-kv-too-small.log") + "' --format json").out);
  const auto& vf = v.at("fix");
  EXPECT_EQ(vf.at("line"), "--max-model-len 60944");
  EXPECT_EQ(vf.at("now"), "131072");
  EXPECT_EQ(vf.at("effect").at("kv_tokens"), 60944);
  EXPECT_EQ(vf.at("effect").at("requests"), 1);
  auto vt = Lines(Tpt("analyze '" + Sample("logs/vllm-v1-tp2-kv-too-small.log") + "'").out);
  EXPECT_NE(vt[1].find("60,944 tokens = 1 request of 60,944 tokens"), std::string::npos) << vt[1];

  // An upgrade is advice, not a variable to export.
  auto up = Tpt("analyze '" + Sample("rules/custom_ar_nccl_2_18_ipc/pos_ray_worker.log") + "'");
  EXPECT_EQ(up.out.find("export NCCL="), std::string::npos) << up.out;
  EXPECT_NE(up.out.find("Fix: NCCL >= 2.19.3"), std::string::npos) << up.out;
}

TEST(AnswerFirst, HangShowsRanksInTimeNotPhasesAndNoRepro) {
  auto r = Tpt("analyze '" + Sample("logs/nccl-warn-hang-tp4.log") + "'");
  EXPECT_EQ(r.out.find("Ranks and phases"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Ranks: first error and last line"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("watchdog_timeout"), std::string::npos);
  // A debug variable fixes nothing: it is the next step, never the "Fix".
  EXPECT_NE(r.out.find("\nNext step: export TORCH_NCCL_DUMP_ON_TIMEOUT=1"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("\nFix: export TORCH_NCCL_DUMP_ON_TIMEOUT"), std::string::npos) << r.out;
  // A GPU that fell off the bus: the operator's action with its bus id, not nvidia-smi -q.
  auto xid = Tpt("analyze '" + Sample("logs/xid-79-fallen-off-bus.log") + "'");
  EXPECT_NE(xid.out.find("\nAction: nvidia-smi -r -i 0000:81:00: the GPU at 0000:81:00 fell off the bus"), std::string::npos)
      << xid.out;
  EXPECT_EQ(xid.out.find("nvidia-smi -q"), std::string::npos) << xid.out;
  auto xj = nlohmann::json::parse(Tpt("analyze '" + Sample("logs/xid-79-fallen-off-bus.log") + "' --format json").out);
  EXPECT_EQ(xj["fix"]["label"], "Action");
  EXPECT_EQ(xj["diagnoses"][0]["remedy"][0]["kind"], "action");
  // Charts only where memory explains the failure: a hang has no ledger.
  auto html = Tpt("analyze '" + Sample("logs/nccl-warn-hang-tp4.log") + "' --format html");
  EXPECT_EQ(html.out.find("<svg class=\"ledger\""), std::string::npos);
  EXPECT_NE(html.out.find("<svg class=\"timeline\""), std::string::npos);
  auto founding = Tpt("analyze '" + Sample("founding/sglang-tp8-rtxpro6000-mfs050.log") + "' --format html");
  EXPECT_NE(founding.out.find("<svg class=\"ledger\""), std::string::npos);
  EXPECT_NE(founding.out.find(">with the fix (0.84)</text>"), std::string::npos);
  EXPECT_NE(founding.out.find("<rect class=\"hot\""), std::string::npos) << "the failing rank highlighted";
  EXPECT_NE(founding.out.find("card-unknown"), std::string::npos) << "no total in this log: said, not drawn";
  // Unknown figures do not break the scale: vLLM's weights and KV pool both
  // fit the 620 px chart when the log printed no free memory at init.
  auto v = Tpt("analyze '" + Sample("logs/vllm-v1-tp2-kv-too-small.log") + "' --format html");
  std::smatch seg;
  ASSERT_TRUE(std::regex_search(v.out, seg, std::regex(R"re(<rect class="seg" x="130.0" y="[0-9.]+" width="([0-9.]+)")re")));
  EXPECT_LT(std::stod(seg.str(1)), 620.0) << "the weights bar ran off the chart";
  EXPECT_NE(v.out.find("KV pool: 3.72 GiB"), std::string::npos) << "the pool drawn";
  // repro replays SGLang/vLLM memory set-ups; a torch NCCL hang is not one.
  EXPECT_EQ(r.out.find("tptriage repro"), std::string::npos) << r.out;
}

// A hang whose lines carry no times: the ranks still come in the order the
// log holds their errors, and a rank with no line is named (text) and drawn
// as an empty lane (HTML). With times, the watchdog's wait is drawn.
TEST(AnswerFirst, HangWithoutTimesKeepsOrderAndNamesMissingRanks) {
  std::string dir = ::testing::TempDir();
  std::string untimed = dir + "/hang-untimed.log", missing = dir + "/hang-missing.log";
  std::string src = Sample("logs/nccl-warn-hang-tp4.log");
  // Strip the date prefix and glog's time (E304 02:27:08.408271257 -> E).
  ASSERT_EQ(tpt::test::RunCmd("sed -E 's/^\\[2026-03-04 [0-9:]+\\] //; s/\\[E304 [0-9:.]+ /[E /' '" + src +
                              "' > '" + untimed + "' && grep -v '\\[2\\]' '" + untimed + "' > '" + missing + "'")
                .rc,
            0);
  auto r = Tpt("analyze '" + untimed + "'");
  EXPECT_NE(r.out.find("in the order they failed (the log prints no times: in the order of its lines)"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find(" s    "), std::string::npos) << "no invented times";
  size_t r2 = r.out.find("1. rank 2 "), r0 = r.out.find("2. rank 0 ");
  EXPECT_NE(r2, std::string::npos) << r.out;
  EXPECT_NE(r0, std::string::npos) << r.out;
  auto m = Tpt("analyze '" + missing + "'");
  EXPECT_NE(m.out.find("missing   rank 2: no line of it in the log"), std::string::npos) << m.out;
  EXPECT_NE(m.out.find("rank 2 blamed (no line of it in the log)"), std::string::npos) << m.out;
  // The verdict does not promise a quote of a rank that printed nothing.
  EXPECT_EQ(m.out.find("quoted below"), std::string::npos) << m.out;
  EXPECT_NE(m.out.find("rank 2 logged no timeout and printed nothing at all in this log"), std::string::npos)
      << m.out;
  EXPECT_FALSE(std::regex_search(m.out, std::regex("\\.log:[0-9]+ rank 2: "))) << "no evidence line of rank 2 is quoted";
  EXPECT_NE(r.out.find("its last line is quoted below"), std::string::npos) << "rank 2 printed lines here" << r.out;
  EXPECT_EQ(m.out.find("failed first"), std::string::npos) << "a rank that merely timed out is not the one to blame";
  auto h = Tpt("analyze '" + missing + "' --format html");
  EXPECT_NE(h.out.find("<g class=\"lane missing\" data-rank=\"2\">"), std::string::npos);
  EXPECT_NE(h.out.find("placed in the order the log holds them"), std::string::npos);
  // With times: the 600 s watchdog wait is drawn and named, in HTML and text.
  auto timed = Tpt("analyze '" + src + "' --format html");
  EXPECT_NE(timed.out.find("<g class=\"wait\">"), std::string::npos);
  EXPECT_TRUE(std::regex_search(timed.out, std::regex(">59[89] s wait, then the timeout<"))) << "the 600 s wait";
  auto tt = Tpt("analyze '" + src + "'");
  EXPECT_TRUE(std::regex_search(tt.out, std::regex("1\\. rank 2 .*\n(.*\n)*.*~ 59[89] s wait, then the timeout ~\n  2\\. rank 0")))
      << tt.out;
}

TEST(AnswerFirst, NoInternalReferenceNamesInAnyOutput) {
  // Our notes and their sections, our issue numbers, heuristics named by PR.
  const std::regex internal(
      R"(anchors-[a-z]|founding box|knowledge/|post-#[0-9]|sglang-source\.md|vllm-source\.md|§ ?[0-9]|\b[Ii]ssue [0-9]+\b)");
  std::vector<std::string> logs = BundledSamples();
  for (const auto& e : fs::recursive_directory_iterator(Sample("findings"))) {
    if (e.is_regular_file() && e.path().extension() == ".log") logs.push_back(e.path().string());
  }
  for (const auto& e : fs::recursive_directory_iterator(Sample("rules"))) {
    if (e.is_regular_file() && e.path().extension() == ".log") logs.push_back(e.path().string());
  }
  // JSON holds every sentence the rules wrote; the other formats add the
  // report's own words, checked on the bundled samples.
  std::vector<std::string> bundled = BundledSamples();
  for (const std::string& log : logs) {
    bool all = std::find(bundled.begin(), bundled.end(), log) != bundled.end();
    for (const char* fmt : {"json", "text", "markdown", "html", "junit", "sarif", "github"}) {
      if (!all && std::string(fmt) != "json") continue;
      auto r = Tpt("analyze '" + log + "' --format " + fmt);
      std::smatch m;
      EXPECT_FALSE(std::regex_search(r.out, m, internal)) << log << " (" << fmt << "): " << m.str(0);
    }
  }
  auto runs = Tpt("analyze --runs '" + Sample("runs/ci") + "' --format html");
  EXPECT_FALSE(std::regex_search(runs.out, internal));
  for (const char* cmd : {"help analyze", "help log", "help root-causes", "help kinds", "plan --help", "repro --help"}) {
    auto h = Tpt(cmd);
    std::smatch m;
    EXPECT_FALSE(std::regex_search(h.out, m, internal)) << cmd << ": " << m.str(0);
  }
  auto plan = Tpt("plan --help");
  EXPECT_FALSE(std::regex_search(plan.out, internal));
}

// On a terminal with no pager that can start (an image without less), the
// view is printed plainly and stderr says why: never an empty screen and 0.
TEST(LogView, APagerThatCannotStartPrintsPlainlyAndSaysSo) {
  const std::string log = Sample("founding/sglang-tp8-rtxpro6000-mfs050.log");
  // util-linux `script` gives the command a terminal (Debian: bsdutils, essential).
  auto r = tpt::test::RunCmd("PAGER=/nonexistent/pager script -qec \"'" + std::string(TPTRIAGE_BIN) + "' log '" + log +
                                 "'\" /dev/null",
                             /*merge_stderr=*/true);
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("the pager '/nonexistent/pager' cannot start"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("weights_load_begin"), std::string::npos) << "the view itself, plainly\n" << r.out;
}

TEST(LogView, MergesByTimeTaggedByRankWithEvidenceMarked) {
  auto r = Tpt("log --no-pager '" + Sample("founding/sglang-tp8-rtxpro6000-mfs050.log") + "'");
  EXPECT_EQ(r.rc, 0);
  auto lines = Lines(r.out);
  ASSERT_GT(lines.size(), 20u);
  // Tagged with the rank; times from the first timed line, in order.
  EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(\n[ >] +\+[0-9.]+s r3 +weights_load_begin)"))) << r.out;
  double last = -1;
  bool ordered = true;
  std::regex ts(R"(^[ >] +\+([0-9.]+)s )");
  for (const std::string& l : lines) {
    std::smatch m;
    if (!std::regex_search(l, m, ts)) continue;
    double t = std::stod(m.str(1));
    ordered &= t >= last;
    last = t;
  }
  EXPECT_TRUE(ordered) << r.out;
  // The diagnosis' evidence is marked; wrappers are gone (the text starts at the server's own line).
  EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(\n> .* r0 .*RuntimeError: Not enough memory)"))) << r.out;
}

TEST(LogView, ContextRankAndKindFilters) {
  std::string log = "'" + Sample("founding/sglang-tp8-rtxpro6000-mfs050.log") + "'";
  auto all = Tpt("log --no-pager " + log);
  auto ctx = Tpt("log --no-pager -C 1 " + log);
  EXPECT_EQ(ctx.rc, 0);
  EXPECT_LT(Lines(ctx.out).size(), Lines(all.out).size());
  EXPECT_NE(ctx.out.find("\n--\n"), std::string::npos) << "separated stretches, like grep -C";
  for (const std::string& l : Lines(ctx.out)) {
    if (l == "--") continue;
    EXPECT_TRUE(l[0] == '>' || l[0] == ' ') << l;
  }
  auto r2 = Tpt("log --no-pager --rank 2 " + log);
  for (const std::string& l : Lines(r2.out)) {
    if (l.rfind("  ", 0) == 0 && l.find_first_not_of(' ') > 30) continue;  // a traceback body line
    EXPECT_TRUE(std::regex_search(l, std::regex(R"(^[ >] +(\+[0-9.]+s)? +r2 )"))) << l;
  }
  auto k = Tpt("log --no-pager --kinds weights_load_begin,weights_load_end " + log);
  EXPECT_EQ(Lines(k.out).size(), 16u) << k.out;  // 8 ranks x begin and end
  // A filtered view keeps the run's time axis: the hang's watchdog lines are
  // at +599 s as in the report, not +0 because the first line was filtered out.
  auto w = Tpt("log --no-pager --kinds watchdog_timeout '" + Sample("logs/nccl-warn-hang-tp4.log") + "'");
  ASSERT_FALSE(Lines(w.out).empty()) << w.out;
  EXPECT_TRUE(std::regex_search(Lines(w.out)[0], std::regex(R"(^> +\+599\.[0-9]s r0 )"))) << w.out;
  auto bad = Tpt("log --rank x " + log);
  EXPECT_EQ(bad.rc, 2);
}

// `log LOG DUMPS`: each flight-recorder record at its time_created_ns among
// the log's lines, tagged with its rank; a log that prints only a time of
// day (torchrun's glog lines) is placed on the records' day; what has no time
// (dump heads, pg_status, stacks) after the last line under a rule
// (samples/hangs/logs/torchrun_hang_2ranks.log beside the real 2-rank dumps).
TEST(LogView, DumpRecordsMergeIntoTheLogsTimeAxis) {
  const std::string log = "'" + Sample("hangs/logs/torchrun_hang_2ranks.log") + "'";
  const std::string dumps = "'" + Sample("rules/fr_hang_wavefront/pos_hang_2ranks_pickle") + "'";
  auto r = Tpt("log --no-pager " + log + " " + dumps);
  ASSERT_EQ(r.rc, 0) << r.out;
  std::vector<std::string> lines = Lines(r.out);
  auto at = [&](const std::string& needle) {
    for (size_t i = 0; i < lines.size(); ++i)
      if (lines[i].find(needle) != std::string::npos) return static_cast<long>(i);
    return -1L;
  };
  const long seq4 = at("record 3: pg 0 (default_pg) seq 4"), sigterm = at("Sending process 48212 closing signal");
  const long rule = at("-- without a time:"), head = at("fr_dump "), stack = at("stack_thread ");
  ASSERT_GE(seq4, 0) << r.out;
  ASSERT_GE(sigterm, 0) << r.out;
  EXPECT_LT(seq4, sigterm) << "15:56:51 (the record) before 15:57:52 (the launcher's line)\n" << r.out;
  EXPECT_TRUE(std::regex_search(lines[sigterm], std::regex(R"(^[ >] +\+6[01]\.[0-9]s - )"))) << lines[sigterm];
  size_t records = 0;
  for (const std::string& l : lines) {
    if (l.find(" fr_collective ") == std::string::npos) continue;
    ++records;
    EXPECT_TRUE(std::regex_search(l, std::regex(R"(^[ >] +[-+][0-9.]+s r[01] +fr_collective +record )"))) << l;
  }
  EXPECT_EQ(records, 7u) << "rank 0's 4 records and rank 1's 3, each at its time";
  ASSERT_GT(rule, sigterm) << "the untimed artefacts after the last timed line\n" << r.out;
  EXPECT_GT(head, rule);
  EXPECT_GT(stack, rule);
  EXPECT_EQ(std::count_if(lines.begin(), lines.end(), [](const std::string& l) { return l.find(" fr_pg_status ") != std::string::npos; }), 2)
      << "each dump's pg_status shown, though it shares the dump head's line 0";
  // --rank 1: rank 1's records and stacks, none of rank 0's.
  auto one = Tpt("log --no-pager --rank 1 " + log + " " + dumps);
  EXPECT_NE(one.out.find(" r1    fr_collective "), std::string::npos) << one.out;
  EXPECT_EQ(one.out.find(" r0 "), std::string::npos) << one.out;
  EXPECT_NE(one.out.find("load_next_batch (/tmp/m.py:16)"), std::string::npos) << "its py-spy stack";
}

// An NCCL line says its process and CUDA device (`host:pid:tid [dev]`), not
// its rank: the view tags it with the rank the analysis gave that process from
// its ncclCommInitRank line (here one GPU a node, so every device is 0 and the
// ranks 0 and 1 are told apart only that way), also before that line, and
// --rank keeps that process's lines.
TEST(LogView, NcclLinesTaggedWithTheRankTheAnalysisGaveTheirProcess) {
  std::string log = ::testing::TempDir() + "/two-nodes-nccl.log";
  {
    std::ofstream out(log);
    out << "nodeA:100:100 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>\n"
           "nodeB:200:200 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.2<0>\n"
           "nodeA:100:101 [0] NCCL INFO ncclCommInitRank comm 0x1 rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 1000 "
           "commId 0x5 - Init START\n"
           "nodeB:200:201 [0] NCCL INFO ncclCommInitRank comm 0x2 rank 1 nranks 2 cudaDev 0 nvmlDev 0 busId 1000 "
           "commId 0x5 - Init START\n";
  }
  auto all = Tpt("log --no-pager '" + log + "'");
  std::vector<std::string> lines = Lines(all.out);
  ASSERT_EQ(lines.size(), 4u) << all.out;
  for (const std::string& l : lines) {
    const char* want = l.find("nodeB:") != std::string::npos ? " r1 " : " r0 ";
    EXPECT_NE(l.find(want), std::string::npos) << l;
  }
  auto r1 = Tpt("log --no-pager --rank 1 '" + log + "'");
  ASSERT_EQ(Lines(r1.out).size(), 2u) << r1.out;
  for (const std::string& l : Lines(r1.out)) EXPECT_NE(l.find("nodeB:200:"), std::string::npos) << l;
  std::remove(log.c_str());
}

// --raw: every line of the input, the ones the parser did not understand too,
// each exactly once.
TEST(LogView, RawShowsEveryLineOnce) {
  for (const std::string& log : BundledSamples()) {
    SCOPED_TRACE(log);
    auto r = Tpt("log --no-pager --raw '" + log + "'");
    EXPECT_EQ(r.rc, 0);
    std::vector<std::string> shown = Lines(r.out);
    std::ifstream in(log);
    std::vector<std::string> file;
    for (std::string l; std::getline(in, l);) file.push_back(l);
    ASSERT_EQ(shown.size(), file.size()) << r.out;
    // Each line as written ends one line of the view (after its 39-column head).
    std::map<std::string, int> want;
    for (std::string l : file) {
      for (char& c : l) c = (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) ? ' ' : c;
      ++want[l];
    }
    // The head is 39 columns, wider when the kind's name is longer than 20.
    for (const std::string& l : shown) {
      bool found = false;
      for (size_t k = 39; k <= l.size() && k <= 80 && !found; ++k) {
        if (l[k - 1] != ' ') continue;
        auto it = want.find(l.substr(k));
        if (it != want.end() && it->second > 0) {
          --it->second;
          found = true;
        }
      }
      EXPECT_TRUE(found) << "not a line of the input, or shown twice: " << l;
    }
    for (const auto& [line, n] : want) EXPECT_EQ(n, 0) << "not shown: " << line;
  }
}

// --raw on an input no line of which is understood (a paste of a launcher's
// output, a log of a tool tptriage has no format for): every line still comes out
// (it printed nothing and 'no line matched the filters': each file was opened when its
// first event came, and this one had none).
TEST(LogView, RawShowsAFileWithNoUnderstoodLine) {
  const std::string log = ::testing::TempDir() + "/raw_nothing_understood.log";
  {
    std::ofstream out(log);
    out << "starting the job on 4 nodes\nwaiting for the scheduler\nlast words before the cut\n";
  }
  auto r = Tpt("log --no-pager --raw '" + log + "' 2>&1");
  EXPECT_EQ(r.rc, 0);
  std::vector<std::string> shown = Lines(r.out);
  ASSERT_EQ(shown.size(), 3u) << r.out;
  EXPECT_NE(shown[0].find("starting the job on 4 nodes"), std::string::npos) << r.out;
  EXPECT_NE(shown[2].find("last words before the cut"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("no line matched"), std::string::npos) << r.out;
  std::remove(log.c_str());
}

// A log of 120,000 lines: every line comes out (the view streams; it used to
// keep a bounded sample of the events and drop the rest), in bounded memory.
TEST(LogView, BigInputStreamsEveryLineInBoundedMemory) {
  std::string big = ::testing::TempDir() + "/big-serving.log";
  {
    std::ifstream head(Sample("logs/sglang-tp4-healthy.log"));
    std::ofstream out(big);
    std::string l;
    for (int i = 0; i < 59 && std::getline(head, l); ++i) out << l << "\n";
    char buf[256];
    for (int i = 0; i < 120000; ++i) {
      std::snprintf(buf, sizeof buf,
                    "[2025-09-02 %02d:%02d:%02d TP%d] Decode batch. #running-req: 128, #token: %d, token usage: 0.14, "
                    "cuda graph: True, gen throughput (token/s): 3011.42, #queue-req: 0, \n",
                    10 + i / 36000, (i / 600) % 60, (i / 10) % 60, i % 4, 61440 + i % 1000);
      out << buf;
    }
  }
  auto r = tpt::test::RunCmd("'" + std::string(TPTRIAGE_BIN) + "' log --no-pager '" + big + "' | grep -c 'Decode batch'");
  EXPECT_EQ(r.out, "120000\n");
  struct rusage ru {};
  getrusage(RUSAGE_CHILDREN, &ru);
  EXPECT_LT(ru.ru_maxrss, 200 * 1024) << "KiB: the largest child of this test";
  std::remove(big.c_str());
}

TEST(LogView, PagerOnlyOnATerminal) {
  // Into a pipe the view is plain text even when $PAGER is set.
  auto r = tpt::test::RunCmd("PAGER='sed s/^/PAGED/' '" + std::string(TPTRIAGE_BIN) + "' log '" +
                             Sample("logs/nccl-warn-hang-tp4.log") + "'");
  EXPECT_EQ(r.rc, 0);
  EXPECT_EQ(r.out.find("PAGED"), std::string::npos);
  EXPECT_NE(r.out.find("watchdog_timeout"), std::string::npos);
  auto stdin_run = tpt::test::RunCmd("'" + std::string(TPTRIAGE_BIN) + "' log - < '" +
                                     Sample("logs/nccl-warn-hang-tp4.log") + "'");
  EXPECT_EQ(stdin_run.rc, 0);
  EXPECT_NE(stdin_run.out.find("> "), std::string::npos) << "evidence marked from stdin too";
}

}  // namespace

namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// "bdj" for 139: letters only, so the signature's number masking keeps them apart.
std::string Letters(int n) {
  std::string s;
  do {
    s += static_cast<char>('a' + n % 10);
    n /= 10;
  } while (n > 0);
  return s;
}

}  // namespace

// The --runs page for 250 runs stays small: folded sections for the largest
// groups and the first unexplained runs only, every run a short row.
TEST(RunsPage, StaysSmallForHundredsOfRuns) {
  fs::path dir = fs::path(::testing::TempDir()) / "tpt-runs250";
  fs::remove_all(dir);
  fs::create_directories(dir / "runs");
  std::vector<std::string> templates;
  for (const std::string& log : BundledSamples()) {
    if (log.find("/samples/logs/") != std::string::npos) templates.push_back(ReadFile(log));
  }
  ASSERT_GE(templates.size(), 8u);
  const int kRuns = 250;
  std::vector<std::string> names;
  for (int i = 0; i < kRuns; ++i) {
    char name[32];
    std::snprintf(name, sizeof name, "run-%03d.log", i);
    names.push_back(name);
    std::ofstream out(dir / "runs" / name, std::ios::binary);
    if (i % 4 == 3) {
      // A failure no rule knows, its own words each time: 62 groups of one run.
      out << "[2026-03-01 10:00:00] server_args=ServerArgs(model_path='m', tp_size=2)\n"
          << "[2026-03-01 10:00:01 TP0] Load weight begin. avail mem=78.00 GB\n"
          << "Traceback (most recent call last):\n  File \"x.py\", line 3, in <module>\n"
          << "RuntimeError: odd failure in module_" << Letters(i) << " while stepping\n";
    } else {
      out << templates[i % templates.size()];
    }
  }
  std::string page = (dir / "runs.html").string();
  auto r = Tpt("analyze --runs '" + (dir / "runs").string() + "' --format html -o '" + page + "'");
  EXPECT_NE(r.rc, 2) << r.out;
  std::string html = ReadFile(page);
  // Measured 2026-12: 138 KB (553 bytes a run) for this mix of 70 groups (62
  // of one run), 50 healthy runs; the budget leaves room for longer verdicts.
  EXPECT_LT(html.size(), 160u * 1024) << "the --runs page of " << kRuns << " runs grew to " << html.size() << " bytes";
  RecordProperty("bytes", static_cast<int>(html.size()));
  RecordProperty("bytes_per_run", static_cast<int>(html.size() / kRuns));
  std::printf("--runs page: %zu bytes for %d runs (%zu a run)\n", html.size(), kRuns, html.size() / kRuns);
  for (const std::string& n : names) EXPECT_NE(html.find("<td>" + n + "</td>"), std::string::npos) << n;
  size_t sections = 0;
  for (size_t p = html.find("<details class=\"group\""); p != std::string::npos;
       p = html.find("<details class=\"group\"", p + 1))
    ++sections;
  EXPECT_GE(sections, 8u);
  EXPECT_LE(sections, 30u) << "details on demand: not a section a run";
  EXPECT_NE(html.find("Not shown in full: "), std::string::npos);
  EXPECT_NE(html.find("<summary>All 250 runs</summary>"), std::string::npos);
  // Every group's link lands on something on the page.
  std::regex link("<a href=\"#((run|row)-[0-9]+)\">");
  for (auto it = std::sregex_iterator(html.begin(), html.end(), link); it != std::sregex_iterator(); ++it) {
    EXPECT_NE(html.find("id=\"" + (*it)[1].str() + "\""), std::string::npos) << (*it)[1].str();
  }
  if (!HasFailure() && !std::getenv("TPT_KEEP")) fs::remove_all(dir);
}

// Lines with no rank get lanes by what they name: TGI's shards and processes,
// the GPU of a kernel Xid line, LMDeploy's engine; never a rank they lack.
TEST(AnswerFirst, RanklessLogsGetLanesByWhatTheirLinesName) {
  auto lanes = [](const std::string& html) {
    std::vector<std::string> v;
    std::regex lane("<g class=\"lane[^\"]*\" data-rank=\"(-?[0-9]+)\"(?: data-lane=\"([^\"]*)\")?>");
    for (auto it = std::sregex_iterator(html.begin(), html.end(), lane); it != std::sregex_iterator(); ++it)
      v.push_back((*it)[1].str() + ":" + (*it)[2].str());
    return v;
  };
  const std::string tgi_log = Sample("logs/tgi-warmup-oom-2shards.log");
  auto tgi = lanes(Tpt("analyze '" + tgi_log + "' --format html").out);
  EXPECT_GT(tgi.size(), 1u);
  // Both shards the log names get a lane (each has its own "Shard ready"),
  // the launcher's lines stay on the launcher's; no other shard, no rank.
  for (const char* want : {"-1:launcher", "-1:shard 0", "-1:shard 1", "-1:router"}) {
    EXPECT_NE(std::find(tgi.begin(), tgi.end(), want), tgi.end()) << want;
  }
  for (const std::string& l : tgi) {
    EXPECT_EQ(l.rfind("-1:", 0), 0u) << l << ": a TGI line carries no rank";
    EXPECT_TRUE(l.find("shard") == std::string::npos || l == "-1:shard 0" || l == "-1:shard 1") << l;
  }
  // The warm-up OOM names a GPU index, not a shard: it stays on the launcher's lane.
  std::string tgi_html = Tpt("analyze '" + tgi_log + "' --format html").out;
  // Each shard's lane starts at its "Starting shard rank=N" line and is ready at its own "Shard ready".
  for (const char* span : {"<title>shard 0 init from ", "<title>shard 1 init from ", "<title>shard 0 ready from ",
                           "<title>shard 1 ready from "}) {
    EXPECT_NE(tgi_html.find(span), std::string::npos) << span;
  }
  EXPECT_NE(tgi_html.find("<title>shard 1 init from " + tgi_log + ":5: "), std::string::npos);
  // A shard the log names alone (rank=2 of 4): its lane, and none for the shards it never names.
  auto shm = lanes(Tpt("analyze '" + Sample("logs/redteam/shm_too_small--tgi-signal7-sigbus.log") + "' --format html").out);
  EXPECT_EQ(shm, (std::vector<std::string>{"-1:launcher", "-1:shard 2"}));
  EXPECT_NE(tgi_html.find("<title>launcher cuda_oom at "), std::string::npos) << tgi_html;
  // Text and markdown: a row each.
  std::string tgi_text = Tpt("analyze '" + tgi_log + "'").out;
  for (const char* row : {"launcher  error", "shard 0   no error", "shard 1   no error", "router    error"}) {
    EXPECT_NE(tgi_text.find(row), std::string::npos) << row << "\n" << tgi_text;
  }
  // The quoted line may wrap (TGI's own time stamp is part of the quote): read it unwrapped.
  std::string tgi_unwrapped = tgi_text;
  for (size_t nl; (nl = tgi_unwrapped.find("\n ")) != std::string::npos;) {
    size_t end = tgi_unwrapped.find_first_not_of(' ', nl + 1);
    tgi_unwrapped.replace(nl, end - nl, " ");
  }
  EXPECT_NE(tgi_unwrapped.find("Shard ready in 13.04s rank=1"), std::string::npos) << tgi_text;
  std::string tgi_md = Tpt("analyze '" + tgi_log + "' --format markdown").out;
  for (const char* row : {"| launcher |", "| shard 0 |", "| shard 1 |"}) {
    EXPECT_NE(tgi_md.find(row), std::string::npos) << row << "\n" << tgi_md;
  }
  auto xid = lanes(Tpt("analyze '" + Sample("logs/xid-79-fallen-off-bus.log") + "' --format html").out);
  EXPECT_EQ(xid, std::vector<std::string>{"-1:GPU 0000:81:00"});
  auto lmd = lanes(Tpt("analyze '" + Sample("logs/lmdeploy-turbomind-oom.log") + "' --format html").out);
  EXPECT_NE(std::find(lmd.begin(), lmd.end(), "-1:TurboMind"), lmd.end());
  // Two GPUs' Xid lines: a lane each, the first error on the first GPU's.
  std::string two = ::testing::TempDir() + "/xid-two-gpus.log";
  {
    std::ofstream out(two);
    out << "Mar 04 02:16:51 node7 kernel: NVRM: Xid (PCI:0000:3b:00): 48, pid=2231, name=python, An uncorrectable "
           "double bit error (DBE) has been detected on GPU in the framebuffer at partition 6, subpartition 0.\n"
        << "Mar 04 02:16:53 node7 kernel: NVRM: Xid (PCI:0000:81:00): 79, pid='<unknown>', name=<unknown>, GPU has "
           "fallen off the bus.\n";
  }
  std::string h = Tpt("analyze '" + two + "' --format html").out;
  EXPECT_EQ(lanes(h), (std::vector<std::string>{"-1:GPU 0000:3b:00", "-1:GPU 0000:81:00"})) << h;
  EXPECT_NE(h.find("one lane per GPU, shard or process they name"), std::string::npos);
  // vLLM V0's workers of no rank: a lane a process, by the pid its prefix prints.
  auto v0 = lanes(
      Tpt("analyze '" + Sample("logs/redteam/custom_allreduce_failure--vllm-register-graph-buffers-invalid-arg.log") +
          "' --format html")
          .out);
  for (const char* want : {"-1:VllmWorkerProcess pid 911", "-1:VllmWorkerProcess pid 912"}) {
    EXPECT_NE(std::find(v0.begin(), v0.end(), want), v0.end()) << want;
  }
  // SGLang at TP 1 prints no TP rank for its scheduler either: not "main process".
  auto tp1 = lanes(
      Tpt("analyze '" + Sample("logs/redteam/cuda_graph_capture_failure--sglang-capture-meta-tensor.log") + "' --format html")
          .out);
  EXPECT_EQ(tp1, std::vector<std::string>{"-1:all lines"});
  // A run with ranks keeps one lane a rank, no names; its lines of no rank
  // that name nothing are "no rank", not "launcher".
  auto hang = lanes(Tpt("analyze '" + Sample("logs/nccl-warn-hang-tp4.log") + "' --format html").out);
  EXPECT_EQ(hang, (std::vector<std::string>{"-1:no rank", "0:", "1:", "2:", "3:"}));
}

// Lines of no rank beside numbered ranks: a row (text, markdown) and a lane
// (HTML) by what printed them, where the run was when they came; "launcher"
// only for a launcher's lines, never a rank number they do not print.
TEST(AnswerFirst, RanklessLinesOfRankedRunsAreNamedAndPlaced) {
  const std::string vllm = Sample("logs/vllm-v1-tp2-kv-too-small.log");
  std::string text = Tpt("analyze '" + vllm + "'").out;
  std::smatch m;
  // vLLM V1's EngineCore failed while ranks 0 and 1 sized the KV cache.
  ASSERT_TRUE(std::regex_search(text, m, std::regex(R"(\n  engine core +([.#X] +){7}(\S+)  worker_exception  <- failed first)")))
      << text;
  EXPECT_EQ(m[2].str(), "kv_pool") << text;
  EXPECT_EQ(text.find("\n  launcher "), std::string::npos) << "no launcher line in this log\n" << text;
  EXPECT_EQ(text.find("X         .         .         .         .         .         .         init"), std::string::npos)
      << "a rank-less row's X is not at init by default\n" << text;
  EXPECT_NE(text.find("\n  API server "), std::string::npos) << text;
  std::string md = Tpt("analyze '" + vllm + "' --format markdown").out;
  EXPECT_NE(md.find("| engine core |  | kv\\_pool | worker\\_exception **(first)** |"), std::string::npos) << md;
  EXPECT_EQ(md.find("| launcher |"), std::string::npos) << md;
  std::string html = Tpt("analyze '" + vllm + "' --format html").out;
  EXPECT_NE(html.find("data-rank=\"-1\" data-lane=\"engine core\""), std::string::npos);
  EXPECT_NE(html.find("Lines of no rank: a lane for what printed them"), std::string::npos);
  EXPECT_EQ(html.find("data-lane=\"launcher\""), std::string::npos);
  // SGLang: "Killed" names nothing: "no rank", placed where the ranks were:
  // in kv_pool, where their "Not enough memory" is raised (after "Load weight
  // end": weights reached, X at kv_pool, not at weights). The loaders'
  // progress bar, printed with no rank, is the rank-less lines' weights phase.
  std::string sg = Tpt("analyze '" + Sample("logs/sglang-tp2-not-enough-memory.log") + "'").out;
  EXPECT_NE(sg.find("\n  no rank   .         .         #         X         .         .         .         kv_pool  signal"),
            std::string::npos)
      << sg;
  EXPECT_NE(sg.find("\n  1         #         #         #         X         .         .         .         kv_pool  "
                    "worker_exception  <- failed first"),
            std::string::npos)
      << sg;
  // TensorRT-LLM: its C++ runtime's untagged lines sized the KV cache before
  // the failure; a row of their own, the failure after them in kv_pool.
  std::string trt = Tpt("analyze '" + Sample("logs/trtllm-kv-insufficient-tp2.log") + "'").out;
  EXPECT_NE(trt.find("\n  C++ runtime  .         .         .         #"), std::string::npos) << trt;
  EXPECT_NE(trt.find("\n  no rank      .         .         .         X         .         .         .         kv_pool"),
            std::string::npos)
      << trt;
  // torchrun's elastic agent is the launcher: its lines say so.
  std::string torch = Tpt("analyze '" + Sample("logs/torch-childfailed-oom-rank1.log") + "'").out;
  EXPECT_NE(torch.find("2. launcher  error exception"), std::string::npos) << torch;
  // No row or lane is a rank the log does not print.
  for (const std::string* out : {&text, &sg, &trt, &torch}) {
    EXPECT_EQ(out->find("\n  2 "), std::string::npos) << *out;
    EXPECT_EQ(out->find("rank 2 "), std::string::npos) << *out;
  }
}

// The fix is said once: a remedy in the Fix line (or call-out) is not
// repeated under "Also try"; a ledger with nothing to draw is a sentence.
TEST(AnswerFirst, FixNotRepeatedAndNoEmptyLedgerChart) {
  std::string log = Sample("logs/trtllm-kv-insufficient-tp2.log");
  for (const char* fmt : {"text", "markdown", "html"}) {
    // The flag once (in the Fix); its value is in the line, not in "Also try".
    std::string fix = "--kv_cache_free_gpu_memory_fraction";
    std::string out = Tpt("analyze '" + log + "' --format " + fmt).out;
    size_t first = out.find(fix);
    ASSERT_NE(first, std::string::npos) << fmt;
    EXPECT_EQ(out.find(fix, first + 1), std::string::npos) << fmt << ": the fix repeated\n" << out;
    EXPECT_NE(out.find("Also try"), std::string::npos) << fmt;
  }
  std::string html = Tpt("analyze '" + log + "' --format html").out;
  // TRT-LLM's "Free GPU memory before component creation attempt" is not the
  // free memory at init: no ledger row is made of it (it was a row of "?").
  EXPECT_EQ(html.find("<svg class=\"ledger\""), std::string::npos) << "nothing at init to draw";
  EXPECT_EQ(html.find("left ?"), std::string::npos);
  std::string text = Tpt("analyze '" + log + "'").out;
  EXPECT_EQ(text.find("Memory ledger"), std::string::npos) << text;
  // The evidence quotes the lines whose figures the verdict gives.
  EXPECT_NE(text.find("Total GPU memory (GiB): 140.06"), std::string::npos) << text;
  EXPECT_NE(text.find("108.86"), std::string::npos) << text;
}

// A runtime OOM whose own message shows more memory reserved-but-unallocated
// than it asked for is fragmentation: the fix is PyTorch's expandable
// segments, as a line to copy. With less spare than asked, no such claim.
TEST(AnswerFirst, FragmentedRuntimeOomLeadsWithExpandableSegments) {
  std::string log = Sample("logs/torch-childfailed-oom-rank1.log");
  std::string text = Tpt("analyze '" + log + "'").out;
  EXPECT_NE(text.find("\nFix: export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True: PyTorch held 2.44 GiB"),
            std::string::npos)
      << text;
  std::ifstream in(log);
  std::string body((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t at = body.find("2.44 GiB is reserved by PyTorch but unallocated");
  ASSERT_NE(at, std::string::npos);
  body.replace(at, 8, "0.44 GiB");
  fs::path dir = fs::temp_directory_path() / ("tpt_frag_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "oom.log") << body;
  std::string other = Tpt("analyze '" + (dir / "oom.log").string() + "'").out;
  fs::remove_all(dir);
  EXPECT_NE(other.find("Verdict: runtime_oom"), std::string::npos) << other;
  EXPECT_EQ(other.find("expandable_segments:True:"), std::string::npos) << other;
}

// TurboMind's OOM after it sized its KV blocks: the fix is the fraction it
// gave the cache, and no "Also seen: runtime_oom" contradicts "before ready".
// TGI's warm-up OOM: the value comes from the log's own figures (32,768 prefill
// tokens asked 4.00 GiB with 2.91 GiB free: 32768 x 2.91 / 4.00 = 23,838, rounded
// down to a multiple of 1024 = 23,552), with the arithmetic shown. The Fix names the value the Args line gave (now 32768).
TEST(AnswerFirst, TgiWarmupOomFixCarriesAValueFromTheLog) {
  std::string text = Tpt("analyze '" + Sample("logs/tgi-warmup-oom-2shards.log") + "'").out;
  EXPECT_NE(text.find("\nFix: --max-batch-prefill-tokens 23552 (now 32768): "), std::string::npos) << text;
  EXPECT_NE(text.find("32768 x 2.91 / 4.00"), std::string::npos) << text;
}

// TensorRT-LLM's final KV cache did not fit: the fraction that keeps the room the
// estimate meant to leave, from the log's estimate line and component report.
TEST(AnswerFirst, TrtllmKvCacheFixCarriesAValueFromTheLog) {
  std::string text = Tpt("analyze '" + Sample("logs/trtllm-kv-insufficient-tp2.log") + "'").out;
  EXPECT_NE(text.find("\nFix: --kv_cache_free_gpu_memory_fraction 0.79: "), std::string::npos) << text;
  EXPECT_NE(text.find("110.01 GiB (0.90 of the 122.23 GiB it found available)"), std::string::npos) << text;
  EXPECT_NE(text.find("(108.86 - 12.22) / 122.23 = 0.79 gives a 96.56 GiB cache (1582110 tokens"), std::string::npos)
      << text;
  // The same remedy in every format.
  for (const char* fmt : {"markdown", "html", "json"}) {
    std::string out = Tpt("analyze '" + Sample("logs/trtllm-kv-insufficient-tp2.log") + "' --format " + fmt).out;
    EXPECT_NE(out.find("(108.86 - 12.22) / 122.23 = 0.79"), std::string::npos) << fmt;
  }
}

// vLLM refusing bfloat16 on a pre-Ampere card is a config_error (taxonomy: dtype): the fix is
// the dtype it names (float16), not a kernel build or an attention backend.
TEST(AnswerFirst, Bf16OnTuringFixIsDtypeHalf) {
  std::string text = Tpt("analyze '" + Sample("logs/redteam/config_error--vllm-bf16-t4.log") + "'").out;
  EXPECT_NE(text.find("\nFix: --dtype half: float16 runs on this GPU"), std::string::npos) << text;
  EXPECT_EQ(text.find("--attention-backend"), std::string::npos) << text;
  EXPECT_EQ(text.find("TORCH_CUDA_ARCH_LIST"), std::string::npos) << text;
  EXPECT_NE(text.find("has none (it needs 8.0)"), std::string::npos) << text;
  // The taxonomy's dtype kind: a configuration the card cannot run, not a missing kernel.
  EXPECT_EQ(text.rfind("Verdict: config_error", 0), 0u) << text;
}

TEST(AnswerFirst, TurbomindStartupOomFixIsCacheMaxEntryCount) {
  std::string text = Tpt("analyze '" + Sample("logs/lmdeploy-turbomind-oom.log") + "'").out;
  // A value from the log's figures, with the arithmetic: 5120 x 1.50 MiB = 7.50 GiB at
  // 0.80 -> 9.38 GiB free after the weights, 1.87 GiB left; 0.60 leaves twice that.
  EXPECT_NE(text.find("\nFix: --cache-max-entry-count 0.60 (now 0.80): TurboMind gave 0.80 of the free memory"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("7.50 / 0.80 = 9.38 GiB was free and 1.87 GiB was left"), std::string::npos) << text;
  EXPECT_NE(text.find("0.60 leaves twice that (3.75 GiB) and keeps 245760 tokens"), std::string::npos) << text;
  EXPECT_NE(text.find("one session of 32768 tokens: 0.08"), std::string::npos) << text;
  EXPECT_NE(text.find("5120 blocks (7.50 GiB"), std::string::npos) << text;
  EXPECT_EQ(text.find("runtime_oom"), std::string::npos) << text;
}

// The Fix line's effect in tokens and requests: from the log when it prints a
// pool line, else from --model; without either it says how to get them.
TEST(AnswerFirst, FixEffectInTokensFromTheModelConfig) {
  std::string log = Sample("founding/sglang-tp8-rtxpro6000-mfs050.log");
  std::string bare = Tpt("analyze '" + log + "'").out;
  EXPECT_NE(bare.find("(tokens unknown: add --model"), std::string::npos) << bare;
  std::string with = Tpt("analyze '" + log + "' --model '" + Sample("models/qwen3-32b") + "'").out;
  std::string fix = with.substr(with.find("\nFix: "), with.find("\nConfidence: ") - with.find("\nFix: "));
  // 0.84 (SGLang's headroom) gives 21.7 - 0.16 x 94 = 6.66 GiB a rank; at Qwen3-32B's
  // 32,768 B per token at TP 8 that is 218,234 tokens = 5 requests of 40,960.
  EXPECT_NE(fix.find("--mem-fraction-static 0.84 (now 0.50, floor 0.77) gives KV pool 6.66 GiB a rank, 218,234 tokens"
                     " = 5 requests of 40,960 tokens"),
            std::string::npos)
      << fix;
  EXPECT_EQ(fix.find("tokens unknown"), std::string::npos) << fix;
  // In the HTML fix call-out a flag in the effect never breaks across lines.
  std::string html = Tpt("analyze '" + log + "' --format html").out;
  EXPECT_NE(html.find("<b>Gives</b> KV pool 6.66 GiB a rank (tokens unknown: add <span class=\"nw\">--model</span>"),
            std::string::npos)
      << html;
}

// Markdown's rank table does not print a rank's line twice when its first
// error is also its last line.
TEST(AnswerFirst, MarkdownRankTableSaysSameLineOnce) {
  std::string md = Tpt("analyze '" + Sample("logs/nccl-warn-hang-tp4.log") + "' --format markdown").out;
  size_t row = md.find("\n| 2 | `network_error`");
  ASSERT_NE(row, std::string::npos) << md;
  std::string line = md.substr(row + 1, md.find('\n', row + 1) - row - 1);
  EXPECT_NE(line.find("(the same line)"), std::string::npos) << line;
  size_t first = line.find("Connection closed by remote peer");
  ASSERT_NE(first, std::string::npos) << line;
  EXPECT_EQ(line.find("Connection closed by remote peer", first + 1), std::string::npos) << line;
}

// The HTML ledger chart draws ranks with the same figures as one bar; the rank
// that binds keeps its own, with the fix beside it.
TEST(AnswerFirst, HtmlLedgerGroupsRanksWithTheSameFigures) {
  auto labels = [](const std::string& html) {
    std::vector<std::string> out;
    size_t svg = html.find("<svg class=\"ledger\"");
    size_t end = html.find("</svg>", svg);
    std::regex label(R"(<text x="4" y="[0-9.]+"[^>]*>([^<]*)</text>)");
    std::string part = html.substr(svg, end - svg);
    for (std::sregex_iterator it(part.begin(), part.end(), label), e; it != e; ++it) out.push_back((*it)[1]);
    return out;
  };
  std::string founding =
      Tpt("analyze '" + Sample("founding/sglang-tp8-rtxpro6000-mfs050.log") + "' --format html").out;
  EXPECT_EQ(labels(founding), (std::vector<std::string>{"rank 0 as logged", "with the fix (0.84)", "ranks 1-7"}));
  std::string extra = Tpt("analyze '" + Sample("diff/extra_process/bad") + "' --format html").out;
  EXPECT_EQ(labels(extra), (std::vector<std::string>{"ranks 0,1,3", "rank 2"}));
  // The legend names only what a bar draws: a healthy vLLM run has no
  // reserved slice, no shortfall and no free-at-init line.
  std::string vllm = Tpt("analyze '" + Sample("logs/vllm-v1-tp2-healthy.log") + "' --format html").out;
  std::string legend = vllm.substr(vllm.find("<div class=\"legend\">"));
  legend = legend.substr(0, legend.find("</div>"));
  EXPECT_NE(legend.find("KV pool"), std::string::npos) << legend;
  for (const char* absent : {"reserved slice", "shortfall", "free at init"})
    EXPECT_EQ(legend.find(absent), std::string::npos) << absent << " in " << legend;
  EXPECT_NE(founding.find("shortfall</span>"), std::string::npos);
}

// The hang's rank timeline does not print again, whole, a line the Evidence
// block quotes: its first row and a pointer. A line not in the evidence
// (rank 0's last line, the what()) stays whole.
TEST(AnswerFirst, RankTimelinePointsAtEvidenceInsteadOfRepeatingIt) {
  std::string text = Tpt("analyze '" + Sample("logs/nccl-warn-hang-tp4.log") + "'").out;
  size_t n = 0;
  for (size_t at = text.find("600071"); at != std::string::npos; at = text.find("600071", at + 1)) ++n;
  EXPECT_EQ(n, 1u) << "rank 1's watchdog line once, under Evidence\n" << text;
  std::string ranks = text.substr(text.find("\nRanks: first error"));
  EXPECT_NE(ranks.find("... (whole under Evidence)"), std::string::npos) << ranks;
  EXPECT_NE(ranks.find("terminated with exception"), std::string::npos) << ranks;
  for (const std::string& l : Lines(ranks)) {
    if (l.rfind(std::string(17, ' '), 0) == 0) EXPECT_LE(l.size(), 100u) << l;  // a quoted row, note included
  }
}

// "Also seen" lists other things seen in the log, not a second reading of the
// primary's own line: TGI's warm-up OOM is not also "runtime_oom: while
// serving". Its frames (server.py Warmup, flash_causal_lm.py warmup) place it
// in the warm-up, so no runtime reading is made at all; the JSON keeps every
// diagnosis that was (the launcher's consequence).
TEST(AnswerFirst, AlsoSeenIsNotAnotherReadingOfTheSameLine) {
  std::string log = "'" + Sample("logs/tgi-warmup-oom-2shards.log") + "'";
  for (const char* fmt : {"text", "markdown", "html"}) {
    std::string out = Tpt("analyze " + log + " --format " + fmt).out;
    EXPECT_EQ(out.find("runtime_oom"), std::string::npos) << fmt << "\n" << out;
    EXPECT_NE(out.find("process_crashed"), std::string::npos) << fmt;  // a consequence elsewhere stays
    EXPECT_NE(out.find("a shard ran out of GPU memory"), std::string::npos) << fmt;  // TGI's processes are shards
  }
  auto j = nlohmann::json::parse(Tpt("analyze " + log + " --format json").out);
  std::set<std::string> ids;
  for (const auto& d : j["diagnoses"]) ids.insert(d["id"].get<std::string>());
  EXPECT_FALSE(ids.count("runtime_oom")) << j.dump();
  EXPECT_TRUE(ids.count("process_crashed")) << j.dump();
  EXPECT_EQ(j["diagnoses"][0]["id"], "warmup_oom") << j.dump();
}

// SGLang sizes every rank's pool from the smallest free memory after the
// weights: when that is not the failing rank's own, the verdict names the
// rank whose figure it quotes (rank 1's 6.5 GiB, not rank 0's 18.5).
TEST(AnswerFirst, KvNoRoomNamesTheRankWhoseFigureBinds) {
  std::string text = Tpt("analyze '" + Sample("diff/weights_one_rank/bad") + "'").out;
  EXPECT_NE(text.find("After the weights rank 1 has only 6.5 GiB free (the others up to 18.5 GiB"), std::string::npos)
      << text;
  std::string founding = Tpt("analyze '" + Sample("founding/sglang-tp8-rtxpro6000-mfs050.log") + "'").out;
  EXPECT_NE(founding.find("After the weights only 21.7 GiB is free"), std::string::npos) << founding;  // all alike
}

// Every bundled log's verdict is a sentence with its numbers filled in: no
// "?" standing for a figure the log did not print, no "nan", no placeholder
// left in braces. (Run a directory at a time with --runs: one process each.)
TEST(AnswerFirst, NoSampleVerdictHasAnUnfilledFigure) {
  std::set<std::string> dirs;
  for (const auto& e : fs::recursive_directory_iterator(Sample(""))) {
    if (e.is_regular_file() && e.path().extension() == ".log") dirs.insert(e.path().parent_path().string());
  }
  ASSERT_GT(dirs.size(), 50u);
  std::regex unfilled(R"((^|[ (=])\?([ ,);:.]|$)|\bnan\b|\{[a-z_.]+(:[^}]*)?\})");
  size_t checked = 0;
  for (const std::string& dir : dirs) {
    auto r = Tpt("analyze --runs '" + dir + "' --format json");
    auto j = nlohmann::json::parse(r.out, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << dir;
    for (const auto& run : j.at("runs")) {
      std::string name = run.at("name");
      if (name.size() < 4 || name.substr(name.size() - 4) != ".log" || !run.contains("analysis")) continue;
      std::string verdict = run.at("analysis").value("verdict", "");
      std::smatch m;
      EXPECT_FALSE(std::regex_search(verdict, m, unfilled)) << dir << "/" << name << ": '" << m.str(0) << "' in\n"
                                                            << verdict;
      ++checked;
    }
  }
  EXPECT_GT(checked, 400u);
}

// The ledger highlights the rank whose figures bind (the shortest row), not
// merely the first to print the error, and draws its bar with the fix: with
// rank 1's heavier weights it is rank 1's pool the fix must make positive.
TEST(AnswerFirst, LedgerHighlightsTheShortRankWithTheFix) {
  std::string html = Tpt("analyze '" + Sample("diff/weights_one_rank/bad") + "' --format html").out;
  EXPECT_NE(html.find(">rank 1 as logged</text>"), std::string::npos) << html;
  EXPECT_EQ(html.find(">rank 0 as logged</text>"), std::string::npos);
  EXPECT_NE(html.find(">with the fix (0.92) KV pool: 225.3 MiB<"), std::string::npos)
      << "the fixed bar is the short rank's, as the Fix call-out's effect";
  EXPECT_NE(html.find("<b>Gives</b> KV pool 225.3 MiB a rank"), std::string::npos);
}
