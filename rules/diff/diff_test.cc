// diff_test.cc: differences, divergence and attribution on hand-made runs.
#include "rules/diff/diff.h"

#include <gtest/gtest.h>

#include "rules/diff/test_events.h"

namespace tpt::diff {
namespace {

using testing::Ev;
using testing::Gib;
using json = nlohmann::json;

struct SglangRun {
  std::string version = "0.4.6.post1";
  double mfs = 0.88;
  bool custom_ar = false;
  double dist_usage = 0.57;
  std::vector<double> free_after_dist = {78.5, 78.5, 78.5, 78.5};
  std::vector<double> weights = {60, 60, 60, 60};
};

// An SGLang TP4 launch: it either sizes its pool and serves, or dies with
// "Not enough memory" when the arithmetic leaves nothing (as the server does).
std::vector<Event> Build(const SglangRun& s) {
  std::vector<Event> ev = {
      Ev("framework_version", -1, {{"framework", "sglang"}, {"version", s.version}}),
      Ev("server_args", -1,
         {{"framework", "sglang"},
          {"args",
           {{"tp_size", "4"}, {"mem_fraction_static", std::to_string(s.mfs)}, {"model_path", "'/m/Llama-70B'"},
            {"disable_custom_all_reduce", s.custom_ar ? "False" : "True"}}}}),
  };
  double min_free = 1e300, min_avail = 1e300;
  for (int r = 0; r < 4; ++r) {
    // Custom all-reduce buffers (about 24 MiB; "mem usage" prints 0.02 GB more).
    const double ar = s.custom_ar ? 0.02 : 0;
    testing::SglangRankStartup(ev, r, s.dist_usage + ar, s.free_after_dist[r] - ar, s.weights[r]);
    min_free = std::min(min_free, s.free_after_dist[r] - ar);
    min_avail = std::min(min_avail, s.free_after_dist[r] - ar - s.weights[r]);
  }
  double rest = min_avail - min_free * (1 - s.mfs);
  if (rest <= 0) {
    ev.push_back(Ev("not_enough_memory", 0));
    return ev;
  }
  const double cell = 81920;
  for (int r = 0; r < 4; ++r) {
    ev.push_back(Ev("kv_pool_alloc", r, {{"tokens", int64_t(Gib(rest) / cell)}, {"kv_bytes", Gib(rest)}}));
    ev.push_back(Ev("memory_pool_end", r, {{"avail_bytes", Gib(min_avail - rest)}}));
  }
  ev.push_back(Ev("startup_complete", -1));
  return ev;
}

DiffResult CompareRuns(const SglangRun& good, const SglangRun& bad) {
  return Compare(CollectFacts(Build(good)), CollectFacts(Build(bad)));
}

const Difference* Find(const DiffResult& r, const std::string& key) {
  for (const auto& d : r.differences) {
    if (d.key == key) return &d;
  }
  return nullptr;
}

const RuledOut* FindRuledOut(const DiffResult& r, const std::string& key) {
  for (const auto& o : r.attribution.ruled_out) {
    if (o.key == key) return &o;
  }
  return nullptr;
}

TEST(DiffTest, BothHealthyIsExitZero) {
  SglangRun a;
  SglangRun b;
  b.mfs = 0.85;
  DiffResult r = CompareRuns(a, b);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.attribution.cause, "");
  ASSERT_NE(Find(r, "flag.mem_fraction_static"), nullptr);
  EXPECT_EQ(Find(r, "flag.mem_fraction_static")->kind, "config");
  // 78.5 x 0.03 = 2.36 GiB smaller pool: a material memory difference at kv_pool.
  EXPECT_EQ(r.diverges_at, "kv_pool");
}

// The founding case: custom all-reduce turned on and mem_fraction_static
// lowered in the same relaunch; the relaunch dies in the KV arithmetic.
TEST(DiffTest, FoundingCaseBlamesMemFractionAndRulesOutCustomAllReduce) {
  SglangRun good;
  SglangRun bad;
  bad.custom_ar = true;
  bad.mfs = 0.51;
  DiffResult r = CompareRuns(good, bad);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.attribution.cause, "flag.mem_fraction_static");
  EXPECT_EQ(r.diverges_at, "kv_pool");
  ASSERT_TRUE(r.bad_kv.computed);
  EXPECT_TRUE(r.bad_kv.fails);
  // rest = (78.48 - 60) - 78.48 x 0.49 = -19.98 GiB
  EXPECT_NEAR(r.bad_kv.shortfall_bytes, Gib(19.975), Gib(0.01));
  EXPECT_NEAR(r.good_kv.budget_bytes, Gib(18.5 - 78.5 * 0.12), Gib(0.01));
  EXPECT_NE(r.attribution.explanation.find("0.51"), std::string::npos);
  EXPECT_NE(r.attribution.explanation.find("19.9"), std::string::npos);

