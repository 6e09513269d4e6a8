// consistency_test.cc: the built `tptriage analyze` never contradicts its own
// figures, ranks and runs: the rank it blames, the rank counts, a
// remedy against the value in use, on the bundled samples.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include <unistd.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/cli_run.h"

namespace {

using Result = tpt::test::CmdResult;
using nlohmann::json;

Result Analyze(const std::string& args, bool merge_stderr = false) {
  return tpt::test::RunCmd(std::string("'") + TPTRIAGE_BIN + "' analyze " + args, merge_stderr);
}

std::string Sample(const std::string& rel) { return std::string("'") + TPT_SOURCE_DIR + "/samples/" + rel + "'"; }

json AnalyzeJson(const std::string& rel, int want_rc = 1) {
  Result r = Analyze("--format json " + Sample(rel));
  EXPECT_EQ(r.rc, want_rc) << rel << "\n" << r.out;
  return json::parse(r.out, nullptr, false);
}

// NCCL's `host:pid:tid [2]` lines belong to the rank pid 40213's own init line
// names; rank 2 logged the WARN and no timeout, so it is the one waited for.
TEST(Consistency, NcclHangBlamesTheRankWithoutATimeout) {
  json j = AnalyzeJson("logs/nccl-warn-hang-tp4.log");
  EXPECT_EQ(j["root_cause"], "nccl_timeout_hang");
  const json& d = j["diagnoses"][0];
  EXPECT_EQ(d["rank"], 2) << d.dump(1);
  EXPECT_EQ(d["figures"]["suspect_rank"], 2);
  EXPECT_EQ(d["figures"]["ranks_silent"], "2");
  std::string verdict = j["verdict"];
  EXPECT_NE(verdict.find("(rank 2"), std::string::npos) << verdict;
  bool quoted = false;
  for (const auto& e : d["evidence"]) quoted |= e["rank"] == 2 && e["text"].get<std::string>().find("NCCL WARN") != std::string::npos;
  EXPECT_TRUE(quoted) << d["evidence"].dump(1);
}

// The launcher's lines (sigquit, Killed) are not a rank: 8 of 8, never 9 of 9.
TEST(Consistency, LauncherIsNotCountedAsARank) {
  json j = AnalyzeJson("founding/sglang-tp8-rtxpro6000-mfs050.log");
  std::string verdict = j["verdict"];
  EXPECT_NE(verdict.find("8 of 8 ranks failed"), std::string::npos) << verdict;
  int launchers = 0;
  for (const auto& r : j["ranks"]) {
    if (r["rank"] == -1) {
      EXPECT_EQ(r["role"], "launcher");
      ++launchers;
    } else {
      EXPECT_EQ(r["role"], "rank");
    }
  }
  EXPECT_EQ(launchers, 1);
  json t = AnalyzeJson("logs/sglang-tp2-not-enough-memory.log");
  EXPECT_NE(t["verdict"].get<std::string>().find("2 of 2 ranks failed"), std::string::npos) << t["verdict"];
  Result text = Analyze(Sample("founding/sglang-tp8-rtxpro6000-mfs050.log"));
  // The row of no rank is named by what its lines say: the shell's "Killed"
  // names nothing, so "no rank" (the JSON's role stays "launcher").
  EXPECT_NE(text.out.find("\n  no rank "), std::string::npos) << text.out;
}

// extra_process: rank 2 started with 16 GiB less; the imbalance line printed
// on rank 0 does not make rank 0 the culprit.
TEST(Consistency, ExtraProcessNamesTheShortRank) {
  json j = AnalyzeJson("diff/extra_process/bad");
  EXPECT_EQ(j["root_cause"], "startup_free_memory_short");
  EXPECT_EQ(j["diagnoses"][0]["rank"], 2);
  EXPECT_EQ(j["verdict"].get<std::string>().rfind("startup_free_memory_short (rank 2", 0), 0u) << j["verdict"];
}

// job-1187: the pool fits on the ranks that printed their figures (+1.2 GiB at
// the minimum, +35.9 GiB on the others); rank 2 started with half the memory.
// Never "kv_pool_no_room ... at least 0.85 (increase)" while 0.88 ran.
TEST(Consistency, PoolThatFitsIsNotNoRoomTheOddRankIs) {
  for (const char* run : {"runs/ci/job-1187", "runs/ci/job-1203", "runs/ci/job-1240.log"}) {
    json j = AnalyzeJson(run);
    EXPECT_EQ(j["root_cause"], "startup_free_memory_short") << run;
    for (const auto& d : j["diagnoses"]) {
      EXPECT_NE(d["id"], "kv_pool_no_room") << run;
      for (const auto& rem : d["remedy"]) EXPECT_NE(rem["flag"], "--mem-fraction-static") << run << rem.dump();
    }
  }
  json j = AnalyzeJson("runs/ci/job-1187");
  EXPECT_EQ(j["diagnoses"][0]["rank"], 2);
  EXPECT_NEAR(j["diagnoses"][0]["figures"]["held_gib"].get<double>(), 39.40, 0.01);
}

// The CI hang jobs: every rank's watchdog fired but one; that rank is the one
// the others waited for, and it is named (as in nccl-warn-hang-tp4).
TEST(Consistency, CiHangJobsNameTheRankTheOthersWaitedFor) {
  for (const auto& [run, rank] : std::vector<std::pair<std::string, int>>{{"runs/ci/job-1191", 3}, {"runs/ci/job-1222", 6}}) {
    json j = AnalyzeJson(run);
    EXPECT_EQ(j["root_cause"], "nccl_timeout_hang") << run;
    EXPECT_EQ(j["diagnoses"][0]["rank"], rank) << run << "\n" << j["verdict"];
    EXPECT_EQ(j["verdict"].get<std::string>().rfind("nccl_timeout_hang (rank " + std::to_string(rank), 0), 0u)
        << j["verdict"];
  }
}

}  // namespace

