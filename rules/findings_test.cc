// findings_test.cc: the finding language, its scope functions and the built-in
// findings on hand-made events (the sample logs are tested in tests/).
#include "rules/findings.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <optional>

#include <gtest/gtest.h>

#include "rules/analyzer.h"

namespace tpt {
namespace {

Event Ev(std::string kind, int rank, nlohmann::json fields = nlohmann::json::object(), std::string text = "") {
  static uint64_t line = 0;
  Event e;
  e.kind = std::move(kind);
  e.rank = rank;
  e.file = "run.log";
  e.line = ++line;
  e.SetFields(std::move(fields));
  e.text = text.empty() ? e.kind : std::move(text);
  return e;
}

Event Args(nlohmann::json args) {
  Event e = Ev("server_args", -1, {{"framework", "sglang"}});
  for (auto& [k, v] : args.items()) e.Set(k, v);
  return e;
}

Event Env(const std::string& name, const std::string& value) {
  return Ev("env_var", -1, {{"name", name}, {"value", value}}, name + "=" + value + " python3 -m sglang.launch_server");
}

const FindingSet& Builtin() {
  static const FindingSet set = [] {
    auto s = FindingSet::LoadBuiltin();
    EXPECT_TRUE(s.ok()) << s.status().message();
    return s.ok() ? std::move(*s) : FindingSet();
  }();
  return set;
}

// By value: callers often pass a temporary vector.
std::optional<Finding> Find(const std::vector<Finding>& fs, const std::string& id) {
  for (const auto& f : fs)
    if (f.id == id) return f;
  return std::nullopt;
}

std::vector<Finding> Eval(const std::vector<Event>& events, const FindingSet& set = Builtin()) {
  RunIndex run(events);
  return EvaluateFindings(run, set);
}

Value EvalExpr(const std::vector<Event>& events, size_t anchor, const std::string& text) {
  RunIndex run(events);
  FindingScope scope(run, anchor);
  auto e = ParseExpr(text);
  EXPECT_TRUE(e.ok()) << e.status().message();
  return e.ok() ? (*e)->Eval(scope) : Value();
}

// ---- loading ----

TEST(FindingLoad, BuiltinLoadsEveryFileWithUniqueIds) {
  std::set<std::string> ids;
  for (const auto& r : Builtin().rules()) {
    EXPECT_TRUE(ids.insert(r.id).second) << r.id;
    EXPECT_FALSE(r.advice.empty()) << r.id;
    EXPECT_EQ(r.source, "rules/findings/" + r.id + ".json") << "one file per finding, named after its id";
  }
  EXPECT_GE(ids.size(), 7u);
}

TEST(FindingLoad, RejectsBadFilesNamingFileAndPath) {
  struct Case {
    std::string text, want;
  };
  const std::vector<Case> cases = {
      {"{", "x.json: $: not valid JSON"},
      {R"j({"id":"a","severity":"loud","title":"t","advice":"x"})j", "$.severity"},
      {R"j({"id":"A b","severity":"info","title":"t","advice":"x"})j", "$.id"},
      {R"j({"id":"a","severity":"info","title":"t","advice":"x","colour":1})j", "$.colour: unknown key"},
      {R"j({"id":"a","severity":"info","title":"t","advice":"x","when":"nope(1)"})j", "unknown function 'nope'"},
      {R"j({"id":"a","severity":"info","title":"t","advice":"x","when":"ghost > 1"})j", "unknown name 'ghost'"},
      {R"j({"id":"a","severity":"info","title":"{ghost}","advice":"x"})j", "$.title: template uses '{ghost}'"},
      {R"j({"id":"a","severity":"info","title":"t","advice":[{"text":"{n:2f}"}],"let":{"n":"1"}})j", "is not .Nf"},
      {R"j({"id":"a","severity":"info","title":"t","advice":"x","anchor":["no_such_kind"]})j", "unknown event kind 'no_such_kind'"},
      {R"j({"id":"a","severity":"info","title":"t"})j", "missing required key \"advice\""},
      {R"j({"id":"a","severity":"info","title":"t","advice":"x","when":"1 +"})j", "$.when"},
  };
  for (const auto& c : cases) {
    auto r = ParseFindingRule("x.json", c.text);
    ASSERT_FALSE(r.ok()) << c.text;
    EXPECT_NE(r.status().message().find(c.want), std::string::npos) << r.status().message();
    EXPECT_EQ(r.status().message().rfind("x.json: ", 0), 0u) << r.status().message();
  }
}

TEST(FindingLoad, DuplicateIdsAreRejected) {
  std::string f = R"j({"id":"same","severity":"info","title":"t","advice":"x"})j";
  auto s = FindingSet::LoadTexts({{"a.json", f}, {"b.json", f}});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("also used by a.json"), std::string::npos);
}

// --findings DIR: DIR's files join the built-in ones, a file named like a
// built-in one replaces it; without the built-in ones, DIR's alone.
TEST(FindingLoad, DirectoryAddsToAndReplacesBuiltinFiles) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("tpt_findings_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "mine.json") << R"j({"id":"mine","severity":"info","title":"t","advice":"x"})j";
  std::ofstream(dir / "serving_stats.json") << R"j({"id":"serving_stats","severity":"warning","title":"mine","advice":"y"})j";
  auto both = LoadFindings(dir.string(), /*builtin=*/true);
  ASSERT_TRUE(both.ok()) << both.status().message();
  EXPECT_EQ(both->rules().size(), Builtin().rules().size() + 1);
  size_t replaced = 0;
  for (const auto& r : both->rules())
    if (r.id == "serving_stats") replaced += r.title == "mine";
  EXPECT_EQ(replaced, 1u);
  auto alone = LoadFindings(dir.string(), /*builtin=*/false);
  ASSERT_TRUE(alone.ok()) << alone.status().message();
  EXPECT_EQ(alone->rules().size(), 2u);
  auto none = LoadFindings((dir / "nope").string(), true);
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("--findings"), std::string::npos) << none.status().message();
  fs::remove_all(dir);
}

