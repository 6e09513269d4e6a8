// test_fixtures.cc: see test_fixtures.h.
#include "report/test_fixtures.h"

namespace tpt::report::testing {

namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;

std::string Ts(int seed, int second) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "2026-0%d-1%d %02d:%02d:%02d", 1 + seed % 9, seed % 10, 8 + seed % 12, (7 * seed) % 60,
                second % 60);
  return buf;
}

}  // namespace

Analysis KvNoRoom(const KvNoRoomOptions& o) {
  Analysis a;
  a.root_cause = "kv_pool_no_room";
  int bad_rank = o.seed % o.tp;
  double free_gib = 68.0 - 0.1 * o.seed;  // another process holds ~10 GiB on the bad rank
  double weights_gib = 62.0 + 0.3 * o.seed;
  double reserved_gib = 9.0 + 0.05 * o.seed;
  double short_gib = weights_gib + reserved_gib - free_gib;
  char verdict[256];
  std::snprintf(verdict, sizeof verdict, "KV cache pool has no room: rank %d is %.2f GiB short at startup", bad_rank,
                short_gib);
  a.verdict = verdict;
  a.run.framework = "sglang";
  a.run.version = o.version;
  a.run.tp = o.tp;
  a.run.gpu = "NVIDIA H100 80GB HBM3";
  std::string file = o.log_dir + "/run-" + std::to_string(1000 + o.seed) + "/server.log";
  a.run.inputs = {file};
  for (int r = 0; r < o.tp; ++r) {
    LedgerRow row;
    row.rank = r;
    row.role = "target";
    row.total_bytes = 79.1 * kGiB;
    row.weights_bytes = weights_gib * kGiB;
    row.reserved_bytes = reserved_gib * kGiB;
    if (r == bad_rank) {
      // Another process held memory on this GPU: free at init came up short.
      row.free_at_init_bytes = free_gib * kGiB;
    } else {
      row.free_at_init_bytes = 78.5 * kGiB;
      row.graphs_bytes = 0.5 * kGiB;
      row.kv_pool_bytes = row.free_at_init_bytes - row.weights_bytes - row.reserved_bytes - row.graphs_bytes - 0.2 * kGiB;
    }
    row.left_bytes = row.free_at_init_bytes - row.weights_bytes - row.reserved_bytes - row.kv_pool_bytes -
                     row.graphs_bytes;
    a.ledger.push_back(row);
    RankState s;
    s.rank = r;
    s.host = "node-" + std::to_string(o.seed);
    s.phases = {"init", "dist_init", "weights"};
    s.last_phase = "weights";
    s.first_ts = 1.7e9 + o.seed;
    s.last_ts = s.first_ts + 95;
    s.events = 40 + r;
    if (r == bad_rank) {
      s.phases.push_back("kv_pool");
      s.last_phase = "kv_pool";
      s.first_error = "not_enough_memory";
      s.first_error_ts = s.first_ts + 90 + o.seed;
      s.first_error_evidence = {file, static_cast<uint64_t>(812 + 17 * o.seed), r,
                                "[" + Ts(o.seed, 41) + " TP" + std::to_string(r) +
                                    "] RuntimeError: Not enough memory. Please try to increase --mem-fraction-static. "
                                    "rest_memory=" + std::to_string(-short_gib) + " GB"};
    } else if (r == (bad_rank + 1) % o.tp) {
      s.first_error = "sigquit";
      s.first_error_ts = s.first_ts + 200;
      s.first_error_evidence = {file, static_cast<uint64_t>(900 + o.seed), r, "Received sigquit from a child process"};
    }
    a.ranks.push_back(s);
  }
  Diagnosis d;
  d.id = "kv_pool_no_room";
  d.rule = "sglang.kv_pool_no_room";
  d.confidence = 0.92;
  d.title = "KV cache pool sized below zero";
  char expl[512];
  std::snprintf(expl, sizeof expl,
                "After %.2f GiB of weights and the %.2f GiB reserved slice, rank %d has %.2f GiB less than the %.2f GiB "
                "free at init, so SGLang sized the KV pool below zero.",
                weights_gib, reserved_gib, bad_rank, short_gib, free_gib);
  d.explanation = expl;
  d.evidence.push_back(a.ranks[bad_rank].first_error_evidence);
  d.evidence.push_back({file, static_cast<uint64_t>(640 + o.seed), bad_rank,
                        "Load weight end. type=LlamaForCausalLM, dtype=torch.bfloat16, avail mem=" +
                            std::to_string(free_gib - weights_gib) + " GB, mem usage=" + std::to_string(weights_gib) +
                            " GB."});
  if (o.hostile_text) {
    d.evidence.push_back({file, 999, bad_rank,
                          "<script>document.documentElement.setAttribute('data-pwned','1')</script> & \"quotes\" "
                          "'single' \x1b[31mred\x1b[0m bad\xff\xfeutf8 %0A ::error::injected, a:b"});
  }
  d.ruled_out.push_back({"custom_allreduce_buffers", "allocates ~24 MiB a rank against a " +
                                                         std::to_string(short_gib).substr(0, 4) + " GiB shortfall"});
  d.remedy.push_back({"--mem-fraction-static", "0.93", "increase",
                      "the reserved slice is 1 - mem_fraction_static of total memory; a larger fraction leaves room "
                      "for the KV pool", ""});
  d.remedy.push_back({"--tp-size", std::to_string(o.tp * 2), "increase", "halves the weight shard per rank", ""});
  d.repro = {{"framework", "sglang"}, {"tp", o.tp}, {"mem_fraction_static", 0.88}};
  a.diagnoses.push_back(d);
  Diagnosis c;
  c.id = "process_crashed";
  c.rule = "launcher.sigquit";
  c.confidence = 0.5;
  c.title = "Scheduler processes quit after the failing rank";
  c.consequence = true;
  a.diagnoses.push_back(c);
  Finding f;
  f.id = "custom_ar_pcie";
  f.severity = "warning";
  f.title = "Custom all-reduce disabled on a PCIe machine";
  f.advice = "expect slower decode; set SGLANG_FORCE_CUSTOM_AR_PCIE=1 to force it";
  f.evidence.push_back({file, 120, 0, "Custom allreduce is disabled because this process group spans PCIe"});
  a.findings.push_back(f);
  return a;
}

