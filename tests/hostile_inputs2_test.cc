// hostile_inputs2_test.cc: the second hostile-input round (issue #33): the
// built tptriage on files that are not what they claim (directories, FIFOs,
// devices), archives, cut siblings, hostile names, bad rule/format files and
// aliased outputs. Every input is generated here; each test fails on the
// binary before the fix of the defect it names (D1..D20 of the red team).
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
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
std::string Source(const std::string& rel) { return std::string(TPT_SOURCE_DIR) + "/" + rel; }
const std::string kFounding = Source("samples/founding/sglang-tp8-rtxpro6000-mfs050.log");
const std::string kHealthy = Source("samples/logs/sglang-tp4-healthy.log");

Result Tpt(const std::string& args, bool merge_stderr = true) { return tpt::test::Tptriage(args, merge_stderr); }

bool Has(const std::string& hay, const std::string& needle) { return hay.find(needle) != std::string::npos; }

class Hostile2 : public tpt::test::TempDirTest {
 protected:
  // The first `n` lines of the founding log (n = 38: every rank past the
  // weights, no error, no ready line).
  std::string Head(const std::string& name, int n) const {
    std::ifstream in(kFounding);
    std::string line, out;
    for (int i = 0; i < n && std::getline(in, line); ++i) out += line + "\n";
    return Write(name, out);
  }
  // Runs python3 with `code`; the test's folder is the working directory.
  void Py(const std::string& code) const {
    Write("gen.py", code);
    Result r = tpt::test::RunCmd("cd " + Q(dir_) + " && python3 gen.py", true);
    ASSERT_EQ(r.rc, 0) << r.out;
  }
};

// ---- D1, D2: config files are checked for type and size before reading ----

TEST_F(Hostile2, D1_GpuCatalogThatIsADirectoryIsAClearError) {
  fs::create_directories(Path("h/.config/tptriage/gpus.json"));
  Result r = tpt::test::RunCmd("HOME=" + Q(Path("h")) + " XDG_CONFIG_HOME= TPTRIAGE_GPU_CATALOG= " + Bin() +
                                   " analyze " + Q(kFounding),
                               true);
  EXPECT_EQ(r.rc, 2) << r.out;
  EXPECT_TRUE(Has(r.out, "gpus.json: is a directory")) << r.out;
  EXPECT_FALSE(Has(r.out, "terminate called")) << r.out;
  Result p = Tpt("plan --framework vllm --server-version 0.11.0 --gpu H100 --tp 2 --params 8B --dtype bf16 "
                 "--layers 32 --kv-heads 8 --head-dim 128 --gpu-catalog " + Q(dir_));
  EXPECT_EQ(p.rc, 2) << p.out;
  EXPECT_TRUE(Has(p.out, "is a directory, not a GPU catalog")) << p.out;
  // The variable is named when it gave the path.
  Result e = tpt::test::RunCmd("TPTRIAGE_GPU_CATALOG=" + Q(Path("nope.json")) + " " + Bin() + " analyze " +
                                   Q(kFounding),
                               true);
  EXPECT_EQ(e.rc, 2) << e.out;
  EXPECT_TRUE(Has(e.out, "TPTRIAGE_GPU_CATALOG=")) << e.out;
}

TEST_F(Hostile2, D2_DevicesAndFifosAreRefusedByName) {
  // /dev/zero as a catalog, a rule file, a format file, a finding file and a
  // model config: refused at once (was: memory until bad_alloc).
  fs::create_directories(Path("r"));
  fs::create_symlink("/dev/zero", Path("r/disk_full.json"));
  const std::string plan = "plan --framework vllm --server-version 0.11.0 --gpu H100 --tp 2 --params 8B --dtype bf16 "
                           "--layers 32 --kv-heads 8 --head-dim 128";
  fs::create_directories(Path("m"));
  fs::create_symlink("/dev/zero", Path("m/config.json"));
  for (const std::string& cmd :
       {plan + " --gpu-catalog /dev/zero", "analyze " + Q(kFounding) + " --rules " + Q(Path("r")),
        "analyze " + Q(kFounding) + " --findings " + Q(Path("r")),
        "analyze " + Q(kFounding) + " --formats " + Q(Path("r")),
        std::string("plan --framework vllm --server-version 0.11.0 --gpu H100 --tp 2 --model ") + Q(Path("m"))}) {
    Result r = tpt::test::RunCmd("(ulimit -v 2000000; timeout 20 " + Bin() + " " + cmd + ")", true);
    EXPECT_EQ(r.rc, 2) << cmd << "\n" << r.out;
    EXPECT_TRUE(Has(r.out, "character device")) << cmd << "\n" << r.out;
  }
  // A FIFO named like a rule file: refused, never waited on.
  fs::create_directories(Path("f"));
  ASSERT_EQ(mkfifo(Path("f/disk_full.json").c_str(), 0600), 0);
  Result f = tpt::test::RunCmd("timeout 20 " + Bin() + " analyze " + Q(kFounding) + " --rules " + Q(Path("f")), true);
  EXPECT_EQ(f.rc, 2) << f.out;
  EXPECT_TRUE(Has(f.out, "disk_full.json: is a FIFO")) << f.out;
}

