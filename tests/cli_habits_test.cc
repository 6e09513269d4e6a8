// cli_habits_test.cc: the built binary behaves like a well-kept command-line
// tool: one-line errors with "did you mean", help with a usage line, named
// placeholders, examples and exit codes; -V; stdin when piped; one analysis
// with many outputs; --fail-on; man page and completions from the option tables.
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "report/exit_codes.h"
#include "rules/analysis.h"
#include "tests/cli_run.h"

namespace {

using tpt::test::CmdResult;
using tpt::test::RunCmd;

const std::string kBin = std::string("'") + TPTRIAGE_BIN + "'";
const std::string kFounding = std::string("'") + TPT_SOURCE_DIR + "/samples/founding/sglang-tp8-rtxpro6000-mfs050.log'";
const char* kCommands[] = {"analyze", "events", "plan", "repro", "diff"};

CmdResult Tpt(const std::string& args, bool merge = false) { return RunCmd(kBin + " " + args, merge); }

int Lines(const std::string& s) {
  int n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string Tmp(const std::string& name) { return ::testing::TempDir() + "/cli_habits_" + name; }

TEST(CliHabitsTest, UnknownOptionIsOneLineWithAGuess) {
  for (const char* cmd : kCommands) {
    CmdResult r = Tpt(std::string(cmd) + " --formt json x.log </dev/null", true);
    EXPECT_EQ(r.rc, 2) << cmd << "\n" << r.out;
    EXPECT_EQ(Lines(r.out), 1) << cmd << "\n" << r.out;
    // --format, or --formats for events (which has no --format).
    EXPECT_NE(r.out.find("did you mean '--format"), std::string::npos) << cmd << "\n" << r.out;
  }
  CmdResult r = Tpt("analyze --max-line-byte 5 x.log", true);
  EXPECT_NE(r.out.find("did you mean '--max-line-bytes'?"), std::string::npos) << r.out;
  // No guess when nothing is close, and still one line.
  r = Tpt("analyze --zzzzzzzz x.log", true);
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(Lines(r.out), 1) << r.out;
  EXPECT_EQ(r.out.find("did you mean"), std::string::npos) << r.out;
}

TEST(CliHabitsTest, UnknownCommandGetsAGuess) {
  CmdResult r = Tpt("analyse x.log", true);
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(Lines(r.out), 1) << r.out;
  EXPECT_NE(r.out.find("did you mean 'analyze'?"), std::string::npos) << r.out;
  r = Tpt("--verison", true);
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.out.find("did you mean '--version'?"), std::string::npos) << r.out;
  r = Tpt("help analyz", true);
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.out.find("did you mean 'analyze'?"), std::string::npos) << r.out;
}

TEST(CliHabitsTest, EveryHelpHasUsageNamedPlaceholdersExamplesAndExitCodes) {
  for (const char* cmd : kCommands) {
    CmdResult h = Tpt(std::string(cmd) + " --help");
    ASSERT_EQ(h.rc, 0) << cmd;
    EXPECT_NE(h.out.find(std::string("usage: tptriage ") + cmd), std::string::npos) << h.out;
    EXPECT_NE(h.out.find("\nexamples:\n"), std::string::npos) << h.out;
    EXPECT_NE(h.out.find("\nexit codes:\n"), std::string::npos) << h.out;
    EXPECT_EQ(h.out.find(" arg"), std::string::npos) << cmd << ": a placeholder left as 'arg'\n" << h.out;
    // `tptriage help CMD` is the same text, and -h too.
    EXPECT_EQ(Tpt(std::string("help ") + cmd).out, h.out) << cmd;
    EXPECT_EQ(Tpt(std::string(cmd) + " -h").out, h.out) << cmd;
  }
  CmdResult a = Tpt("analyze --help");
  EXPECT_NE(a.out.find("--output FILE"), std::string::npos) << a.out;
  EXPECT_NE(a.out.find("--runs DIR"), std::string::npos) << a.out;
  EXPECT_NE(a.out.find("--jobs N"), std::string::npos) << a.out;
  EXPECT_NE(a.out.find("--max-line-bytes SIZE"), std::string::npos) << a.out;
  CmdResult top = Tpt("--help");
  EXPECT_EQ(top.rc, 0);
  EXPECT_NE(top.out.find("usage: tptriage COMMAND"), std::string::npos) << top.out;
}