Analysis NcclTimeout(int seed) {
  Analysis a;
  a.root_cause = "nccl_timeout_hang";
  a.verdict = "Rank " + std::to_string(seed % 8) + " stopped in an all-reduce; the NCCL watchdog fired after 600 s";
  a.run.framework = "vllm";
  a.run.version = seed % 2 ? "0.6.3" : "v0.6.4.post1";
  a.run.tp = 8;
  std::string file = "/scratch/job" + std::to_string(seed) + "/worker.log";
  a.run.inputs = {file};
  RankState s;
  s.rank = seed % 8;
  s.phases = {"init", "dist_init", "weights", "kv_pool", "graphs", "ready", "serving"};
  s.last_phase = "serving";
  s.first_error = "watchdog_timeout";
  s.first_error_ts = 1.7e9 + seed;
  s.first_error_evidence = {file, static_cast<uint64_t>(5000 + seed), s.rank,
                            "[rank" + std::to_string(s.rank) + "]:[E ProcessGroupNCCL.cpp:616] [Rank " +
                                std::to_string(s.rank) + "] Watchdog caught collective operation timeout: "
                                "WorkNCCL(SeqNum=" + std::to_string(1234 + seed) + ", OpType=ALLREDUCE, NumelIn=" +
                                std::to_string(4096 * (seed + 1)) + ", Timeout(ms)=600000) ran for 600" +
                                std::to_string(seed) + " milliseconds before timing out."};
  a.ranks.push_back(s);
  Diagnosis d;
  d.id = "nccl_timeout_hang";
  d.rule = "torch.watchdog_timeout";
  d.confidence = 0.8;
  d.title = "A collective hung until the NCCL watchdog fired";
  d.explanation = a.verdict + ".";
  d.evidence.push_back(s.first_error_evidence);
  a.diagnoses.push_back(d);
  return a;
}

Analysis Healthy() {
  Analysis a;
  a.root_cause = "none";
  a.verdict = "Healthy: the server started and served requests";
  a.run.framework = "sglang";
  a.run.version = "0.4.6";
  a.run.tp = 2;
  for (int r = 0; r < 2; ++r) {
    RankState s;
    s.rank = r;
    s.phases = {"init", "dist_init", "weights", "kv_pool", "graphs", "ready", "serving"};
    s.last_phase = "serving";
    a.ranks.push_back(s);
  }
  return a;
}

Analysis Unexplained(int seed) {
  Analysis a;
  a.root_cause = "unknown";
  a.verdict = "The run failed but no rule explains it";
  a.run.framework = "tgi";
  RankState s;
  s.rank = 0;
  s.phases = {"init"};
  s.last_phase = "init";
  s.first_error = "exception";
  s.first_error_evidence = {"shard-" + std::to_string(seed) + ".log", static_cast<uint64_t>(10 + seed), 0,
                            "FlashAttentionError: kernel 0x" + std::to_string(7000 + seed) + "ab failed"};
  a.ranks.push_back(s);
  return a;
}

RunResult AsRun(std::string name, Analysis a) {
  RunResult r;
  r.name = std::move(name);
  r.exit_code = ExitCodeFor(a);
  r.analysis = std::move(a);
  return r;
}

}  // namespace tpt::report::testing