  const Difference* dist = Find(r, "memory.dist_init");
  ASSERT_NE(dist, nullptr);
  EXPECT_NEAR(*dist->delta_bytes, Gib(0.02), 1);
  const RuledOut* ar = FindRuledOut(r, "flag.disable_custom_all_reduce");
  ASSERT_NE(ar, nullptr);
  EXPECT_NE(ar->reason.find("20.5 MiB a rank at dist_init"), std::string::npos) << ar->reason;
  EXPECT_NE(ar->reason.find("19.9"), std::string::npos) << ar->reason;
  ASSERT_NE(FindRuledOut(r, "memory.dist_init"), nullptr);
}

TEST(DiffTest, ExtraProcessOnOneGpuIsAttributedToThatRanksFreeMemory) {
  SglangRun good;
  SglangRun bad;
  bad.free_after_dist = {78.5, 78.5, 62.5, 78.5};  // 16 GiB held by another process on GPU 2
  DiffResult r = CompareRuns(good, bad);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.attribution.cause, "memory.free_at_init.rank2");
  EXPECT_EQ(r.diverges_at, "init");
  const Difference* d = Find(r, "memory.free_at_init.rank2");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->rank, 2);
  EXPECT_NEAR(*d->delta_bytes, Gib(-16), 1);
  EXPECT_EQ(Find(r, "memory.free_at_init.rank0"), nullptr);
}

TEST(DiffTest, WeightsMemoryOnOneRankIsAttributedToThatRank) {
  SglangRun good;
  SglangRun bad;
  bad.weights = {60, 72, 60, 60};
  DiffResult r = CompareRuns(good, bad);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.attribution.cause, "memory.weights.rank1");
  EXPECT_EQ(r.diverges_at, "weights");
}

TEST(DiffTest, NoSingleDifferenceExplainsIsExitThree) {
  SglangRun good;
  SglangRun bad;
  // Two ranks each lose a little; neither alone is enough... but one rank's
  // loss sets the min, so give every rank a small loss and lower mfs a bit:
  // each reverted alone still leaves the run short.
  bad.free_after_dist = {74.5, 74.5, 74.5, 74.5};
  bad.weights = {66, 66, 66, 66};
  bad.mfs = 0.80;
  DiffResult r = CompareRuns(good, bad);
  ASSERT_TRUE(r.bad_kv.fails);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.attribution.cause, "");
  EXPECT_NE(r.attribution.explanation.find("No single difference"), std::string::npos);
}

TEST(DiffTest, SameFailureInBothRunsIsNotAttributed) {
  SglangRun good;
  good.mfs = 0.40;
  SglangRun bad;
  bad.mfs = 0.30;
  DiffResult r = CompareRuns(good, bad);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.attribution.explanation.find("Both runs fail"), std::string::npos);
}

TEST(DiffTest, SwappedRunsWarn) {
  SglangRun ok;
  SglangRun broken;
  broken.mfs = 0.5;
  DiffResult r = CompareRuns(broken, ok);
  EXPECT_EQ(r.exit_code, 0);
  ASSERT_FALSE(r.warnings.empty());
  EXPECT_NE(r.warnings[0].find("wrong order"), std::string::npos);
}