TEST(CliHabitsTest, VersionNamesTheBuildsFeatures) {
  CmdResult v = Tpt("--version");
  ASSERT_EQ(v.rc, 0);
  EXPECT_EQ(Tpt("-V").out, v.out);
  EXPECT_EQ(v.out.rfind("tptriage ", 0), 0u) << v.out;
  EXPECT_NE(v.out.find("features: cuda="), std::string::npos) << v.out;
  EXPECT_NE(v.out.find("license: Apache-2.0"), std::string::npos) << v.out;
  EXPECT_NE(v.out.find("gzip"), std::string::npos) << v.out;
  // Counts come from the compiled-in sets, so they are not zero.
  EXPECT_EQ(v.out.find(" 0 formats"), std::string::npos) << v.out;
  EXPECT_EQ(v.out.find(" 0 rules"), std::string::npos) << v.out;
  // The build embeds the literal database made on this machine, so this CPU takes it.
  EXPECT_NE(v.out.find("prefilter: embedded database"), std::string::npos) << v.out;
}

TEST(CliHabitsTest, PipedStdinIsReadWhenNoLogIsGiven) {
  CmdResult r = RunCmd("cat " + kFounding + " | " + kBin + " analyze --format json");
  ASSERT_EQ(r.rc, 1) << r.out;
  EXPECT_EQ(nlohmann::json::parse(r.out)["root_cause"], "kv_pool_no_room");
  CmdResult e = RunCmd("cat " + kFounding + " | " + kBin + " events --summary");
  EXPECT_EQ(e.rc, 0) << e.out;
  EXPECT_NE(e.out.find("producer"), std::string::npos) << e.out;
  // A terminal or /dev/null is not a pipe: that is still "no LOG given".
  CmdResult none = Tpt("analyze </dev/null", true);
  EXPECT_EQ(none.rc, 2);
  EXPECT_NE(none.out.find("no LOG given"), std::string::npos) << none.out;
}

TEST(CliHabitsTest, OneAnalysisWritesEveryOutput) {
  std::string json = Tmp("out.json"), md = Tmp("out.md"), junit = Tmp("out.xml"), sarif = Tmp("out.sarif"),
              html = Tmp("out.html"), gh = Tmp("out.github");
  CmdResult r = Tpt("analyze " + kFounding + " --format text --json '" + json + "' --markdown '" + md + "' --junit '" +
                    junit + "' --sarif '" + sarif + "' --html '" + html + "' --github '" + gh + "'");
  ASSERT_EQ(r.rc, 1) << r.out;
  EXPECT_NE(r.out.find("kv_pool_no_room"), std::string::npos) << r.out;
  // Each file is exactly what --format X alone writes.
  for (const auto& [fmt, path] : {std::pair<std::string, std::string>{"json", json}, {"markdown", md},
                                  {"junit", junit}, {"sarif", sarif}, {"github", gh}}) {
    CmdResult alone = Tpt("analyze " + kFounding + " --format " + fmt);
    EXPECT_EQ(ReadFile(path), alone.out) << fmt;
    EXPECT_FALSE(alone.out.empty()) << fmt;
  }
  EXPECT_NE(ReadFile(html).find("<html"), std::string::npos);
  // Two outputs on one file, or two on stdout, are refused before any work.
  CmdResult clash = Tpt("analyze " + kFounding + " --json '" + json + "' --sarif '" + json + "'", true);
  EXPECT_EQ(clash.rc, 2);
  EXPECT_NE(clash.out.find("give each its own file"), std::string::npos) << clash.out;
  clash = Tpt("analyze " + kFounding + " --format json --json -", true);
  EXPECT_EQ(clash.rc, 2) << clash.out;
}