TEST(FindingLoad, MissingDirectoryIsNotFound) {
  auto s = FindingSet::LoadDir("/no/such/findings");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kNotFound);
}

// ---- scope functions ----

TEST(FindingScopeTest, Functions) {
  std::vector<Event> ev = {
      Env("SGLANG_FORCE_CUSTOM_AR_PCIE", "1"), Env("NCCL_P2P_DISABLE", "0"),
      Ev("weights_load_begin", 0, {{"avail_bytes", 100.0}}), Ev("weights_load_end", 0, {{"weights_bytes", 60.0}}),
      Ev("weights_load_begin", 1, {{"avail_bytes", 101.0}}), Ev("weights_load_begin", 0, {{"avail_bytes", 9.0}}),
      Ev("batch_stats", 0, {{"gen_throughput", 0.0}}), Ev("batch_stats", 0, {{"gen_throughput", 30.0}}),
      Ev("batch_stats", 0, {{"gen_throughput", 50.0}}), Ev("cuda_oom", 0, {}, "CUDA out of memory in deep_ep/buffer.py"),
  };
  const size_t oom = ev.size() - 1;
  EXPECT_EQ(EvalExpr(ev, oom, "meanof('batch_stats', 'gen_throughput')").number(), 80.0 / 3);
  EXPECT_EQ(EvalExpr(ev, oom, "meanof_nonzero('batch_stats', 'gen_throughput')").number(), 40.0);
  EXPECT_EQ(EvalExpr(ev, oom, "sumof('batch_stats', 'gen_throughput')").number(), 80.0);
  EXPECT_TRUE(EvalExpr(ev, oom, "sumof('retraction', 'count')").is_null());
  EXPECT_EQ(EvalExpr(ev, oom, "extract(anchor.text, '(deep_?ep|pplx)')").str(), "deep_ep");
  EXPECT_TRUE(EvalExpr(ev, oom, "extract(anchor.text, '(pplx)')").is_null());
  EXPECT_EQ(EvalExpr(ev, oom, "lower(extract(anchor.text, 'CUDA (OUT) of'))").str(), "out");
  // A pattern without a group gives the whole match (it used to give null).
  EXPECT_EQ(EvalExpr(ev, oom, "extract(anchor.text, 'CUDA OUT of')").str(), "CUDA out of");
  EXPECT_EQ(EvalExpr(ev, oom, "env_match('^SGLANG_FORCE')").str(), "SGLANG_FORCE_CUSTOM_AR_PCIE=1");
  EXPECT_TRUE(EvalExpr(ev, oom, "env_match('^NCCL_P2P_DISABLE$')").is_null()) << "0 is not set";
  EXPECT_EQ(EvalExpr(ev, oom, "rank_count_before('weights_load_begin')").number(), 2);
  EXPECT_EQ(EvalExpr(ev, oom, "rank_nth('weights_load_begin', 'avail_bytes', 2)").number(), 9.0);
  EXPECT_TRUE(EvalExpr(ev, oom, "rank_nth('weights_load_begin', 'avail_bytes', 3)").is_null());
  EXPECT_EQ(EvalExpr(ev, oom, "phase()").str(), "serving");
  EXPECT_EQ(EvalExpr(ev, 3, "phase()").str(), "weight loading");
  EXPECT_EQ(EvalExpr(ev, oom, "ceil_pow2(40)").number(), 64);
  EXPECT_EQ(EvalExpr(ev, oom, "ceil_pow2(64)").number(), 64);
  EXPECT_EQ(EvalExpr(ev, oom, "largest_divisor_at_most(71, 2)").number(), 1) << "71 heads are prime";
  EXPECT_EQ(EvalExpr(ev, oom, "largest_divisor_at_most(40, 3)").number(), 2);
  EXPECT_EQ(EvalExpr(ev, oom, "largest_divisor_at_most(64, 8)").number(), 8);
  EXPECT_TRUE(EvalExpr(ev, oom, "largest_divisor_at_most(0, 8)").is_null());
  EXPECT_EQ(EvalExpr(ev, oom, "choose(1 > 2, 'a', 'b')").str(), "b");
  EXPECT_EQ(EvalExpr(ev, oom, "num('120') + 1").number(), 121);
  EXPECT_TRUE(EvalExpr(ev, oom, "num('12a')").is_null());
  EXPECT_EQ(EvalExpr(ev, oom, "concat('SM', 120)").str(), "SM120");
  EXPECT_TRUE(EvalExpr(ev, oom, "concat('SM', null)").is_null());
  EXPECT_TRUE(EvalExpr(ev, oom, "gpu_interconnect()").is_null()) << "no GPU named in the log";
}