TEST(DiffTest, PeerAccessErrorIsLinkedToCustomAllReduce) {
  auto run = [](bool custom_ar, bool fail) {
    std::vector<Event> ev = {Ev("server_args", -1, {{"framework", "sglang"},
                                                    {"args", {{"tp_size", "2"},
                                                              {"disable_custom_all_reduce", custom_ar ? "False" : "True"},
                                                              {"log_level", custom_ar ? "'debug'" : "'info'"}}}})};
    if (fail) {
      // Custom all-reduce sets up peer access during distributed init.
      ev.push_back(Ev("dist_init_begin", 0));
      Event e = Ev("p2p_error", 0, {{"message", "peer access is not supported between these two devices"}});
      e.text = "RuntimeError: CUDART error: peer access is not supported between these two devices";
      ev.push_back(e);
    } else {
      testing::SglangRankStartup(ev, 0, 0.3, 22, 8);
      ev.push_back(Ev("startup_complete", -1));
    }
    return CollectFacts(ev);
  };
  DiffResult r = Compare(run(false, false), run(true, true));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.attribution.cause, "flag.disable_custom_all_reduce");
  const RuledOut* log = FindRuledOut(r, "flag.log_level");
  ASSERT_NE(log, nullptr);
  EXPECT_NE(log->reason.find("p2p_error"), std::string::npos);
  EXPECT_EQ(r.diverges_at, "dist_init");
  EXPECT_EQ(r.bad.failure->phase, "dist_init");
}

TEST(DiffTest, ErrorNamingAFlagBlamesThatFlag) {
  auto run = [](bool fusion, bool fail) {
    std::vector<Event> ev = {Ev("server_args", -1,
                                {{"framework", "sglang"},
                                 {"args", {{"enable_flashinfer_allreduce_fusion", fusion ? "True" : "False"},
                                           {"chunked_prefill_size", fusion ? "4096" : "8192"}}}})};
    if (fail) {
      Event e = Ev("unsupported_arch", 0);
      e.text = "ValueError: FlashInfer allreduce fusion requires SM90 or SM10X NVIDIA GPUs. "
               "Disable --enable-flashinfer-allreduce-fusion.";
      ev.push_back(e);
    }
    return CollectFacts(ev);
  };
  DiffResult r = Compare(run(false, false), run(true, true));
  EXPECT_EQ(r.attribution.cause, "flag.enable_flashinfer_allreduce_fusion");
  EXPECT_EQ(r.exit_code, 1);
}

// A larger mem_fraction_static sizes a larger pool and leaves too little for
// CUDA graphs: a CUDA OOM in capture, weighed by the memory each difference took.
TEST(DiffTest, GraphCaptureOomIsAttributedToTheLargerPool) {
  SglangRun good;
  good.mfs = 0.85;
  SglangRun bad;
  bad.mfs = 0.92;
  std::vector<Event> bad_events = Build(bad);
  ASSERT_EQ(bad_events.back().kind, "startup_complete");
  bad_events.pop_back();
  bad_events.push_back(Ev("graph_capture_begin", 0, {{"avail_bytes", Gib(0.3)}}));
  bad_events.push_back(Ev("cuda_oom", 0, {{"tried_bytes", Gib(1.0)}, {"free_bytes", Gib(0.2)}}));
  DiffResult r = Compare(CollectFacts(Build(good)), CollectFacts(bad_events));
  EXPECT_EQ(r.bad.failure->phase, "graphs");
  EXPECT_EQ(r.exit_code, 1) << r.attribution.explanation;
  EXPECT_EQ(r.attribution.cause, "flag.mem_fraction_static");
  // (0.92 - 0.85) x 78.5 GiB = 5.50 GiB less free, against a 0.8 GiB (819.2 MiB) shortfall.
  EXPECT_NE(r.attribution.explanation.find("5.50 GiB"), std::string::npos) << r.attribution.explanation;
  EXPECT_NE(r.attribution.explanation.find("819.2 MiB"), std::string::npos) << r.attribution.explanation;
  EXPECT_EQ(r.diverges_at, "kv_pool");  // the pool is 5.5 GiB larger
}