TEST(CliHabitsTest, FailOnChoosesWhichOutcomesFail) {
  // The founding case is a diagnosed failure (1).
  EXPECT_EQ(Tpt("analyze " + kFounding + " --format json").rc, 1);
  EXPECT_EQ(Tpt("analyze " + kFounding + " --format json --fail-on failure").rc, 1);
  EXPECT_EQ(Tpt("analyze " + kFounding + " --format json --fail-on unknown").rc, 0);
  EXPECT_EQ(Tpt("analyze " + kFounding + " --format json --fail-on error").rc, 0);
  EXPECT_EQ(Tpt("analyze " + kFounding + " --format json --fail-on never").rc, 0);
  // An unreadable input is an error (2): only never hides it.
  EXPECT_EQ(Tpt("analyze /nonexistent/x.log --format json --fail-on error").rc, 2);
  EXPECT_EQ(Tpt("analyze /nonexistent/x.log --format json --fail-on unknown").rc, 2);
  EXPECT_EQ(Tpt("analyze /nonexistent/x.log --format json --fail-on never").rc, 0);
  // A failure seen but not classified (3): failure and unknown fail on it,
  // error and never do not.
  const std::string unknown = ::testing::TempDir() + "/tpt_fail_on_unknown.log";
  std::ofstream(unknown) << "Traceback (most recent call last):\n  File \"x.py\", line 1, in <module>\n"
                            "ValueError: something odd\n";
  EXPECT_EQ(Tpt("analyze " + unknown + " --format json --fail-on failure").rc, 3);
  EXPECT_EQ(Tpt("analyze " + unknown + " --format json --fail-on unknown").rc, 3);
  EXPECT_EQ(Tpt("analyze " + unknown + " --format json --fail-on error").rc, 0);
  EXPECT_EQ(Tpt("analyze " + unknown + " --format json --fail-on never").rc, 0);
  std::remove(unknown.c_str());
  // A wrong command line is always 2.
  CmdResult bad = Tpt("analyze " + kFounding + " --fail-on sometimes --fail-on never", true);
  EXPECT_EQ(bad.rc, 2);
  bad = Tpt("analyze " + kFounding + " --fail-on sometimes", true);
  EXPECT_EQ(bad.rc, 2);
  EXPECT_NE(bad.out.find("expected failure, unknown, error or never"), std::string::npos) << bad.out;
}

// A server log whose process ended on an exception no rule knows.
std::string UnclassifiedLog() {
  std::string path = ::testing::TempDir() + "tpt_unclassified.log";
  std::ofstream(path) << "INFO 03-02 16:00:03 [api_server.py:912] vLLM API server version 0.7.3\n"
                         "Traceback (most recent call last):\n"
                         "  File \"/app/serve.py\", line 3, in <module>\n"
                         "    main()\n"
                         "ZeroDivisionError: division by zero\n";
  return path;
}

// One table of exit codes (report/exit_codes.h): --help, help analyze, the man
// page and the README say what it says, and the binary returns it for each case.
TEST(CliHabitsTest, ExitCodesAreOneTableThatHelpReadmeAndTheBinaryAgreeWith) {
  const std::string help = Tpt("analyze --help").out, topic = Tpt("help analyze").out;
  const std::string man = Tpt("--generate man").out;
  std::ifstream in(std::string(TPT_SOURCE_DIR) + "/README.md");
  std::stringstream buf;
  buf << in.rdbuf();
  std::string readme = buf.str();
  size_t a = readme.find("## Exit codes (analyze)"), b = readme.find("\n## ", a + 5);
  ASSERT_NE(a, std::string::npos);
  std::string table = readme.substr(a, b - a);
  for (const tpt::report::ExitCode& e : tpt::report::ExitCodes()) {
    const std::string line = std::to_string(e.code) + "  " + e.meaning;
    EXPECT_NE(help.find(line), std::string::npos) << line << "\n" << help;
    EXPECT_NE(topic.find(line), std::string::npos) << line;
    EXPECT_NE(man.find(std::to_string(e.code) + "  "), std::string::npos) << e.code;
    // The README's row names the same outcome in its first words.
    std::string meaning = e.meaning;
    std::string head = meaning.substr(0, meaning.find_first_of(":(,"));
    while (!head.empty() && head.back() == ' ') head.pop_back();
    EXPECT_NE(table.find("| " + std::to_string(e.code) + " | " + head), std::string::npos) << head << "\n" << table;
  }
  EXPECT_NE(table.find("2 > 3 > 1 > 4 > 0"), std::string::npos) << "the --runs order of the table";
  EXPECT_NE(help.find("2 > 3 > 1 > 4 > 0"), std::string::npos);
  // The binary: each outcome's code, and --fail-on read from the same table.
  struct Case {
    std::string input;
    int code;
  };
  const std::string src = TPT_SOURCE_DIR;
  const Case cases[] = {
      {"'" + src + "/samples/logs/sglang-tp4-healthy.log'", tpt::kExitHealthy},
      {kFounding, tpt::kExitDiagnosed},
      {"/nonexistent/x.log", tpt::kExitUsage},
      {"'" + src + "/README.md'", tpt::kExitNoEvidence},
      {"'" + UnclassifiedLog() + "'", tpt::kExitUnclassified},
  };
  for (const Case& c : cases) {
    int rc = Tpt("analyze " + c.input + " --format json").rc;
    EXPECT_EQ(rc, c.code) << c.input;
    for (const char* level : {"failure", "unknown", "error", "never"}) {
      int got = Tpt("analyze " + c.input + " --format json --fail-on " + level).rc;
      EXPECT_EQ(got, tpt::report::FailsOn(rc, level) ? rc : 0) << c.input << " --fail-on " << level;
    }
  }
  // An unclassified failure: 3, which --fail-on unknown fails and error passes.
  EXPECT_TRUE(tpt::report::FailsOn(tpt::kExitUnclassified, "unknown"));
  EXPECT_FALSE(tpt::report::FailsOn(tpt::kExitUnclassified, "error"));
  EXPECT_TRUE(tpt::report::FailsOn(tpt::kExitNoEvidence, "failure"));
  EXPECT_FALSE(tpt::report::FailsOn(tpt::kExitDiagnosed, "unknown"));
}

