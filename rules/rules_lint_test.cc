// rules_lint_test.cc: every built-in rule is checked against its own samples.
//
// samples/rules/<rule-id>/pos*.log (or a pos* folder: one run) must make the rule fire as the primary
// diagnosis (root_cause = the rule's root_cause); neg*.log must not make it
// fire at all. Ids are unique (RuleSet rejects duplicates) and every rule has
// at least one sample of each kind, so a rule cannot land untested.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "memory/server_flags.h"
#include "parser/format_set.h"
#include "rules/analyzer.h"
#include "rules/run_index.h"
#include "rules/vocabulary.h"

namespace tpt {
namespace {

namespace fs = std::filesystem;

fs::path SamplesDir() {
  const char* src = std::getenv("TPT_SOURCE_DIR");
  return fs::path(src ? src : ".") / "samples" / "rules";
}

std::vector<fs::path> Logs(const fs::path& dir, const std::string& prefix) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    std::string name = e.path().filename().string();
    // A log, or a folder of one run's inputs (flight-recorder dumps of every rank).
    if (name.rfind(prefix, 0) == 0 && (e.path().extension() == ".log" || e.is_directory())) out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

const Analyzer& TheAnalyzer() {
  static const Analyzer* an = [] {
    auto a = Analyzer::Create({});
    if (!a.ok()) {
      ADD_FAILURE() << a.status().message();
      std::abort();
    }
    return new Analyzer(std::move(*a));
  }();
  return *an;
}

std::string Summary(const Analysis& a) {
  std::string s = "root_cause=" + a.root_cause + " verdict=" + a.verdict + " diagnoses:";
  for (const auto& d : a.diagnoses) s += " " + d.rule + "(" + d.id + ")";
  return s;
}

TEST(RulesLintTest, EveryRuleHasPositiveAndNegativeSamples) {
  for (const Rule& r : TheAnalyzer().rules().rules()) {
    fs::path dir = SamplesDir() / r.id;
    EXPECT_FALSE(Logs(dir, "pos").empty()) << r.id << ": add " << dir.string() << "/pos*.log";
    EXPECT_FALSE(Logs(dir, "neg").empty()) << r.id << ": add " << dir.string() << "/neg*.log";
  }
}

TEST(RulesLintTest, NoSampleFolderWithoutItsRule) {
  std::set<std::string> ids;
  for (const Rule& r : TheAnalyzer().rules().rules()) ids.insert(r.id);
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(SamplesDir(), ec))
    if (e.is_directory()) {
      EXPECT_TRUE(ids.count(e.path().filename().string())) << e.path() << " names no rule";
    }
}

TEST(RulesLintTest, SamplesGiveTheExpectedResult) {
  for (const Rule& r : TheAnalyzer().rules().rules()) {
    fs::path dir = SamplesDir() / r.id;
    for (const auto& log : Logs(dir, "pos")) {
      auto a = TheAnalyzer().Run({log.string()});
      ASSERT_TRUE(a.ok()) << log << ": " << a.status().message();
      ASSERT_FALSE(a->diagnoses.empty()) << log << ": " << Summary(*a);
      EXPECT_EQ(a->diagnoses.front().rule, r.id) << log << ": " << Summary(*a);
      EXPECT_EQ(a->root_cause, r.root_cause) << log << ": " << Summary(*a);
    }
    for (const auto& log : Logs(dir, "neg")) {
      auto a = TheAnalyzer().Run({log.string()});
      ASSERT_TRUE(a.ok()) << log << ": " << a.status().message();
      for (const auto& d : a->diagnoses) EXPECT_NE(d.rule, r.id) << log << ": " << Summary(*a);
    }
  }
}

// A remedy is worded for the server that ran: every positive sample of a known
// server (sglang, vllm, tgi, trtllm, lmdeploy) gives remedies whose flags that
// server spells so (memory/server_flags.h): no --tensor-parallel-size for TGI,
// no --quantization for LMDeploy, which has no such flag.
TEST(RulesLintTest, RemediesSpeakTheRunsServer) {
  int checked = 0;
  for (const Rule& r : TheAnalyzer().rules().rules()) {
    for (const auto& log : Logs(SamplesDir() / r.id, "pos")) {
      auto a = TheAnalyzer().Run({log.string()});
      ASSERT_TRUE(a.ok()) << log << ": " << a.status().message();
      if (!memory::IsKnownServer(a->run.framework)) continue;
      for (const auto& d : a->diagnoses)
        for (const auto& rem : d.remedy) {
          std::string flag = rem.flag, value = rem.value;
          memory::Spelling how = memory::SpellForServer(a->run.framework, &flag, &value);
          EXPECT_EQ(how, memory::Spelling::kKept) << log << " (" << a->run.framework << "): remedy " << rem.flag << " "
                                                  << rem.value << " of " << d.rule << " is not this server's flag ("
                                                  << flag << " " << value << ")";
          ++checked;
        }
    }
  }
  EXPECT_GT(checked, 100);  // the samples of five servers, most with remedies
}

// A remedy names one server flag, so the engine can word it for the run's
// server (memory/server_flags.h SpellForServer) or leave it out where that
// server has none: a flag text that joins two servers' spellings of one knob
// ("--enforce-eager / --disable-cuda-graph") passes through unworded and tells
// a TensorRT-LLM run to pass vLLM's flag. Checked over every rule's remedies.
TEST(RulesLintTest, EveryRemedyNamesOneServerFlag) {
  std::set<std::string> server_flags;
  for (const char* s : {"sglang", "vllm", "tgi", "trtllm", "lmdeploy"}) {
    memory::ServerFlags f = memory::FlagsOf(s);
    for (const std::string& x : {f.fraction, f.tp, f.context, f.kv8_flag, f.fp8_weights_flag, f.eager_flag})
      if (!x.empty()) server_flags.insert(x);
  }
  int checked = 0;
  for (const Rule& r : TheAnalyzer().rules().rules())
    for (const auto& rem : r.remedy) {
      std::istringstream words(rem.flag);
      std::string w;
      int flags = 0;
      bool server = false;
      while (words >> w) {
        if (w.rfind("-", 0) == 0) ++flags;
        server |= server_flags.count(w) > 0;
      }
      EXPECT_FALSE(server && flags > 1) << r.id << ": remedy '" << rem.flag
                                        << "' joins several flags, one of them a server's own: give each its own remedy";
      ++checked;
    }
  EXPECT_GT(checked, 100);
}

// The rank each listed sample's primary diagnosis blames, as read off the log
// by hand (samples/rules/expected_ranks.json). Every positive sample of a rule
// that names a suspect (`suspect_rank`) is listed, so each path of each
// rank-blaming rule is pinned on its rank.
TEST(RulesLintTest, SamplesBlameTheExpectedRank) {
  std::ifstream in(SamplesDir() / "expected_ranks.json");
  ASSERT_TRUE(in) << (SamplesDir() / "expected_ranks.json");
  nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  ASSERT_TRUE(j.is_object() && j["ranks"].is_object()) << "expected_ranks.json: {\"ranks\": {\"rule/pos.log\": {\"rank\": N}}}";
  const nlohmann::json& ranks = j["ranks"];
  int suspect_rules = 0;
  for (const Rule& r : TheAnalyzer().rules().rules()) {
    bool names_suspect = std::any_of(r.lets.begin(), r.lets.end(), [](const auto& l) { return l.first == "suspect_rank"; });
    if (!names_suspect) continue;
    ++suspect_rules;
    for (const auto& log : Logs(SamplesDir() / r.id, "pos")) {
      std::string key = r.id + "/" + log.filename().string();
      EXPECT_TRUE(ranks.contains(key)) << key << ": the rule names a suspect rank; list the rank this sample must blame in "
                                       << "samples/rules/expected_ranks.json";
    }
  }
  EXPECT_GE(suspect_rules, 4);
  for (const auto& [key, want] : ranks.items()) {
    fs::path log = SamplesDir() / key;
    ASSERT_TRUE(fs::exists(log)) << key << ": no such sample";
    ASSERT_TRUE(want.contains("rank") && want["rank"].is_number_integer() && want.value("why", "") != "")
        << key << ": {\"rank\": N, \"why\": \"...\"}";
    auto a = TheAnalyzer().Run({log.string()});
    ASSERT_TRUE(a.ok()) << key << ": " << a.status().message();
    ASSERT_FALSE(a->diagnoses.empty()) << key << ": " << Summary(*a);
    EXPECT_EQ(a->diagnoses.front().rank, want["rank"].get<int>())
        << key << " (" << want["why"].get<std::string>() << "): " << Summary(*a);
  }
}

// Every error kind the parser can emit (a failure kind of parser/EVENTS.md
// "Errors" or "Consequences" that some built-in pattern or block yields) is
// the anchor of at least one rule, as a cause, a symptom or a consequence:
// otherwise a log holding only that error would read `unknown` forever.
TEST(RulesLintTest, EveryFailureKindTheParserEmitsIsClaimedByARule) {
  auto formats = FormatSet::LoadBuiltin();
  ASSERT_TRUE(formats.ok()) << formats.status().message();
  std::set<std::string> emitted;
  for (const PatternSpec& p : formats->patterns()) emitted.insert(p.kind);
  for (const BlockSpec& b : formats->blocks()) emitted.insert(b.kind);
  std::set<std::string> claimed;
  for (const Rule& r : TheAnalyzer().rules().rules())
    for (const std::string& k : r.anchor_kinds) claimed.insert(k);
  int failure_kinds = 0;
  for (const std::string& k : emitted) {
    if (!IsFailureKind(k)) continue;
    ++failure_kinds;
    EXPECT_TRUE(claimed.count(k)) << "event kind '" << k
                                  << "' is emitted by parser/formats but no rule anchors it: add it to a rule's anchor "
                                     "(cause, symptom or consequence)";
  }
  EXPECT_GE(failure_kinds, 30);
}

std::string ReadText(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Every kind the parser emits is read by something: a failure kind by a rule's
// anchor (above); any other kind by a rule or finding that names it, by the
// phase timeline or the engine's flags (parser/events.json `phase`,
// `phase_completed`, `running`, `progress`, `warning`), by the
// source file its `read_by` names (which must name the kind), or it carries a
// `harmless` reason. A kind nobody reads is a parser pattern that does nothing.
TEST(RulesLintTest, EveryKindTheParserEmitsIsReadOrDeclaredHarmless) {
  auto formats = FormatSet::LoadBuiltin();
  ASSERT_TRUE(formats.ok()) << formats.status().message();
  std::set<std::string> emitted;
  for (const PatternSpec& p : formats->patterns()) emitted.insert(p.kind);
  for (const BlockSpec& b : formats->blocks()) emitted.insert(b.kind);
  std::string rule_texts;
  for (const char* dir : {"rules/defs", "rules/findings"})
    for (const auto& f : fs::directory_iterator(dir))
      if (f.path().extension() == ".json") rule_texts += ReadText(f.path());
  ASSERT_GT(rule_texts.size(), 10000u) << "run from the source directory";
  size_t read = 0;
  for (const std::string& k : emitted) {
    const EventKind* kind = FindEventKind(k);
    ASSERT_NE(kind, nullptr) << "'" << k << "' is emitted by parser/formats but not in parser/events.json";
    if (!kind->read_by.empty()) {
      // The named file must really read the kind.
      std::string src = ReadText(kind->read_by);
      EXPECT_NE(src.find("\"" + k + "\""), std::string::npos) << k << ": read_by " << kind->read_by << " does not name it";
      ++read;
      continue;
    }
    if (kind->failure) continue;  // anchored by a rule: EveryFailureKindTheParserEmitsIsClaimedByARule
    const bool named = rule_texts.find("'" + k + "'") != std::string::npos ||
                       rule_texts.find("\"" + k + "\"") != std::string::npos ||
                       rule_texts.find("\"" + k + "/") != std::string::npos;
    // Kinds the engine reads by their vocabulary flags (the phase timeline, what
    // shows a job ran, what is a warning by nature).
    const bool timeline = !kind->phase.empty() || !kind->phase_completed.empty() || kind->running ||
                          kind->progress || kind->warning;
    EXPECT_TRUE(named || timeline || !kind->harmless.empty())
        << "event kind '" << k << "' is emitted but nothing reads it: name it in a rule or finding, or give it "
        << "read_by (the source file that reads it) or harmless (why not) in parser/events.json";
    if (named || timeline) ++read;
  }
  EXPECT_GE(read, 30u);  // the lint saw the kinds (36 when written)
}

// The primary diagnosis of samples/rules/<rule>/<sample>, which must be
// that rule's (tests that read a sample's remedies).
Diagnosis PrimaryOf(const std::string& rule, const std::string& sample) {
  auto a = TheAnalyzer().Run({(SamplesDir() / rule / sample).string()});
  if (!a.ok() || a->diagnoses.empty()) {
    ADD_FAILURE() << rule << "/" << sample << ": " << (a.ok() ? Summary(*a) : std::string(a.status().message()));
    return Diagnosis();
  }
  EXPECT_EQ(a->diagnoses.front().rule, rule) << Summary(*a);
  return a->diagnoses.front();
}

// A custom all-reduce failure in register_graph_buffers (after the capture,
// each rank opening its peers' IPC handles of the buffers their graphs
// captured) says that step and what the log cannot tell; the P2P platform is
// blamed only when the line says peer access (fresh set holdout51: SGLang's
// Llama-4 on 8 x H100 NVLink was told "this platform's P2P path does not
// support it").
TEST(RulesLintTest, CustomAllReduceGraphRegistrationIsNotBlamedOnP2p) {
  Diagnosis g = PrimaryOf("custom_allreduce_failure", "pos_sglang_register_graph_buffers_invalid_argument.log");
  EXPECT_NE(g.explanation.find("register_graph_buffers"), std::string::npos) << g.explanation;
  EXPECT_EQ(g.explanation.find("P2P path does not support"), std::string::npos) << g.explanation;
  Diagnosis p = PrimaryOf("custom_allreduce_failure", "pos_sglang_rtx4090_peer.log");
  EXPECT_NE(p.explanation.find("P2P path does not support"), std::string::npos) << p.explanation;
  Diagnosis k = PrimaryOf("custom_allreduce_failure", "pos_sgl_kernel_location_without_traceback.log");
  EXPECT_EQ(k.explanation.find("P2P path does not support"), std::string::npos) << k.explanation;
}

// A quantized weight whose per-rank slice is not whole Marlin tiles (16 x 64:
// vLLM gptq_marlin_repack.cu 'size_n = N is not divisible by tile_n_size = 64')
// is the TP size cutting a dimension too finely, not memory: the Fix names the
// TP size at which the slice is whole tiles (halving TP doubles the slice), or,
// at TP 1, a checkpoint that does not go through Marlin; never more TP or
// --quantization fp8 (fresh set 16, GLM-4.5-Air FP8 on 8 x RTX 3090, read
// weights_oom with both of those as its Fix).
TEST(RulesLintTest, MarlinTileSliceNamesASmallerTpOrACheckpoint) {
  Diagnosis d = PrimaryOf("config_error", "pos_vllm_fp8_marlin_tile_slice_tp8.log");
  ASSERT_FALSE(d.remedy.empty());
  EXPECT_EQ(d.remedy.front().flag, "--tensor-parallel-size");
  EXPECT_EQ(d.remedy.front().direction, "decrease");
  EXPECT_EQ(d.remedy.front().value, "4");  // 1408 a rank at TP 8: 2816 = 44 tiles of 64 at TP 4
  for (const auto& r : d.remedy) EXPECT_NE(r.flag, "--quantization") << r.why;
  Diagnosis tp1 = PrimaryOf("config_error", "pos_sglang_int4_marlin_tile_tp1.log");
  ASSERT_FALSE(tp1.remedy.empty());
  EXPECT_EQ(tp1.remedy.front().flag, "checkpoint");  // TP 1: no smaller TP to take
  for (const auto& r : tp1.remedy) EXPECT_NE(r.direction, "decrease") << r.flag;
}

// An op with no kernel for this GPU that is not attention (a quantised GEMM:
// vLLM's gptq_marlin_gemm through torch.ops._C) is fixed by a build of that op
// for this architecture, not by another attention backend: the remedy names
// the op, and --attention-backend is not offered (fresh set 6, vllm-20193).
TEST(RulesLintTest, NoKernelImageInANonAttentionOpNamesTheOpNotAnAttentionBackend) {
  Diagnosis d = PrimaryOf("unsupported_gpu_arch", "pos_vllm_quant_gemm_no_kernel_image.log");
  ASSERT_FALSE(d.remedy.empty());
  EXPECT_NE(d.remedy.front().why.find("gptq_marlin_gemm"), std::string::npos) << d.remedy.front().why;
  for (const auto& r : d.remedy) EXPECT_NE(r.flag, "--attention-backend") << r.why;
}

// An illegal memory access in a run with the fused all-reduce + RMSNorm kernel
// on (vLLM's fuse_allreduce_rms pass, SGLang's --enable-flashinfer-allreduce-fusion)
// names the fusion below kSureEnough, with the illegal access as the runner-up
// and turning the fusion off as the test and the workaround: the taxonomy's
// "illegal access before the all-reduce it surfaced in" gives way to the rule
// written for that kernel (outranks.unless_rule). Fresh check: corpus
// jupiter-gh200-fuse-allreduce-rms-ima, whose fix was turning the fusion off.
TEST(RulesLintTest, IllegalAccessWithTheFusedAllReduceOnNamesTheFusionBelowSure) {
  const struct {
    const char* sample;
    const char* flag;
  } cases[] = {{"pos_vllm_fusion_warmup_ima.log", "--compilation-config.pass_config.fuse_allreduce_rms"},
               {"pos_sglang_fusion_decode_ima.log", "--enable-flashinfer-allreduce-fusion"}};
  for (const auto& c : cases) {
    auto run = TheAnalyzer().Run({(SamplesDir() / "fused_allreduce_illegal_access" / c.sample).string()});
    ASSERT_TRUE(run.ok()) << c.sample;
    const Analysis& a = *run;
    ASSERT_GE(a.diagnoses.size(), 2u) << c.sample;
    EXPECT_EQ(a.diagnoses[0].rule, "fused_allreduce_illegal_access") << c.sample;
    EXPECT_LT(a.diagnoses[0].confidence, kSureEnough) << c.sample;
    EXPECT_EQ(a.diagnoses[1].id, "illegal_memory_access") << c.sample;
    EXPECT_EQ(a.verdict.rfind("Possible: ", 0), 0u) << a.verdict;
    ASSERT_FALSE(a.diagnoses[0].remedy.empty()) << c.sample;
    EXPECT_EQ(a.diagnoses[0].remedy.front().flag, c.flag) << c.sample;
  }
}

// A bare 'No space left on device' (no path, no write named) is the disk only
// likely: ENOSPC is also /dev/shm, a tmpfs or inotify's watches. It reads below
// kSureEnough with df as the next step; with the path it stays disk_full at 0.85
// (fresh set 13: a cut of vllm-ascend#10363, a SemLock on a full /dev/shm, read
// disk_full 0.85 once the SemLock frames were cut away).
TEST(RulesLintTest, BareEnospcIsADiskOnlyBelowSure) {
  auto bare = TheAnalyzer().Run({(SamplesDir() / "disk_full_unplaced" / "pos_bare_enospc_engine_core.log").string()});
  ASSERT_TRUE(bare.ok());
  ASSERT_FALSE(bare->diagnoses.empty());
  EXPECT_EQ(bare->root_cause, "disk_full");
  EXPECT_LT(bare->diagnoses[0].confidence, kSureEnough);
  ASSERT_FALSE(bare->diagnoses[0].remedy.empty());
  EXPECT_EQ(bare->diagnoses[0].remedy.front().flag, "df");
  EXPECT_EQ(bare->diagnoses[0].remedy.front().kind, "next_step");
  auto placed = TheAnalyzer().Run({(SamplesDir() / "disk_full_unplaced" / "neg_enospc_with_path.log").string()});
  ASSERT_TRUE(placed.ok());
  ASSERT_FALSE(placed->diagnoses.empty());
  EXPECT_EQ(placed->diagnoses[0].rule, "disk_full");
  EXPECT_GE(placed->diagnoses[0].confidence, kSureEnough);
}

// Ray Serve's "Application 'X' is ready at URL." (serve/_private/client.py
// deploy_applications, once the app is RUNNING and its proxies serve) is a start.
TEST(RulesLintTest, RayServeApplicationReadyIsAStart) {
  auto a = TheAnalyzer().Run({(SamplesDir() / "process_crashed" / "neg_ray_serve_llm_ready_then_teardown.log").string()});
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->root_cause, "none");
  EXPECT_EQ(a->verdict.find("before the server said it was ready"), std::string::npos) << a->verdict;
}

// Every outranks.unless_rule names a built-in rule of the surface's root cause
// (a misspelt name would silently keep the cause ahead).
TEST(RulesLintTest, OutranksUnlessRuleNamesARuleOfTheSurface) {
  int named = 0;
  for (const RootCause& rc : RootCauses())
    for (const Outranks& o : rc.outranks) {
      if (o.unless_rule.empty()) continue;
      ++named;
      const Rule* found = nullptr;
      for (const Rule& r : TheAnalyzer().rules().rules())
        if (r.id == o.unless_rule) found = &r;
      ASSERT_NE(found, nullptr) << rc.id << " outranks " << o.id << " unless_rule " << o.unless_rule;
      EXPECT_EQ(found->root_cause, o.id) << o.unless_rule;
    }
  EXPECT_GE(named, 1);
}

// vLLM's all-reduce + RMSNorm fusion pass (vllm/compilation/collective_fusion.py)
// failing to create FlashInfer's workspace is fixed by turning that pass off
// (pass_config.fuse_allreduce_rms), which --disable-custom-all-reduce does
// not do: that switch leads the remedies (fresh set 6, vllm-34891).
TEST(RulesLintTest, AllReduceFusionPassFailureLeadsWithThePassSwitch) {
  Diagnosis d = PrimaryOf("custom_allreduce_failure", "pos_vllm_allreduce_fusion_pass_no_multicast.log");
  ASSERT_FALSE(d.remedy.empty());
  EXPECT_EQ(d.remedy.front().flag, "--compilation-config.pass_config.fuse_allreduce_rms");
  EXPECT_EQ(d.remedy.front().value, "false");
}

// TensorRT-LLM has no --disable-custom-all-reduce. An engine (the C++
// runtime's log) whose custom all-reduce workspace cannot open its peers' IPC
// buffers is rebuilt without it (trtllm-build --use_custom_all_reduce disable,
// plugin/plugin.py); the PyTorch flow ([TRT-LLM] lines, tensorrt_llm/_torch
// frames) chooses it at run time: allreduce_strategy NCCL (llmapi/llm_args.py).
// Neither is offered the vLLM/SGLang switch (fresh set holdout22, trtllm-1498).
TEST(RulesLintTest, TrtllmCustomAllReduceGetsTrtllmsOwnSwitch) {
  const struct {
    const char* sample;
    const char* flag;
    const char* value;
  } cases[] = {{"pos_trtllm_engine_ipc_workspace.log", "--use_custom_all_reduce", "disable"},
               {"pos_trtllm_pytorch_flow_ipc_open.log", "allreduce_strategy", "NCCL"}};
  for (const auto& c : cases) {
    Diagnosis d = PrimaryOf("custom_allreduce_failure", c.sample);
    ASSERT_FALSE(d.remedy.empty()) << c.sample;
    EXPECT_EQ(d.remedy.front().flag, c.flag) << c.sample;
    EXPECT_EQ(d.remedy.front().value, c.value) << c.sample;
    for (const auto& r : d.remedy) EXPECT_NE(r.flag, "--disable-custom-all-reduce") << c.sample << ": " << r.why;
  }
}

// An OOM while vLLM allocates the KV cache tensors it sized after profiling
// (gpu_model_runner.py initialize_kv_cache_tensors -> _allocate_kv_cache_tensors)
// is fixed by a smaller gpu_memory_utilization budget, by at least the failing
// tensor's share of the card (2.50 of 44.53 GiB: 0.06 off the 0.93 in use), not
// by --max-num-batched-tokens, which sizes the profiling batch that passed
// (fresh set 8, vllm-42147).
TEST(RulesLintTest, KvTensorAllocOomLowersTheUtilizationBudget) {
  Diagnosis d = PrimaryOf("oom_warmup", "pos_vllm_kv_tensor_alloc_after_profile.log");
  ASSERT_FALSE(d.remedy.empty());
  EXPECT_EQ(d.remedy.front().flag, "--gpu-memory-utilization");
  EXPECT_EQ(d.remedy.front().value, "0.87");
  for (const auto& r : d.remedy) EXPECT_NE(r.flag, "--max-num-batched-tokens") << r.why;
}

// A port clash on a KV connector's ZMQ side channel (pyzmq's 'Address already
// in use (addr=tcp://host:port)') names that port and the setting that owns it,
// the Mooncake connector's kv_port, not the API server's --port or torch's
// MASTER_PORT (fresh set 8, vllm-ascend-8938).
TEST(RulesLintTest, KvConnectorPortClashNamesThePortAndItsSetting) {
  Diagnosis d = PrimaryOf("port_in_use", "pos_mooncake_kv_handshake_zmq.log");
  ASSERT_FALSE(d.remedy.empty());
  EXPECT_EQ(d.remedy.front().flag.rfind("kv_port", 0), 0u) << d.remedy.front().flag;
  EXPECT_NE(d.remedy.front().why.find("36503"), std::string::npos) << d.remedy.front().why;
  for (const auto& r : d.remedy) EXPECT_EQ(r.flag.find("MASTER_PORT"), std::string::npos) << r.flag;
}

// vLLM's 'Tensor parallel size (4) cannot be larger than the number of
// available GPUs (2)' asks for the GPUs the size needs, with the figures of the
// line, rather than "change the argument the error names" (fresh set 8,
// dynamo-4934).
TEST(RulesLintTest, TensorParallelAboveVisibleGpusAsksForThoseGpus) {
  Diagnosis d = PrimaryOf("config_error", "pos_vllm_tp_larger_than_gpus.log");
  ASSERT_FALSE(d.remedy.empty());
  EXPECT_EQ(d.remedy.front().value, "4") << d.remedy.front().flag;
  EXPECT_NE(d.remedy.front().why.find("there are 2"), std::string::npos) << d.remedy.front().why;
  for (const auto& r : d.remedy) EXPECT_NE(r.flag, "configuration") << r.why;
}

// Every rank timed out in the first collective of its group (SeqNum 1): no
// byte ever moved, so the next step tests the transport (NCCL_P2P_DISABLE=1)
// before a flight-recorder dump, which would show every rank at that same call
// (fresh set 8, tgi-1838).
TEST(RulesLintTest, FirstCollectiveTimeoutTestsPeerToPeerFirst) {
  Diagnosis d = PrimaryOf("nccl_timeout_hang", "pos_first_collective_seq1_every_rank.log");
  ASSERT_FALSE(d.remedy.empty());
  EXPECT_EQ(d.remedy.front().flag, "NCCL_P2P_DISABLE");
  EXPECT_EQ(d.remedy.front().kind, "next_step");
  // A rank behind in the sequence is not the transport: the dump leads there.
  Diagnosis behind = PrimaryOf("nccl_timeout_hang", "pos_two_ranks_seq_behind.log");
  for (const auto& r : behind.remedy) EXPECT_NE(r.flag, "NCCL_P2P_DISABLE") << r.why;
}

// Ranks that reached one SeqNum in different collectives (REDUCE here,
// ALLREDUCE there) are fixed in the program, which the Fix says; the dump
// stays the next step (fresh set 8, milabench-269).
TEST(RulesLintTest, DesyncAtOneSeqNumLeadsWithMatchingTheCalls) {
  Diagnosis d = PrimaryOf("collective_desync_watchdog", "pos_same_seq_other_op.log");
  ASSERT_FALSE(d.remedy.empty());
  EXPECT_NE(d.remedy.front().kind, "next_step");
  EXPECT_NE(d.remedy.front().why.find("same collectives in the same order"), std::string::npos) << d.remedy.front().why;
}

// vLLM's sampler warm-up OOM names the knob itself ('when warming up sampler
// with N dummy requests. Please try lowering `max_num_seqs`',
// gpu_model_runner.py _dummy_sampler_run): the Fix is --max-num-seqs below N,
// not --max-num-batched-tokens (fresh set 7, vllm-26278).
TEST(RulesLintTest, SamplerWarmupOomLowersMaxNumSeqs) {
  Diagnosis d = PrimaryOf("oom_warmup", "pos_vllm_sampler_warmup_max_num_seqs.log");
  ASSERT_FALSE(d.remedy.empty());
  EXPECT_EQ(d.remedy.front().flag, "--max-num-seqs");
  EXPECT_EQ(d.remedy.front().value, "256");
  for (const auto& r : d.remedy) EXPECT_NE(r.flag, "--max-num-batched-tokens") << r.why;
}

// Torch's OOM lists every process on the card; when others hold a large share
// (here 7.70 GiB of 39.39 GiB in a container, all as 'Process N'), the cause is
// the memory they hold: the Fix frees the card first and sizes vLLM to what is
// left, (39.39 - 7.70) / 39.39 = 0.80 (fresh set 7, qwenvl-1224).
TEST(RulesLintTest, OomWhileOthersHoldTheCardSizesToWhatIsLeft) {
  Diagnosis d = PrimaryOf("oom_others_hold_memory", "pos_vllm_v1_container_shared_card.log");
  ASSERT_GE(d.remedy.size(), 2u);
  EXPECT_EQ(d.remedy[0].flag, "nvidia-smi");
  EXPECT_EQ(d.remedy[1].flag, "--gpu-memory-utilization");
  EXPECT_EQ(d.remedy[1].value, "0.80");
}

// TensorRT-LLM's engine path refusing an architecture
// (tensorrt_llm/models/automodel.py: '... is not supported in TRT-LLM yet')
// names its way out: the PyTorch backend, which has a model registry of its
// own, not a generic 'change the argument' (fresh set 7, trtllm-2845).
TEST(RulesLintTest, TrtllmEnginePathArchitectureNamesThePytorchBackend) {
  Diagnosis d = PrimaryOf("terminal_config_error", "pos_trtllm_engine_path_architecture.log");
  ASSERT_FALSE(d.remedy.empty());
  EXPECT_EQ(d.remedy.front().flag, "--backend");
  EXPECT_EQ(d.remedy.front().value, "pytorch");
}

// SGLang's 'Not enough memory. Please try to increase --mem-fraction-static'
// with no memory figures in the log: the Fix is the flag the server's own
// message names, with the value it refused, not 'no remedy known' (fresh set
// 9, gpustack-3831).
TEST(RulesLintTest, SglangNoRoomWithoutFiguresRaisesTheFractionItNames) {
  Diagnosis d = PrimaryOf("kv_pool_no_room_sglang", "pos_message_only_low_fraction.log");
  ASSERT_FALSE(d.remedy.empty());
  EXPECT_EQ(d.remedy.front().flag, "--mem-fraction-static");
  EXPECT_EQ(d.remedy.front().direction, "increase");
  EXPECT_NE(d.remedy.front().why.find("0.25"), std::string::npos) << d.remedy.front().why;
}

// A bind refused with 'Cannot assign requested address' on vLLM's NIXL side
// channel (pyzmq names the endpoint) is the host setting that owns that
// listener, VLLM_NIXL_SIDE_CHANNEL_HOST, not an NCCL interface (fresh set 9,
// dynamo-2706).
TEST(RulesLintTest, NixlSideChannelBindOnAnotherNodesIpNamesItsHostSetting) {
  Diagnosis d = PrimaryOf("nccl_network_config", "pos_vllm_nixl_side_channel_other_node_ip.log");
  ASSERT_FALSE(d.remedy.empty());
  EXPECT_EQ(d.remedy.front().flag, "VLLM_NIXL_SIDE_CHANNEL_HOST");
  EXPECT_NE(d.explanation.find("10.0.4.11:5601"), std::string::npos) << d.explanation;
  for (const auto& r : d.remedy) EXPECT_NE(r.flag, "NCCL_SOCKET_IFNAME") << r.why;
}

// Ray compiled graphs' RayChannelTimeoutError under vLLM's Ray executor is a
// hang on a worker: the figure is the timeout the log printed
// (RAY_CGRAPH_get_timeout) and the Fix names that setting (fresh set 9,
// ray-59249).
TEST(RulesLintTest, RayChannelTimeoutNamesTheCompiledGraphTimeout) {
  Diagnosis d = PrimaryOf("ray_cgraph_timeout_hang", "pos_vllm_v1_engine_channel_read_timeout.log");
  EXPECT_EQ(d.id, "nccl_timeout_hang");
  EXPECT_EQ(d.figures.value("cgraph_timeout_s", 0.0), 300.0) << d.figures.dump();
  bool names_timeout = false;
  for (const auto& r : d.remedy) names_timeout |= r.flag == "RAY_CGRAPH_get_timeout";
  EXPECT_TRUE(names_timeout);
}

// A CUDA failure in NCCL's shm path (cudaHostRegister of a segment already
// created and sized, misc/shmutils.cc) rules /dev/shm's size out: no
// --shm-size in the Fix (fresh set 9, torchrun-nccl-1518).
TEST(RulesLintTest, CudaFailureInNcclShmPathIsNotShmSize) {
  Diagnosis d = PrimaryOf("shm_cuda_register", "pos_nccl_host_register_invalid_argument.log");
  ASSERT_FALSE(d.remedy.empty());
  EXPECT_EQ(d.remedy.front().flag, "NCCL_SHM_DISABLE");
  for (const auto& r : d.remedy) EXPECT_EQ(r.flag.find("shm-size"), std::string::npos) << r.flag;
  bool rules_out = false;
  for (const auto& r : d.ruled_out) rules_out |= r.id == "shm_too_small";
  EXPECT_TRUE(rules_out);
}

// vLLM's sampler warm-up (gpu_model_runner.py _dummy_sampler_run) running
// out of memory, its own 'N dummy requests' message not in the paste and
// every line behind a Logs Explorer prefix (parser/formats/wrappers.json
// gcp_log_explorer): the run is read as vLLM's and the Fix gives the budget
// back by the failed allocation's share of the card, 0.90 - ceil(2.00 /
// 79.19) = 0.87, then --max-num-seqs; not --max-num-batched-tokens, which
// sizes the profiling batch (fresh set 9, vllm-29049).
TEST(RulesLintTest, SamplerWarmupOomWithoutItsMessageLowersTheBudget) {
  Diagnosis d = PrimaryOf("oom_warmup", "pos_vllm_sampler_sort_gke_log_explorer.log");
  ASSERT_GE(d.remedy.size(), 2u);
  EXPECT_EQ(d.remedy[0].flag, "--gpu-memory-utilization");
  EXPECT_EQ(d.remedy[0].value, "0.87");
  EXPECT_EQ(d.remedy[1].flag, "--max-num-seqs");
  for (const auto& r : d.remedy) EXPECT_NE(r.flag, "--max-num-batched-tokens") << r.why;
}

// TensorRT-LLM's PyTorch attention module asserting the backend a feature
// needs ('Attention sinks are only supported for TRTLLM backend.',
// tensorrt_llm/_torch/modules/attention.py) names the LLM API setting and its
// value, attn_backend TRTLLM, not 'change the argument' (fresh set 9,
// trtllm-13156).
TEST(RulesLintTest, TrtllmAttentionBackendAssertNamesAttnBackend) {
  Diagnosis d = PrimaryOf("terminal_config_error", "pos_trtllm_attention_sinks_other_backend.log");
  ASSERT_EQ(d.remedy.size(), 1u);
  EXPECT_EQ(d.remedy.front().flag, "attn_backend");
  EXPECT_EQ(d.remedy.front().value, "TRTLLM");
}

// Rust tracing-subscriber's 'STAMP LEVEL target: ' layout is printed by every
// Rust program: NVIDIA Dynamo running vLLM is not TGI. The framework comes
// from the vLLM frames (tgi.json tgi_tracing needs a text_generation_ crate;
// generic.json rust_tracing takes the rest) (fresh set 9, dynamo-1229).
TEST(RulesLintTest, DynamoRustTracingLinesAreNotTgi) {
  auto a = TheAnalyzer().Run(
      {(SamplesDir() / "custom_allreduce_failure" / "pos_dynamo_vllm_rust_tracing_peer_access.log").string()});
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_EQ(a->run.framework, "vllm");
}

// Fresh set 12: the Fix follows from the figures or the message the log
// itself prints. vLLM's Mamba block check names its bound ('exceeds available
// Mamba cache blocks (612)'): --max-num-seqs 612, not a larger budget first.
TEST(RulesLintTest, MambaBlocksShortLowersMaxNumSeqsToTheBlocks) {
  Diagnosis d = PrimaryOf("kv_pool_too_small_mamba_seqs", "pos_vllm_hybrid_default_seqs.log");
  ASSERT_FALSE(d.remedy.empty());
  EXPECT_EQ(d.remedy.front().flag, "--max-num-seqs");
  EXPECT_EQ(d.remedy.front().value, "612");
}

// An FP8 operand refused by a Triton dot ('Unsupported rhs dtype fp8e5') comes
// from the KV cache or the weights' quantization: --dtype never makes FP8.
TEST(RulesLintTest, DtypeAssertOnAnFp8OperandNamesTheKvCacheDtype) {
  Diagnosis d = PrimaryOf("config_error_dtype_assert", "pos_triton_dot_fp8_operand.log");
  ASSERT_FALSE(d.remedy.empty());
  EXPECT_EQ(d.remedy.front().flag, "--kv-cache-dtype");
  for (const auto& r : d.remedy) EXPECT_NE(r.flag, "--dtype") << r.why;
}

// NCCL's IB failures name their own way out: GID index 0 on RoCE (the
// link-local fe80 GID) -> NCCL_IB_GID_INDEX; a QP that times out moving to
// RTR on a multi-rail fabric -> NCCL_CROSS_NIC=0; an InfiniBand completion
// error -> never the socket interface (NCCL_SOCKET_IFNAME).
TEST(RulesLintTest, NcclIbFailuresNameTheIbSettingNotTheSocketInterface) {
  Diagnosis gid = PrimaryOf("nccl_network_config", "pos_roce_gid0_link_local_modify_qp.log");
  ASSERT_FALSE(gid.remedy.empty());
  EXPECT_EQ(gid.remedy.front().flag, "NCCL_IB_GID_INDEX");
  Diagnosis rail = PrimaryOf("nccl_network_config", "pos_multirail_modify_qp_rtr_timeout.log");
  ASSERT_FALSE(rail.remedy.empty());
  EXPECT_EQ(rail.remedy.front().flag, "NCCL_CROSS_NIC");
  EXPECT_EQ(rail.remedy.front().value, "0");
  Diagnosis wc = PrimaryOf("nccl_network_config", "pos_ib_completion_status_number_2x.log");
  for (const auto& r : wc.remedy) EXPECT_NE(r.flag, "NCCL_SOCKET_IFNAME") << r.why;
}

// The OFI plugin's failed completion (aws-ofi-nccl 'NET/OFI Request 0x...
// completed with error. RC: 113. Error: 2 (UNDELIVERABLE)', repeated by torch
// after 'Last error:') is the fabric path or its provider, like NET/IB's: the
// Fix is NCCL's own all-reduce between two hosts with the same provider, never
// NCCL_SOCKET_IFNAME (fresh set 16, NVIDIA/nccl#1928, read as a generic
// nccl_error at 0.60 with NCCL_DEBUG=INFO as its step).
TEST(RulesLintTest, OfiCompletionErrorNamesTheFabricTestNotTheSocketInterface) {
  Diagnosis d = PrimaryOf("nccl_network_config", "pos_ofi_request_completed_with_error_efa.log");
  ASSERT_FALSE(d.remedy.empty());
  EXPECT_EQ(d.remedy.front().flag, "nccl-tests");
  EXPECT_NE(d.explanation.find("RC 113 (EHOSTUNREACH"), std::string::npos) << d.explanation;
  for (const auto& r : d.remedy) EXPECT_NE(r.flag, "NCCL_SOCKET_IFNAME") << r.why;
}

// vLLM V1 dumps the scheduler output of a step whose model execution raised
// ('Dumping scheduler output for model execution: SchedulerOutput(...)',
// dump_input.py from EngineCore.execute_model_with_error_logging): an OOM with
// that dump was in a serving step, not at an unknown stage, and a step of many
// tokens names a smaller --max-num-batched-tokens (fresh set 16,
// club-3090#138: read as oom_stage_unknown 0.45 with 'the lines before the
// error' as its step).
TEST(RulesLintTest, VllmStepDumpPlacesAnOomInServingAndNamesTheTokenBudget) {
  Diagnosis d = PrimaryOf("oom_runtime", "pos_vllm_step_dump_prefill_chunk.log");
  ASSERT_FALSE(d.remedy.empty());
  EXPECT_EQ(d.remedy.front().flag, "--max-num-batched-tokens");
  EXPECT_EQ(d.remedy.front().direction, "decrease");
  EXPECT_EQ(d.remedy.front().value, "8192");  // the dumped step scheduled 16384 tokens
}

// LMDeploy's TurboMind runs its TP ranks as threads of one process; a
// pipeline traceback under torchrun's [rankN]: prefixes is several processes
// each building a whole engine over the same GPUs, so its weight OOM is fixed
// by one engine process (or one per GPU with tp=1), never by more TP (fresh
// set 16, lmdeploy#2993: 4 torchrun processes x TP 4 read with 'raise --tp').
TEST(RulesLintTest, TurbomindPipelineUnderTorchrunNamesOneEngineProcessNotMoreTp) {
  Diagnosis d = PrimaryOf("oom_weights", "pos_lmdeploy_turbomind_pipeline_under_torchrun.log");
  ASSERT_FALSE(d.remedy.empty());
  EXPECT_EQ(d.remedy.front().flag, "one engine process");
  for (const auto& r : d.remedy) EXPECT_NE(r.direction, "increase") << r.flag;
  Diagnosis one = PrimaryOf("oom_weights", "pos_lmdeploy_turbomind_memory_utils.log");  // no launcher ranks
  ASSERT_FALSE(one.remedy.empty());
  EXPECT_NE(one.remedy.front().flag, "one engine process");
}

// A process killed by SIGILL (TGI's 'signaled to shutdown with signal 4', the
// shell's 'Illegal instruction (core dumped)') is the CPU refusing an
// instruction of the build: the Fix looks at the CPU's instruction sets, not
// at dmesg for the OOM killer or a segfault (holdout30 tgi-1627).
TEST(RulesLintTest, SigillNamesTheCpuInstructionSetNotTheOomKiller) {
  for (const char* log : {"pos_tgi_shard_signal_4_sigill.log", "pos_shell_illegal_instruction.log"}) {
    Diagnosis d = PrimaryOf("process_crashed", log);
    ASSERT_FALSE(d.remedy.empty()) << log;
    EXPECT_EQ(d.remedy.front().flag, "CPU flags") << log;
    for (const auto& r : d.remedy) EXPECT_NE(r.flag, "dmesg") << log;
  }
}

// An illegal access inside TensorRT-LLM's TRTLLM-gen block-scale MoE kernels
// is the MoE backend the run chose (moe backend TRTLLM): the Fix switches the
// backend to CUTLASS before any next step (holdout30 trtllm-3879).
TEST(RulesLintTest, IllegalAccessInTrtllmGenMoeKernelsSwitchesTheMoeBackend) {
  Diagnosis d = PrimaryOf("illegal_memory_access", "pos_trtllm_serve_trtllm_gen_moe_kernel_load.log");
  ASSERT_FALSE(d.remedy.empty());
  EXPECT_EQ(d.remedy.front().flag, "moe_config.backend");
  EXPECT_EQ(d.remedy.front().value, "CUTLASS");
}

// NCCL's duplicate-GPU check (src/init.cc initTransportsRank: same hostHash
// and busId for two ranks of one communicator -> ncclInvalidUsage) can be read
// from the ranks' 'ncclCommInitRank ... busId B commId C - Init START' lines
// when the WARN line is not in the log (fresh set 17, TensorRT-LLM#9263 read
// nccl_error 0.60): the ranks and the bus id are named; the same bus id on two
// hosts, or one process in two communicators, is not a duplicate.
TEST(RulesLintTest, DuplicateGpuReadFromInitLines) {
  Diagnosis d = PrimaryOf("duplicate_gpu_init_lines", "pos_torch_two_containers_renumbered.log");
  EXPECT_EQ(d.id, "duplicate_gpu");
  EXPECT_NE(d.explanation.find("ranks 1 and 2"), std::string::npos) << d.explanation;
  EXPECT_NE(d.explanation.find("62000"), std::string::npos) << d.explanation;
  for (const char* neg : {"neg_two_hosts_same_bus_version_mismatch.log", "neg_one_process_two_communicators.log"}) {
    auto a = TheAnalyzer().Run({(SamplesDir() / "duplicate_gpu_init_lines" / neg).string()});
    ASSERT_TRUE(a.ok()) << neg;
    EXPECT_NE(a->root_cause, "duplicate_gpu") << neg << ": " << Summary(*a);
  }
}

// A store wait on a connected socket (torch socket.cpp waitForInput with
// 'remote=[S]:Q') says this rank reached the store and another rank never
// wrote its key: unreachable is one reading, a peer stuck in start-up another
// (fresh set 17, vLLM#52907 read nccl_network_config 0.80 with
// NCCL_SOCKET_IFNAME as its Fix). Below 0.7, a next step that names the store,
// and no NCCL_SOCKET_IFNAME (the store is torch's TCP, not NCCL's sockets).
TEST(RulesLintTest, StoreWaitOnAConnectedSocketIsNotSureOfTheNetwork) {
  Diagnosis d = PrimaryOf("nccl_network_config_store_wait", "pos_vllm_two_nodes_store_wait.log");
  EXPECT_LT(d.confidence, 0.7);
  ASSERT_FALSE(d.remedy.empty());
  EXPECT_EQ(d.remedy.front().command, "nc -zv gpu-node-b 37511");
  for (const auto& r : d.remedy) EXPECT_NE(r.flag, "NCCL_SOCKET_IFNAME") << r.why;
}

// vLLM's 'Total number of attention heads (H) must be divisible by tensor
// parallel size (T)' names both numbers: the Fix is a TP size that divides H,
// the largest power of two up to T (12 heads at TP 8: 4, not 6, which would
// not split the MLP of such a checkpoint), not 'change the argument' (fresh
// set 17, FSDrive#21, where the maintainer's fix was 4 GPUs).
TEST(RulesLintTest, HeadsNotDivisibleNamesATensorParallelSizeThatDividesThem) {
  for (auto [sample, want] : {std::pair{"pos_vllm_heads_12_tp8.log", "4"}, std::pair{"pos_heads_tp3.log", "2"}}) {
    Diagnosis d = PrimaryOf("config_error", sample);
    ASSERT_FALSE(d.remedy.empty()) << sample;
    EXPECT_EQ(d.remedy.front().flag, "--tensor-parallel-size") << sample;
    EXPECT_EQ(d.remedy.front().value, want) << sample;
  }
}

// NCCL's 'NET/IB : DEV:PORT Got async error event: port error' (net_ib.cc,
// IBV_EVENT_PORT_ERR) is a notice NCCL goes on after; when the run then fails
// and the port did not come back, the link is the lead (fresh set 17,
// llm-d#191 read unknown): hardware_fault below 0.7, the next step names the
// NIC; a flap that recovered leaves a healthy run healthy.
TEST(RulesLintTest, IbPortDownBeforeTheFailureIsTheLead) {
  Diagnosis d = PrimaryOf("hardware_fault_ib_port_down", "pos_vllm_tp_worker_after_port_error.log");
  EXPECT_EQ(d.id, "hardware_fault");
  EXPECT_LT(d.confidence, 0.7);
  ASSERT_FALSE(d.remedy.empty());
  EXPECT_EQ(d.remedy.front().command, "ibstat mlx5_3");
  auto healthy = TheAnalyzer().Run({(SamplesDir() / "hardware_fault_ib_port_down" / "neg_flap_recovered_healthy.log").string()});
  ASSERT_TRUE(healthy.ok());
  EXPECT_EQ(healthy->root_cause, "none") << Summary(*healthy);
}

// Ray's memory monitor (raylet: 'N Workers ... killed due to memory
// pressure (OOM)', RAY_memory_usage_threshold) is not the kernel's OOM killer:
// the Fix speaks of the node's workers, the next step is the raylet's log of
// that node, not dmesg (fresh set 17, EasyR1#185: the Fix spoke of weights
// staged while loading, during 'Compute log probs').
TEST(RulesLintTest, RayMemoryMonitorKillPointsAtTheRayletNotDmesg) {
  Diagnosis d = PrimaryOf("host_oom", "pos_ray_memory_pressure_kill.log");
  ASSERT_GE(d.remedy.size(), 2u);
  EXPECT_EQ(d.remedy[0].flag, "node memory for Ray's workers");
  EXPECT_EQ(d.remedy[1].command.rfind("ray logs raylet.out -ip ", 0), 0u) << d.remedy[1].command;
  for (const auto& r : d.remedy) EXPECT_EQ(r.command.find("dmesg"), std::string::npos) << r.command;
  Diagnosis kernel = PrimaryOf("host_oom", "pos_kernel_oom_killer_sglang.log");
  ASSERT_FALSE(kernel.remedy.empty());
  EXPECT_EQ(kernel.remedy[0].flag, "container / host memory limit");
}

// NCCL_NET naming a network no loaded module provides: NCCL's ncclNetInit
// warns 'Error: network <name> not found.' and returns invalid usage (fresh
// set 18: GKE A3 Ultra, gIB). The Fix names the network and unsets NCCL_NET.
TEST(RulesLintTest, NamedNetworkNotFoundIsTheNetPluginFailure) {
  Diagnosis d = PrimaryOf("nccl_net_plugin_failed", "pos_sglang_named_net_not_found.log");
  EXPECT_EQ(d.id, "nccl_network_config");
  EXPECT_NE(d.explanation.find("'gIB'"), std::string::npos) << d.explanation;
  ASSERT_FALSE(d.remedy.empty());
  EXPECT_EQ(d.remedy.front().flag, "NCCL_NET");
}

// SGLang's scheduler logs every prefill batch it forms; with requests queued
// (#queue-req 2) and the HTTP server printing for 390 s more with no batch
// line, the scheduler stood in that batch past its own watchdog limit (300 s):
// a hang at 0.5, blaming no rank, not a healthy run because /health answered
// 200 (before 0.5 /health does not ask the scheduler). Idle after the last
// decode, or a long quiet that ends in the next batch, is no stall; from 0.5 a
// later /health 200 refutes it (its neg samples).
TEST(RulesLintTest, SglangQueuedBatchThenOnlyAccessLinesIsAStall) {
  Diagnosis d = PrimaryOf("sglang_scheduler_stall", "pos_sglang_chunked_prefill_then_only_health_checks.log");
  EXPECT_EQ(d.id, "nccl_timeout_hang");
  EXPECT_LT(d.confidence, 0.7);
  EXPECT_EQ(d.rank, -1);
  EXPECT_EQ(d.figures.value("silent_s", 0.0), 390.0) << d.figures.dump();
  EXPECT_EQ(d.figures.value("watchdog_s", 0.0), 300.0) << d.figures.dump();
  EXPECT_EQ(d.figures.value("queued_requests", 0.0), 2.0) << d.figures.dump();
  EXPECT_NE(d.explanation.find("/health"), std::string::npos) << d.explanation;
  Diagnosis v52 = PrimaryOf("sglang_scheduler_stall", "pos_sglang_052_health_503_after_queued_prefill.log");
  EXPECT_NE(v52.explanation.find("503"), std::string::npos) << v52.explanation;
  // After 301 batch lines (past the 256 anchors a rule is tried at, the last
  // one is still tried) and with --watchdog-timeout 600 printed: its limit.
  Diagnosis longer = PrimaryOf("sglang_scheduler_stall", "pos_sglang_long_serving_then_queued_prefill_silence.log");
  EXPECT_EQ(longer.figures.value("watchdog_s", 0.0), 600.0) << longer.figures.dump();
  EXPECT_EQ(longer.figures.value("silent_s", 0.0), 690.0) << longer.figures.dump();
}

// gloo's 'Read error PEER: Connection timed out' (pair.cc) is ETIMEDOUT from
// the kernel on a connected pair: the other host stopped acknowledging. Read
// at 0.6 as the path between the nodes, with a next step on both nodes and no
// GLOO_SOCKET_IFNAME (the pair had connected); 'Connection closed by peer' is
// a peer process that went away, not this (neg sample).
TEST(RulesLintTest, GlooReadTimedOutIsThePathBetweenTheNodes) {
  Diagnosis d = PrimaryOf("nccl_network_config_gloo", "pos_sglang_two_nodes_broadcast_read_timed_out.log");
  EXPECT_DOUBLE_EQ(d.confidence, 0.6);
  EXPECT_NE(d.explanation.find("[10.20.0.11]:27814"), std::string::npos) << d.explanation;
  ASSERT_FALSE(d.remedy.empty());
  EXPECT_EQ(d.remedy.front().kind, "next_step");
  for (const auto& r : d.remedy) EXPECT_NE(r.flag, "GLOO_SOCKET_IFNAME") << r.why;
}

}  // namespace
}  // namespace tpt