// ---- D4: xz decoding has a memory limit ----

TEST_F(Hostile2, D4_XzWithAHugeDictionaryIsRefusedWithTheCommand) {
  // A 1.5 GiB dictionary in the header of a tiny stream: the decoder would
  // allocate it whole.
  Py("import lzma\n"
     "open('big.log.xz','wb').write(lzma.compress(b'hello\\n'*100, format=lzma.FORMAT_XZ, "
     "filters=[{'id': lzma.FILTER_LZMA2, 'dict_size': 1536<<20}]))\n");
  Result r = tpt::test::RunCmd("(ulimit -v 1000000; " + Bin() + " analyze " + Q(Path("big.log.xz")) + ")", true);
  EXPECT_EQ(r.rc, 2) << r.out;
  EXPECT_TRUE(Has(r.out, "MiB to decode")) << r.out;
  EXPECT_TRUE(Has(r.out, "xz -dk")) << r.out;
}

// ---- D7, D8: an archive in a folder is read; an unreadable sibling is never healthy ----

TEST_F(Hostile2, D7_ArchiveInAFolderIsReadAndNestedArchivesAreNamed) {
  fs::create_directories(Path("d"));
  Py("import zipfile\n"
     "z=zipfile.ZipFile('d/r.zip','w'); z.write('" + kFounding + "', 'r.log'); z.close()\n"
     "z=zipfile.ZipFile('n.zip','w'); z.write('d/r.zip', 'inner.zip'); z.write('" + kHealthy + "', 'h.log'); z.close()\n");
  // The failure is in the zip inside the folder: read (was "holds no logs").
  Result r = Tpt("analyze " + Q(Path("d")));
  EXPECT_EQ(r.rc, 1) << r.out;
  EXPECT_TRUE(Has(r.out, "Verdict: kv_pool_no_room")) << r.out;
  // A zip inside a zip: named as not read; the run is not called healthy.
  Result n = Tpt("analyze " + Q(Path("n.zip")));
  EXPECT_EQ(n.rc, 3) << n.out;
  EXPECT_TRUE(Has(n.out, "inner.zip: an archive inside an archive is not read")) << n.out;
  EXPECT_FALSE(Has(n.out, "Verdict: healthy")) << n.out;
}

TEST_F(Hostile2, D8_MissingOrCutSiblingIsNeverHealthy) {
  const std::string h = Head("h.log", 38);
  // The rest of the log, gzip'ed and cut inside its header.
  Py("import gzip\n"
     "rest=''.join(open('" + kFounding + "').readlines()[38:]).encode()\n"
     "open('t.log.gz','wb').write(gzip.compress(rest)[:30])\n");
  for (const std::string& other : {Path("t.log.gz"), Path("missing.log")}) {
    Result r = Tpt("analyze " + Q(h) + " " + Q(other));
    EXPECT_EQ(r.rc, 3) << other << "\n" << r.out;
    EXPECT_FALSE(Has(r.out, "Verdict: healthy")) << other << "\n" << r.out;
    EXPECT_TRUE(Has(r.out, fs::path(other).filename().string() + " could not be read")) << other << "\n" << r.out;
  }
  // An empty sibling was read whole: it stays a warning.
  Write("empty.log", "");
  Result e = Tpt("analyze " + Q(kHealthy) + " " + Q(Path("empty.log")));
  EXPECT_EQ(e.rc, 0) << e.out;
}