TEST(FindingScopeTest, GpuCatalogLookups) {
  std::vector<Event> ev = {Ev("gpu_info", 0, {{"gpu_name", "NVIDIA RTX PRO 6000 Blackwell Server Edition"}})};
  Value ic = EvalExpr(ev, RunScope::kNoAnchor, "gpu_interconnect()");
  Value sm = EvalExpr(ev, RunScope::kNoAnchor, "gpu_sm()");
  // The catalog knows this spelling (memory/gpu_catalog.json): a null here is a
  // broken lookup, not a reason to skip.
  ASSERT_FALSE(ic.is_null()) << "gpu_interconnect() did not find the RTX PRO 6000 in the GPU catalog";
  ASSERT_FALSE(sm.is_null()) << "gpu_sm() did not find the RTX PRO 6000 in the GPU catalog";
  EXPECT_EQ(ic.str(), "pcie");
  EXPECT_EQ(sm.number(), 120);
}

// ---- evaluation ----

TEST(FindingEval, AnchoredFindingNamesEveryMatchingRank) {
  auto set = FindingSet::LoadTexts({{"t.json", R"j({
    "id": "oom_seen", "severity": "info", "anchor": "cuda_oom",
    "let": {"tried": "gib(anchor.tried_bytes)"},
    "when": "anchor.tried_bytes > 0",
    "title": "OOM on ranks {matched_ranks} ({matched_count} times), first tried {tried:.1f} GiB",
    "advice": [{"text": "big", "when": "tried > 1"}, {"text": "small", "when": "tried <= 1"}]})j"}});
  ASSERT_TRUE(set.ok()) << set.status().message();
  std::vector<Event> ev = {Ev("cuda_oom", 3, {{"tried_bytes", 2147483648.0}}), Ev("cuda_oom", 1, {{"tried_bytes", 1.0}}),
                           Ev("cuda_oom", 5, {})};
  auto fs = Eval(ev, *set);
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0].title, "OOM on ranks 1, 3 (2 times), first tried 2.0 GiB");
  EXPECT_EQ(fs[0].advice, "big");
  ASSERT_EQ(fs[0].evidence.size(), 1u);
  EXPECT_EQ(fs[0].evidence[0].rank, 3);
  EXPECT_EQ(fs[0].figures["tried"], 2.0);
  EXPECT_EQ(fs[0].figures["ranks"], nlohmann::json::array({1, 3}));
  EXPECT_TRUE(Eval({Ev("cuda_oom", 0, {})}, *set).empty());
}

