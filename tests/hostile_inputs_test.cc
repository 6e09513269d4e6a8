// hostile_inputs_test.cc: the built tptriage against hostile inputs, each
// generated here (nothing large is committed): exit code and message as
// documented, in seconds.
//
// Sizes are the smallest that show each defect (an 8 MiB line, not a 1 GiB
// one); bounded memory at scale is measured in bench/.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <sys/ioctl.h>
#include <nlohmann/json.hpp>

#include "tests/cli_run.h"
#include "tests/temp_dir_test.h"

namespace {

namespace fs = std::filesystem;
using Result = tpt::test::CmdResult;
using json = nlohmann::json;

using tpt::test::Quote;
std::string Bin() { return Quote(TPTRIAGE_BIN); }
std::string Q(const std::string& s) { return Quote(s); }
std::string Sample(const std::string& rel) { return std::string(TPT_SOURCE_DIR) + "/samples/" + rel; }
const std::string kFounding = Sample("founding/sglang-tp8-rtxpro6000-mfs050.log");
const std::string kCalloc = Sample("rules/nccl_error/pos_calloc.log");

Result Tpt(const std::string& args, bool merge_stderr = false) { return tpt::test::Tptriage(args, merge_stderr); }

// stderr alone (stdout dropped).
Result RunErr(const std::string& args) { return tpt::test::RunCmd("{ " + Bin() + " " + args + " 2>&1 >/dev/null; }"); }

// Markdown text outside fenced blocks and code spans: what GitHub renders
// live (mentions, references, autolinks).
std::string LiveMarkdown(const std::string& md) {
  std::istringstream in(md);
  std::string line, out;
  bool fenced = false;
  while (std::getline(in, line)) {
    if (line.rfind("```", 0) == 0) {
      fenced = !fenced;
      continue;
    }
    if (fenced) continue;
    for (size_t i = 0; i < line.size();) {
      if (line[i] == '\\' && i + 1 < line.size()) {  // an escaped character is text
        out += line.substr(i, 2);
        i += 2;
        continue;
      }
      if (line[i] != '`') {
        out += line[i++];
        continue;
      }
      size_t n = 0;
      while (i + n < line.size() && line[i + n] == '`') ++n;
      const size_t close = line.find(std::string(n, '`'), i + n);
      if (close == std::string::npos) {
        out += line.substr(i, n);
        i += n;
        continue;
      }
      i = close + n;  // the code span is dropped
    }
    out += '\n';
  }
  return out;
}

size_t Count(const std::string& hay, const std::string& needle) {
  size_t n = 0;
  for (size_t p = hay.find(needle); p != std::string::npos; p = hay.find(needle, p + needle.size())) ++n;
  return n;
}

// Each test in a fresh folder (tests/temp_dir_test.h).
class Hostile : public tpt::test::TempDirTest {};

// ---- --max-line-bytes: one size syntax and range in every command ----

TEST_F(Hostile, MaxLineBytesSameSyntaxInEveryCommand) {
  for (const char* cmd : {"analyze", "events", "diff"}) {
    std::string logs = std::string(cmd) == "diff" ? Q(kFounding) + " " + Q(kFounding) : Q(kFounding);
    // One size grammar (base/units.h): "1.5M" is 1572864 bytes; a bare
    // fraction of a byte is not a size.
    for (const char* bad : {"-1", "0", "1.5", "2X", "2G"}) {
      Result r = Tpt(std::string(cmd) + " " + logs + " --max-line-bytes " + bad, true);
      EXPECT_EQ(r.rc, 2) << cmd << " --max-line-bytes " << bad << "\n" << r.out;
      EXPECT_NE(r.out.find("--max-line-bytes"), std::string::npos) << cmd << " " << bad << "\n" << r.out;
    }
    for (const char* good : {"2M", "1.5M", "64KiB", "1048576", "1 MiB"}) {
      Result r = Tpt(std::string(cmd) + " " + logs + " --max-line-bytes '" + good + "' >/dev/null", true);
      EXPECT_NE(r.rc, 2) << cmd << " --max-line-bytes " << good << "\n" << r.out;
    }
  }
  Result r = Tpt("events " + Q(kFounding) + " --buffer-bytes -1", true);
  EXPECT_EQ(r.rc, 2) << r.out;
  EXPECT_NE(r.out.find("--buffer-bytes"), std::string::npos) << r.out;
}

TEST_F(Hostile, AnalyzeWarnsAboutCutLines) {
  // An OOM message behind 8 KiB of noise on one line, read with 4K lines.
  std::string log = "[2025-11-20 09:14:09 TP0] Init torch distributed begin.\n" + std::string(8192, 'x') +
                    " torch.OutOfMemoryError: CUDA out of memory.\n";
  std::string f = Write("long.log", log);
  Result r = RunErr("analyze " + Q(f) + " --max-line-bytes 4K");
  EXPECT_NE(r.out.find("long.log: 1 line(s) longer than 4096 bytes were cut"), std::string::npos) << r.out;
  Result j = Tpt("analyze " + Q(f) + " --max-line-bytes 4K --format json");
  EXPECT_NE(j.out.find("longer than 4096 bytes were cut"), std::string::npos) << j.out;
  Result d = RunErr("diff " + Q(kFounding) + " " + Q(f) + " --max-line-bytes 4K");
  EXPECT_NE(d.out.find("longer than 4096 bytes were cut"), std::string::npos) << d.out;
}

// ---- --buffer-bytes is a limit, not an allocation; long piped lines stay linear ----

TEST_F(Hostile, BigBufferOnASmallFileAndALongPipedLine) {
  // With the buffer allocated whole this needed 1 GiB per input; under a
  // 512 MiB address-space limit it could not even start.
  Result r = tpt::test::RunCmd("(ulimit -v 524288; " + Bin() + " events " + Q(kFounding) +
                                   " --buffer-bytes 1G --summary >/dev/null; echo rc=$?)",
                               true);
  EXPECT_NE(r.out.find("rc=0"), std::string::npos) << r.out;
  // 8 MiB line through a pipe with a 1 GiB buffer: was quadratic (~0.2 s per MiB^2).
  Result p = tpt::test::RunCmd("head -c 8388608 /dev/zero | tr '\\0' a | " + Bin() +
                                   " events - --buffer-bytes 1G --max-line-bytes 1G --summary; echo rc=$?",
                               true);
  EXPECT_NE(p.out.find("rc=0"), std::string::npos) << p.out;
}

// ---- random and compressed bytes are binary; /dev/urandom ends ----

TEST_F(Hostile, RandomBytesAreRefusedAsBinary) {
  std::mt19937_64 rng(3);
  for (int i = 0; i < 20; ++i) {
    std::string bytes(65536, '\0');
    for (char& c : bytes) c = static_cast<char>(rng());
    std::string f = Write("r" + std::to_string(i) + ".bin", bytes);
    Result r = Tpt("analyze " + Q(f), true);
    EXPECT_EQ(r.rc, 2) << "file " << i << ": " << r.out;
    EXPECT_NE(r.out.find("looks binary"), std::string::npos) << r.out;
  }
  Result u = tpt::test::RunCmd("timeout 20 " + Bin() + " analyze /dev/urandom", true);
  EXPECT_EQ(u.rc, 2) << u.out;
  EXPECT_NE(u.out.find("looks binary"), std::string::npos) << u.out;
}

// ---- a rule expression nested 10,000 deep is an exit-2 error, not SIGSEGV ----

TEST_F(Hostile, DeeplyNestedRuleIsAClearError) {
  json rule = json::parse(Read(std::string(TPT_SOURCE_DIR) + "/rules/defs/disk_full.json"));
  rule["when"] = std::string(10000, '(') + "true" + std::string(10000, ')');
  Write("rules/disk_full.json", rule.dump());
  for (const std::string& cmd : std::vector<std::string> {"analyze " + Q(kFounding), "diff " + Q(kFounding) + " " + Q(kFounding)}) {
    Result r = Tpt(cmd + " --rules " + Q(Path("rules")), true);
    EXPECT_EQ(r.rc, 2) << cmd << "\n" << r.out.substr(0, 2000);
    EXPECT_NE(r.out.find("disk_full.json"), std::string::npos) << r.out.substr(0, 2000);
    EXPECT_NE(r.out.find("nested more than 100 levels"), std::string::npos) << r.out.substr(0, 2000);
    EXPECT_LT(r.out.size(), 4000u);
  }
}

// ---- JUnit stays well-formed with U+FFFE/U+FFFF in a log line ----

TEST_F(Hostile, JunitWithNonCharacters) {
  std::string f = Write("ffff.log",
                        "node0:9:30 [0] include/alloc.h:185 NCCL WARN Failed to CUDA calloc 6291456 bytes X\xef\xbf\xbeY\xef\xbf\xbfZ\n");
  Result r = Tpt("analyze " + Q(f) + " --format junit");
  EXPECT_NE(r.out.find("<testcase"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("\xef\xbf\xbe"), std::string::npos);
  EXPECT_EQ(r.out.find("\xef\xbf\xbf"), std::string::npos);
  if (std::system("command -v xmllint >/dev/null 2>&1") == 0) {
    Result x = tpt::test::RunCmd(Bin() + " analyze " + Q(f) + " --format junit | xmllint --noout -", true);
    EXPECT_EQ(x.rc, 0) << x.out;
  }
}

// ---- repro ends at once on SIGINT/SIGTERM while it reads its input ----

// Whether `pid` catches `sig` (its bit in SigCgt of /proc/PID/status).
bool Catches(pid_t pid, int sig) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string l;
  while (std::getline(in, l))
    if (l.rfind("SigCgt:", 0) == 0) return (std::stoull(l.substr(7), nullptr, 16) >> (sig - 1)) & 1;
  return false;
}

// Until the child has read everything written to the pipe `read_end` and
// catches `sig`; false after 60 s (a child that never gets there).
bool WaitUntilReading(pid_t pid, int read_end, int sig) {
  for (int i = 0; i < 6000; ++i) {
    int unread = -1;
    if (ioctl(read_end, FIONREAD, &unread) == 0 && unread == 0 && Catches(pid, sig)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

TEST_F(Hostile, ReproStopsOnSignalWhileReadingItsInput) {
  for (int sig : {SIGTERM, SIGINT}) {
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      dup2(fds[0], 0);
      close(fds[1]);
      int devnull = open("/dev/null", O_WRONLY);
      dup2(devnull, 1);
      dup2(devnull, 2);
      // A job started with & in a script inherits SIGINT ignored; kill -INT
      // must still end it (the reproduction).
      signal(SIGINT, SIG_IGN);
      signal(SIGTERM, SIG_DFL);
      execl(TPTRIAGE_BIN, "tptriage", "repro", "-", "--backend", "simulated", static_cast<char*>(nullptr));
      _exit(127);
    }
    // The writer keeps the pipe open: before the fix repro waited for its end.
    const std::string line = "[2025-11-20 09:14:09 TP0] Init torch distributed begin.\n";
    (void)!write(fds[1], line.data(), line.size());
    // Ready: the child has read the line (the pipe is empty) and catches the
    // signal (its bit in /proc/PID/status SigCgt), so the signal lands while it
    // waits for more input. No fixed sleep: a slow machine only waits longer.
    EXPECT_TRUE(WaitUntilReading(pid, fds[0], sig)) << "repro never read its first line or set up its handler";
    close(fds[0]);
    kill(pid, sig);
    int status = 0;
    pid_t done = 0;
    for (int i = 0; i < 100 && done == 0; ++i) {  // up to 5 s
      done = waitpid(pid, &status, WNOHANG);
      if (done == 0) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    if (done == 0) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
    }
    close(fds[1]);
    EXPECT_NE(done, 0) << "repro ignored signal " << sig << " while reading stdin";
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == sig) << "status " << status;
  }
}

// ---- a failed write to stdout is an error in every command ----

TEST_F(Hostile, StdoutWriteErrorsAreReported) {
  if (access("/dev/full", W_OK) != 0) GTEST_SKIP() << "no /dev/full";
  const std::string plan = Sample("repro/sglang_tp8_rtxpro6000.json");
  for (const std::string& cmd : std::vector<std::string>
       {"events " + Q(kFounding), "analyze " + Q(kFounding), "analyze " + Q(kFounding) + " --format json",
        "diff " + Q(kFounding) + " " + Q(kFounding), "repro " + Q(plan) + " --backend simulated",
        "repro " + Q(plan) + " --dry-run",
        "plan --framework vllm --version 0.11.0 --gpu H100 --tp 8 --params 70B --dtype bf16 --layers 80 "
        "--kv-heads 8 --head-dim 128 --max-model-len 8192",
        "--help", "--version", "analyze --help"}) {
    Result r = tpt::test::RunCmd("{ " + Bin() + " " + cmd + " 2>&1 >/dev/full; }");
    EXPECT_EQ(r.rc, 2) << cmd << "\n" << r.out;
    EXPECT_NE(r.out.find("writing to stdout failed"), std::string::npos) << cmd << "\n" << r.out;
  }
}

// ---- warnings about inputs read in part reach every format and stderr ----

TEST_F(Hostile, TruncatedInputWarnedInEveryFormat) {
  fs::create_directories(Path("runs/r1"));
  fs::copy_file(kFounding, Path("runs/r1/server.log"));
  ASSERT_EQ(std::system(("gzip -c " + Q(kFounding) + " | head -c 700 > " + Q(Path("runs/r1/cut.log.gz"))).c_str()), 0);
  for (const char* f : {"text", "json", "markdown", "junit", "sarif", "github", "html"}) {
    Result r = Tpt("analyze --runs " + Q(Path("runs")) + " --format " + f);
    EXPECT_NE(r.out.find("truncated"), std::string::npos) << f << " --runs";
    Result one = Tpt("analyze " + Q(Path("runs/r1")) + " --format " + f);
    EXPECT_NE(one.out.find("truncated"), std::string::npos) << f;
  }
  Result e = RunErr("analyze --runs " + Q(Path("runs")));
  EXPECT_NE(e.out.find("warning: run r1:"), std::string::npos) << e.out;
  EXPECT_NE(e.out.find("truncated"), std::string::npos) << e.out;
}

// ---- markdown from log text: '|' in table cells, no live @mention/#ref/URL ----

TEST_F(Hostile, MarkdownDefusesLogText) {
  std::string log = Read(kCalloc);
  const std::string needle = "NCCL WARN Failed to CUDA calloc 6291456 bytes";
  for (size_t p = log.find(needle); p != std::string::npos; p = log.find(needle, p + 1)) {
    log.insert(p + needle.size(), " @octocat `a|b` c|d #1 https://evil.example/x");
  }
  Write("md/r1/rank0.log", log);
  Result many = Tpt("analyze --runs " + Q(Path("md")) + " --format markdown");
  Result one = Tpt("analyze " + Q(Path("md/r1/rank0.log")) + " --format markdown");
  for (const Result* r : {&many, &one}) {
    const std::string live = LiveMarkdown(r->out);
    EXPECT_NE(live.find("octocat"), std::string::npos) << live;  // the text is still there
    EXPECT_EQ(live.find("@octocat"), std::string::npos) << live;
    EXPECT_EQ(live.find("#1"), std::string::npos) << live;
    EXPECT_EQ(live.find("https://evil"), std::string::npos) << live;
  }
  // No table row holds an unescaped '|' inside a code span.
  std::istringstream lines(many.out);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("| ", 0) != 0) continue;
    EXPECT_EQ(line.find("a|b"), std::string::npos) << line;
  }
}