// ---- D9: a log cut after the weights whose own ledger is SHORT ----

TEST_F(Hostile2, D9_ShortLedgerBeforeServingIsNotHealthy) {
  const std::string h = Head("h.log", 38);
  Result r = Tpt("analyze " + Q(h));
  EXPECT_EQ(r.rc, 3) << r.out;
  EXPECT_FALSE(Has(r.out, "Verdict: healthy")) << r.out;
  EXPECT_TRUE(Has(r.out, "SHORT")) << r.out;
  EXPECT_TRUE(Has(r.out, "before the server was ready")) << r.out;
  // A healthy log that served is still healthy.
  EXPECT_EQ(Tpt("analyze " + Q(kHealthy)).rc, 0);
}

// ---- D10, D11: names and log text never forge a terminal or workflow-command line ----

TEST_F(Hostile2, D10_HostileFileNamesAreNeutralisedOnStderr) {
  fs::create_directories(Path("r/j1"));
  fs::create_directories(Path("r/j2"));
  fs::copy_file(kFounding, Path("r/j1/f.log"));
  fs::copy_file(kHealthy, Path("r/j2/h.log"));
  Write("r/j2/x\n::add-mask::hunter2\n::error title=forged::x.log", "");
  Write("r/j2/\x1b]0;PWNED\x07\x1b[2Jt.log", "");
  for (const char* format : {"github", "text", "markdown", "json"}) {
    Result r = tpt::test::RunCmd(Bin() + " analyze --runs " + Q(Path("r")) + " --format " + format, true);
    std::istringstream lines(r.out);
    std::string line;
    while (std::getline(lines, line)) {
      size_t i = line.find_first_not_of(" \t");
      if (i == std::string::npos) continue;
      EXPECT_FALSE(line.compare(i, 13, "::add-mask::h") == 0) << format << ": " << line;
      EXPECT_FALSE(line.compare(i, 14, "::error title=") == 0 && Has(line, "forged")) << format << ": " << line;
    }
    EXPECT_FALSE(Has(r.out, "\x1b")) << format;
    EXPECT_FALSE(Has(r.out, "\a")) << format;
  }
}

TEST_F(Hostile2, D11_WrappedLogTextStartsNoWorkflowCommand) {
  std::ifstream in(kFounding);
  std::string line, log;
  while (std::getline(in, line)) {
    if (line.rfind("RuntimeError: Not enough", 0) == 0) line += " ::add-mask::hunter2 ::set-output name=x::y ##[error]z";
    log += line + "\n";
  }
  const std::string f = Write("h.log", log);
  for (const char* format : {"text", "markdown"}) {
    Result r = Tpt("analyze " + Q(f) + " --format " + format, false);
    ASSERT_TRUE(Has(r.out, "add-mask")) << format << "\n" << r.out;  // the text is still shown
    std::istringstream lines(r.out);
    while (std::getline(lines, line)) {
      size_t i = line.find_first_not_of(" \t");
      if (i == std::string::npos) continue;
      EXPECT_FALSE(line.compare(i, 2, "::") == 0) << format << ": " << line;
      EXPECT_FALSE(line.compare(i, 3, "##[") == 0) << format << ": " << line;
    }
  }
}

// ---- D13: plan inputs are bounded; no inf or NaN reaches a plan ----

TEST_F(Hostile2, D13_ImpossibleGpuMemoryIsRefusedNamingTheFlag) {
  const std::string plan = "plan --framework vllm --server-version 0.11.0 --tp 2 --params 8B --dtype bf16 "
                           "--layers 32 --kv-heads 8 --head-dim 128";
  for (const char* gib : {"1e308", "1e-300"}) {
    Write("c.json", std::string(R"({"gpus":[{"name":"X","aliases":["x1"],"memory_gib":)") + gib +
                        R"(,"arch":"hopper","sm":90,"interconnect":"nvlink"}]})");
    Result r = Tpt(plan + " --gpu x1 --gpu-catalog " + Q(Path("c.json")));
    EXPECT_EQ(r.rc, 2) << gib << "\n" << r.out;
    EXPECT_TRUE(Has(r.out, "memory_gib")) << r.out;
    EXPECT_FALSE(Has(r.out, "total inf")) << r.out;
    EXPECT_FALSE(Has(r.out, "-nan")) << r.out;
  }
  for (const char* mem : {"1000000000000000000000000000000GiB", "1B"}) {
    Result r = Tpt(plan + " --gpu-mem " + mem);
    EXPECT_EQ(r.rc, 2) << mem << "\n" << r.out;
    EXPECT_TRUE(Has(r.out, "--gpu-mem")) << mem << "\n" << r.out;
    EXPECT_FALSE(Has(r.out, "--free-at-init")) << mem << "\n" << r.out;
  }
}