TEST(FindingEval, WarningWhenRaisesSeverity) {
  auto set = FindingSet::LoadTexts({{"t.json", R"j({"id": "x", "severity": "info", "let": {"n": "count('retraction')"},
    "when": "n > 0", "warning_when": "n >= 2", "title": "{n} retractions", "advice": "a"})j"}});
  ASSERT_TRUE(set.ok()) << set.status().message();
  EXPECT_EQ(Eval({Ev("retraction", 0, {{"count", 1}})}, *set).at(0).severity, "info");
  EXPECT_EQ(Eval({Ev("retraction", 0, {{"count", 1}}), Ev("retraction", 0, {{"count", 1}})}, *set).at(0).severity,
            "warning");
}

// ---- built-in findings on hand-made events ----

TEST(BuiltinFindings, CustomAllReduceForcedOnPcie) {
  std::vector<Event> ev = {Env("SGLANG_FORCE_CUSTOM_AR_PCIE", "1"), Args({{"tp_size", 8}}),
                           Ev("batch_stats", 0, {{"gen_throughput", 38.0}, {"running_reqs", 1}})};
  auto fs = Eval(ev);
  std::optional<Finding> f = Find(fs, "custom_ar_forced_pcie");
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->severity, "warning");
  EXPECT_EQ(f->figures["tp_size"], 8);
  EXPECT_EQ(f->figures["decode_tok_s"], 38.0);
  EXPECT_NE(f->advice.find("unset SGLANG_FORCE_CUSTOM_AR_PCIE=1"), std::string::npos) << f->advice;
  EXPECT_NE(f->advice.find("38 tok/s against 89.5 with NCCL"), std::string::npos) << f->advice;
  EXPECT_NE(f->advice.find("tptriage repro --bench-allreduce --tp 8"), std::string::npos) << f->advice;
  ASSERT_FALSE(f->evidence.empty());
  EXPECT_NE(f->evidence[0].text.find("SGLANG_FORCE_CUSTOM_AR_PCIE"), std::string::npos);

  // Two GPUs: custom all-reduce is fine on PCIe (vLLM #2192 A30 TP2).
  EXPECT_FALSE(Find(Eval({Env("SGLANG_FORCE_CUSTOM_AR_PCIE", "1"), Args({{"tp_size", 2}})}), "custom_ar_forced_pcie").has_value());
  // --disable-custom-all-reduce wins over the variable.
  EXPECT_FALSE(Find(Eval({Env("SGLANG_FORCE_CUSTOM_AR_PCIE", "1"), Args({{"tp_size", 8}, {"disable_custom_all_reduce", true}})}),
                 "custom_ar_forced_pcie").has_value());
  // The variable set to 0 forces nothing.
  EXPECT_FALSE(Find(Eval({Env("SGLANG_FORCE_CUSTOM_AR_PCIE", "0"), Args({{"tp_size", 8}})}), "custom_ar_forced_pcie").has_value());
  // The server turning it off on PCIe is the healthy case.
  EXPECT_FALSE(Find(Eval({Args({{"tp_size", 4}}), Ev("custom_ar_disabled", 0, {{"reason", "pcie_multi_gpu"}})}),
                 "custom_ar_forced_pcie").has_value());
}