TEST(CliHabitsTest, HelpTopicsListWhatABinaryUserCannotReadInTheRepo) {
  CmdResult k = Tpt("help kinds");
  ASSERT_EQ(k.rc, 0);
  EXPECT_NE(k.out.find("cuda_oom"), std::string::npos) << k.out;
  CmdResult rc = Tpt("help root-causes");
  ASSERT_EQ(rc.rc, 0);
  EXPECT_NE(rc.out.find("kv_pool_no_room"), std::string::npos) << rc.out;
  EXPECT_NE(rc.out.find("unknown"), std::string::npos) << rc.out;
  CmdResult f = Tpt("help formats");
  ASSERT_EQ(f.rc, 0);
  EXPECT_NE(f.out.find("sglang"), std::string::npos) << f.out;
}

// Every long option of every command, as its --help shows it.
std::vector<std::string> HelpFlags(const char* cmd) {
  std::vector<std::string> flags;
  std::istringstream in(Tpt(std::string(cmd) + " --help").out);
  std::string line;
  bool in_options = false;
  while (std::getline(in, line)) {
    if (line == "options:") in_options = true;
    else if (line.empty()) in_options = false;
    else if (in_options) {
      size_t p = line.find("--");
      if (p != std::string::npos && p < 10) flags.push_back(line.substr(p, line.find_first_of(" \n", p) - p));
    }
  }
  return flags;
}

TEST(CliHabitsTest, ManPageAndCompletionsComeFromTheOptionTables) {
  CmdResult man = Tpt("--generate man");
  ASSERT_EQ(man.rc, 0);
  EXPECT_EQ(man.out.rfind(".TH TPTRIAGE 1", 0), 0u);
  CmdResult bash = Tpt("--generate complete-bash");
  ASSERT_EQ(bash.rc, 0);
  CmdResult zsh = Tpt("--generate complete-zsh");
  CmdResult fish = Tpt("--generate complete-fish");
  ASSERT_EQ(zsh.rc, 0);
  ASSERT_EQ(fish.rc, 0);
  for (const char* cmd : kCommands) {
    auto flags = HelpFlags(cmd);
    EXPECT_GT(flags.size(), 3u) << cmd;
    for (const auto& f : flags) {
      std::string roff;  // --fail-on -> \-\-fail\-on
      for (char ch : f) roff += ch == '-' ? std::string("\\-") : std::string(1, ch);
      EXPECT_NE(man.out.find("\\fB" + roff + "\\fR"), std::string::npos) << cmd << " " << f;
      EXPECT_NE(bash.out.find(f), std::string::npos) << cmd << " " << f;
      EXPECT_NE(zsh.out.find("'" + f + "["), std::string::npos) << cmd << " " << f;
      EXPECT_NE(fish.out.find("-l " + f.substr(2) + " "), std::string::npos) << cmd << " " << f;
    }
  }
  EXPECT_EQ(Tpt("--generate nroff", true).rc, 2);
}

TEST(CliHabitsTest, BashCompletionCompletesFlagsAndValues) {
  std::string script = Tmp("complete.bash");
  ASSERT_EQ(RunCmd(kBin + " --generate complete-bash > '" + script + "'").rc, 0);
  auto complete = [&](const std::string& words) {
    // COMP_WORDS as bash fills it for "tptriage WORDS<TAB>".
    std::string cmd = "bash -c 'source \"" + script + "\"; COMP_WORDS=(tptriage " + words +
                      "); COMP_CWORD=$((${#COMP_WORDS[@]}-1)); _tptriage; printf \"%s\\n\" \"${COMPREPLY[@]}\"'";
    return RunCmd(cmd, true);
  };
  CmdResult r = RunCmd("bash -n '" + script + "'", true);
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_EQ(complete("ana").out, "analyze\n");
  EXPECT_NE(complete("analyze --fail").out.find("--fail-on"), std::string::npos);
  std::string fmts = complete("analyze --format \"\"").out;
  EXPECT_NE(fmts.find("sarif"), std::string::npos) << fmts;
  EXPECT_NE(complete("analyze --fail-on ne").out.find("never"), std::string::npos);
}