// ---- --formats DIR problems: once, in every command, accurately ----

TEST_F(Hostile, FormatsDirProblemsReportedOnceEverywhere) {
  fs::create_directories(Path("F"));
  for (const auto& e : fs::directory_iterator(std::string(TPT_SOURCE_DIR) + "/parser/formats")) {
    if (e.path().extension() == ".json") fs::copy_file(e.path(), Path("F") + "/" + e.path().filename().string());
  }
  std::string nccl = Read(Path("F/nccl.json"));
  Write("F/nccl.json", nccl.substr(0, 3000));
  const std::string neg = Sample("rules/nccl_error/neg_nccl_healthy.log");
  for (const std::string& cmd : std::vector<std::string> {"analyze " + Q(kCalloc), "events " + Q(kCalloc) + " --summary",
                                "diff " + Q(neg) + " " + Q(kCalloc)}) {
    Result r = RunErr(cmd + " --formats " + Q(Path("F")) + " --skip-bad-formats");
    EXPECT_EQ(Count(r.out, "nccl.json"), 1u) << cmd << "\n" << r.out;
    EXPECT_NE(r.out.find("format file skipped"), std::string::npos) << cmd << "\n" << r.out;
  }
  // A directory named x.json and a symlink loop: skipped with the true reason, like broken JSON.
  fs::create_directories(Path("F/x.json"));
  fs::create_symlink("loop.json", Path("F/loop.json"));
  Result r = RunErr("analyze " + Q(kFounding) + " --formats " + Q(Path("F")) + " --skip-bad-formats");
  EXPECT_EQ(r.rc, 1) << r.out;
  EXPECT_NE(r.out.find("x.json: is a directory"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("x.json: not valid JSON"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("loop.json: cannot open a format file (Too many levels of symbolic links)"),
            std::string::npos)
      << r.out;
}

// ---- repro plans: every gap is a clear exit-2 error ----

TEST_F(Hostile, BadReproPlansAreRefused) {
  const json base = json::parse(Read(Sample("repro/sglang_tp8_rtxpro6000.json")));
  struct Case {
    const char* what;
    std::function<void(json&)> edit;
    const char* message;
  } cases[] = {
      {"unknown fix key", [](json& d) { d["fix"] = {{"mem_fraction_statc", 0.77}}; }, "mem_fraction_statc"},
      {"fractional tp", [](json& d) { d["tp"] = 2.5; }, "$.tp must be a whole number"},
      {"unknown step", [](json& d) { d["failed_step"] = "; rm -rf /"; }, "is not a start-up step"},
      {"zero KV bytes", [](json& d) { d["kv_bytes_per_token"] = 0; }, "kv_bytes_per_token must be > 0"},
      {"fractional fix tp", [](json& d) { d["fix"] = {{"tp", 1.5}}; }, "fix tp must be a whole number"},
  };
  for (const Case& c : cases) {
    json d = base;
    c.edit(d);
    std::string f = Write("p.json", d.dump());
    Result r = Tpt("repro " + Q(f) + " --backend simulated", true);
    EXPECT_EQ(r.rc, 2) << c.what << "\n" << r.out;
    EXPECT_NE(r.out.find(c.message), std::string::npos) << c.what << "\n" << r.out;
  }
  std::string arr = Write("a.json", "[" + base.dump() + "]");
  Result r = Tpt("repro " + Q(arr) + " --backend simulated", true);
  EXPECT_EQ(r.rc, 2) << r.out;
  EXPECT_NE(r.out.find("expected a JSON object"), std::string::npos) << r.out;
  // The untouched plan still runs.
  Result ok = Tpt("repro " + Q(Sample("repro/sglang_tp8_rtxpro6000.json")) + " --backend simulated", true);
  EXPECT_EQ(ok.rc, 0) << ok.out;
}

// ---- -o/--html never overwrite an input log; writes are atomic ----

TEST_F(Hostile, ReportNeverOverwritesAnInput) {
  std::string log = Write("x.log", Read(kFounding));
  for (const char* flag : {"-o", "--html"}) {
    Result r = Tpt("analyze " + Q(log) + " " + flag + " " + Q(log), true);
    EXPECT_EQ(r.rc, 2) << flag << "\n" << r.out;
    EXPECT_NE(r.out.find("would overwrite the input log"), std::string::npos) << r.out;
    EXPECT_EQ(Read(log), Read(kFounding)) << flag;
  }
  // Through a directory input and a symlink to the log, too.
  fs::create_symlink(log, Path("link.log"));
  EXPECT_EQ(Tpt("analyze " + Q(dir_) + " -o " + Q(log)).rc, 2);
  EXPECT_EQ(Tpt("analyze " + Q(Path("link.log")) + " -o " + Q(log)).rc, 2);
  EXPECT_EQ(Read(log), Read(kFounding));
  // A report elsewhere is written whole, with no temporary left beside it.
  fs::create_directories(Path("out"));
  Result ok = Tpt("analyze " + Q(log) + " -o " + Q(Path("out/report.txt")) + " --html " + Q(Path("out/r.html")));
  EXPECT_EQ(ok.rc, 1);
  EXPECT_EQ(Read(Path("out/report.txt")).rfind("Verdict:", 0), 0u);
  size_t files = 0;
  for (const auto& e : fs::directory_iterator(Path("out"))) files += e.is_regular_file();
  EXPECT_EQ(files, 2u);
  struct stat st;
  ASSERT_EQ(stat(Path("out/report.txt").c_str(), &st), 0);
  EXPECT_NE(st.st_mode & 0044, 0u) << "mode " << std::oct << st.st_mode;  // not mkstemp's 0600 under umask 022
  // A symlink stays a symlink (its target is replaced); devices and
  // /dev/stdout are written in place; a directory is refused by name.
  fs::create_symlink("target.txt", Path("out/link.txt"));
  EXPECT_EQ(Tpt("analyze " + Q(log) + " -o " + Q(Path("out/link.txt"))).rc, 1);
  EXPECT_TRUE(fs::is_symlink(Path("out/link.txt")));
  EXPECT_EQ(Read(Path("out/target.txt")).rfind("Verdict:", 0), 0u);
  Result dev = Tpt("analyze " + Q(log) + " -o /dev/stdout");
  EXPECT_EQ(dev.rc, 1);
  EXPECT_EQ(dev.out.rfind("Verdict:", 0), 0u) << dev.out;
  EXPECT_EQ(Tpt("analyze " + Q(log) + " -o /dev/null").rc, 1);
  Result d = Tpt("analyze " + Q(log) + " -o " + Q(Path("out")), true);
  EXPECT_EQ(d.rc, 2);
  EXPECT_NE(d.out.find("it is a directory"), std::string::npos) << d.out;
}

// ---- github strips controls ----

TEST_F(Hostile, GithubHasNoRawControls) {
  std::string f = Write("ctl.log",
                        "node0:9:30 [0] include/alloc.h:185 NCCL WARN Failed to CUDA calloc 6291456 bytes \x07\x08\x0b\x7f"
                        "\xe2\x80\xa8 end\n");
  Result r = Tpt("analyze " + Q(f) + " --format github");
  EXPECT_NE(r.out.find("::error"), std::string::npos) << r.out;
  for (char c : r.out) {
    unsigned char u = static_cast<unsigned char>(c);
    EXPECT_FALSE((u < 0x20 && c != '\n') || u == 0x7f) << int(u);
  }
  EXPECT_EQ(r.out.find("\xe2\x80\xa8"), std::string::npos);
}

// ---- every output format escapes the log text it quotes ----

// One evidence line carrying markup, quotes, a pipe, an ANSI escape and bytes
// that are not UTF-8: each format shows the text and none of it is live.
TEST_F(Hostile, EveryFormatEscapesLogText) {
  std::string f = Write("esc.log",
                        "node0:9:30 [0] include/alloc.h:185 NCCL WARN Failed to CUDA calloc 6291456 bytes "
                        "<script>alert(1)</script> \"q\" a|b \x1b[31mred\x1b[0m X\xff\xfeY bel\x07" "bs\x08" "del\x7f" "csi\xc2\x9b"
                        "end\n");
  const std::string fffd = "\xEF\xBF\xBD";
  auto no_raw = [](const std::string& out, const std::string& fmt) {
    EXPECT_EQ(out.find('\x1b'), std::string::npos) << fmt << ": a raw ESC reaches the reader";
    EXPECT_EQ(out.find('\xff'), std::string::npos) << fmt << ": a byte that is not UTF-8";
    EXPECT_EQ(out.find('\xfe'), std::string::npos) << fmt << ": a byte that is not UTF-8";
    EXPECT_EQ(out.find('\x07'), std::string::npos) << fmt << ": a raw BEL";
    EXPECT_EQ(out.find('\x08'), std::string::npos) << fmt << ": a raw backspace";
  };
  for (const char* fmt : {"text", "json", "markdown", "junit", "sarif", "github", "html"}) {
    Result r = Tpt("analyze " + Q(f) + " --format " + fmt);
    EXPECT_EQ(r.rc, 1) << fmt << ": the NCCL calloc failure is diagnosed\n" << r.out;
    EXPECT_NE(r.out.find("alert(1)"), std::string::npos) << fmt << ": the evidence text is shown\n" << r.out;
    no_raw(r.out, fmt);
    const std::string f_ = fmt;
    if (f_ == "json" || f_ == "sarif") {
      nlohmann::json j = nlohmann::json::parse(r.out, nullptr, false);
      EXPECT_FALSE(j.is_discarded()) << fmt << ": not JSON";
      EXPECT_NE(r.out.find("X" + fffd + fffd + "Y"), std::string::npos) << fmt << ": U+FFFD for each bad byte";
    }
    if (f_ == "html" || f_ == "junit") {
      EXPECT_EQ(r.out.find("<script>alert"), std::string::npos) << fmt << ": live markup";
      EXPECT_NE(r.out.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos) << fmt;
      EXPECT_NE(r.out.find("X" + fffd + fffd + "Y"), std::string::npos) << fmt << ": U+FFFD for each bad byte";
    }
    if (f_ == "text") {
      EXPECT_NE(r.out.find("<script>alert(1)</script>"), std::string::npos) << "text shows it as it was";
    }
    if (f_ == "text" || f_ == "markdown" || f_ == "github") {
      // What a terminal or a rendered page would act on: DEL, and C1's CSI (U+009B).
      EXPECT_EQ(r.out.find('\x7f'), std::string::npos) << fmt << ": a raw DEL";
      EXPECT_EQ(r.out.find("\xc2\x9b"), std::string::npos) << fmt << ": a raw CSI (U+009B)";
    }
  }
  // A file name that is not UTF-8 reaches the machine formats as the run's
  // input: still valid JSON, the bad byte as U+FFFD.
  std::string odd = Write("r\xff.log", Read(f));
  for (const char* fmt : {"json", "sarif"}) {
    Result r = Tpt("analyze " + Q(odd) + " --format " + fmt);
    no_raw(r.out, fmt);
    EXPECT_FALSE(nlohmann::json::parse(r.out, nullptr, false).is_discarded()) << fmt << ": not JSON";
    EXPECT_NE(r.out.find("r" + fffd + ".log"), std::string::npos) << fmt << ": the file name with U+FFFD";
  }
}

}  // namespace
