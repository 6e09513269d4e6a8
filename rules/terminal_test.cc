// terminal_test.cc: what ended the run (rules/terminal.h), and what the
// engine does with it: a line its producer went on after is no cause of a
// later failure, cause before surface, "Possible:" below kSureEnough, the
// terminal exception quoted when no rule explains it, stage from frames.
#include "rules/terminal.h"

#include <gtest/gtest.h>

#include "rules/engine.h"
#include "rules/frame_stage.h"
#include "rules/prose.h"
#include "rules/test_rules.h"
#include "rules/vocabulary.h"

namespace tpt {
namespace {

Event Ev(const std::string& kind, int rank, nlohmann::json fields = nlohmann::json::object(), std::string text = "") {
  static uint64_t line = 0;
  Event e;
  e.kind = kind;
  e.family = "vllm";
  e.rank = rank;
  e.file = "run.log";
  e.line = ++line;
  e.SetFields(std::move(fields));
  e.text = text.empty() ? kind + " line" : std::move(text);
  return e;
}

RuleSet Rules(std::vector<std::pair<std::string, std::string>> files) {
  auto set = RuleSet::LoadTexts(files);
  EXPECT_TRUE(set.ok()) << set.status().message();
  return set.ok() ? std::move(*set) : RuleSet();
}

// A start-up warning (here: a fused kernel not supported on this GPU), a
// healthy start, serving, then a crash of another kind much later.
std::vector<Event> WarningThenLaterDeath() {
  return {Ev("server_args", -1, {{"framework", "vllm"}, {"tp_size", 2}}),
          Ev("unsupported_arch", 0, {}, "WARNING 01-01 00:00:01 custom allreduce is not supported on this GPU"),
          Ev("weights_load_end", 0, {{"weights_bytes", 1e9}}),
          Ev("startup_complete", 0),
          Ev("batch_stats", 0),
          Ev("batch_stats", 0),
          Ev("illegal_memory_access", 1, {}, "RuntimeError: CUDA error: an illegal memory access was encountered"),
          Ev("engine_dead", -1, {}, "vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue.")};
}

TEST(Terminals, EndsAreFailuresTheirProducerWentNoFurtherAfter) {
  std::vector<Event> ev = WarningThenLaterDeath();
  RunIndex run(ev);
  Terminals t(run);
  EXPECT_TRUE(t.Survived(1));   // rank 0 loaded, started and served after its warning
  EXPECT_FALSE(t.IsEnd(1));
  EXPECT_FALSE(t.Linked(1));    // a warning leads to no later death
  EXPECT_TRUE(t.IsEnd(6));      // rank 1's error: nothing of rank 1 after it
  EXPECT_TRUE(t.IsEnd(7));      // the engine's consequence line
  EXPECT_TRUE(t.Linked(6));
  ASSERT_TRUE(t.Primary().has_value());
  EXPECT_EQ(*t.Primary(), 6u);  // the error that names what failed, not the consequence
  ASSERT_TRUE(t.EndOf(6).has_value());
  EXPECT_EQ(*t.EndOf(6), 6u);
}

// vLLM V1 prints its EngineCore and its API server in one stream, each line
// prefixed `(EngineCore pid=N)` / `(APIServer pid=M)`: the API server answering
// /metrics after the engine core's illegal memory access is no progress of
// the engine core (holdout set 6's GB200 log: was process_crashed).
TEST(Terminals, AnotherPidsProgressInTheFileIsNotThisProcesssProgress) {
  std::vector<Event> ev = {Ev("illegal_memory_access", -1, {}, "torch.AcceleratorError: CUDA error: an illegal memory access was encountered"),
                           Ev("engine_dead", -1, {}, "vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue."),
                           Ev("http_access", -1, {{"method", "GET"}, {"path", "/metrics"}, {"status", 200}})};
  ev[0].pid = 4711;
  ev[0].process = "EngineCore";
  for (size_t i : {1, 2}) ev[i].pid = 4700, ev[i].process = "APIServer";
  {
    RunIndex run(ev);
    Terminals t(run);
    EXPECT_FALSE(t.Survived(0));  // pid 4711 printed nothing after it
    EXPECT_TRUE(t.IsEnd(0));
    EXPECT_TRUE(t.Survived(1));   // the API server itself did answer after
  }
  // The same pid answering after it: survived, as before.
  ev[2].pid = 4711;
  RunIndex run(ev);
  Terminals t(run);
  EXPECT_TRUE(t.Survived(0));
  EXPECT_FALSE(t.IsEnd(0));
}

// An issue body says what failed in a sentence above the lines it pasted
// (fresh set holdout51, sglang#8336: "..., a CUDA error: an illegal memory
// access was encountered appears", then two prefill lines of TP0): the
// sentence is no point of the run, so the lines after it are no progress
// after it. It stays a possibility (kProseMentionConfidence) that says where
// it was read; without the mark the run was called healthy.
TEST(Terminals, AnErrorNamedInASentenceHasNoPlaceInTheRunsTime) {
  RuleSet set = Rules({{"i.json", R"({"id": "i", "title": "t", "root_cause": "illegal_memory_access", "confidence": 0.75,
                                      "anchor": "illegal_memory_access", "explanation": "ima"})"}});
  auto events = [](bool sentence) {
    std::vector<Event> ev = {
        Ev("illegal_memory_access", -1, {},
           "When I use a single node to enable MTP, a CUDA error: an illegal memory access was encountered appears"),
        Ev("batch_stats", 0), Ev("batch_stats", 0)};
    if (sentence) ev[0].Set(kProseMention, true);
    return ev;
  };
  std::vector<Event> plain = events(false);
  Analysis before = Analyze(plain, set);
  EXPECT_EQ(before.root_cause, "none") << before.verdict;  // the file order read as time
  std::vector<Event> marked = events(true);
  {
    RunIndex run(marked);
    Terminals t(run);
    EXPECT_FALSE(t.Survived(0));
    EXPECT_FALSE(t.ServedAfterStartup(0));
  }
  Analysis a = Analyze(marked, set);
  ASSERT_EQ(a.root_cause, "illegal_memory_access") << a.verdict;
  EXPECT_DOUBLE_EQ(a.diagnoses[0].confidence, kProseMentionConfidence);
  EXPECT_NE(a.verdict.find("Possible: "), std::string::npos) << a.verdict;
  EXPECT_NE(a.verdict.find("own words at run.log:"), std::string::npos) << a.verdict;
}

// What a sentence is: four plain words first, no producer syntax before the
// message; program lines with words in front keep their marks.
TEST(Terminals, ASentenceStartsWithWordsAndHasNoProducerSyntax) {
  EXPECT_TRUE(SentenceBefore("When I use a single node to enable MTP, a CUDA error: "));
  EXPECT_TRUE(SentenceBefore("After about two hours of serving the scheduler stops with "));
  EXPECT_FALSE(SentenceBefore(""));
  EXPECT_FALSE(SentenceBefore("RuntimeError: CUDA error: "));
  EXPECT_FALSE(SentenceBefore("what():  [Rank 0] Watchdog caught "));
  EXPECT_FALSE(SentenceBefore("ERROR 05-01 14:39:06 [core.py:1131] torch.OutOfMemoryError: "));
  EXPECT_FALSE(SentenceBefore("Worker exit detail: Worker unexpectedly exits with a connection error code 2. (1) The process is "));
  EXPECT_FALSE(SentenceBefore("The actor died unexpectedly key=value "));
  // An aside in parentheses before markdown's inline code is a person's (holdout55, sglang-9151).
  EXPECT_TRUE(SentenceBefore("When running PD-disaggregation with HiCache (in my case 512 concurrent requests) leads to `"));
  EXPECT_FALSE(SentenceBefore("When running PD-disaggregation with HiCache (in my case 512 concurrent requests) leads to "));
  EXPECT_TRUE(SentenceBefore("When running PD-disaggregation with HiCache (in my case 512 requests) leads to `CUDA error: "));
  EXPECT_FALSE(SentenceBefore("[2025-08-14 10:02:11 TP3] Scheduler hit an exception: `"));
  EXPECT_FALSE(SentenceBefore("ValueError: `max_model_len` (4096) is larger than "));
  EXPECT_FALSE(SentenceBefore("Loading safetensors checkpoint shards: "));  // three words, then a colon
}

// A person telling their own run in a sentence ('... when I tried it') is a
// report, not a document quoting a message (holdout56 h56-02): first-person
// words outside the inline code; a README speaking to the reader is not.
TEST(Terminals, AFirstPersonSentenceIsItsAuthorsOwnRun) {
  EXPECT_TRUE(FirstPersonAccount("It almost worked except for the `Error while creating shared memory segment "
                                 "/dev/shm/nccl-ab (size 7340384)` when I tried it first time"));
  EXPECT_TRUE(FirstPersonAccount("My job stops with `CUDA error: out of memory`"));
  EXPECT_TRUE(FirstPersonAccount("the fix for me was `--shm-size=1g`"));
  EXPECT_FALSE(FirstPersonAccount("If a run stops with `Error while creating shared memory segment`, raise --shm-size"));
  EXPECT_FALSE(FirstPersonAccount("The server dies with \"Not enough memory\" at 0.55"));
  // Inside the code span is the program's text, not the author's.
  EXPECT_FALSE(FirstPersonAccount("A run prints `I0410 my_model loaded` on start"));
  EXPECT_FALSE(FirstPersonAccount("Immediately, Items and Mesh are not pronouns"));
  EXPECT_FALSE(FirstPersonAccount("On slow disk I/O the loader prints `Error while creating shared memory segment`"));
}

// Issue class 1: a warning the run survived was the verdict of a later death
// (today's main: unsupported_gpu_arch at the warning's line).
TEST(Terminals, AWarningTheRunWentOnAfterIsNotTheCauseOfALaterDeath) {
  RuleSet set = Rules({{"w.json", R"({"id": "w", "title": "t", "root_cause": "unsupported_gpu_arch", "confidence": 0.9,
                                      "anchor": "unsupported_arch", "explanation": "arch"})"},
                       {"i.json", R"({"id": "i", "title": "t", "root_cause": "illegal_memory_access", "confidence": 0.8,
                                      "anchor": "illegal_memory_access", "explanation": "ima"})"}});
  std::vector<Event> ev = WarningThenLaterDeath();
  Analysis a = Analyze(ev, set);
  EXPECT_EQ(a.root_cause, "illegal_memory_access") << a.verdict;
  ASSERT_EQ(a.diagnoses.size(), 1u);
  EXPECT_EQ(a.diagnoses[0].explains.line, ev[6].line);  // it explains rank 1's own end
  bool finding = false;
  for (const Finding& f : a.findings) finding |= f.id == "w";
  EXPECT_TRUE(finding) << "the warning is kept as a finding";
}

// SGLang's soft watchdog prints the same state dump as the hard one, then its
// soft=True line, and the scheduler goes on: the dump is that warning's. A
// dump followed by the hard line (or by nothing) stays a timeout.
TEST(Terminals, AWatchdogDumpIsAWarningWhenItsNextWatchdogLineIsSoft) {
  std::vector<Event> soft = {Ev("batch_stats", 0), Ev("watchdog_timeout", 0, {{"dump", true}}),
                             Ev("watchdog_timeout", 1, {{"dump", true}}), Ev("hang_warning", 0, {{"soft", true}}),
                             Ev("batch_stats", 0)};
  EXPECT_TRUE(WarningLine(soft, 1));
  EXPECT_FALSE(WarningLine(soft, 2));  // rank 1's own next watchdog line is not there
  std::vector<Event> hard = {Ev("batch_stats", 0), Ev("watchdog_timeout", 0, {{"dump", true}}),
                             Ev("watchdog_timeout", 0), Ev("hang_warning", 0, {{"soft", true}})};
  EXPECT_FALSE(WarningLine(hard, 1));  // its next watchdog line is the hard one
  std::vector<Event> not_dump = {Ev("watchdog_timeout", 0), Ev("hang_warning", 0, {{"soft", true}})};
  EXPECT_FALSE(WarningLine(not_dump, 0));
}

// Not only warnings: an error its process went on after (a request's OOM,
// then more serving) is no cause of a later death of another kind.
TEST(Terminals, AnErrorItsProcessWentOnAfterIsNotTheCauseOfALaterHang) {
  RuleSet set = Rules({{"o.json", R"({"id": "o", "title": "t", "root_cause": "runtime_oom", "anchor": "cuda_oom",
                                      "explanation": "oom"})"},
                       {"h.json", R"({"id": "h", "title": "t", "root_cause": "nccl_timeout_hang", "tier": "symptom",
                                      "anchor": "watchdog_timeout", "explanation": "hang"})"}});
  std::vector<Event> ev = {Ev("startup_complete", 0), Ev("cuda_oom", 0), Ev("batch_stats", 0), Ev("batch_stats", 0),
                           Ev("watchdog_timeout", 0), Ev("watchdog_timeout", 1)};
  Analysis a = Analyze(ev, set);
  EXPECT_EQ(a.root_cause, "nccl_timeout_hang") << a.verdict;  // was runtime_oom: a cause outranked the symptom
}

// Nothing ended: an error after which its process served (requests, then
// statistics) is no verdict of its own; the run outlived it: healthy, with
// the error as a finding. An error after which the run only reached a later
// start-up phase stands (a hang or a cut log may follow from it).
TEST(Terminals, AnErrorTheRunServedAfterIsAFindingWhenNothingEnded) {
  RuleSet set = Rules({{"a.json", R"({"id": "a", "title": "t", "root_cause": "unsupported_gpu_arch", "confidence": 0.9,
                                      "anchor": "no_kernel_image", "explanation": "arch"})"}});
  std::vector<Event> served = {Ev("weights_load_end", 0),
                               Ev("no_kernel_image", 0, {}, "ERROR RuntimeError: CUDA error: no kernel image is available"),
                               Ev("startup_complete", 0), Ev("http_access", 0), Ev("batch_stats", 0)};
  RunIndex run(served);
  Terminals t(run);
  EXPECT_FALSE(t.any());
  EXPECT_TRUE(t.ServedAfterStartup(1));
  Analysis a = Analyze(served, set);
  EXPECT_EQ(a.root_cause, "none") << a.verdict;
  bool finding = false;
  for (const Finding& f : a.findings) finding |= f.id == "a";
  EXPECT_TRUE(finding) << "the error is kept as a finding";

  std::vector<Event> started = {Ev("weights_load_end", 0),
                                Ev("no_kernel_image", 0, {}, "ERROR RuntimeError: CUDA error: no kernel image is available"),
                                Ev("startup_complete", 0)};
  RunIndex run2(started);
  EXPECT_FALSE(Terminals(run2).ServedAfterStartup(1));
  EXPECT_EQ(Analyze(started, set).root_cause, "unsupported_gpu_arch");
}

// The named links: a worker's error -> the engine's death (a consequence);
// a line whose kind leads_to a later failure (events.json).
TEST(Terminals, ConsequencesAndNamedLinksKeepACauseLinked) {
  std::vector<Event> ev = {Ev("startup_complete", -1), Ev("cuda_oom", -1, {}, "torch.OutOfMemoryError: CUDA out of memory."),
                           Ev("http_access", -1), Ev("engine_dead", -1)};
  RunIndex run(ev);
  Terminals t(run);
  EXPECT_TRUE(t.Survived(1));
  EXPECT_TRUE(t.Linked(1)) << "the engine died of it: the next end is its consequence";
  std::vector<Event> ev2 = {Ev("cuda_oom", -1), Ev("http_access", -1), Ev("watchdog_timeout", -1), Ev("engine_dead", -1)};
  RunIndex run2(ev2);
  Terminals t2(run2);
  EXPECT_FALSE(t2.Linked(0)) << "another own failure ended the run first";
  for (const EventKind& k : EventKinds())
    for (const std::string& to : k.leads_to) {
      const EventKind* target = FindEventKind(to);
      ASSERT_NE(target, nullptr) << k.kind << " leads_to unknown kind " << to;
      EXPECT_TRUE(target->failure) << k.kind << " leads_to " << to << ", which is no failure";
    }
  const EventKind* imbalance = FindEventKind("memory_imbalance");
  ASSERT_NE(imbalance, nullptr);
  ASSERT_FALSE(imbalance->leads_to.empty());
  std::vector<Event> ev3 = {Ev("memory_imbalance", 0), Ev("weights_load_end", 0), Ev(imbalance->leads_to[0], 0)};
  RunIndex run3(ev3);
  Terminals t3(run3);
  EXPECT_TRUE(t3.Survived(0));
  EXPECT_TRUE(t3.Linked(0));
}

// Stdout and stderr of one run without timestamps have no order between
// them: a phase line of the other stream is no progress after an error.
TEST(Terminals, UntimedStreamsDoNotOrderProgressAfterAnError) {
  Event err = Ev("cuda_oom", 0);
  err.source = 1;
  Event phase = Ev("weights_load_end", 0);
  phase.source = 0;
  std::vector<Event> ev = {err, phase};
  RunIndex run(ev);
  Terminals t(run);
  EXPECT_FALSE(t.Survived(0));
  EXPECT_TRUE(t.IsEnd(0));
  ev[0].ts = 10;
  ev[1].ts = 11;
  RunIndex timed(ev);
  EXPECT_TRUE(Terminals(timed).Survived(0));
}

// Cause before surface (taxonomy.json outranks), each pair of the issue.
TEST(Terminals, CauseBeforeSurfaceForEachNamedPair) {
  struct Pair {
    const char* cause;
    const char* surface;
  };
  for (Pair p : {Pair{"illegal_memory_access", "cuda_graph_capture_failure"},
                 Pair{"p2p_topology_problem", "custom_allreduce_failure"}, Pair{"nvls_fabric_manager", "nccl_error"},
                 Pair{"warmup_oom", "nccl_error"}, Pair{"weights_oom", "nccl_error"},
                 Pair{"runtime_oom", "nccl_error"}, Pair{"host_oom", "process_crashed"}}) {
    const RootCause* rc = FindRootCause(p.cause);
    ASSERT_NE(rc, nullptr) << p.cause;
    bool listed = false;
    for (const Outranks& o : rc->outranks) listed |= o.id == p.surface && !o.why.empty();
    EXPECT_TRUE(listed) << p.cause << " should outrank " << p.surface;
    // The surface's rule fires on an earlier line; the cause still leads.
    std::string s = std::string(R"({"id": "s", "title": "t", "root_cause": ")") + p.surface +
                    R"(", "anchor": "cuda_error", "explanation": "surface"})";
    std::string c = std::string(R"({"id": "c", "title": "t", "root_cause": ")") + p.cause +
                    R"(", "anchor": "nccl_error", "explanation": "cause"})";
    RuleSet set = Rules({{"s.json", s}, {"c.json", c}});
    Analysis a = Analyze(std::vector<Event>{Ev("cuda_error", 0), Ev("nccl_error", 0)}, set);
    EXPECT_EQ(a.root_cause, p.cause) << a.verdict;
  }
  for (const RootCause& rc : RootCauses())
    for (const Outranks& o : rc.outranks) EXPECT_NE(FindRootCause(o.id), nullptr) << rc.id << " outranks " << o.id;
}