TEST(DiffTest, AOneWordFlagIsNotFoundInOrdinaryEnglish) {
  auto run = [](const std::string& device, bool fail) {
    std::vector<Event> ev = {Ev("server_args", -1, {{"framework", "sglang"}, {"args", {{"device", device}}}})};
    if (fail) {
      Event e = Ev("no_kernel_image", 0);
      e.text = "RuntimeError: CUDA error: no kernel image is available for execution on the device";
      ev.push_back(e);
    }
    return CollectFacts(ev);
  };
  DiffResult r = Compare(run("'cuda'", false), run("'cuda:1'", true));
  EXPECT_EQ(r.attribution.cause, "");
  EXPECT_EQ(r.exit_code, 3);
}

// vLLM 0.21 began charging the CUDA-graph estimate to the KV budget: the same
// launch that fit on 0.20 no longer holds one max-length request.
TEST(DiffTest, VllmVersionChangeWithGraphsInBudgetIsAttributedToTheVersion) {
  auto run = [](const std::string& version, bool bad) {
    std::vector<Event> ev = {
        Ev("framework_version", -1, {{"framework", "vllm"}, {"version", version}}, "vllm"),
        Ev("server_args", -1,
           {{"framework", "vllm"},
            {"args", {{"model", "'Qwen/Qwen2.5-32B-Instruct'"}, {"tensor_parallel_size", 2},
                      {"gpu_memory_utilization", 0.62}, {"max_model_len", 131072}}}},
           "vllm")};
    for (int r = 0; r < 2; ++r) {
      ev.push_back(Ev("weights_load_end", r, {{"weights_bytes", Gib(30.5)}}, "vllm"));
      if (bad) {
        ev.push_back(Ev("memory_profile", r, {{"cuda_graph_bytes", Gib(2.1)}}, "vllm"));
        ev.push_back(Ev("memory_profile", r, {{"kv_cache_bytes", Gib(15.40)}}, "vllm"));
      } else {
        ev.push_back(Ev("memory_profile", r, {{"kv_cache_bytes", Gib(17.50)}}, "vllm"));
      }
    }
    if (bad) {
      ev.push_back(Ev("kv_too_small", -1, {{"max_seq_len", 131072}}, "vllm"));
      return CollectFacts(ev);
    }
    ev.push_back(Ev("kv_pool_alloc", -1, {{"tokens", 143360}}, "vllm"));
    for (int r = 0; r < 2; ++r) {
      ev.push_back(Ev("memory_profile", r,
                      {{"total_bytes", Gib(79.19)}, {"gpu_memory_utilization", 0.62}, {"weights_bytes", Gib(30.5)},
                       {"activation_peak_bytes", Gib(0.8)}, {"non_torch_bytes", Gib(0.3)},
                       {"cuda_graph_bytes", Gib(2.0)}},
                      "vllm"));
    }
    ev.push_back(Ev("startup_complete", -1, {}, "vllm"));
    return CollectFacts(ev);
  };
  DiffResult r = Compare(run("0.20.2", false), run("0.21.0", true));
  ASSERT_TRUE(r.bad_kv.computed) << r.bad_kv.note;
  EXPECT_TRUE(r.bad_kv.fails);
  EXPECT_EQ(r.exit_code, 1) << r.attribution.explanation;
  EXPECT_EQ(r.attribution.cause, "version.vllm");
  EXPECT_EQ(Find(r, "version.vllm")->kind, "version");
  EXPECT_EQ(r.diverges_at, "kv_pool");
  EXPECT_NE(r.bad_kv.formula.find("CUDA graphs"), std::string::npos);
  EXPECT_EQ(r.good_kv.formula.find("CUDA graphs"), std::string::npos);
}