// ---- D14: regexes inside rule expressions are compiled at load ----

TEST_F(Hostile2, D14_BadRegexInARuleIsRefusedAtLoad) {
  json rule = json::parse(Read(Source("rules/defs/disk_full.json")));
  for (const char* re : {"(", "(a)\\1", "((a{1000}){1000}){1000}"}) {
    fs::remove_all(Path("r"));
    fs::create_directories(Path("r"));
    rule["when"] = std::string("matches(anchor.text, '") + re + "')";
    Write("r/disk_full.json", rule.dump());
    Result r = Tpt("analyze " + Q(Source("samples/rules/disk_full/pos_inductor_cache.log")) + " --rules " + Q(Path("r")));
    EXPECT_EQ(r.rc, 2) << re << "\n" << r.out;
    EXPECT_TRUE(Has(r.out, "disk_full.json")) << re << "\n" << r.out;
    EXPECT_TRUE(Has(r.out, "does not compile")) << re << "\n" << r.out;
  }
}

// ---- D15: a bad --formats file refuses the run unless --skip-bad-formats ----

TEST_F(Hostile2, D15_BadFormatFileRefusesTheRun) {
  json f = json::parse(Read(Source("parser/formats/sglang.json")));
  f["patterns"][0]["regex"] = "((a{1000}){1000})";
  Write("f/sglang.json", f.dump());
  const std::string log = Source("samples/logs/sglang-tp2-not-enough-memory.log");
  for (const std::string& cmd : {"analyze " + Q(log), "events " + Q(log), "log --no-pager " + Q(log),
                                 "diff " + Q(log) + " " + Q(log)}) {
    Result r = Tpt(cmd + " --formats " + Q(Path("f")));
    EXPECT_EQ(r.rc, 2) << cmd << "\n" << r.out;
    EXPECT_TRUE(Has(r.out, "sglang.json")) << cmd << "\n" << r.out;
    EXPECT_TRUE(Has(r.out, "--skip-bad-formats")) << cmd << "\n" << r.out;
  }
  Result s = Tpt("analyze " + Q(log) + " --formats " + Q(Path("f")) + " --skip-bad-formats");
  EXPECT_NE(s.rc, 2) << s.out;
  EXPECT_TRUE(Has(s.out, "format file skipped")) << s.out;
}

// ---- D16: unknown --kinds names are refused with the list ----

TEST_F(Hostile2, D16_UnknownKindsAreRefused) {
  for (const char* cmd : {"events", "log --no-pager"}) {
    Result r = Tpt(std::string(cmd) + " " + Q(kFounding) + " --kinds not_enough_memry");
    EXPECT_EQ(r.rc, 2) << cmd << "\n" << r.out;
    EXPECT_TRUE(Has(r.out, "not_enough_memry")) << r.out;
    EXPECT_TRUE(Has(r.out, "did you mean not_enough_memory")) << r.out;
  }
  Result ok = Tpt("events " + Q(kFounding) + " --kinds not_enough_memory", false);
  EXPECT_EQ(ok.rc, 0) << ok.out;
  EXPECT_TRUE(Has(ok.out, "\"not_enough_memory\"")) << ok.out;
}

// ---- D17: a pager that cannot start never loses the view ----

TEST_F(Hostile2, D17_MissingPagerShowsTheViewWithAWarning) {
  if (tpt::test::RunCmd("command -v script >/dev/null").rc != 0) GTEST_SKIP() << "no `script` for a terminal";
  Result r = tpt::test::RunCmd("PAGER=/nonexistent/pager script -qec \"" + Bin() + " log " + Q(kFounding) +
                                   "; echo rc=\\$?\" /dev/null",
                               true);
  EXPECT_TRUE(Has(r.out, "rc=0")) << r.out.substr(0, 400);
  EXPECT_TRUE(Has(r.out, "not found")) << r.out.substr(0, 400);
  EXPECT_TRUE(Has(r.out, "Not enough memory")) << r.out.substr(0, 400);
}

