// report_cli_test.cc: whole-binary tests of `tptriage analyze` output side:
// many runs (--runs) grouped by signature, ids stable across invocations and
// across copies of the runs at another path, CI formats valid against their
// schemas, --html and --output files, and clear errors on bad input.
//
// Runs build/tptriage on samples/runs/ci (made by samples/runs/make_runs.py):
// 3 repeats of one startup failure, 2 near-repeats of a serving hang, 1 healthy.
#include <gtest/gtest.h>

#include "tests/temp_dir_test.h"
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

namespace {

namespace fs = std::filesystem;

const std::string kBin = TPTRIAGE_BIN;
const std::string kSrc = TPT_SOURCE_DIR;
const std::string kRuns = kSrc + "/samples/runs/ci";

struct Result {
  int code = -1;
  std::string out, err;
};

fs::path TempDir() {
  static fs::path dir = [] {
    fs::path d = fs::temp_directory_path() / ("tpt_report_cli_" + std::to_string(::getpid()));
    fs::remove_all(d);
    fs::create_directories(d);
    return d;
  }();
  return dir;
}

// The folder goes when this process's tests end (hundreds were left in /tmp).
[[maybe_unused]] ::testing::Environment* const kRemoveTempDir = tpt::test::RemoveAtExit(fs::temp_directory_path() / ("tpt_report_cli_" + std::to_string(::getpid())));

std::string Slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Runs `tptriage ARGS` with stdout and stderr captured.
Result Tptriage(const std::string& args) {
  static int n = 0;
  fs::path out = TempDir() / ("out" + std::to_string(++n)), err = TempDir() / ("err" + std::to_string(n));
  std::string cmd = kBin + " " + args + " >" + out.string() + " 2>" + err.string() + " </dev/null";
  int rc = std::system(cmd.c_str());
  Result r;
  r.code = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  r.out = Slurp(out);
  r.err = Slurp(err);
  return r;
}

int Shell(const std::string& cmd) {
  int rc = std::system(cmd.c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

// run name -> signature, from a --runs JSON document.
std::map<std::string, std::string> Signatures(const nlohmann::json& doc) {
  std::map<std::string, std::string> m;
  for (const auto& r : doc["runs"]) m[r["name"]] = r["analysis"].value("signature", "");
  return m;
}

TEST(AnalyzeRuns, GroupsRepeatsAndNearRepeats) {
  Result r = Tptriage("analyze --runs " + kRuns + " --format json --jobs 2");
  ASSERT_EQ(r.code, 1) << r.err << r.out.substr(0, 2000);  // worst outcome: diagnosed
  auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc["schema_version"], 1);
  ASSERT_EQ(doc["runs"].size(), 6u);
  EXPECT_EQ(doc["summary"]["healthy"], 1);
  EXPECT_EQ(doc["summary"]["diagnosed"], 5) << doc["summary"].dump();
  ASSERT_EQ(doc["groups"].size(), 2u) << doc["groups"].dump(2);
  const auto& g0 = doc["groups"][0];
  const auto& g1 = doc["groups"][1];
  EXPECT_EQ(g0["count"], 3);
  EXPECT_EQ(g0["runs"], nlohmann::json({"job-1187", "job-1203", "job-1240.log"}));
  EXPECT_EQ(g1["count"], 2);
  EXPECT_EQ(g1["runs"], nlohmann::json({"job-1191", "job-1222"}));
  EXPECT_NE(g0["root_cause"], g1["root_cause"]);
  EXPECT_NE(g0["signature"], g1["signature"]);
  for (const auto& g : doc["groups"]) {
    std::string canonical = g["canonical"];
    EXPECT_EQ(canonical.find("/models"), std::string::npos) << canonical;
    EXPECT_EQ(canonical.find("2026"), std::string::npos) << canonical;
  }
  auto sigs = Signatures(doc);
  EXPECT_EQ(sigs["job-1195"], "");
}

TEST(AnalyzeRuns, IdsStableAcrossInvocationsAndPaths) {
  Result a = Tptriage("analyze --runs " + kRuns + " --format json --jobs 1");
  fs::path copy = TempDir() / "elsewhere" / "nightly-artifacts";
  fs::create_directories(copy.parent_path());
  fs::copy(kRuns, copy, fs::copy_options::recursive | fs::copy_options::overwrite_existing);
  Result b = Tptriage("analyze --runs " + copy.string() + " --format json");
  ASSERT_EQ(a.code, b.code);
  auto sa = Signatures(nlohmann::json::parse(a.out)), sb = Signatures(nlohmann::json::parse(b.out));
  EXPECT_EQ(sa, sb);
  EXPECT_EQ(sa.size(), 6u);
}

TEST(AnalyzeRuns, TextShowsGroupsWithCounts) {
  Result r = Tptriage("analyze --runs " + kRuns);
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("6 runs: 5 diagnosed, 0 unexplained, 1 healthy, 0 unreadable; 2 distinct failures"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("  x3  "), std::string::npos);
  EXPECT_NE(r.out.find("  x2  "), std::string::npos);
  EXPECT_TRUE(r.err.empty()) << "no progress bar when stderr is not a terminal: " << r.err;
}

TEST(AnalyzeRuns, JunitOutputFileValidAgainstXsd) {
  fs::path out = TempDir() / "runs.junit.xml";
  Result r = Tptriage("analyze --runs " + kRuns + " --format junit --output " + out.string());
  EXPECT_EQ(r.code, 1);
  std::string xml = Slurp(out);
  EXPECT_NE(xml.find("tests=\"6\" failures=\"5\" errors=\"0\""), std::string::npos) << xml.substr(0, 600);
  if (Shell("command -v xmllint >/dev/null 2>&1") != 0) GTEST_SKIP() << "xmllint not installed";
  EXPECT_EQ(Shell("xmllint --noout --schema " + kSrc + "/tests/schemas/junit-10.xsd " + out.string()), 0);
}

TEST(AnalyzeRuns, SarifValidAgainstSchema) {
  fs::path out = TempDir() / "runs.sarif";
  Result r = Tptriage("analyze --runs " + kRuns + " --format sarif -o " + out.string());
  EXPECT_EQ(r.code, 1);
  auto doc = nlohmann::json::parse(Slurp(out));
  EXPECT_EQ(doc["version"], "2.1.0");
  bool located = false;
  for (const auto& res : doc["runs"][0]["results"]) {
    const auto& loc = res["locations"][0]["physicalLocation"];
    if (loc.contains("region") && loc["region"]["startLine"].get<int>() > 0) located = true;
  }
  EXPECT_TRUE(located) << "no result points at a log line";
  int rc = Shell("python3 " + kSrc + "/tests/schemas/validate_json.py " + kSrc +
                 "/tests/schemas/sarif-schema-2.1.0.json " + out.string());
  if (rc == 77) GTEST_SKIP() << "python3-jsonschema not installed";
  EXPECT_EQ(rc, 0);
}

TEST(AnalyzeRuns, GithubAnnotatesOncePerGroup) {
  Result r = Tptriage("analyze --runs " + kRuns + " --format github");
  EXPECT_EQ(r.code, 1);
  size_t errors = 0;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with("::error ")) {
      ++errors;
      EXPECT_NE(line.find("file="), std::string::npos) << line;
      EXPECT_NE(line.find(",line="), std::string::npos) << line;
    }
  }
  EXPECT_EQ(errors, 2u) << r.out;
  EXPECT_NE(r.out.find("(3 runs)"), std::string::npos);
}