TEST(BuiltinFindings, CudaGraphMemoryWithServingStats) {
  std::vector<Event> ev = {Args({{"tp_size", 8}, {"cuda_graph_max_bs", 512}}),
                           Ev("kv_pool_alloc", 0, {{"tokens", 1000}, {"k_bytes", 20480000.0}, {"v_bytes", 20480000.0}}),
                           Ev("graph_capture_sizes", 0, {{"bs", {1, 2, 4, 8, 512}}}),
                           Ev("graph_capture_end", 0, {{"graph_bytes", 4.0 * 1073741824}}),
                           Ev("batch_stats", 0, {{"running_reqs", 40}, {"gen_throughput", 800.0}, {"phase", "decode"}})};
  std::optional<Finding> f = Find(Eval(ev), "cuda_graph_memory");
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->figures["max_bs"], 512);
  EXPECT_EQ(f->figures["smaller_bs"], 64) << "next power of two above the peak of 40 running requests";
  EXPECT_EQ(f->figures["give_back_gib"], 3.5) << "4 GiB x (1 - 64/512)";
  EXPECT_EQ(f->figures["kv_bytes_per_token"], 40960);
  EXPECT_EQ(f->figures["running_exceeded_smaller"], false);
  EXPECT_EQ(f->severity, "warning") << "3.5 GiB to give back with batches far below the captured size";
  EXPECT_NE(f->advice.find("--cuda-graph-max-bs 64"), std::string::npos) << f->advice;

  // Without statistics: a quarter of the captured size, and said so.
  ev.pop_back();
  f = Find(Eval(ev), "cuda_graph_memory");
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->figures["smaller_bs"], 128);
  EXPECT_EQ(f->severity, "info");
  EXPECT_NE(f->advice.find("No serving statistics"), std::string::npos) << f->advice;

  // No graph memory printed: nothing to say.
  EXPECT_FALSE(Find(Eval({Args({{"cuda_graph_max_bs", 512}}), Ev("graph_capture_end", 0, {{"elapsed_s", 3.0}})}),
                 "cuda_graph_memory").has_value());
}

TEST(BuiltinFindings, ServingStatsSummary) {
  std::vector<Event> ev = {Ev("batch_stats", 0, {{"gen_throughput", 0.0}, {"running_reqs", 0}, {"token_usage", 0.0}}),
                           Ev("batch_stats", 0, {{"gen_throughput", 80.0}, {"running_reqs", 10}, {"token_usage", 0.5}}),
                           Ev("batch_stats", 0, {{"gen_throughput", 100.0}, {"running_reqs", 12}, {"token_usage", 0.9}}),
                           Ev("retraction", 0, {{"count", 3}})};
  std::optional<Finding> f = Find(Eval(ev), "serving_stats");
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->severity, "info");
  EXPECT_EQ(f->figures["decode_tok_s"], 90.0);
  EXPECT_EQ(f->figures["peak_running"], 12);
  EXPECT_EQ(f->figures["retracted_requests"], 3);
  EXPECT_EQ(f->title, "Serving: 90.0 tok/s decode on average (peak 100.0), up to 12 running requests, KV usage up to 90%");
  EXPECT_FALSE(Find(Eval({Ev("batch_stats", 0, {{"running_reqs", 0}, {"token_usage", 0.0}})}), "serving_stats").has_value());
}