// ---- D18: "from N ranks" counts every rank, kept in memory or not ----

TEST_F(Hostile2, D18_RankCountIncludesRanksWhoseEventsWereNotKept) {
  fs::create_directories(Path("r"));
  for (int k : {5, 6, 7}) {
    std::string log;
    for (int i = 0; i < 2000; ++i) {
      log += "[2025-09-02 10:02:14 TP" + std::to_string(k) +
             "] Decode batch. #running-req: 128, #token: 66560, token usage: 0.15, cuda graph: True, gen throughput "
             "(token/s): 3120.87, #queue-req: 0, \n";
    }
    Write("r/rank" + std::to_string(k) + ".log", log);
  }
  Result r = Tpt("analyze " + Q(Path("r")), false);
  EXPECT_TRUE(Has(r.out, "from 3 ranks")) << r.out.substr(0, 300);
}

// ---- D5: a cap on decompressed bytes per run ----

TEST_F(Hostile2, D5_MaxInputBytesStopsDecompressionWithAWarning) {
  Py("import gzip\n"
     "line=b'[2025-09-02 10:02:14 TP0] Decode batch. #running-req: 1, #token: 6, token usage: 0.15, cuda graph: True, "
     "gen throughput (token/s): 31.87, #queue-req: 0, \\n'\n"
     "open('b.log.gz','wb').write(gzip.compress(line*40000))\n");
  Result r = Tpt("analyze " + Q(Path("b.log.gz")) + " --max-input-bytes 1M");
  EXPECT_EQ(r.rc, 3) << r.out;
  EXPECT_TRUE(Has(r.out, "--max-input-bytes limit (1.0 MiB")) << r.out;
  EXPECT_FALSE(Has(r.out, "Verdict: healthy")) << r.out;
  Result bad = Tpt("analyze " + Q(Path("b.log.gz")) + " --max-input-bytes 0");
  EXPECT_EQ(bad.rc, 2) << bad.out;
  EXPECT_TRUE(Has(bad.out, "--max-input-bytes")) << bad.out;
  // Under the default cap the same file is read whole.
  EXPECT_EQ(Tpt("analyze " + Q(Path("b.log.gz"))).rc, 0);
}

// ---- D5: a progress line while a long run is read (cli/progress.h) ----

// stderr alone (stdout thrown away).
Result Stderr(const std::string& args) { return tpt::test::RunCmd("{ " + Bin() + " " + args + " 2>&1 >/dev/null; }"); }

TEST_F(Hostile2, D5_ProgressLineForAnalyzeAndLogsFirstPass) {
  // A name that would recolour the terminal: the line shows it neutralised.
  std::ifstream in(kFounding, std::ios::binary);
  const std::string log = Write("r\x1b[31m.log", std::string(std::istreambuf_iterator<char>(in), {}));
  Result first = Stderr("log --no-pager --progress always " + Q(log));
  EXPECT_TRUE(Has(first.out, "tptriage log: first pass: ")) << first.out;
  EXPECT_TRUE(Has(first.out, " read, now ")) << first.out;
  EXPECT_TRUE(Has(first.out, "r\\x1b[31m.log")) << first.out;
  EXPECT_FALSE(Has(first.out, "\x1b")) << first.out;
  Result an = Stderr("analyze --progress always " + Q(log));
  EXPECT_TRUE(Has(an.out, "tptriage analyze: ")) << an.out;
  EXPECT_TRUE(Has(an.out, " read, now ")) << an.out;
  // Not a terminal (this pipe), and by choice: no line.
  for (const char* args : {"log --no-pager ", "log --no-pager --progress never ", "analyze ", "analyze --progress never "})
    EXPECT_FALSE(Has(Stderr(std::string(args) + Q(log)).out, " read, now ")) << args;
  Result bad = Tpt("log --no-pager --progress sometimes " + Q(log));
  EXPECT_EQ(bad.rc, 2) << bad.out;
  EXPECT_TRUE(Has(bad.out, "--progress 'sometimes': expected auto, always or never")) << bad.out;
}