TEST(Terminals, BelowSureEnoughTheVerdictIsAPossibilityWithTheRunnerUp) {
  RuleSet set = Rules({{"a.json", R"({"id": "a", "title": "t", "root_cause": "nccl_error", "confidence": 0.6,
                                      "anchor": "nccl_error", "explanation": "nccl"})"},
                       {"b.json", R"({"id": "b", "title": "t", "root_cause": "process_crashed", "confidence": 0.5,
                                      "tier": "consequence", "anchor": "engine_dead", "explanation": "died"})"}});
  Analysis a = Analyze(std::vector<Event>{Ev("nccl_error", 0), Ev("engine_dead", -1)}, set);
  EXPECT_EQ(a.root_cause, "nccl_error");
  EXPECT_EQ(a.verdict.rfind("Possible: nccl_error", 0), 0u) << a.verdict;
  EXPECT_NE(a.verdict.find("runner-up: process_crashed"), std::string::npos) << a.verdict;
  RuleSet sure = Rules({{"a.json", R"({"id": "a", "title": "t", "root_cause": "nccl_error", "confidence": 0.8,
                                       "anchor": "nccl_error", "explanation": "nccl"})"}});
  Analysis b = Analyze(std::vector<Event>{Ev("nccl_error", 0)}, sure);
  EXPECT_EQ(b.verdict.rfind("nccl_error", 0), 0u) << b.verdict;
}

// No rule explains the run: the verdict quotes what ended it, not an earlier
// line the run went on after.
TEST(Terminals, UnknownQuotesTheTerminalException) {
  // A rule of another failure only: nothing here explains the run.
  RuleSet none = Rules({{"d.json", R"({"id": "d", "title": "t", "root_cause": "disk_full", "anchor": "disk_full",
                                      "explanation": "disk"})"}});
  std::vector<Event> ev = {Ev("startup_complete", 0),
                           Ev("cuda_error", 0, {{"message", "misaligned address"}}, "CUDA error: misaligned address in a request"),
                           Ev("batch_stats", 0),
                           Ev("exception", 0, {{"type", "RuntimeError"}, {"message", "NCCL communicator was aborted"}},
                              "RuntimeError: NCCL communicator was aborted")};
  Analysis a = Analyze(ev, none);
  EXPECT_EQ(a.root_cause, "unknown");
  EXPECT_NE(a.verdict.find("NCCL communicator was aborted"), std::string::npos) << a.verdict;
  EXPECT_EQ(a.verdict.find("misaligned"), std::string::npos) << a.verdict;
}

// Stage from frames, per framework, at the versions stages.json cites.
TEST(FrameStage, EachFrameworksFramesGiveTheirStage) {
  struct Case {
    std::vector<std::string> frames;
    const char* stage;
  };
  const std::string v = "/usr/local/lib/python3.12/dist-packages/vllm/";
  const std::string s = "/sgl-workspace/sglang/python/sglang/srt/";
  std::vector<Case> cases = {
      // vLLM V1 (0.8-0.10): profiling, KV allocation, capture (which runs _dummy_run), model construction
      {{v + "v1/engine/core.py::_initialize_kv_caches", v + "v1/worker/gpu_worker.py::determine_available_memory",
        v + "v1/worker/gpu_model_runner.py::profile_run", v + "v1/worker/gpu_model_runner.py::_dummy_run",
        v + "model_executor/models/llama.py::forward"},
       "warmup"},
      {{v + "v1/worker/gpu_worker.py::initialize_from_config", v + "v1/worker/gpu_model_runner.py::initialize_kv_cache"},
       "kv_pool"},
      {{v + "v1/worker/gpu_worker.py::compile_or_warm_up_model", v + "v1/worker/gpu_model_runner.py::capture_model",
        v + "v1/worker/gpu_model_runner.py::_dummy_run"},
       "graphs"},
      {{v + "v1/worker/gpu_model_runner.py::load_model", v + "model_executor/model_loader/default_loader.py::load_model",
        v + "model_executor/models/qwen2.py::__init__", v + "model_executor/layers/linear.py::create_weights"},
       "weights"},
      {{v + "v1/engine/core.py::run_busy_loop", v + "v1/engine/core.py::step",
        v + "v1/worker/gpu_model_runner.py::execute_model"},
       "serving"},
      // vLLM V0 (0.6): profile_run runs execute_model: warm-up, not serving
      {{v + "worker/worker.py::determine_num_available_blocks", v + "worker/model_runner.py::profile_run",
        v + "worker/model_runner.py::execute_model"},
       "warmup"},
      {{v + "worker/worker.py::_init_cache_engine", v + "worker/cache_engine.py::__init__",
        v + "worker/cache_engine.py::_allocate_kv_cache"},
       "kv_pool"},
      // SGLang (0.4, 0.5)
      {{s + "model_executor/model_runner.py::init_cuda_graphs", s + "model_executor/cuda_graph_runner.py::__init__",
        s + "model_executor/cuda_graph_runner.py::capture"},
       "graphs"},
      {{s + "model_executor/model_runner.py::init_memory_pool", s + "mem_cache/memory_pool.py::__init__"}, "kv_pool"},
      {{s + "model_executor/model_runner.py::load_model", s + "model_loader/loader.py::load_model",
        s + "models/deepseek_v2.py::__init__"},
       "weights"},
      {{s + "managers/scheduler.py::event_loop_overlap", s + "managers/scheduler.py::run_batch",
        s + "managers/tp_worker.py::forward_batch_generation"},
       "serving"},
      // TGI (2.x, 3.x)
      {{"/opt/conda/lib/python3.11/site-packages/text_generation_server/server.py::Warmup",
        "/opt/conda/lib/python3.11/site-packages/text_generation_server/models/flash_causal_lm.py::warmup"},
       "warmup"},
      {{"/opt/conda/lib/python3.11/site-packages/text_generation_server/server.py::serve_inner",
        "/opt/conda/lib/python3.11/site-packages/text_generation_server/models/__init__.py::get_model"},
       "weights"},
      {{s + "model_executor/model_runner.py::init_device_graphs", s + "model_executor/cuda_graph_runner.py::capture"},
       "graphs"},  // SGLang 0.5 names the step init_device_graphs
      {{"/opt/conda/lib/python3.11/site-packages/text_generation_server/models/flash_causal_lm.py::warmup",
        "/opt/conda/lib/python3.11/site-packages/text_generation_server/models/flash_causal_lm.py::cuda_graph_warmup"},
       "graphs"},
      {{"/opt/conda/lib/python3.11/site-packages/text_generation_server/server.py::Prefill",
        "/opt/conda/lib/python3.11/site-packages/text_generation_server/models/flash_causal_lm.py::generate_token"},
       "serving"},
      // TensorRT-LLM (PyTorch backend), LMDeploy, PyTorch
      {{"/usr/local/lib/python3.12/dist-packages/tensorrt_llm/_torch/pyexecutor/model_engine.py::warmup"}, "warmup"},
      {{"/usr/local/lib/python3.12/dist-packages/tensorrt_llm/_torch/pyexecutor/py_executor_creator.py::create_py_executor",
        "/usr/local/lib/python3.12/dist-packages/tensorrt_llm/_torch/pyexecutor/_util.py::_create_kv_cache_manager"},
       "kv_pool"},
      {{"/usr/local/lib/python3.12/dist-packages/tensorrt_llm/_torch/pyexecutor/py_executor.py::_executor_loop",
        "/usr/local/lib/python3.12/dist-packages/tensorrt_llm/_torch/pyexecutor/py_executor.py::_forward_step"},
       "serving"},
      {{"/usr/local/lib/python3.12/dist-packages/lmdeploy/pytorch/engine/cache_engine.py::_allocate_cache"}, "kv_pool"},
      {{"/usr/local/lib/python3.12/dist-packages/lmdeploy/pytorch/engine/model_agent.py::build_model",
        "/usr/local/lib/python3.12/dist-packages/lmdeploy/pytorch/weight_loader/model_weight_loader.py::load_model_weights"},
       "weights"},
      {{"/usr/local/lib/python3.12/dist-packages/lmdeploy/pytorch/engine/engine.py::_async_loop_background"}, "serving"},
      {{"/opt/conda/lib/python3.10/site-packages/torch/cuda/graphs.py::__exit__",
        "/opt/conda/lib/python3.10/site-packages/torch/cuda/graphs.py::capture_end"},
       "graphs"},
      {{"/app/train.py::main", "/opt/conda/lib/python3.10/site-packages/torch/_tensor.py::backward"}, "serving"},
      // `with torch.device(d):` around model construction (vLLM base_loader.py,
      // SGLang loader.py): its __torch_function__ alone is the weights stage
      // (fresh set 7, sglang-10736), but any frame naming another stage wins.
      {{"/usr/local/lib/python3.12/dist-packages/torch/utils/_device.py::__torch_function__"}, "weights"},
      {{s + "model_executor/cuda_graph_runner.py::capture",
        "/usr/local/lib/python3.12/dist-packages/torch/utils/_device.py::__torch_function__"},
       "graphs"},
      {{s + "managers/scheduler.py::run_batch",
        "/usr/local/lib/python3.12/dist-packages/torch/utils/_device.py::__torch_function__"},
       "serving"},
      {{s + "model_executor/model_runner.py::load_model", s + "model_loader/__init__.py::get_model"}, "weights"},
  };
  for (const Case& c : cases) EXPECT_EQ(StageOfFrames(c.frames), c.stage) << c.frames.back();
  EXPECT_EQ(StageOfFrames({"/app/main.py::main", "/app/util.py::helper"}), "");
  EXPECT_EQ(StageOfFrames({}), "");

  // A cut traceback (no "Traceback" line) lost its outermost frames: the
  // entries that hold only when nothing further out names a stage (vLLM's
  // CUDAGraphWrapper, on every serving forward too) are not tried; the others
  // are (`with torch.device` alone stays weights: servers enter it to build
  // the model, the pasted-one-frame case above).
  const std::string vl = "/usr/local/lib/python3.12/dist-packages/vllm/";
  const std::vector<std::string> wrapper = {vl + "compilation/cuda_graph.py::__call__",
                                            vl + "model_executor/models/llama.py::forward"};
  EXPECT_EQ(StageOfFrames(wrapper), "graphs");
  EXPECT_EQ(StageOfFrames(wrapper, /*cut=*/true), "");
  EXPECT_EQ(StageOfFrames({"/usr/lib/python3/dist-packages/torch/utils/_device.py::__torch_function__"}, true), "weights");
  EXPECT_EQ(StageOfFrames({vl + "v1/worker/gpu_model_runner.py::_capture_cudagraphs", wrapper[0]}, true), "graphs");
  EXPECT_EQ(StageOfFrames({vl + "v1/worker/gpu_model_runner.py::execute_model", wrapper[0]}, true), "serving");
}

}  // namespace
}  // namespace tpt
