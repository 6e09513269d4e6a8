// renderers_test.cc: every format renders the same records correctly, escapes
// hostile log text, and validates against its published schema.
#include <gtest/gtest.h>

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

int Shell(const std::string& cmd) {
  int rc = std::system(cmd.c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

TEST(TextReporter, OneRunShowsEverySection) {
  std::string out = Render(Format::kText, One(testing::KvNoRoom({.seed = 1})));
  EXPECT_NE(out.find("Verdict: KV cache pool has no room: rank 1 is"), std::string::npos) << out;
  EXPECT_NE(out.find("Root cause [kv_pool_no_room, confidence 92%]: After 62.30 GiB of weights"), std::string::npos);
  EXPECT_NE(out.find("free@init   weights  reserved   KV pool    graphs      left"), std::string::npos);
  EXPECT_EQ(Count(out, "SHORT"), 1u) << "only rank 1 is short";
  // The shortfall stands in its own column, apart from the graphs figure.
  EXPECT_TRUE(std::regex_search(out, std::regex(R"(\d\.\d\d +-\d+\.\d\d  SHORT)"))) << out;
  EXPECT_NE(out.find("<- failed first"), std::string::npos);
  EXPECT_NE(out.find("logs/run-1001/server.log:829 rank 1: [2026-"), std::string::npos) << out;
  EXPECT_NE(out.find("What it is NOT:\n  - custom_allreduce_buffers: allocates ~24 MiB"), std::string::npos);
  EXPECT_NE(out.find("--mem-fraction-static 0.93 (increase): the reserved slice"), std::string::npos);
  EXPECT_NE(out.find("Reproduce on a GPU:\n  tptriage repro logs/run-1001/server.log\n"), std::string::npos) << out;
  EXPECT_NE(out.find("[warning] Custom all-reduce disabled"), std::string::npos);
  EXPECT_NE(out.find("process_crashed (consequence)"), std::string::npos);
}

TEST(TextReporter, RanklessLinesShowAsQuestionMark) {
  Analysis a = testing::KvNoRoom({.seed = 1});
  RankState s;
  s.rank = -1;
  s.phases = {"init"};
  s.last_phase = "init";
  s.first_error = "signal";
  a.ranks.push_back(s);
  std::string out = Render(Format::kText, One(a));
  EXPECT_NE(out.find("\n     ?  X         .  "), std::string::npos) << out;
  EXPECT_NE(Render(Format::kHtml, One(a)).find(">no rank</text>"), std::string::npos);
}

TEST(TextReporter, ControlBytesNeverReachTheTerminal) {
  std::string out = Render(Format::kText, One(testing::KvNoRoom({.seed = 1, .hostile_text = true})));
  EXPECT_EQ(out.find('\x1b'), std::string::npos);
  EXPECT_EQ(out.find("\xff"), std::string::npos);
  // C1 CSI (U+009B) and the line separator U+2028 are controls too.
  Analysis a = testing::KvNoRoom({.seed = 1});
  a.diagnoses[0].explanation = "csi\xC2\x9B" "2J ls\xE2\x80\xA8 end";
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
  EXPECT_NE(out.find("| rank | role | free at init | weights | reserved | KV pool | graphs | left |"), std::string::npos);
  EXPECT_NE(out.find("(short)"), std::string::npos);
  EXPECT_NE(out.find("`--mem-fraction-static 0.93` (increase)"), std::string::npos);
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
  EXPECT_NE(out.find("%0ARemedy: --mem-fraction-static 0.93 (increase)"), std::string::npos);
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

TEST(HtmlReporter, LedgerBarsTimelineAndGroups) {
  std::string one = Render(Format::kHtml, One(testing::KvNoRoom({.seed = 1})));
  EXPECT_EQ(Count(one, "class=\"shortfall\""), 1u);
  EXPECT_EQ(Count(one, "<svg class=\"ledger\""), 1u);
  EXPECT_EQ(Count(one, "<svg class=\"timeline\""), 1u);
  EXPECT_NE(one.find("failed first"), std::string::npos);
  EXPECT_NE(one.find("rank 1 shortfall: "), std::string::npos);
  std::string many = Render(Format::kHtml, Many());
  EXPECT_NE(many.find("<table class=\"groups\">"), std::string::npos);
  EXPECT_EQ(Count(many, "<section class=\"run\""), 5u);  // 3 groups + healthy + unreadable
  EXPECT_EQ(many.find("http://") == std::string::npos || many.find("src=\"http") == std::string::npos, true);
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