// ---- D6: duplicate member names are never dropped silently ----

TEST_F(Hostile2, D6_DuplicateMemberNamesAreNamed) {
  Py("import zipfile, warnings\n"
     "warnings.simplefilter('ignore')\n"
     "z=zipfile.ZipFile('d.zip','w')\n"
     "z.write('" + kHealthy + "', 'rank0.log'); z.write('" + kFounding + "', 'rank0.log'); z.close()\n");
  Result r = Tpt("analyze " + Q(Path("d.zip")));
  EXPECT_NE(r.rc, 0) << r.out;
  EXPECT_FALSE(Has(r.out, "Verdict: healthy")) << r.out;
  EXPECT_TRUE(Has(r.out, "more than one file of this name")) << r.out;
}

// ---- D12: environment dumps that disagree are a warning, never merged ----

TEST_F(Hostile2, D12_DisagreeingDumpsAreWarnedNotMerged) {
  Result r = Tpt("analyze " + Q(kFounding) + " " + Q(Source("samples/env/sglang-check-env.txt")) + " " +
                 Q(Source("samples/env/nvidia-smi-q.txt")) + " --format json", false);
  json j = json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out.substr(0, 400);
  const std::string all = j.dump();
  EXPECT_TRUE(Has(all, "disagree on the GPU")) << all.substr(0, 2000);
  // The H200's memory is not given to the RTX PRO 6000.
  EXPECT_NE(j["run"].value("gpu_memory_bytes", int64_t{0}), int64_t{143771} << 20) << j["run"].dump();
  // A total no card has is ignored with a warning, never a negative number.
  std::string q = Read(Source("samples/env/nvidia-smi-q.txt"));
  const size_t at = q.find("143771 MiB");
  ASSERT_NE(at, std::string::npos);
  q.replace(at, 10, "99999999999999999999999 MiB");
  Write("q.txt", q);
  Result o = Tpt("analyze " + Q(kFounding) + " " + Q(Path("q.txt")) + " --format json", false);
  EXPECT_FALSE(Has(o.out, "-9223372036854775808")) << o.out.substr(0, 400);
  EXPECT_TRUE(Has(o.out, "outside what a card has")) << o.out.substr(0, 400);
}

// ---- D19: one output file under two spellings ----

TEST_F(Hostile2, D19_SameOutputUnderTwoSpellingsIsRefused) {
  fs::create_directories(Path("o"));
  Result r = Tpt("analyze " + Q(kFounding) + " --json " + Q(Path("o/x")) + " --sarif " + Q(dir_ + "/./o/../o/x"));
  EXPECT_EQ(r.rc, 2) << r.out;
  EXPECT_TRUE(Has(r.out, "both go to")) << r.out;
  EXPECT_FALSE(fs::exists(Path("o/x")));
  fs::create_symlink("o", Path("link"));
  Result s = Tpt("analyze " + Q(kFounding) + " --json " + Q(Path("o/y")) + " --html " + Q(Path("link/y")));
  EXPECT_EQ(s.rc, 2) << s.out;
}

TEST_F(Hostile2, D6_AFileAndAFolderOfOneNameUnderRunsAreNamed) {
  Py("import zipfile\n"
     "z=zipfile.ZipFile('fa.zip','w')\n"
     "z.writestr('a', open('" + kHealthy + "').read())\n"
     "z.writestr('a/rank0.log', open('" + kFounding + "').read())\n"
     "z.close()\n");
  Result r = Tpt("analyze --runs " + Q(Path("fa.zip")));
  EXPECT_TRUE(Has(r.out, "a: the archive holds a file and a folder of this name")) << r.out;
  EXPECT_TRUE(Has(r.out, "folder's logs were left out")) << r.out;
}

// ---- D20: the messages say what is wrong ----

