// format_samples_test.cc: the built-in format files against samples/logs/.
//
// Each hand-written sample log goes through the built-in formats and the
// parser like `tptriage events` does; the test checks the events and figures a
// reader of that log would name (memory in bytes, ranks, consequences). A
// format change that loses or mis-scales one of them fails here. The per-line
// samples inside parser/formats/*.json are checked by the loader itself.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "parser/format_set.h"
#include "parser/parser.h"

namespace tpt {
namespace {

namespace fs = std::filesystem;

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

const FormatSet& Formats() {
  static const FormatSet set = [] {
    auto s = FormatSet::LoadBuiltin(/*strict=*/true);
    EXPECT_TRUE(s.ok()) << s.status().message();
    return s.ok() ? std::move(*s) : FormatSet();
  }();
  return set;
}

std::vector<Event> Parse(const std::string& name) {
  fs::path path = fs::path(TPT_SOURCE_DIR) / "samples" / "logs" / name;
  auto run = ParseRunToMemory({path.string()}, Formats(), ParseOptions());
  EXPECT_TRUE(run.ok()) << name << ": " << run.status().message();
  return run.ok() ? run->events : std::vector<Event>();
}

std::vector<Event> OfKind(const std::vector<Event>& events, const std::string& kind) {
  std::vector<Event> out;
  for (const Event& e : events) {
    if (e.kind == kind) out.push_back(e);
  }
  return out;
}

double Num(const Event& e, const std::string& field) {
  if (!e.Get(field).is_number()) {
    ADD_FAILURE() << e.kind << " (" << e.pattern_id << ") has no number '" << field << "': " << e.FieldsJson().dump();
    return NAN;
  }
  return e.Get(field).number();
}

std::string Str(const Event& e, const std::string& field) {
  return e.Get(field).string();
}

bool Near(double a, double b) { return std::fabs(a - b) <= 1e-6 * std::max(1.0, std::fabs(b)); }

// Kinds that mean "something failed"; a healthy log must produce none.
const std::vector<std::string> kFailureKinds = {
    "cuda_oom",      "not_enough_memory", "min_viable_fraction_error", "kv_too_small", "no_cache_blocks",
    "free_memory_below_util", "kv_pool_exhausted", "nccl_error",       "watchdog_timeout", "collective_mismatch",
    "duplicate_gpu", "no_kernel_image",   "unsupported_arch",          "driver_mismatch",  "illegal_memory_access",
    "xid",           "ecc_error",         "address_in_use",            "p2p_error",        "shm_error",
    "network_error", "disk_full",         "config_error",              "signal",           "sigquit",
    "child_failed",  "engine_dead",       "worker_died",               "worker_exception", "custom_ar_error",
    "cuda_error",    "device_assert",     "warmup_oom",                "weights_oom",      "graph_capture_failed"};

void ExpectHealthy(const std::vector<Event>& events) {
  for (const Event& e : events) {
    EXPECT_EQ(std::count(kFailureKinds.begin(), kFailureKinds.end(), e.kind), 0)
        << "healthy log gave " << e.kind << " (" << e.family << "." << e.pattern_id << ") at line " << e.line << ": "
        << e.text;
  }
}

TEST(FormatSamples, SglangTp4HealthyStartupFigures) {
  auto events = Parse("sglang-tp4-healthy.log");
  ExpectHealthy(events);

  auto loads = OfKind(events, "weights_load_end");
  ASSERT_EQ(loads.size(), 4u);
  std::set<int> ranks;
  for (const Event& e : loads) {
    ranks.insert(e.tp_rank);
    EXPECT_TRUE(Near(Num(e, "weights_bytes"), 32.87 * kGiB));  // SGLang "GB" is GiB
    EXPECT_TRUE(Near(Num(e, "avail_bytes"), 45.63 * kGiB));
  }
  EXPECT_EQ(ranks, (std::set<int>{0, 1, 2, 3}));

  auto begins = OfKind(events, "weights_load_begin");
  ASSERT_EQ(begins.size(), 4u);
  EXPECT_TRUE(Near(Num(begins[0], "avail_bytes"), 78.50 * kGiB));

  int pool_lines = 0;
  for (const Event& e : OfKind(events, "kv_pool_alloc")) {
    EXPECT_EQ(Num(e, "tokens"), 443744);
    if (e.Get("k_bytes").present()) {
      ++pool_lines;
      EXPECT_TRUE(Near(Num(e, "k_bytes"), 16.93 * kGiB));
    } else {
      EXPECT_EQ(Num(e, "context_len"), 131072);  // the scheduler's summary line
    }
  }
  EXPECT_EQ(pool_lines, 4);

  auto args = OfKind(events, "server_args");
  ASSERT_EQ(args.size(), 1u);
  EXPECT_EQ(args[0].Get("args").json().value("tp_size", 0), 4);
  EXPECT_DOUBLE_EQ(args[0].Get("args").json().value("mem_fraction_static", 0.0), 0.85);

  auto graphs = OfKind(events, "graph_capture_end");
  ASSERT_EQ(graphs.size(), 4u);
  EXPECT_TRUE(Near(Num(graphs[0], "graph_bytes"), 1.01 * kGiB));
  auto sizes = OfKind(events, "graph_capture_sizes");
  ASSERT_EQ(sizes.size(), 1u);
  EXPECT_EQ(sizes[0].Get("bs").json().back(), 160);

  EXPECT_FALSE(OfKind(events, "custom_ar_enabled").empty());
  EXPECT_TRUE(OfKind(events, "custom_ar_disabled").empty());
  EXPECT_FALSE(OfKind(events, "startup_complete").empty());

  bool decode = false;
  for (const Event& e : OfKind(events, "batch_stats")) {
    if (Str(e, "phase") != "decode") continue;
    decode = true;
    EXPECT_EQ(e.Get("cuda_graph").boolean(), true);
    EXPECT_EQ(Num(e, "running_reqs"), 128);
  }
  EXPECT_TRUE(decode);
}

TEST(FormatSamples, SglangNotEnoughMemoryOnBothRanks) {
  auto events = Parse("sglang-tp2-not-enough-memory.log");
  auto nem = OfKind(events, "not_enough_memory");
  ASSERT_EQ(nem.size(), 2u);
  for (const Event& e : nem) {
    EXPECT_DOUBLE_EQ(Num(e, "current_fraction"), 0.8);
    EXPECT_FALSE(e.consequence);
  }
  // The error line itself has no prefix; the ranks are on the headers of the tracebacks.
  std::set<int> ranks;
  for (const Event& e : OfKind(events, "worker_exception")) ranks.insert(e.tp_rank);
  EXPECT_EQ(ranks, (std::set<int>{0, 1}));
  auto quit = OfKind(events, "sigquit");
  ASSERT_EQ(quit.size(), 1u);
  EXPECT_TRUE(quit[0].consequence);
  auto loads = OfKind(events, "weights_load_end");
  ASSERT_EQ(loads.size(), 2u);
  EXPECT_TRUE(Near(Num(loads[0], "avail_bytes"), 1.45 * kGiB));
  bool killed = false;
  for (const Event& e : OfKind(events, "signal")) killed |= Str(e, "signal") == "SIGKILL";
  EXPECT_TRUE(killed);
}

TEST(FormatSamples, VllmV1Tp2HealthyStartupFigures) {
  auto events = Parse("vllm-v1-tp2-healthy.log");
  ExpectHealthy(events);
  auto version = OfKind(events, "framework_version");
  ASSERT_FALSE(version.empty());
  EXPECT_EQ(Str(version[0], "version"), "0.11.0");
  EXPECT_EQ(Str(version[0], "framework"), "vllm");

  auto loads = OfKind(events, "weights_load_end");
  ASSERT_EQ(loads.size(), 2u);
  EXPECT_TRUE(Near(Num(loads[0], "weights_bytes"), 30.5869 * kGiB));

  int kv_lines = 0;
  for (const Event& e : OfKind(events, "memory_profile")) {
    if (!e.Get("kv_cache_bytes").present()) continue;
    ++kv_lines;
    EXPECT_TRUE(Near(Num(e, "kv_cache_bytes"), 37.73 * kGiB));
  }
  EXPECT_EQ(kv_lines, 2);

  bool tokens = false, concurrency = false;
  for (const Event& e : OfKind(events, "kv_pool_alloc")) {
    if (e.Get("tokens").present()) tokens = Num(e, "tokens") == 309072;  // "309,072"
    if (e.Get("max_concurrency").present()) {
      concurrency = Near(Num(e, "max_concurrency"), 7.55) && Num(e, "max_seq_len") == 40960;
    }
  }
  EXPECT_TRUE(tokens);
  EXPECT_TRUE(concurrency);

  bool tp_from_args = false;
  for (const Event& e : OfKind(events, "server_args")) {
    if (e.Get("args").is_object() && e.Get("args").json().value("tensor_parallel_size", 0) == 2) tp_from_args = true;
  }
  EXPECT_TRUE(tp_from_args);
  auto graphs = OfKind(events, "graph_capture_end");
  ASSERT_EQ(graphs.size(), 1u);
  EXPECT_TRUE(Near(Num(graphs[0], "graph_bytes"), 0.93 * kGiB));
}

TEST(FormatSamples, VllmKvTooSmallAndEngineDeadIsAConsequence) {
  auto events = Parse("vllm-v1-tp2-kv-too-small.log");
  auto small = OfKind(events, "kv_too_small");
  ASSERT_EQ(small.size(), 1u);
  EXPECT_EQ(Num(small[0], "max_seq_len"), 131072);
  EXPECT_TRUE(Near(Num(small[0], "needed_bytes"), 8.0 * kGiB));
  EXPECT_TRUE(Near(Num(small[0], "kv_cache_bytes"), 3.72 * kGiB));
  EXPECT_EQ(Num(small[0], "estimated_max_len"), 60944);
  auto dead = OfKind(events, "engine_dead");
  ASSERT_FALSE(dead.empty());
  for (const Event& e : dead) EXPECT_TRUE(e.consequence);
}

TEST(FormatSamples, NcclWarnThenWatchdogTimeouts) {
  auto events = Parse("nccl-warn-hang-tp4.log");
  auto timeouts = OfKind(events, "watchdog_timeout");
  std::set<int> ranks;
  for (const Event& e : timeouts) {
    EXPECT_EQ(Num(e, "seq"), 1);
    EXPECT_EQ(Str(e, "op_type"), "ALLREDUCE");
    EXPECT_DOUBLE_EQ(Num(e, "timeout_s"), 600.0);
    if (e.rank >= 0) ranks.insert(e.rank);
  }
  EXPECT_EQ(ranks, (std::set<int>{0, 1, 3}));  // rank 2 is the one whose peer went away

  auto net = OfKind(events, "network_error");
  ASSERT_EQ(net.size(), 1u);
  EXPECT_EQ(net[0].Get("peer_closed").boolean(), true);
  EXPECT_EQ(net[0].local_rank, 2);
  EXPECT_EQ(net[0].host, "node7");

  std::set<std::string> transports;
  for (const Event& e : OfKind(events, "nccl_transport")) transports.insert(Str(e, "transport"));
  EXPECT_EQ(transports, (std::set<std::string>{"P2P/CUMEM", "SHM/direct/direct"}));
  auto version = OfKind(events, "nccl_version");
  ASSERT_EQ(version.size(), 1u);
  EXPECT_EQ(Str(version[0], "version"), "2.26.2");
  EXPECT_EQ(OfKind(events, "nccl_comm_init").size(), 8u);
}

TEST(FormatSamples, TorchrunChildFailedNamesRankOneAndItsOom) {
  auto events = Parse("torch-childfailed-oom-rank1.log");
  auto oom = OfKind(events, "cuda_oom");
  ASSERT_EQ(oom.size(), 1u);
  EXPECT_TRUE(Near(Num(oom[0], "tried_bytes"), 1.95 * kGiB));
  EXPECT_TRUE(Near(Num(oom[0], "free_bytes"), 1.21 * kGiB));
  EXPECT_EQ(Num(oom[0], "gpu"), 1);
  EXPECT_EQ(oom[0].rank, 1);

  bool root = false, rank_line = false, exit_line = false;
  for (const Event& e : OfKind(events, "child_failed")) {
    EXPECT_TRUE(e.consequence);
    root |= e.Get("root_cause").boolean();
    if (e.Get("failed_rank").present()) rank_line = Num(e, "failed_rank") == 1 && Num(e, "local_rank") == 1;
    if (e.Get("exit_code").present() && e.Get("child_pid").present()) exit_line |= Num(e, "child_pid") == 51232;
  }
  EXPECT_TRUE(root);
  EXPECT_TRUE(rank_line);
  EXPECT_TRUE(exit_line);
  int sigterms = 0;
  for (const Event& e : OfKind(events, "signal")) {
    if (Str(e, "signal") == "SIGTERM") {
      ++sigterms;
      EXPECT_TRUE(e.consequence);
    }
  }
  EXPECT_EQ(sigterms, 3);
}

TEST(FormatSamples, OtherServersAndHostLines) {
  auto tgi = Parse("tgi-warmup-oom-2shards.log");
  auto warm = OfKind(tgi, "warmup_oom");
  ASSERT_FALSE(warm.empty());
  EXPECT_EQ(Num(warm[0], "prefill_tokens"), 32768);
  auto args = OfKind(tgi, "server_args");
  ASSERT_EQ(args.size(), 1u);
  EXPECT_EQ(Num(args[0], "tp_size"), 2);

  auto trt = Parse("trtllm-kv-insufficient-tp2.log");
  bool kv_component = false;
  for (const Event& e : OfKind(trt, "component_oom")) kv_component |= Str(e, "component") == "KV cache";
  EXPECT_TRUE(OfKind(trt, "not_enough_memory").empty());  // that kind is SGLang's rest <= 0
  EXPECT_TRUE(kv_component);

  auto lmd = Parse("lmdeploy-turbomind-oom.log");
  auto lmd_oom = OfKind(lmd, "cuda_oom");
  ASSERT_EQ(lmd_oom.size(), 1u);
  EXPECT_EQ(Str(lmd_oom[0], "source"), "turbomind");

  auto xid = OfKind(Parse("xid-79-fallen-off-bus.log"), "xid");
  ASSERT_EQ(xid.size(), 2u);
  EXPECT_EQ(Num(xid[0], "xid"), 79);
  EXPECT_EQ(Num(xid[1], "xid"), 45);
  EXPECT_EQ(Num(xid[1], "previous_xid"), 79);
  EXPECT_EQ(Str(xid[1], "bus_id"), "0000:81:00");
}

// TGI's router and launcher print tracing lines stamped with 6 fractional
// digits and one space before ERROR ('...598137Z ERROR warmup{...}'), which
// docker's `logs -t` stamp (9 digits) must not be taken for: the line keeps
// TGI's prefix (its time and level), so it votes for TGI. A docker stamp in
// front of a TGI line is still taken, and TGI's prefix then reads the rest.
TEST(FormatSamples, TgiTracingLineIsNotADockerStamp) {
  const fs::path path = fs::path(::testing::TempDir()) / "tgi_tracing_vs_docker_ts.log";
  {
    std::ofstream out(path);
    out << "2024-09-25T15:04:34.598137Z ERROR warmup{max_input_length=500 max_prefill_tokens=550 "
           "max_total_tokens=13107 max_batch_size=None}:warmup: text_generation_client: "
           "router/client/src/lib.rs:46: Server error: CANCELLED\n"
        << "2024-09-25T15:04:35.123456789Z 2024-09-25T15:04:34.700001Z ERROR warmup{max_input_length=500 "
           "max_prefill_tokens=550 max_total_tokens=13107 max_batch_size=None}:warmup: text_generation_client: "
           "router/client/src/lib.rs:46: Server error: CANCELLED\n";
  }
  auto run = ParseRunToMemory({path.string()}, Formats(), ParseOptions());
  ASSERT_TRUE(run.ok()) << run.status().message();
  std::set<size_t> lines_with_tgi_prefix, lines_with_docker_stamp;
  for (const Event& e : run->events) {
    FieldValue prefix = e.Wrapper("prefix");
    if (prefix.is_object() && prefix.json().value("id", "").rfind("tgi.", 0) == 0) lines_with_tgi_prefix.insert(e.line);
    if (e.Wrapper("docker_ts").present()) lines_with_docker_stamp.insert(e.line);
  }
  EXPECT_EQ(lines_with_tgi_prefix, (std::set<size_t>{1, 2}));
  EXPECT_EQ(lines_with_docker_stamp, (std::set<size_t>{2}));
}

}  // namespace
}  // namespace tpt