namespace {

// Honest figures: a cell the log did not print is null (JSON) / `?` (text),
// never 0; byte counts are integers; a healthy run is never SHORT.
TEST(ConsistencyLedger, UnknownCellsAreNullNeverZero) {
  json j = AnalyzeJson("logs/vllm-v1-tp2-healthy.log", 0);
  ASSERT_FALSE(j["ledger"].empty()) << j.dump(1);
  for (const auto& row : j["ledger"]) {
    // vLLM 0.11 printed neither the free memory nor the GPU total here.
    EXPECT_TRUE(row["free_at_init_bytes"].is_null()) << row.dump();
    EXPECT_TRUE(row["total_bytes"].is_null()) << row.dump();
    EXPECT_TRUE(row["left_bytes"].is_null()) << row.dump();
    EXPECT_TRUE(row["weights_bytes"].is_number_integer()) << row.dump();
  }
  Result text = Analyze(Sample("logs/vllm-v1-tp2-healthy.log"));
  EXPECT_EQ(text.out.find("SHORT"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("?"), std::string::npos) << text.out;
}

TEST(ConsistencyLedger, HealthyRunIsNeverShort) {
  for (const char* log : {"logs/sglang-tp4-healthy.log", "logs/vllm-v1-tp2-healthy.log", "diff/extra_process/good",
                          "runs/ci/job-1195"}) {
    Result text = Analyze(Sample(log));
    EXPECT_EQ(text.rc, 0) << log << "\n" << text.out;
    EXPECT_EQ(text.out.find("SHORT"), std::string::npos) << log << "\n" << text.out;
  }
}

TEST(ConsistencyLedger, ByteCountsAreIntegers) {
  json j = AnalyzeJson("founding/sglang-tp8-rtxpro6000-mfs050.log");
  for (const auto& row : j["ledger"])
    for (const char* k : {"free_at_init_bytes", "weights_bytes", "reserved_bytes", "left_bytes"})
      EXPECT_TRUE(row[k].is_number_integer()) << k << " " << row.dump();
  const json& repro = j["diagnoses"][0]["repro"];
  for (const char* k : {"free_at_init_bytes", "avail_after_weights_bytes", "weights_bytes_per_rank"})
    EXPECT_TRUE(repro[k].is_number_integer()) << k << " " << repro.dump();
  // The founding shortfall is computed from known inputs: SHORT stays.
  Result text = Analyze(Sample("founding/sglang-tp8-rtxpro6000-mfs050.log"));
  EXPECT_NE(text.out.find("SHORT"), std::string::npos) << text.out;
}

// SGLang's "Load weight end. avail mem=A, mem usage=U" without the begin line:
// free at init is A + U, derived, not 0.
TEST(ConsistencyLedger, SglangFreeAtInitFromWeightLoadEnd) {
  std::string path = ::testing::TempDir() + "/tpt_ledger_no_begin.log";
  {
    FILE* f = std::fopen(path.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs(
        "[2026-03-01 09:12:01] server_args=ServerArgs(model_path='/m', mem_fraction_static=0.5, tp_size=2)\n"
        "[2026-03-01 09:13:40 TP0] Load weight end. type=LlamaForCausalLM, dtype=torch.bfloat16, avail mem=21.70 GB, mem usage=72.30 GB.\n"
        "[2026-03-01 09:13:40 TP1] Load weight end. type=LlamaForCausalLM, dtype=torch.bfloat16, avail mem=21.70 GB, mem usage=72.30 GB.\n",
        f);
    std::fclose(f);
  }
  Result r = Analyze("--format json '" + path + "'");
  json j = json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out;
  ASSERT_EQ(j["ledger"].size(), 2u) << j.dump(1);
  EXPECT_NEAR(j["ledger"][0]["free_at_init_bytes"].get<double>() / 1073741824.0, 94.0, 1e-6);
  std::remove(path.c_str());
}

}  // namespace

namespace {

// TGI: "Shard ready" then the warm-up's OOM and "Not enough memory to handle
// 32768 prefill tokens": warmup_oom, remedy the flag the log names.
TEST(Consistency, TgiWarmupFailureIsWarmupOomWithItsFlag) {
  json j = AnalyzeJson("logs/tgi-warmup-oom-2shards.log");
  EXPECT_EQ(j["root_cause"], "warmup_oom") << j["verdict"];
  bool flag = false;
  for (const auto& r : j["diagnoses"][0]["remedy"]) flag |= r["flag"] == "--max-batch-prefill-tokens";
  EXPECT_TRUE(flag) << j["diagnoses"][0].dump(1);
}

}  // namespace

namespace {

std::string WriteTemp(const std::string& name, const std::string& text) {
  std::string path = ::testing::TempDir() + "/" + name;
  FILE* f = std::fopen(path.c_str(), "w");
  if (f != nullptr) {
    std::fputs(text.c_str(), f);
    std::fclose(f);
  }
  return path;
}

std::string ReadSample(const std::string& rel) {
  std::string path = std::string(TPT_SOURCE_DIR) + "/samples/" + rel, out;
  FILE* f = std::fopen(path.c_str(), "r");
  if (f == nullptr) return out;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
  std::fclose(f);
  return out;
}

// No evidence is not health: a file with nothing understood is exit 4,
// `no_evidence`, never "healthy".
TEST(ConsistencyEvidence, NothingUnderstoodIsNoEvidenceNotHealthy) {
  std::string prose = WriteTemp("tpt_prose.txt",
                                "Shopping list\nmilk, eggs, bread\nThe quick brown fox jumps over the lazy dog.\n"
                                "ssh 22/tcp # The Secure Shell (SSH) Protocol\n");
  std::string meta = WriteTemp("metadata.json", "{\"job\": 1187, \"status\": \"finished\", \"runner\": \"gpu-7\"}\n");
  for (const std::string& p : {prose, meta}) {
    Result r = Analyze("--format json '" + p + "'");
    EXPECT_EQ(r.rc, 4) << p << "\n" << r.out;
    json j = json::parse(r.out, nullptr, false);
    EXPECT_EQ(j["root_cause"], "no_evidence") << p;
    Result t = Analyze("'" + p + "'");
    EXPECT_EQ(t.out.find("Verdict: healthy"), std::string::npos) << t.out;
  }
  // A healthy run with its phases stays healthy.
  EXPECT_EQ(Analyze(Sample("logs/sglang-tp4-healthy.log")).rc, 0);
}

// A version banner is printed as a server starts, before anything that can fail: a log
// whose only understood line is the banner shows no run that got somewhere, so it is no
// evidence. The same paste with its newlines lost (the traceback glued after the banner)
// is cut into its records (parser/unpaste.h GluedRecords) and reads as the error it holds.
TEST(ConsistencyEvidence, AVersionBannerAloneIsNotARunThatGotSomewhere) {
  const std::string banner =
      "(APIServer pid=7) INFO 03-06 01:34:33 [utils.py:287]  \u2584\u2584 \u2584\u2588 \u2588     \u2588     \u2588 "
      "\u2580\u2584\u2580 \u2588  version 0.16.0";
  std::string alone = WriteTemp("tpt_banner.log", banner + "\nthe rest of the log was not pasted\n");
  Result r = Analyze("--format json '" + alone + "'");
  json j = json::parse(r.out, nullptr, false);
  EXPECT_EQ(j["root_cause"], "no_evidence") << r.out;
  // The banner was read (one event): the verdict is about what it shows, not an empty read.
  EXPECT_NE(j["verdict"].get<std::string>().find("1 line(s) understood"), std::string::npos) << r.out;
  EXPECT_NE(r.rc, 0) << r.out;

  std::string glued = WriteTemp(
      "tpt_glued.log", banner +
                           "(APIServer pid=7) Traceback (most recent call last):(APIServer pid=7)   File "
                           "\"/usr/local/bin/vllm\", line 10, in <module>(APIServer pid=7) OSError: org/model is not a "
                           "local folder and is not a valid model identifier\n");
  r = Analyze("--format json '" + glued + "'");
  j = json::parse(r.out, nullptr, false);
  EXPECT_EQ(j["root_cause"], "model_files_unavailable") << r.out;
}

// Two runs are never merged into one verdict.
TEST(ConsistencyRuns, DifferentRunsAreRefusedWithAHint) {
  Result r = Analyze(Sample("founding/sglang-tp8-rtxpro6000-mfs050.log") + " " + Sample("logs/sglang-tp4-healthy.log"),
                     true);
  EXPECT_EQ(r.rc, 2) << r.out;
  EXPECT_NE(r.out.find("not one run"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--runs"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("tp_size"), std::string::npos) << r.out;
  // A directory holding both, given without --runs: the same.
  std::string dir = ::testing::TempDir() + "/tpt_two_runs";
  std::string mk = "mkdir -p '" + dir + "' && cp " + Sample("founding/sglang-tp8-rtxpro6000-mfs050.log") + " " +
                   Sample("logs/sglang-tp4-healthy.log") + " '" + dir + "/'";
  ASSERT_EQ(std::system(mk.c_str()), 0);
  Result d = Analyze("'" + dir + "'", true);
  EXPECT_EQ(d.rc, 2) << d.out;
  EXPECT_NE(d.out.find("--runs"), std::string::npos) << d.out;
}

TEST(ConsistencyRuns, StdinTwiceIsRefusedSameFileTwiceIsReadOnce) {
  std::string founding = Sample("founding/sglang-tp8-rtxpro6000-mfs050.log");
  Result r = Analyze("- - < " + founding, true);
  EXPECT_EQ(r.rc, 2) << r.out;
  EXPECT_NE(r.out.find("stdin"), std::string::npos) << r.out;
  json once = json::parse(Analyze("--format json " + founding).out, nullptr, false);
  Result twice = Analyze("--format json " + founding + " " + founding);
  EXPECT_EQ(twice.rc, 1);
  json j = json::parse(twice.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << twice.out;
  EXPECT_EQ(j["verdict"], once["verdict"]);
  uint64_t ev_once = 0, ev_twice = 0;
  for (const auto& r0 : once["ranks"]) ev_once += r0["events"].get<uint64_t>();
  for (const auto& r1 : j["ranks"]) ev_twice += r1["events"].get<uint64_t>();
  EXPECT_EQ(ev_once, ev_twice);
  bool warned = false;
  for (const auto& w : j["warnings"]) warned |= w.get<std::string>().find("more than once") != std::string::npos;
  EXPECT_TRUE(warned) << j["warnings"].dump();
}

// A log in which the server started several times: split at its start
// lines, the last launch is the answer, each launch listed.
TEST(ConsistencyRuns, RestartLoopIsSplitIntoLaunches) {
  std::string one = ReadSample("founding/sglang-tp8-rtxpro6000-mfs050.log");
  std::string two = ReadSample("founding/sglang-tp8-rtxpro6000-mfs055.log");
  ASSERT_FALSE(one.empty());
  std::string loop = WriteTemp("tpt_restart_loop.log", one + two + two);
  Result r = Analyze("--format json '" + loop + "'");
  EXPECT_EQ(r.rc, 1) << r.out;
  json j = json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out;
  ASSERT_EQ(j["launches"].size(), 3u) << j.dump(1);
  for (const auto& l : j["launches"]) EXPECT_EQ(l["root_cause"], "kv_pool_no_room");
  std::string verdict = j["verdict"];
  EXPECT_EQ(verdict.rfind("started 3 times", 0), 0u) << verdict;
  // The last launch's figures (0.55), not a merge of the three.
  EXPECT_DOUBLE_EQ(j["diagnoses"][0]["figures"]["mem_fraction_static"].get<double>(), 0.55);
  EXPECT_NE(verdict.find("8 of 8 ranks failed"), std::string::npos) << verdict;
  // One start only: no launches listed.
  json single = AnalyzeJson("founding/sglang-tp8-rtxpro6000-mfs050.log");
  EXPECT_TRUE(single["launches"].empty());
}

}  // namespace

namespace {

// Every key of every object, recursively, with its value.
void Walk(const json& j, const std::string& path, const std::function<void(const std::string&, const std::string&, const json&)>& f) {
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) {
      f(path + "/" + it.key(), it.key(), it.value());
      Walk(it.value(), path + "/" + it.key(), f);
    }
  } else if (j.is_array()) {
    for (const auto& x : j) Walk(x, path + "[]", f);
  }
}

// The warm-up and KV failures of TGI, TensorRT-LLM and LMDeploy are replayed from
// their logs (analyze's repro figures -> repro/startup_servers.h), with the Fix's
// value checked the same way; TurboMind's buffers are never logged, so without
// --warmup-bytes its replay is inconclusive and says which flag settles it.
TEST(ConsistencyRepro, StartupServersReplayTheirLogsWithTheFix) {
  struct Case {
    const char* log;
    const char* extra;
    int rc;
    const char* outcome;
    const char* fix_outcome;
    const char* fix_label;
  };
  const Case kCases[] = {
      {"logs/tgi-warmup-oom-2shards.log", "", 0, "reproduced", "passes", "max_batch_prefill_tokens=23552"},
      {"logs/trtllm-kv-insufficient-tp2.log", "", 0, "reproduced", "passes", "free_gpu_memory_fraction=0.79"},
      {"logs/lmdeploy-turbomind-oom.log", "", 3, "inconclusive", "passes", "cache_max_entry_count=0.6"},
      {"logs/lmdeploy-turbomind-oom.log", "--warmup-bytes 2GiB", 0, "reproduced", "passes", "cache_max_entry_count=0.6"},
  };
  for (const Case& c : kCases) {
    SCOPED_TRACE(std::string(c.log) + " " + c.extra);
    Result dry = tpt::test::RunCmd(std::string("'") + TPTRIAGE_BIN + "' repro --dry-run " + Sample(c.log));
    EXPECT_EQ(dry.rc, 0) << dry.out;
    EXPECT_NE(dry.out.find("where each figure came from"), std::string::npos) << dry.out;
    Result r = tpt::test::RunCmd(std::string("'") + TPTRIAGE_BIN + "' repro --backend simulated --format json " +
                                 Sample(c.log) + " " + c.extra);
    EXPECT_EQ(r.rc, c.rc) << r.out;
    json j = json::parse(r.out, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << r.out;
    EXPECT_EQ(j["verdict"]["outcome"], c.outcome) << j["verdict"].dump();
    EXPECT_EQ(j["verdict"]["fix_outcome"], c.fix_outcome) << j["verdict"].dump();
    EXPECT_NE(j["verdict"]["fix_reason"].get<std::string>().find(c.fix_label), std::string::npos) << j["verdict"].dump();
  }
}

// A log kept by a container runtime (Docker's json-file records, one JSON
// object a line) is a log to repro, not a broken analysis: it plans the same
// root cause and figures as the plain log; a cut analysis JSON is still named
// as not valid JSON.
TEST(ConsistencyRepro, ContainerJsonLogIsALogToRepro) {
  const std::string plain = std::string(TPT_SOURCE_DIR) + "/samples/repro/sglang_tp8_not_enough_memory.log";
  std::filesystem::path dir = std::filesystem::temp_directory_path() / ("tpt_cjson_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const std::string wrapped = (dir / "container-json.log").string();
  {
    std::ifstream in(plain);
    std::ofstream out(wrapped);
    std::string line;
    while (std::getline(in, line))
      out << json({{"log", line + "\n"}, {"stream", "stderr"}, {"time", "2025-06-01T10:00:00.000000001Z"}}).dump() << "\n";
  }
  auto plan = [](const std::string& f) {
    Result r = tpt::test::RunCmd(std::string("'") + TPTRIAGE_BIN + "' repro --dry-run --format json '" + f + "'");
    EXPECT_EQ(r.rc, 0) << f << "\n" << r.out;
    json j = json::parse(r.out, nullptr, false);
    return j.is_discarded() ? json() : j["plan"];
  };
  json a = plan(plain), b = plan(wrapped);
  ASSERT_TRUE(a.is_object());
  for (const char* k : {"root_cause", "framework", "tp", "mem_fraction_static", "free_at_init_bytes", "weights_bytes"})
    EXPECT_EQ(b[k], a[k]) << k;
  const std::string cut = (dir / "analysis.json").string();
  {
    Result r = Analyze("--format json '" + plain + "'");
    std::ofstream(cut) << r.out.substr(0, r.out.size() / 2);
  }
  Result r = tpt::test::RunCmd(std::string("'") + TPTRIAGE_BIN + "' repro --dry-run '" + cut + "'", /*merge_stderr=*/true);
  EXPECT_EQ(r.rc, 2) << r.out;
  EXPECT_NE(r.out.find("not valid JSON"), std::string::npos) << r.out;
  std::filesystem::remove_all(dir);
}

// One key style (snake_case) and whole byte counts across analyze, plan, diff, repro.
TEST(ConsistencyJson, SnakeCaseKeysAndIntegerBytesEverywhere) {
  std::string bin = std::string("'") + TPTRIAGE_BIN + "' ";
  const std::vector<std::string> cmds = {
      bin + "analyze --format json " + Sample("founding/sglang-tp8-rtxpro6000-mfs050.log"),
      bin + "plan --framework sglang --version 0.5.3 --gpu 'RTX PRO 6000' --tp 8 --free-at-init 94GiB "
            "--avail-after-weights 21.7GiB --cell-bytes 65536 --mem-fraction-static 0.5 --format json",
      bin + "diff --format json " + Sample("diff/extra_process/good") + " " + Sample("diff/extra_process/bad"),
      bin + "repro --dry-run --format json " + Sample("repro/sglang_tp8_not_enough_memory.log")};
  for (const std::string& c : cmds) {
    Result r = tpt::test::RunCmd(c);
    json j = json::parse(r.out, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << c << "\n" << r.out;
    Walk(j, "", [&](const std::string& path, const std::string& key, const json& v) {
      // Configuration read from a log keeps the log's own names.
      if (path.find("/config/") != std::string::npos || path.find("/differences") != std::string::npos) return;
      bool snake = !key.empty() && key.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_") == std::string::npos;
      EXPECT_TRUE(snake) << c << ": key " << path;
      if (key.size() > 6 && key.compare(key.size() - 6, 6, "_bytes") == 0 && !v.is_null())
        EXPECT_TRUE(v.is_number_integer()) << c << ": " << path << " = " << v.dump();
    });
  }
}

}  // namespace

namespace {

// A document that quotes log lines is prose, not a log: the
// project's own README ("The server dies with \"Not enough memory...\"")
// was diagnosed kv_pool_no_room. Every markdown file of the project is
// no evidence; a log pasted into a document with its marks still counts.
TEST(ConsistencyEvidence, DocumentsQuotingLogLinesAreNoEvidence) {
  namespace fs = std::filesystem;
  size_t docs = 0;
  for (auto it = fs::recursive_directory_iterator(TPT_SOURCE_DIR); it != fs::recursive_directory_iterator(); ++it) {
    std::string name = it->path().filename().string();
    if (it->is_directory() && (name == ".git" || name.rfind("build", 0) == 0)) {
      it.disable_recursion_pending();
      continue;
    }
    if (!it->is_regular_file() || it->path().extension() != ".md") continue;
    ++docs;
    Result r = Analyze("--format json '" + it->path().string() + "'");
    json j = json::parse(r.out, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << it->path() << "\n" << r.out;
    EXPECT_EQ(j["root_cause"], "no_evidence") << it->path() << ": " << j["verdict"];
    EXPECT_EQ(r.rc, 4) << it->path();
  }
  EXPECT_GE(docs, 10u);
  // A results note naming a NCCL WARN in a sentence: understood, but no run.
  std::string note = WriteTemp("tpt_results.md",
                               "Results\n\n(main 3d5dd23): 1,000,000 NCCL WARN lines (68 MB) took 2.1 GB; 1 GiB of\n"
                               "NCCL INFO lines aborted.\n");
  Result n = Analyze("--format json '" + note + "'");
  EXPECT_EQ(n.rc, 4) << n.out;
  // An issue body: the prose mentions the error, the fenced log proves it.
  std::string issue = WriteTemp(
      "tpt_issue.md",
      "### Describe the bug\n\nThe server dies with \"Not enough memory. Please try to increase "
      "--mem-fraction-static\" on 2 GPUs.\n\n```\n"
      "[2025-09-02 10:00:01] server_args=ServerArgs(model_path='m', tp_size=2, mem_fraction_static=0.5)\n"
      "[2025-09-02 10:00:08 TP0] Load weight begin. avail mem=94.00 GB\n"
      "[2025-09-02 10:01:08 TP0] Load weight end. type=LlamaForCausalLM, dtype=torch.bfloat16, avail mem=21.70 GB, "
      "mem usage=72.30 GB.\n"
      "[2025-09-02 10:01:09 TP0] Scheduler hit an exception: Traceback (most recent call last):\n"
      "  File \"/sglang/srt/managers/scheduler.py\", line 100, in run_scheduler_process\n"
      "    scheduler = Scheduler(server_args)\n"
      "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.\n```\n");
  json i = json::parse(Analyze("--format json '" + issue + "'").out, nullptr, false);
  EXPECT_EQ(i["root_cause"], "kv_pool_no_room") << i.dump(1);
  // A one-line paste of the error itself is a log line, not a mention.
  std::string line = WriteTemp("tpt_one_line.log",
                               "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static. "
                               "Current value: mem_fraction_static=0.2\n");
  EXPECT_EQ(json::parse(Analyze("--format json '" + line + "'").out, nullptr, false)["root_cause"], "kv_pool_no_room");
  // A paste in an inline code span that opens at the line's start and closes
  // lines later is the message's own lines, not prose quoting them.
  std::string span = WriteTemp("tpt_inline_span.log",
                               "`RuntimeError: Not enough memory. Please try to increase --mem-fraction-static. "
                               "Current value: mem_fraction_static=0.2\n"
                               "self.max_total_num_tokens=0`\n");
  EXPECT_EQ(json::parse(Analyze("--format json '" + span + "'").out, nullptr, false)["root_cause"], "kv_pool_no_room");
  // uvicorn's access line quotes its own request line: a server's log, not a
  // document. The access lines after a request's error are the server going on.
  std::string served = WriteTemp(
      "tpt_served.log",
      "INFO 03-02 16:00:31 [api_server.py:958] Starting vLLM API server on http://0.0.0.0:8000\n"
      "ERROR 03-02 16:01:02 [serving_chat.py:197] Error in preprocessing prompt inputs\n"
      "Traceback (most recent call last):\n"
      "  File \"/x/vllm/entrypoints/openai/serving_chat.py\", line 181, in create_chat_completion\n"
      "    ) = await self._preprocess_chat(\n"
      "ValueError: This model's maximum context length is 4096 tokens. However, you requested 5000 tokens.\n"
      "INFO:     10.0.0.7:51234 - \"POST /v1/chat/completions HTTP/1.1\" 400 Bad Request\n"
      "INFO:     10.0.0.7:51236 - \"POST /v1/chat/completions HTTP/1.1\" 200 OK\n");
  Result both = Analyze("--format json '" + served + "'", /*merge_stderr=*/true);
  EXPECT_EQ(both.out.find("reads as a document"), std::string::npos) << both.out;
  Result s = Analyze("--format json '" + served + "'");
  EXPECT_EQ(json::parse(s.out, nullptr, false)["root_cause"], "none") << s.out;
  // In a document, a multi-line record whose start line is a message (vLLM's attention
  // selector, read as one record even hard-wrapped) quoted in a code span is prose like a
  // one-line message.
  std::string record_note = WriteTemp(
      "tpt_record_note.md",
      "Notes\n\n- the selector (see cuda.py): `No valid attention backend found for cuda with\n"
      "  AttentionSelectorConfig(...). Reasons: {BACKEND: [...], ...}` ends the start-up.\n"
      "- SGLang dies with \"Not enough memory. Please try to increase --mem-fraction-static\" at 0.5.\n");
  Result rn = Analyze("--format json '" + record_note + "'");
  EXPECT_EQ(json::parse(rn.out, nullptr, false)["root_cause"], "no_evidence") << rn.out;
}

// vLLM's attention selector lists every backend's reasons; cut before the list closes, a
// reason for the GPU may be among the missing ones, so a list that shows only configuration
// reasons is config_error at 0.5, not the 0.75 of a whole list.
TEST(ConsistencyEvidence, AttentionSelectorListCutBeforeItClosesIsOnlyPossible) {
  const std::string head =
      "(EngineCore_DP0 pid=1044) INFO 06-30 09:13:02 [core.py:93] Initializing a V1 LLM engine (v0.22.0) with config: "
      "model='/m', tensor_parallel_size=1\n"
      "ValueError: No valid attention backend found for cuda with\n"
      "AttentionSelectorConfig(head_size=128, dtype=torch.bfloat16, kv_cache_dtype=fp8,\n"
      "block_size=None, use_mla=False, use_sparse=False).\n"
      "Reasons: {\n"
      "  FLASH_ATTN: [kv_cache_dtype not supported],\n";
  auto top = [&](const std::string& name, const std::string& text) {
    json j = json::parse(Analyze("--format json '" + WriteTemp(name, text) + "'").out, nullptr, false);
    EXPECT_EQ(j["root_cause"], "config_error") << j.dump(1);
    return j["diagnoses"][0]["confidence"].get<double>();
  };
  EXPECT_NEAR(top("tpt_selector_cut.log", head), 0.5, 1e-9);
  EXPECT_NEAR(top("tpt_selector_whole.log", head + "  FLASHINFER: [non-causal attention not supported]\n}.\n"), 0.75, 1e-9);
}

// vLLM's V0 engine whose store waited out its timeout for clients: a V0 engine given
// --data-parallel-size waits so for ranks nothing starts (config_error_vllm_v0_data_parallel),
// so a paste cut before the command line is not the network at 0.8; with the flag, the config.
TEST(ConsistencyEvidence, V0StoreTimeoutWithoutTheCommandLineIsNotSurelyTheNetwork) {
  const std::string tail =
      "ERROR 07-21 10:12:35 [engine.py:458] Timed out after 601 seconds waiting for clients. 2/8 clients joined.\n"
      "ERROR 07-21 10:12:35 [engine.py:458] Traceback (most recent call last):\n"
      "ERROR 07-21 10:12:35 [engine.py:458]   File \"/x/vllm/engine/multiprocessing/engine.py\", line 446, in "
      "run_mp_engine\n"
      "ERROR 07-21 10:12:35 [engine.py:458]     engine = MQLLMEngine.from_vllm_config(\n"
      "ERROR 07-21 10:12:35 [engine.py:458]   File \"/x/torch/distributed/rendezvous.py\", line 189, in "
      "_create_c10d_store\n"
      "ERROR 07-21 10:12:35 [engine.py:458]     return TCPStore(\n"
      "ERROR 07-21 10:12:35 [engine.py:458] torch.distributed.DistStoreError: Timed out after 601 seconds waiting "
      "for clients. 2/8 clients joined.\n";
  json cut = json::parse(Analyze("--format json '" + WriteTemp("tpt_v0_store_cut.log", tail) + "'").out, nullptr, false);
  ASSERT_FALSE(cut["diagnoses"].empty()) << cut.dump(1);
  EXPECT_LT(cut["diagnoses"][0]["confidence"].get<double>(), 0.7) << cut.dump(1);
  const std::string head =
      "INFO 07-21 10:02:20 [api_server.py:1395] vLLM API server version 0.9.2\n"
      "INFO 07-21 10:02:20 [cli_args.py:325] non-default args: {'model': '/m', 'tensor_parallel_size': 2, "
      "'data_parallel_size': 4}\n"
      "INFO 07-21 10:02:27 [llm_engine.py:230] Initializing a V0 LLM engine (v0.9.2) with config: model='/m'\n";
  json whole =
      json::parse(Analyze("--format json '" + WriteTemp("tpt_v0_store_whole.log", head + tail) + "'").out, nullptr, false);
  EXPECT_EQ(whole["root_cause"], "config_error") << whole.dump(1);
}

// `none` needs a run that got somewhere; a training job's NCCL set-up is one
// (no serving phases needed).
TEST(ConsistencyEvidence, TrainingLogWithNcclInitIsHealthy) {
  std::string log = WriteTemp(
      "tpt_train.log",
      "W1201 10:00:00.123000 4242 torch/distributed/run.py:793] *****************************************\n"
      "node1:4301:4301 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>\n"
      "node1:4301:4301 [0] NCCL INFO NCCL version 2.21.5+cuda12.4\n"
      "node1:4302:4302 [1] NCCL INFO NCCL version 2.21.5+cuda12.4\n"
      "node1:4301:4350 [0] NCCL INFO comm 0x5566 rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 1000 commId 0xabc - "
      "Init COMPLETE\n"
      "epoch 0 step 100 loss 2.31\n");
  Result r = Analyze("--format json '" + log + "'");
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_EQ(json::parse(r.out, nullptr, false)["root_cause"], "none");
}

}  // namespace

namespace {

std::string HealthyVllmStart() {
  std::string log = ReadSample("logs/vllm-v1-tp2-healthy.log"), out;
  size_t n = 0;
  for (size_t i = 0; i < log.size() && n < 20; ++i) {
    out += log[i];
    n += log[i] == '\n';
  }
  return out;
}

// A log that stops while the server was still starting (weights loading, no
// failure line) stays `none` (exit 0), but its verdict says where it stops and
// that the start is not in the lines; a start that reached ready says nothing of it.
// The verdict of a log written to a temporary file `name`, which must be
// healthy (`none`, exit 0).
std::string HealthyVerdictOf(const char* name, const std::string& text) {
  Result r = Analyze("--format json '" + WriteTemp(name, text) + "'");
  EXPECT_EQ(r.rc, 0) << r.out;
  json j = json::parse(r.out, nullptr, false);
  EXPECT_EQ(j["root_cause"], "none") << r.out;
  return j["verdict"].is_string() ? j["verdict"].get<std::string>() : "";
}

TEST(ConsistencyEvidence, HealthyVerdictSaysWhenTheLogStopsBeforeReady) {
  std::string v = HealthyVerdictOf(
      "tpt_cut_at_weights.log",
      "[2025-03-07 23:50:27 TP0] Init torch distributed begin.\n"
      "[2025-03-07 23:50:27 TP0] Load weight begin. avail mem=22.46 GB\n"
      "[2025-03-07 23:50:28 TP0] Using model weights format ['*.safetensors']\n"
      "Loading safetensors checkpoint shards:  50% Completed | 2/4 [00:00<00:00,  2.85it/s]\n");
  EXPECT_NE(v.find("stops while loading the weights"), std::string::npos) << v;
  Result whole = Analyze("--format json " + Sample("logs/vllm-v1-tp2-healthy.log"));
  json w = json::parse(whole.out, nullptr, false);
  EXPECT_EQ(w["root_cause"], "none");
  EXPECT_EQ(w["verdict"].get<std::string>().find("stops while"), std::string::npos) << w["verdict"];
}

// A server's log that stops while its ranks were being set up (TensorRT-LLM's
// MPI ranks picking their GPUs, nothing after) never finished its first
// phase: still `none`, but the verdict says it stops there (fresh set 7,
// trtllm-9680, a TP 4 start that hung after these lines).
TEST(ConsistencyEvidence, HealthyVerdictSaysWhenTheLogStopsWhileRanksAreSetUp) {
  std::string v = HealthyVerdictOf("tpt_cut_at_rank_setup.log",
                                   "[TensorRT-LLM][INFO] Refreshed the MPI local session\n"
                                   "[TensorRT-LLM][INFO] MPI size: 2, MPI local size: 2, rank: 1\n"
                                   "[TensorRT-LLM][INFO] Refreshed the MPI local session\n"
                                   "[TensorRT-LLM][INFO] MPI size: 2, MPI local size: 2, rank: 0\n"
                                   "[TensorRT-LLM][INFO] Rank 1 is using GPU 1\n"
                                   "[TensorRT-LLM][INFO] Rank 0 is using GPU 0\n");
  EXPECT_NE(v.find("stops while setting up its ranks"), std::string::npos) << v;
}

// A serving benchmark's client report (SGLang's bench_serving, vLLM's bench
// serve: 'Successful requests: N', N > 0) is a server that answered requests:
// healthy with no "stops while setting up" caveat (holdout58 h58-11: a pasted
// report read as no evidence); a report of 0 successes is no evidence.
TEST(ConsistencyEvidence, ABenchmarkReportOfRequestsServedIsAServerThatServed) {
  const std::string block = "sglang: 0.4.6.post1\n"
                            "============ Serving Benchmark Result ============\n"
                            "Backend:                                 sglang\n"
                            "Successful requests:                     %s\n"
                            "Benchmark duration (s):                  192.44\n";
  auto with = [&](const char* n) {
    std::string t = block;
    return t.replace(t.find("%s"), 2, n);
  };
  std::string v = HealthyVerdictOf("tpt_bench_report.log", with("500"));
  EXPECT_EQ(v.find("stops"), std::string::npos) << v;
  Result zero = Analyze("--format json '" + WriteTemp("tpt_bench_zero.log", with("0")) + "'");
  EXPECT_EQ(json::parse(zero.out, nullptr, false)["root_cause"], "no_evidence") << zero.out;
}

// An NCCL job's log (no server) whose last lines are NCCL's bootstrap and
// network selection, no rank's 'Init COMPLETE' nor a result: when the job's
// own lines follow (a script's output), it stays `none` but says the
// communicator's set-up is where NCCL's lines stop (fresh set holdout54);
// when the log ends there (at most a line cut mid-way after it), nothing says
// the ranks connected and NCCL's failures come after such lines, so it is
// `unknown`, quoting the line it ends on (holdout62 h62-07). Once a rank
// printed 'Init COMPLETE' it says nothing.
TEST(ConsistencyEvidence, HealthyVerdictSaysWhenTheLogStopsInNcclSetup) {
  const std::string setup =
      "node1:4100:4100 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.11<0>\n"
      "node1:4100:4100 [0] NCCL INFO NET/Plugin : No plugin found (libnccl-net.so), using internal implementation\n"
      "node1:4100:4100 [0] NCCL INFO cudaDriverVersion 12040\n"
      "NCCL version 2.21.5+cuda12.4\n"
      "node1:4100:4117 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.11<0>\n"
      "node1:4100:4117 [0] NCCL INFO Using network Socket\n";
  std::string v = HealthyVerdictOf("tpt_nccl_setup_then_job_output.log",
                                   setup + "step 1: all_reduce of 16 MiB took 4.1 ms\nstep 2: all_reduce of 16 MiB took 4.0 ms\n");
  EXPECT_NE(v.find("stops while NCCL was setting up its communicator"), std::string::npos) << v;
  for (const std::string& tail : {std::string(), std::string("node1:4100:4117 [0] NCCL INFO ncclCommInitRank comm 0x55d1c0 rank 0 nr")}) {
    Result cut = Analyze("--format json '" + WriteTemp("tpt_cut_in_nccl_setup.log", setup + tail) + "'");
    json j = json::parse(cut.out, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << cut.out;
    EXPECT_EQ(j["root_cause"], "unknown") << cut.out;
    EXPECT_NE(std::string(j["verdict"]).find("ends while NCCL was setting up its communicator"), std::string::npos) << j["verdict"];
    EXPECT_NE(std::string(j["verdict"]).find(":6: node1:4100:4117 [0] NCCL INFO Using network Socket"), std::string::npos) << j["verdict"];
    EXPECT_NE(cut.rc, 0);
  }
  std::string done = HealthyVerdictOf(
      "tpt_nccl_setup_complete.log",
      setup + "node1:4100:4117 [0] NCCL INFO comm 0x55d1c0 rank 0 nranks 2 cudaDev 0 busId 1b000 - Init COMPLETE\n");
  EXPECT_EQ(done.find("stops while"), std::string::npos) << done;
}

// A log cut after the capture's end line (SGLang's "Capture cuda graph end",
// vLLM's "Graph capturing finished", events.json phase_completed: graphs) did not
// stop while capturing: the verdict says "after"; one cut between the begin and
// the end line still says "while".
TEST(ConsistencyEvidence, HealthyVerdictSaysAfterWhenTheCaptureEnded) {
  const std::string begin =
      "[2026-01-12 08:02:10] Memory pool end. avail mem=30.10 GB\n"
      "[2026-01-12 08:02:10] Capture cuda graph begin. This can take up to several minutes. avail mem=29.60 GB\n"
      "[2026-01-12 08:02:10] Capture cuda graph bs [1, 2, 4, 8]\n";
  const std::string end =
      "[2026-01-12 08:02:19] Capture cuda graph end. Time elapsed: 9.02 s. mem usage=0.41 GB. avail mem=29.19 GB.\n"
      "[2026-01-12 08:02:19] max_total_num_tokens=120000, chunked_prefill_size=8192, max_prefill_tokens=16384, "
      "max_running_requests=64, context_len=32768, available_gpu_mem=29.19 GB\n";
  Result done = Analyze("--format json '" + WriteTemp("tpt_cut_after_capture.log", begin + end) + "'");
  json d = json::parse(done.out, nullptr, false);
  EXPECT_EQ(d["root_cause"], "none") << done.out;
  EXPECT_NE(d["verdict"].get<std::string>().find("stops after capturing CUDA graphs"), std::string::npos) << d["verdict"];
  Result mid = Analyze("--format json '" + WriteTemp("tpt_cut_in_capture.log", begin) + "'");
  json m = json::parse(mid.out, nullptr, false);
  EXPECT_EQ(m["root_cause"], "none") << mid.out;
  EXPECT_NE(m["verdict"].get<std::string>().find("stops while capturing CUDA graphs"), std::string::npos) << m["verdict"];
}

// SGLang's custom all-reduce registers the graphs' buffer addresses as its
// capture context exits, on an error too (custom_all_reduce.py capture():
// finally -> register_graph_buffers, "Registering %d cuda graph addresses").
// Every TP rank registering 0 while the capture bar is still at its first
// (largest) batch size, with no capture end, is a capture that failed out of
// sight (sglang PR 11275): unknown, never healthy. The same lines after the
// bar moved on to a later size stay a healthy log cut in capture, and the
// verdict says where it stops although the other ranks printed only the
// registration (the run's furthest phase, not the last rank's).
TEST(ConsistencyEvidence, CaptureClosedWithNothingCapturedIsNotHealthy) {
  const std::string head =
      "[2025-11-02 14:20:11 TP0] Capture cuda graph begin. This can take up to several minutes. avail mem=5.12 GB\n"
      "[2025-11-02 14:20:11 TP0] Capture cuda graph bs [1, 2, 4, 8, 16, 24, 32, 48, 64, 96, 128, 160]\n";
  const std::string regs =
      "[2025-11-02 14:20:14 TP0] Registering 0 cuda graph addresses\n"
      "[2025-11-02 14:20:14 TP2] Registering 0 cuda graph addresses\n"
      "[2025-11-02 14:20:14 TP1] Registering 0 cuda graph addresses\n"
      "[2025-11-02 14:20:14 TP3] Registering 0 cuda graph addresses\n";
  // The log with the capture bar at `bar`: its JSON.
  auto verdict_with_bar = [&](const char* name, const std::string& bar) {
    Result r = Analyze("--format json '" + WriteTemp(name, head + bar + "\n" + regs) + "'");
    return json::parse(r.out, nullptr, false);
  };
  json j = verdict_with_bar("tpt_capture_closed_empty.log", "Capturing batches (bs=160 avail_mem=4.98 GB):   0%|          | 0/12 [00:00<?, ?it/s]");
  EXPECT_EQ(j["root_cause"], "unknown") << j.dump();
  EXPECT_NE(j["verdict"].get<std::string>().find("closed with nothing captured"), std::string::npos) << j["verdict"];
  EXPECT_NE(j["verdict"].get<std::string>().find("bs=160, the first of 12"), std::string::npos) << j["verdict"];
  json l = verdict_with_bar("tpt_capture_cut_later.log", "Capturing batches (bs=96 avail_mem=4.61 GB):  33%|###       | 4/12 [00:03<00:06,  1.2it/s]");
  EXPECT_EQ(l["root_cause"], "none") << l.dump();
  EXPECT_NE(l["verdict"].get<std::string>().find("stops while capturing CUDA graphs"), std::string::npos) << l["verdict"];
}

// A weights OOM whose line shows the weights alone filling most of the card
// (PyTorch's allocated bytes, still in create_weights) is fixed by sharding:
// the Fix is twice the ranks, sized from the line. A checkpoint the log shows
// quantized already (vLLM's config quantization=modelopt_fp4, an NVFP4
// checkpoint) is never told to take --quantization fp8, which vLLM refuses for it.
TEST(ConsistencyEvidence, WeightsOomOfAQuantizedCheckpointIsShardedNotRequantized) {
  Result r = Analyze("--format json " + Sample("rules/oom_weights/pos_vllm_nvfp4_checkpoint_create_weights.log"));
  json j = json::parse(r.out, nullptr, false);
  ASSERT_EQ(j["root_cause"], "weights_oom") << r.out;
  EXPECT_EQ(j["fix"]["line"], "--tensor-parallel-size 2") << j["fix"].dump();
  EXPECT_NE(j["fix"]["why"].get<std::string>().find("22.81 GiB of the 23.52 GiB card"), std::string::npos) << j["fix"].dump();
  for (const auto& rem : j["diagnoses"][0]["remedy"]) EXPECT_NE(rem["flag"], "--quantization") << rem.dump();
}

// A TRT-LLM PyTorch-backend model under Triton Inference Server that loaded:
// the KV pool line (kvCacheManager.cpp [MemUsageChange]) and Triton's glog
// "successfully loaded" (model_lifecycle.cc, its message quoted since 24.x) are
// a run that got somewhere: healthy, not no_evidence; the quoted glog message
// is the program's own quote, not a document quoting a log.
TEST(ConsistencyEvidence, TritonModelLoadedIsARunThatGotSomewhere) {
  const std::string log =
      "[TensorRT-LLM][INFO] Number of tokens per block: 32.\n"
      "[TensorRT-LLM][INFO] [MemUsageChange] Allocated 40.25 GiB for max tokens in paged KV cache (1318912).\n"
      "[TensorRT-LLM][WARNING] Attention workspace size is not enough, increase the size from 0 bytes to 1048576 bytes\n"
      "I0305 09:12:44.201931 1 model_lifecycle.cc:849] \"successfully loaded 'tensorrt_llm'\"\n"
      "I0305 09:12:44.202100 1 server.cc:620] \n";
  Result r = Analyze("--format json '" + WriteTemp("tpt_triton_loaded.log", log) + "'", /*merge_stderr=*/true);
  EXPECT_EQ(r.out.find("reads as a document"), std::string::npos) << r.out;
  json j = json::parse(r.out.substr(0, r.out.rfind('}') + 1), nullptr, false);
  EXPECT_EQ(j["root_cause"], "none") << r.out;
  EXPECT_NE(j["verdict"].get<std::string>().find("after the engine reported ready"), std::string::npos) << j["verdict"];
}

// An illegal memory access reported at the speculative-decoding path's host
// sync (vLLM's RejectionSampler.parse_output, reached only when a step sampled
// draft tokens): the Fix is to serve without speculative decoding, the
// CUDA_LAUNCH_BLOCKING=1 diagnostic the Next step beside it, in text and
// markdown alike; an access fault elsewhere keeps the diagnostic alone.
TEST(ConsistencyEvidence, SpecDecodeAccessFaultLeadsWithTurningItOff) {
  const std::string spec = Sample("rules/illegal_memory_access/pos_vllm_spec_decode_sync.log");
  Result text = Analyze(spec);
  EXPECT_NE(text.out.find("\nFix: remove --speculative-config: "), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("\nNext step: export CUDA_LAUNCH_BLOCKING=1: "), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find("Also try:\n  export CUDA_LAUNCH_BLOCKING=1"), std::string::npos) << text.out;
  Result md = Analyze("--format markdown " + spec);
  EXPECT_NE(md.out.find("**Fix:** remove --speculative-config"), std::string::npos) << md.out;
  EXPECT_NE(md.out.find("**Next step:** `export CUDA_LAUNCH_BLOCKING=1`"), std::string::npos) << md.out;
  // JSON carries the same pair: the fix, and the next step beside it.
  json j = json::parse(Analyze("--format json " + spec).out, nullptr, false);
  EXPECT_EQ(j["fix"]["flag"], "--speculative-config") << j.dump(1);
  EXPECT_EQ(j["next_step"]["line"], "export CUDA_LAUNCH_BLOCKING=1") << j.dump(1);
  Result other = Analyze(Sample("rules/illegal_memory_access/pos_torch_ima.log"));
  EXPECT_NE(other.out.find("\nNext step: export CUDA_LAUNCH_BLOCKING=1: "), std::string::npos) << other.out;
  EXPECT_EQ(other.out.find("speculative"), std::string::npos) << other.out;
}

// NCCL_DEBUG=INFO is no next step for a log that already holds NCCL's INFO
// or WARN lines; a communicator set-up that the device refuses ('operation not
// supported' from init.cc: NCCL >= 2.23 creates a CUDA memory pool per
// communicator) names an NCCL before the pool instead.
TEST(ConsistencyRemedy, NcclDebugIsNotAskedForWhenTheLogHoldsNcclOutput) {
  json pool = json::parse(Analyze("--format json " + Sample("rules/nccl_error/pos_init_memory_pool_not_supported.log")).out,
                          nullptr, false);
  EXPECT_EQ(pool["root_cause"], "nccl_error") << pool.dump(1);
  EXPECT_EQ(pool["fix"]["flag"], "nvidia-nccl-cu12") << pool.dump(1);
  EXPECT_EQ(pool["fix"]["value"], "2.21.5") << pool.dump(1);
  for (const char* rel : {"rules/nccl_error/pos_init_memory_pool_not_supported.log",
                          "rules/nccl_network_config/pos_nccl224_connect_retries_exceeded.log"}) {
    json j = json::parse(Analyze("--format json " + Sample(rel)).out, nullptr, false);
    for (const auto& remedy : j["diagnoses"][0]["remedy"]) EXPECT_NE(remedy["flag"], "NCCL_DEBUG") << rel << "\n" << j.dump(1);
  }
}

// A TGI router that can no longer reach a shard's socket is a dead shard
// (process_crashed), and the next step is the shard's own stderr, which the
// launcher prints; not dmesg first.
TEST(ConsistencyRemedy, TgiRouterLosingAShardPointsAtTheShardStderr) {
  json j = json::parse(Analyze("--format json " + Sample("rules/process_crashed/pos_tgi_router_cannot_reach_dead_shard.log")).out,
                       nullptr, false);
  EXPECT_EQ(j["root_cause"], "process_crashed") << j.dump(1);
  EXPECT_EQ(j["fix"]["flag"], "Shard complete standard error output") << j.dump(1);
}

// A line that says "error" which no rule explains is `unknown`, the line
// quoted; never healthy. An error the server went on after (a
// request's) did not end the run; an INFO line naming the word is no error.
TEST(ConsistencyEvidence, UnexplainedErrorLineIsUnknownWithTheLine) {
  const std::string start = HealthyVllmStart();
  ASSERT_FALSE(start.empty());
  const std::vector<std::string> errors = {
      "(EngineCore_DP0 pid=3010) ERROR 10-14 09:13:50 [gpu_worker.py:300] Could not reach the weights store: 403\n",
      "Error: DownloadError\n",
      "FATAL: the NIC mlx5_0 went down\n",
      "ERROR:root:the tokenizer service is gone\n",
      // A Python exception's own line pasted without its traceback (a TurboMind
      // assertion no rule reads; Barrier.h's is config_error: TP on Windows).
      "RuntimeError: [TM][ERROR]  Assertion fail: /lmdeploy/src/turbomind/models/llama/LlamaWeight.cc:104\n",
      // Docker's refusal to start the next container.
      "docker: Error response from daemon: could not select device driver \"\" with capabilities: [[gpu]].\n"};
  for (const std::string& line : errors) {
    std::string path = WriteTemp("tpt_error_line.log", start + line);
    Result r = Analyze("--format json '" + path + "'");
    EXPECT_EQ(r.rc, 3) << line << r.out;
    json j = json::parse(r.out, nullptr, false);
    EXPECT_EQ(j["root_cause"], "unknown") << line;
    std::string quoted = line.substr(line.find(line.find("ERROR 10-14") != std::string::npos ? "ERROR" : line.substr(0, 5)), 20);
    EXPECT_NE(j["verdict"].get<std::string>().find(quoted), std::string::npos) << j["verdict"];
  }
  // A request's error, then more serving: healthy.
  std::string served = WriteTemp(
      "tpt_request_error.log",
      ReadSample("logs/vllm-v1-tp2-healthy.log") +
          "(APIServer pid=2871) ERROR 10-14 09:15:02 [serving_chat.py:1118] Error in chat completion stream generator.\n"
          "(APIServer pid=2871) INFO:     127.0.0.1:40124 - \"POST /v1/chat/completions HTTP/1.1\" 200 OK\n");
  EXPECT_EQ(Analyze("'" + served + "'").rc, 0);
  // The same kind of line as a traceback's last line, raised in a finalizer at exit
  // ("Exception ignored in:"): the traceback judges it, and the run is healthy.
  std::string at_exit = WriteTemp(
      "tpt_exit_finalizer.log",
      ReadSample("logs/vllm-v1-tp2-healthy.log") +
          "Exception ignored in: <function CustomAllreduce.__del__ at 0x7f3b5c1d2e60>\n"
          "Traceback (most recent call last):\n"
          "  File \"/usr/local/lib/python3.10/dist-packages/vllm/distributed/device_communicators/custom_all_reduce.py\", "
          "line 305, in __del__\n"
          "TypeError: 'NoneType' object is not callable\n");
  EXPECT_EQ(Analyze("'" + at_exit + "'").rc, 0);
  // A warning whose message is an exception's line: no error line.
  std::string warned = WriteTemp("tpt_warning_exception.log",
                                 start + "(EngineCore_DP0 pid=3010) WARNING 10-14 09:13:50 [tokenizer.py:90] "
                                         "ValueError: chat template not found, using the default\n");
  EXPECT_EQ(Analyze("'" + warned + "'").rc, 0);
  // INFO naming the word: no error.
  std::string info = WriteTemp("tpt_info_error.log",
                               start + "(EngineCore_DP0 pid=3010) INFO 10-14 09:13:50 [core.py:700] retry policy: "
                                       "ERROR budget 3\n");
  EXPECT_EQ(Analyze("'" + info + "'").rc, 0);
}

}  // namespace

namespace {

// Every bundled sample agrees with its README (samples/logs/README.md,
// samples/founding/README.md, samples/runs/make_runs.py): the verdict, the
// rank blamed, the rank count, the remedy and the figure the README names.
struct SampleExpectation {
  const char* sample;
  const char* root_cause;
  int rank;               // the primary diagnosis' rank; -2: not checked
  const char* ranks;      // "N of M ranks failed" in the verdict, or ""
  const char* flag;       // the first remedy's flag, or ""
  const char* value;      // its value, or ""
  const char* figure;     // text the verdict must hold, or ""
};

TEST(ConsistencySamples, EverySampleAgreesWithItsReadme) {
  const SampleExpectation kTable[] = {
      {"founding/sglang-tp8-rtxpro6000-mfs050.log", "kv_pool_no_room", 0, "8 of 8", "--mem-fraction-static", "0.84", "-25.3 GiB"},
      {"founding/sglang-tp8-rtxpro6000-mfs055.log", "kv_pool_no_room", 0, "8 of 8", "--mem-fraction-static", "0.84", "-20.6 GiB"},
      {"logs/sglang-tp4-healthy.log", "none", -2, "", "", "", "from 4 ranks"},
      {"logs/sglang-tp2-not-enough-memory.log", "kv_pool_no_room", -2, "2 of 2", "--mem-fraction-static", "0.91", "-1.6 GiB"},
      {"logs/vllm-v1-tp2-healthy.log", "none", -2, "", "", "", "from 2 ranks"},
      {"logs/vllm-v1-tp2-stopped-in-order.log", "none", -2, "", "", "", "stopped-in-order.log:37 (uvicorn"},
      {"logs/vllm-v1-tp2-kv-too-small.log", "kv_pool_too_small", -2, "", "--max-model-len", "60944", "3.72 GiB"},
      {"logs/nccl-warn-hang-tp4.log", "nccl_timeout_hang", 2, "", "TORCH_NCCL_DUMP_ON_TIMEOUT", "1", "rank 2 logged no timeout"},
      {"logs/torch-childfailed-oom-rank1.log", "runtime_oom", 1, "", "", "", "1.95 GiB with 1.21 GiB free"},
      {"logs/tgi-warmup-oom-2shards.log", "warmup_oom", -2, "", "--max-batch-prefill-tokens", "23552", "4.00 GiB with 2.91 GiB free"},
      {"logs/trtllm-kv-insufficient-tp2.log", "warmup_oom", 1, "", "--kv_cache_free_gpu_memory_fraction", "0.79", "108.86 GiB of 140.06 GiB"},
      {"logs/lmdeploy-turbomind-oom.log", "warmup_oom", -2, "", "--cache-max-entry-count", "0.60", "5120 blocks (7.50 GiB"},
      {"logs/xid-79-fallen-off-bus.log", "hardware_fault", -2, "", "", "", "0000:81:00"},
      {"logs/nccl-tests-allreduce-4gpu-healthy.log", "none", -2, "", "", "", "healthy"},
      {"runs/ci/job-1187", "startup_free_memory_short", 2, "", "", "", "39.10 GiB free"},
      {"runs/ci/job-1203", "startup_free_memory_short", 0, "", "", "", "38.45 GiB free"},
      {"runs/ci/job-1240.log", "startup_free_memory_short", 5, "", "", "", "21.70 GiB free"},
      {"runs/ci/job-1191", "nccl_timeout_hang", 3, "7 of 8", "", "", "rank 3 logged no timeout"},
      {"runs/ci/job-1222", "nccl_timeout_hang", 6, "7 of 8", "", "", "rank 6 logged no timeout"},
      {"runs/ci/job-1195", "none", -2, "", "", "", "from 4 ranks"},
  };
  for (const SampleExpectation& e : kTable) {
    SCOPED_TRACE(e.sample);
    Result r = Analyze("--format json " + Sample(e.sample));
    json j = json::parse(r.out, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << r.out;
    EXPECT_EQ(j["root_cause"], e.root_cause);
    EXPECT_EQ(r.rc, std::string(e.root_cause) == "none" ? 0 : 1);
    std::string verdict = j["verdict"];
    if (*e.figure) EXPECT_NE(verdict.find(e.figure), std::string::npos) << verdict;
    if (*e.ranks) EXPECT_NE(verdict.find(std::string(e.ranks) + " ranks failed"), std::string::npos) << verdict;
    if (std::string(e.root_cause) == "none") {
      EXPECT_TRUE(j["diagnoses"].empty());
      continue;
    }
    ASSERT_FALSE(j["diagnoses"].empty());
    const json& d = j["diagnoses"][0];
    if (e.rank != -2) EXPECT_EQ(d["rank"], e.rank) << verdict;
    if (*e.flag) {
      ASSERT_FALSE(d["remedy"].empty()) << d.dump(1);
      EXPECT_EQ(d["remedy"][0]["flag"], e.flag);
      EXPECT_EQ(d["remedy"][0]["value"], e.value);
    }
  }
}

}  // namespace

namespace {

// Hostile input D6: a .gz cut in the middle of start-up is read in part: what was
// read holds no failure, but that is not health.
TEST(ConsistencyEvidence, TruncatedGzMidStartupIsNotHealthy) {
  std::string gz = ::testing::TempDir() + "/tpt_cut_startup.log.gz";
  ASSERT_EQ(std::system(("gzip -c " + Sample("logs/sglang-tp4-healthy.log") + " | head -c 1500 > '" + gz + "'").c_str()), 0);
  Result r = Analyze("--format json '" + gz + "'");
  EXPECT_EQ(r.rc, 3) << r.out;
  json j = json::parse(r.out, nullptr, false);
  EXPECT_EQ(j["root_cause"], "unknown");
  EXPECT_NE(j["verdict"].get<std::string>().find("read only in part"), std::string::npos) << j["verdict"];
  bool warned = false;
  for (const auto& w : j["warnings"]) warned |= w.get<std::string>().find("truncated") != std::string::npos;
  EXPECT_TRUE(warned) << j["warnings"].dump();
  // The whole file, compressed whole, is healthy.
  std::string whole = ::testing::TempDir() + "/tpt_whole.log.gz";
  ASSERT_EQ(std::system(("gzip -c " + Sample("logs/sglang-tp4-healthy.log") + " > '" + whole + "'").c_str()), 0);
  EXPECT_EQ(Analyze("'" + whole + "'").rc, 0);
}

// Hostile input D16: a symlink in a --runs directory that leads back to it (or
// loops) is no run; a link to another run is that run, analysed once.
TEST(ConsistencyRuns, SymlinksInRunsDirAreNotRuns) {
  namespace fs = std::filesystem;
  fs::path dir = fs::path(::testing::TempDir()) / "tpt_runs_links";
  fs::remove_all(dir);
  fs::create_directories(dir / "job-1");
  fs::copy_file(std::string(TPT_SOURCE_DIR) + "/samples/logs/sglang-tp4-healthy.log", dir / "job-1" / "server.log");
  fs::copy_file(std::string(TPT_SOURCE_DIR) + "/samples/founding/sglang-tp8-rtxpro6000-mfs050.log", dir / "job-2.log");
  fs::create_directory_symlink(".", dir / "self");
  fs::create_directory_symlink("..", dir / "parent");
  fs::create_symlink("loop", dir / "loop");
  fs::create_directory_symlink("job-1", dir / "latest");
  Result r = Analyze("--runs '" + dir.string() + "' --format json");
  json j = json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out;
  std::vector<std::string> names;
  for (const auto& run : j["runs"]) names.push_back(run["name"]);
  EXPECT_EQ(names, (std::vector<std::string>{"job-1", "job-2.log"}));
  Result e = tpt::test::RunCmd(std::string("{ '") + TPTRIAGE_BIN + "' analyze --runs '" + dir.string() +
                               "' --format json 2>&1 >/dev/null; }");
  for (const char* link : {"self", "parent", "loop", "latest"})
    EXPECT_NE(e.out.find(std::string("--runs: ") + link + ":"), std::string::npos) << link << "\n" << e.out;
}

}  // namespace

namespace {

// Healthy start-ups one after the other (a server stopped and started again,
// logs concatenated) are launches like failing ones; a folder whose
// subfolders each started the server says it may hold several runs.
TEST(ConsistencyRuns, HealthyConcatenatedStartsAreLaunches) {
  for (const char* rel : {"logs/sglang-tp4-healthy.log", "logs/vllm-v1-tp2-healthy.log"}) {
    std::string one = ReadSample(rel);
    std::string path = WriteTemp("tpt_healthy_twice.log", one + one + one);
    Result r = Analyze("--format json '" + path + "'");
    EXPECT_EQ(r.rc, 0) << rel << "\n" << r.out;
    json j = json::parse(r.out, nullptr, false);
    ASSERT_EQ(j["launches"].size(), 3u) << rel << "\n" << j["verdict"];
    for (const auto& l : j["launches"]) EXPECT_EQ(l["root_cause"], "none");
    std::string verdict = j["verdict"];
    EXPECT_EQ(verdict.rfind("started 3 times", 0), 0u) << verdict;
    // The last launch's count, not the file's.
    json single = json::parse(Analyze("--format json " + Sample(rel)).out, nullptr, false);
    std::string tail = single["verdict"];
    EXPECT_NE(verdict.find(tail), std::string::npos) << verdict << "\n" << tail;
  }
  namespace fs = std::filesystem;
  fs::path dir = fs::path(::testing::TempDir()) / "tpt_two_jobs";
  fs::remove_all(dir);
  for (const char* job : {"job-a", "job-b"}) {
    fs::create_directories(dir / job);
    fs::copy_file(std::string(TPT_SOURCE_DIR) + "/samples/logs/sglang-tp4-healthy.log", dir / job / "server.log");
  }
  Result r = Analyze("'" + dir.string() + "'", true);
  EXPECT_NE(r.out.find("2 folders that each started the server (job-a, job-b)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--runs"), std::string::npos) << r.out;
}

}  // namespace

namespace {

// Warnings are never a root cause on their own, whatever rule
// reads them: a warning after which the run went on is a finding; a
// component that says it is unavailable and falls back is a finding.
TEST(ConsistencyEvidence, WarningTheRunWentOnAfterIsAFindingNotACause) {
  namespace fs = std::filesystem;
  fs::path rules = fs::path(::testing::TempDir()) / "tpt_warn_rules";
  fs::create_directories(rules);
  WriteTemp("tpt_warn_rules/warn_is_cause.json",
            "{\"id\": \"warn_is_cause\", \"title\": \"An NCCL WARN\", \"root_cause\": \"nccl_error\", "
            "\"description\": \"a rule that takes any NCCL WARN for a cause\", \"sources\": [\"test\"], "
            "\"confidence\": 0.9, \"tier\": \"symptom\", \"anchor\": [\"nccl_warn\"], "
            "\"explanation\": \"an NCCL WARN was printed\"}\n");
  std::string healthy = ReadSample("logs/sglang-tp4-healthy.log");
  size_t cut = 0;
  for (int n = 0; n < 12; ++n) cut = healthy.find('\n', cut) + 1;
  const std::string warn = "node1:4301:4350 [0] NCCL WARN NET/IB : Got async event : port error\n";
  std::string went_on = WriteTemp("tpt_warn_then_serve.log", healthy.substr(0, cut) + warn + healthy.substr(cut));
  Result r = Analyze("--rules '" + rules.string() + "' --format json '" + went_on + "'");
  EXPECT_EQ(r.rc, 0) << r.out;
  json j = json::parse(r.out, nullptr, false);
  EXPECT_EQ(j["root_cause"], "none");
  bool found = false;
  for (const auto& f : j["findings"]) found |= f["id"] == "warn_is_cause";
  EXPECT_TRUE(found) << j["findings"].dump(1);
  // The same warning as the run's last word (it stopped there): the rule stands.
  std::string stopped = WriteTemp("tpt_warn_last.log", healthy.substr(0, cut) + warn);
  json s = json::parse(Analyze("--rules '" + rules.string() + "' --format json '" + stopped + "'").out, nullptr, false);
  EXPECT_EQ(s["root_cause"], "nccl_error");

  // Built in: vLLM's symmetric memory says the GPU is not supported and
  // falls back to custom all-reduce; the server serves. The line is a warning
  // by its kind (parser/events.json arch_unsupported_fallback), so it is never
  // a cause, only the findings that name the component and the fallback.
  json v = AnalyzeJson("findings/component_fallback/pos_vllm_symm_mem_fallback.log", 0);
  EXPECT_EQ(v["root_cause"], "none") << v["verdict"];
  std::set<std::string> ids;
  for (const auto& f : v["findings"]) ids.insert(f["id"]);
  EXPECT_TRUE(ids.count("component_fallback")) << v["findings"].dump(1);
  EXPECT_TRUE(ids.count("unsupported_arch_component")) << v["findings"].dump(1);
}


// nccl-tests' closing '# Out of bounds values : 0 OK' (src/common.cu, printed
// after every communicator is destroyed) is a run that got through: healthy,
// not 'no evidence' (fresh set 18: NVIDIA/nccl#1706, nccl-tests#119). The
// FAILED form (wrong values) is an error line: unknown, never healthy.
TEST(ConsistencySamples, NcclTestsSummaryOkIsHealthyAndFailedIsNot) {
  Result ok = Analyze("--format json " + Sample("logs/nccl-tests-allreduce-4gpu-healthy.log"));
  json j = json::parse(ok.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << ok.out;
  EXPECT_EQ(j["root_cause"], "none");
  Result bad = Analyze("--format json " + Sample("logs/nccl-tests-allreduce-4gpu-wrong-values.log"));
  json b = json::parse(bad.out, nullptr, false);
  ASSERT_FALSE(b.is_discarded()) << bad.out;
  EXPECT_EQ(b["root_cause"], "unknown");
  EXPECT_NE(std::string(b["verdict"]).find("Out of bounds values : 12 FAILED"), std::string::npos) << b["verdict"];
  EXPECT_NE(bad.rc, 0);
}

// nccl-tests' result rows (src/common.cu BenchTime: one row per size, after
// its collective ran and was checked) are a run that got somewhere even when
// the paste was cut before the closing line, also under Hydra's -prepend-rank,
// which tags every write and so glues '[0]' inside the rows (MPICH
// src/pm/hydra/ui/utils/uiu.c stdoe_cb; holdout60 h60-12 read no_evidence). A
// row whose #wrong is not 0 is corrupted results: never healthy.
TEST(ConsistencySamples, NcclTestsRowsUnderHydraRankTagsAreARun) {
  Result ok = Analyze("--format json " + Sample("logs/redteam/none--hydra-prepend-rank-nccl-tests.log"));
  json j = json::parse(ok.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << ok.out;
  EXPECT_EQ(j["root_cause"], "none") << j["verdict"];
  EXPECT_EQ(std::string(j["verdict"]).find("setting up its communicator"), std::string::npos) << j["verdict"];
  Result bad = Analyze("--format json " + Sample("logs/nccl-tests-hydra-rows-wrong-values-cut.log"));
  json b = json::parse(bad.out, nullptr, false);
  ASSERT_FALSE(b.is_discarded()) << bad.out;
  EXPECT_EQ(b["root_cause"], "unknown") << b["verdict"];
  EXPECT_NE(std::string(b["verdict"]).find("66.71    524"), std::string::npos) << b["verdict"];
}

}  // namespace

namespace {

// vLLM V1's front end binds its sockets at --data-parallel-address when its
// engines are not all local (vllm/v1/utils.py get_engine_client_zmq_addr):
// an address this host does not have is that flag's value, not VLLM_HOST_IP
// (fresh set holdout51, vllm#31884: the Fix named VLLM_HOST_IP).
TEST(Consistency, VllmFrontendBindNotLocalNamesTheDataParallelAddress) {
  json j = AnalyzeJson("rules/nccl_network_config/pos_vllm_dp_frontend_bind_not_local.log");
  ASSERT_EQ(j["root_cause"], "nccl_network_config") << j.dump(1);
  const json& remedy = j["diagnoses"][0]["remedy"];
  ASSERT_FALSE(remedy.empty()) << j.dump(1);
  EXPECT_EQ(remedy[0]["flag"], "--data-parallel-address") << remedy.dump(1);
  for (const auto& r : remedy) EXPECT_NE(r["flag"], "VLLM_HOST_IP") << remedy.dump(1);
}

}  // namespace