TEST(CliHabitsTest, ColorOnlyWhereAskedOrOnATerminal) {
  const std::string esc = "\x1b[";
  // Through a pipe (auto): no escape codes; nor with NO_COLOR or never.
  EXPECT_EQ(Tpt("analyze " + kFounding).out.find(esc), std::string::npos);
  EXPECT_EQ(RunCmd("NO_COLOR=1 " + kBin + " analyze " + kFounding + " --color auto").out.find(esc), std::string::npos);
  EXPECT_EQ(Tpt("analyze " + kFounding + " --color never").out.find(esc), std::string::npos);
  // always: the verdict in red (a failure), SHORT in red, the first failing rank's row.
  std::string c = RunCmd("NO_COLOR=1 " + kBin + " analyze " + kFounding + " --color always").out;
  EXPECT_NE(c.find("\x1b[1mVerdict:\x1b[0m \x1b[1;31mkv_pool_no_room"), std::string::npos) << c;
  EXPECT_NE(c.find("\x1b[1;31mSHORT\x1b[0m"), std::string::npos) << c;
  // Colour never reaches a file or a machine format.
  std::string json = Tmp("color.json");
  std::string j = Tpt("analyze " + kFounding + " --color always --format json --json '" + json + "'").out;
  EXPECT_EQ(j.find(esc), std::string::npos);
  EXPECT_EQ(ReadFile(json).find(esc), std::string::npos);
  // A healthy run's verdict is green.
  std::string healthy = std::string("'") + TPT_SOURCE_DIR + "/samples/logs/sglang-tp4-healthy.log'";
  EXPECT_NE(Tpt("analyze " + healthy + " --color always").out.find("\x1b[1;32m"), std::string::npos);
  EXPECT_EQ(Tpt("analyze " + kFounding + " --color sometimes", true).rc, 2);
}

TEST(CliHabitsTest, RulesDirAddsToTheBuiltInSetAndCanReplaceIt) {
  // A file named like a built-in rule file replaces it; the other built-in
  // rules stay. --no-builtin-rules keeps DIR's rules alone.
  std::string dir = Tmp("rules");
  ASSERT_EQ(RunCmd("rm -rf '" + dir + "' && mkdir -p '" + dir + "'").rc, 0);
  std::string text = ReadFile(std::string(TPT_SOURCE_DIR) + "/rules/defs/kv_pool_no_room_sglang.json");
  const std::string old_title = "SGLang: the weights leave no room for the KV cache under --mem-fraction-static";
  size_t at = text.find(old_title);
  ASSERT_NE(at, std::string::npos);
  text.replace(at, old_title.size(), "LOCAL RULE: no room for the KV cache");
  std::ofstream(dir + "/kv_pool_no_room_sglang.json") << text;
  auto diagnoses = [](const CmdResult& r) {
    std::vector<std::string> out;
    nlohmann::json doc = nlohmann::json::parse(r.out);
    for (const auto& d : doc["diagnoses"]) out.push_back(d["title"].get<std::string>());
    return out;
  };
  CmdResult added = Tpt("analyze " + kFounding + " --format json --rules '" + dir + "'");
  ASSERT_EQ(added.rc, 1) << added.out;
  auto titles = diagnoses(added);
  ASSERT_GE(titles.size(), 2u);
  EXPECT_EQ(titles[0], "LOCAL RULE: no room for the KV cache");
  EXPECT_EQ(titles[1], "A worker process died");  // a built-in rule, still there
  CmdResult alone = Tpt("analyze " + kFounding + " --format json --rules '" + dir + "' --no-builtin-rules");
  ASSERT_EQ(alone.rc, 1) << alone.out;
  titles = diagnoses(alone);
  ASSERT_EQ(titles.size(), 1u);
  EXPECT_EQ(titles[0], "LOCAL RULE: no room for the KV cache");
  EXPECT_EQ(Tpt("analyze " + kFounding + " --no-builtin-rules").rc, 2);
}

}  // namespace