TEST(AnalyzeRuns, HtmlAndMarkdownTogether) {
  fs::path html = TempDir() / "runs.html";
  Result r = Tptriage("analyze --runs " + kRuns + " --format markdown --html " + html.string());
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("## tptriage: 6 runs, 2 distinct failures"), std::string::npos) << r.out.substr(0, 500);
  std::string page = Slurp(html);
  EXPECT_NE(page.find("<table class=\"groups\">"), std::string::npos);
  EXPECT_NE(page.find("<svg class=\"timeline\""), std::string::npos);
}

TEST(AnalyzeOne, SingleRunFormatsKeepExitCode) {
  Result text = Tptriage("analyze " + kRuns + "/job-1187");
  EXPECT_EQ(text.code, 1) << text.err;
  EXPECT_NE(text.out.find("Verdict: "), std::string::npos);
  EXPECT_NE(text.out.find("Evidence:"), std::string::npos) << text.out;
  Result healthy = Tptriage("analyze " + kRuns + "/job-1195 --format junit");
  EXPECT_EQ(healthy.code, 0) << healthy.err;
  EXPECT_EQ(healthy.out.find("<failure"), std::string::npos);
  Result json = Tptriage("analyze --format json " + kRuns + "/job-1240.log");
  EXPECT_EQ(json.code, 1);
  EXPECT_EQ(nlohmann::json::parse(json.out)["signature"].get<std::string>().size(), 12u);
}

TEST(AnalyzeErrors, ClearMessagesAndExitTwo) {
  Result missing = Tptriage("analyze --runs /nonexistent/ci-runs");
  EXPECT_EQ(missing.code, 2);
  EXPECT_NE(missing.err.find("/nonexistent/ci-runs"), std::string::npos) << missing.err;
  Result both = Tptriage("analyze --runs " + kRuns + " " + kRuns + "/job-1187");
  EXPECT_EQ(both.code, 2);
  EXPECT_NE(both.err.find("not both"), std::string::npos);
  Result fmt = Tptriage("analyze --format yaml " + kRuns + "/job-1187");
  EXPECT_EQ(fmt.code, 2);
  EXPECT_NE(fmt.err.find("unknown --format 'yaml'"), std::string::npos) << fmt.err;
  Result jobs = Tptriage("analyze --jobs -3 --runs " + kRuns);
  EXPECT_EQ(jobs.code, 2);
  EXPECT_NE(jobs.err.find("--jobs"), std::string::npos);
  Result out = Tptriage("analyze --runs " + kRuns + " --output /nonexistent/dir/report.txt");
  EXPECT_EQ(out.code, 2);
  EXPECT_NE(out.err.find("cannot write /nonexistent/dir/report.txt"), std::string::npos) << out.err;
}

TEST(AnalyzeErrors, UnreadableRunIsReportedOthersGoOn) {
  fs::path dir = TempDir() / "with-bad";
  fs::create_directories(dir);
  fs::copy(kRuns + "/job-1195", dir / "good", fs::copy_options::recursive | fs::copy_options::overwrite_existing);
  fs::create_directories(dir / "empty-run");  // a run whose artifacts never uploaded
  Result r = Tptriage("analyze --runs " + dir.string() + " --format json");
  auto doc = nlohmann::json::parse(r.out);
  ASSERT_EQ(doc["runs"].size(), 2u);
  EXPECT_EQ(doc["runs"][1]["name"], "good");
  EXPECT_EQ(doc["runs"][1]["exit_code"], 0);
  EXPECT_EQ(doc["runs"][0]["name"], "empty-run");
  EXPECT_EQ(doc["runs"][0]["exit_code"], r.code) << doc["runs"][0].dump();
}

}  // namespace