TEST_F(Hostile2, D20_MessagesNameWhatIsWrong) {
  Py("import zipfile, tarfile, io, json\n"
     "z=zipfile.ZipFile('ok.zip','w'); z.writestr('x.log', open('" + kFounding + "').read()); z.close()\n"
     "t=tarfile.open('x.tar.gz','w:gz'); t.add('" + kFounding + "', arcname='x.log'); t.close()\n"
     "json.dump({'gpus':[{'name':'G%d'%i,'aliases':['g%d'%i],'memory_gib':80,'arch':'hopper','sm':90,"
     "'interconnect':'nvlink'} for i in range(5000)]}, open('cat.json','w'))\n");
  // A path inside an archive that names nothing there: not "holds no logs".
  Result nope = Tpt("analyze " + Q(Path("ok.zip/nope.log")));
  EXPECT_EQ(nope.rc, 2) << nope.out;
  EXPECT_TRUE(Has(nope.out, "nope.log: no such file or folder in " + Path("ok.zip"))) << nope.out;
  EXPECT_FALSE(Has(nope.out, "holds no logs")) << nope.out;
  // A tar on stdin is named as one, not as binary data.
  Result tar = tpt::test::RunCmd(Bin() + " analyze - < " + Q(Path("x.tar.gz")), true);
  EXPECT_EQ(tar.rc, 2) << tar.out;
  EXPECT_TRUE(Has(tar.out, "a gzip-compressed tar archive; pass it as a file")) << tar.out;
  EXPECT_FALSE(Has(tar.out, "looks binary")) << tar.out;
  // diff with stdin on both sides: one stream, said at once.
  Result diff = tpt::test::RunCmd(Bin() + " diff - - < " + Q(kFounding), true);
  EXPECT_EQ(diff.rc, 2) << diff.out;
  EXPECT_TRUE(Has(diff.out, "'-' (stdin) is given 2 times")) << diff.out;
  // A GPU not in a catalog of thousands: the first names and a count, not all of them.
  Result gpu = Tpt("plan --framework vllm --server-version 0.11.0 --gpu nosuch --tp 2 --params 8B --dtype bf16 "
                   "--layers 32 --kv-heads 8 --head-dim 128 --gpu-catalog " + Q(Path("cat.json")));
  EXPECT_EQ(gpu.rc, 2) << gpu.out.substr(0, 400);
  EXPECT_TRUE(Has(gpu.out, "is not in the catalog")) << gpu.out.substr(0, 400);
  EXPECT_LT(gpu.out.size(), 4000u) << "the error lists every GPU of the catalog";
  EXPECT_TRUE(Has(gpu.out, " more")) << gpu.out.substr(0, 400);
}

// ---- D13, D14: a catalog name with an escape sequence; a rule of 100,000 names ----

TEST_F(Hostile2, D13_CatalogNameWithAControlCharacterIsRefused) {
  Write("c.json", "{\"gpus\":[{\"name\":\"X\\u001b[31mRED\",\"aliases\":[\"x1\"],\"memory_gib\":80,\"arch\":\"hopper\","
                  "\"sm\":90,\"interconnect\":\"nvlink\"}]}");
  Result r = Tpt("plan --framework vllm --server-version 0.11.0 --gpu x1 --tp 2 --params 8B --dtype bf16 --layers 32 "
                 "--kv-heads 8 --head-dim 128 --gpu-catalog " + Q(Path("c.json")));
  EXPECT_EQ(r.rc, 2) << r.out;
  EXPECT_TRUE(Has(r.out, "/gpus/0/name")) << r.out;
  EXPECT_TRUE(Has(r.out, "control character")) << r.out;
  EXPECT_FALSE(Has(r.out, "\x1b[31m")) << "the escape reached the terminal";
}

TEST_F(Hostile2, D14_ARuleWithTooManyNamesIsRefusedNotLoadedForHalfAMinute) {
  json rule = json::parse(Read(Source("rules/defs/disk_full.json")));
  for (int i = 0; i < 100000; ++i) rule["let"]["x" + std::to_string(i)] = "1";
  fs::create_directories(Path("r"));
  Write("r/disk_full.json", rule.dump());
  Result r = Tpt("analyze " + Q(Source("samples/rules/disk_full/pos_inductor_cache.log")) + " --rules " + Q(Path("r")));
  EXPECT_EQ(r.rc, 2) << r.out.substr(0, 400);
  EXPECT_TRUE(Has(r.out, "$.let: holds 100")) << r.out.substr(0, 400);
  EXPECT_TRUE(Has(r.out, "at most 1024")) << r.out.substr(0, 400);
}

}  // namespace