// TensorRT-LLM: the final KV cache its estimation pass sized, against the free memory
// when it was created (memory/trtllm_model.cc): the failing run's arithmetic fails.
TEST(DiffTest, TrtllmFinalKvCacheArithmeticInBothRuns) {
  auto run = [](double fraction, bool fails) {
    const double available = 122.23;
    std::vector<Event> ev = {
        Ev("framework_version", -1, {{"framework", "trtllm"}, {"version", "0.21.0"}}, "trtllm"),
        Ev("memory_profile", 1,
           {{"kv_estimate_bytes", Gib(available * fraction)}, {"free_gpu_memory_fraction", fraction},
            {"kv_bytes_per_token", 65536}},
           "trtllm"),
        Ev("memory_profile", 1, {{"free_before_create_bytes", Gib(108.86)}}, "trtllm")};
    if (fails) ev.push_back(Ev("component_oom", 1, {{"component", "KV cache"}}, "trtllm"));
    else ev.push_back(Ev("startup_complete", -1, json::object(), "trtllm"));
    return ev;
  };
  DiffResult r = Compare(CollectFacts(run(0.79, false)), CollectFacts(run(0.9, true)));
  ASSERT_TRUE(r.bad_kv.computed) << r.bad_kv.note;
  EXPECT_TRUE(r.bad_kv.fails);
  EXPECT_NE(r.bad_kv.arithmetic.find("kv = 0.9 x 122.23 = 110.01 GiB, 108.86 GiB free at its creation"), std::string::npos)
      << r.bad_kv.arithmetic;
  EXPECT_NEAR(r.bad_kv.shortfall_bytes / Gib(1), 110.01 - 108.86, 0.01);
  ASSERT_TRUE(r.good_kv.computed) << r.good_kv.note;
  EXPECT_FALSE(r.good_kv.fails);
  EXPECT_NEAR(r.good_kv.budget_bytes / Gib(1), 108.86 - 96.56, 0.01);
}

// LMDeploy TurboMind: the free memory after the weights from its blocks and ratio, and
// what the cache leaves for its run-time buffers, in each run.
TEST(DiffTest, TurbomindCacheArithmeticInBothRuns) {
  auto run = [](double ratio, int blocks, bool fails) {
    std::vector<Event> ev = {
        Ev("server_args", -1, {{"framework", "lmdeploy"}, {"cache_max_entry_count", ratio}}, "lmdeploy"),
        Ev("kv_pool_alloc", -1, {{"block_bytes", 1.5 * 1024 * 1024}}, "lmdeploy"),
        Ev("kv_pool_alloc", -1, {{"blocks", blocks}}, "lmdeploy")};
    if (fails) ev.push_back(Ev("cuda_oom", -1, {{"source", "turbomind"}}, "lmdeploy"));
    else ev.push_back(Ev("startup_complete", -1, json::object(), "lmdeploy"));
    return ev;
  };
  DiffResult r = Compare(CollectFacts(run(0.6, 3840, false)), CollectFacts(run(0.8, 5120, true)));
  ASSERT_TRUE(r.bad_kv.computed) << r.bad_kv.note;
  EXPECT_NE(r.bad_kv.arithmetic.find("kv = 0.8 x 9.38 = 7.50 GiB (5120 blocks), 1.88 GiB left"), std::string::npos)
      << r.bad_kv.arithmetic;
  ASSERT_TRUE(r.good_kv.computed) << r.good_kv.note;
  EXPECT_NEAR(r.good_kv.budget_bytes / Gib(1), 3.75, 0.01);
}

TEST(DiffTest, JsonHasTheDocumentedShape) {
  SglangRun good;
  SglangRun bad;
  bad.mfs = 0.51;
  json j = CompareRuns(good, bad);
  EXPECT_EQ(j["schema_version"], 1);
  ASSERT_TRUE(j["differences"].is_array());
  for (const auto& d : j["differences"]) {
    EXPECT_TRUE(d.contains("key") && d.contains("good") && d.contains("bad"));
    std::string kind = d["kind"];
    EXPECT_TRUE(kind == "config" || kind == "memory" || kind == "version" || kind == "event") << kind;
  }
  EXPECT_EQ(j["diverges_at"], "kv_pool");
  EXPECT_EQ(j["attribution"]["cause"], "flag.mem_fraction_static");
  EXPECT_TRUE(j["attribution"]["ruled_out"].is_array());
  EXPECT_TRUE(j["bad"]["kv"]["computed"].get<bool>());
  EXPECT_TRUE(j["good"]["memory"].contains("free_at_init"));
}

}  // namespace
}  // namespace tpt::diff