TEST(BuiltinFindings, EpBackendFailureNamesBackendPhaseRank) {
  Event oom = Ev("exception", 3, {{"type", "torch.OutOfMemoryError"}},
                 "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.75 GiB.");
  oom.extra_lines = {"  File \"/usr/lib/python3/dist-packages/deep_ep/buffer.py\", line 542, in low_latency_dispatch"};
  std::vector<Event> ev = {Args({{"ep_size", 8}, {"moe_a2a_backend", "deepep"}}), Ev("graph_capture_begin", 3, {}), oom};
  std::optional<Finding> f = Find(Eval(ev), "ep_a2a_backend_failure");
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->title, "Expert-parallel all-to-all backend DeepEP failed (out of memory) on rank 3 during CUDA graph capture");
  // The same OOM without the backend in its traceback is the model's, not the backend's.
  ev.back().extra_lines = {"  File \"sglang/srt/layers/linear.py\", line 1298, in forward"};
  EXPECT_FALSE(Find(Eval(ev), "ep_a2a_backend_failure").has_value());
}

TEST(BuiltinFindings, DraftRowsInTheLedger) {
  std::vector<Event> ev = {Args({{"tp_size", 1}, {"speculative_algorithm", "EAGLE3"}}),
                           Ev("weights_load_begin", 0, {{"avail_bytes", 20.0 * 1073741824}}),
                           Ev("weights_load_end", 0, {{"avail_bytes", 13.0 * 1073741824}, {"weights_bytes", 7.0 * 1073741824},
                                                      {"model_class", "LlamaForCausalLM"}}),
                           Ev("kv_pool_alloc", 0, {{"tokens", 100}, {"k_bytes", 5.0 * 1073741824}, {"v_bytes", 5.0 * 1073741824}}),
                           Ev("weights_load_begin", 0, {{"avail_bytes", 2.5 * 1073741824}}),
                           Ev("weights_load_end", 0, {{"avail_bytes", 1.5 * 1073741824}, {"weights_bytes", 1.0 * 1073741824},
                                                      {"model_class", "LlamaForCausalLMEagle3"}}),
                           Ev("kv_pool_alloc", 0, {{"tokens", 100}, {"k_bytes", 0.25 * 1073741824}, {"v_bytes", 0.25 * 1073741824}})};
  Analysis a;
  a.ledger.push_back(LedgerRow{0, "target"});
  AddFindings(RunIndex(ev), Builtin(), &a);
  std::optional<Finding> f = Find(a.findings, "spec_decode_draft_memory");
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->figures["draft_weights_gib"], 1.0);
  EXPECT_EQ(f->figures["target_weights_gib"], 7.0);
  EXPECT_EQ(f->figures["draft_kv_gib"], 0.5);
  EXPECT_EQ(f->figures["draft_free_at_init_gib"], 2.5);
  ASSERT_EQ(a.ledger.size(), 2u);
  EXPECT_EQ(a.ledger[1].role, "draft");
  EXPECT_EQ(a.ledger[1].weights_bytes, 1.0 * 1073741824);
  EXPECT_EQ(a.ledger[1].kv_pool_bytes, 0.5 * 1073741824);
  EXPECT_EQ(a.ledger[1].free_at_init_bytes, 2.5 * 1073741824);
  EXPECT_EQ(a.root_cause, "none") << "findings never change the diagnosis";

  // Without speculative decoding a second load is not a draft.
  ev[0] = Args({{"tp_size", 1}});
  ev[5].Set("model_class", "LlamaForCausalLM");
  Analysis b;
  AddFindings(RunIndex(ev), Builtin(), &b);
  EXPECT_FALSE(Find(b.findings, "spec_decode_draft_memory").has_value());
  EXPECT_TRUE(b.ledger.empty());
}

}  // namespace
}  // namespace tpt
