// cmd_repro.cc: `tptriage repro DIAGNOSIS.json | LOG...`: replay a diagnosed
// start-up failure on this box's GPU(s), judge it, and check the fix; or
// `--bench-allreduce`: custom all-reduce against NCCL.
//
// Flags -> ReproConfig (the only place that sees a variables_map) -> plan
// (repro/repro_plan.h) with overrides -> layout (repro/launch.h) -> backend (cuda or
// simulated) -> Reproduce (repro/runner.h) -> text or JSON.
// Exit codes: 0 reproduced (and the fix passes), 1 not reproduced, 2 usage or
// input error, 3 inconclusive, 4 reproduced but the fix fails.
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <boost/program_options.hpp>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/repro_input.h"
#include "memory/memory_model.h"
#include "parser/event_json.h"
#include "parser/format_set.h"
#include "parser/parser.h"
#include "repro/allreduce_bench.h"
#include "repro/box_check.h"
#include "repro/checkability.h"
#include "repro/launch.h"
#include "repro/runner.h"
#include "repro/startup_servers.h"
#include "rules/analyzer.h"

extern char** environ;

namespace tpt::cli {
namespace {

using Input = ReproInput;

namespace po = boost::program_options;
using namespace tpt::repro;

struct ReproConfig {
  std::vector<std::string> inputs;
  bool help = false, dry_run = false, no_fix = false, force = false, colocated = false, bench = false, scale_to_fit = false;
  std::string backend = "cuda";
  std::string format = "text";
  double deadline_s = 60;
  // Plan overrides, as given (validated into Overrides).
  std::optional<int> tp, pp, layers, hidden;
  std::optional<double> mfs, gmu, fix;
  std::optional<std::string> target_mem, free_at_init, weights, kv_bytes, car, car_max, graph_bs, framework, warmup;
  std::string bench_ranks = "2,4,8", bench_min = "8KiB", bench_max = "64MiB", bench_mode = "auto";
  int bench_iters = 20;
  std::string gpu_catalog;  // a GPU catalog file merged over the built-in one
  // Box checks (repro/box_plan.h): figures a log may lack.
  std::optional<std::string> shm_needed, bus_id, disk_path, required_cuda, built_archs;
  std::optional<int> port;
};

int Fail(const std::string& msg) {
  std::fprintf(stderr, "tptriage repro: %s\n", msg.c_str());
  return kExitReproUsage;
}

// Until the replay starts (reading and analysing the input) there is
// nothing to clean up, so SIGINT/SIGTERM end the process at once, by the
// signal itself; during the replay they stop it cleanly (ranks abort their
// communicators, memory goes back) and the report names the signal.
std::atomic<bool> g_replaying{false};

void OnSignal(int sig) {
  if (!g_replaying.load()) {
    const char* msg = sig == SIGTERM ? "tptriage repro: interrupted (SIGTERM) before the replay\n"
                                     : "tptriage repro: interrupted (SIGINT) before the replay\n";
    (void)!::write(2, msg, std::strlen(msg));
    ::signal(sig, SIG_DFL);
    ::raise(sig);  // delivered as this handler returns
    return;
  }
  CancelSignal().store(sig);
  CancelFlag().store(true);
}

std::string SignalName(int sig) {
  switch (sig) {
    case SIGKILL: return "SIGKILL";
    case SIGTERM: return "SIGTERM";
    case SIGINT: return "SIGINT";
    case SIGSEGV: return "SIGSEGV";
    case SIGABRT: return "SIGABRT";
    case SIGBUS: return "SIGBUS";
    default: return "signal " + std::to_string(sig);
  }
}

// Builds Overrides from the flags; errors name the flag.
StatusOr<Overrides> ToOverrides(const ReproConfig& c) {
  Overrides o;
  o.tp = c.tp;
  o.pp = c.pp;
  o.num_layers = c.layers;
  o.hidden_size = c.hidden;
  o.mem_fraction_static = c.mfs;
  o.gpu_memory_utilization = c.gmu;
  o.fix_value = c.fix;
  o.framework = c.framework;
  // GPU-sized figures need a unit, as in plan; byte counts may be bare (base/units.h).
  auto size = [](const std::optional<std::string>& v, const char* flag, std::optional<int64_t>* out,
                 BareNumber bare = BareNumber::kNeedsUnit) -> Status {
    if (!v) return OkStatus();
    auto b = ParseSize(*v, bare);
    if (!b.ok()) return InvalidArgumentError(std::string(flag) + ": " + b.status().message());
    *out = *b;
    return OkStatus();
  };
  TPT_RETURN_IF_ERROR(size(c.target_mem, "--target-gpu-mem", &o.card_total_bytes));
  TPT_RETURN_IF_ERROR(size(c.free_at_init, "--free-at-init", &o.free_at_init_bytes));
  TPT_RETURN_IF_ERROR(size(c.weights, "--weights", &o.weights_bytes));
  TPT_RETURN_IF_ERROR(size(c.kv_bytes, "--kv-bytes-per-token", &o.kv_bytes_per_token, BareNumber::kBytes));
  TPT_RETURN_IF_ERROR(size(c.warmup, "--warmup-bytes", &o.warmup_bytes));
  TPT_RETURN_IF_ERROR(size(c.car_max, "--custom-allreduce-max", &o.custom_allreduce_max_bytes, BareNumber::kBytes));
  if (c.car) {
    if (*c.car == "on") {
      o.custom_allreduce = true;
    } else if (*c.car == "off") {
      o.custom_allreduce = false;
    } else {
      return InvalidArgumentError("--custom-allreduce '" + *c.car + "': expected on or off");
    }
  }
  if (c.graph_bs) {
    if (*c.graph_bs == "none") {
      o.cuda_graph_bs = std::vector<int>{};
    } else {
      auto l = ParseIntList(*c.graph_bs);
      if (!l.ok()) return InvalidArgumentError("--cuda-graph-bs: " + l.status().message() + " (or none)");
      o.cuda_graph_bs = *l;
    }
  }
  return o;
}

// The root cause repro would reproduce: the first diagnosis that is not a
// consequence of another (PlanFromJson picks the same).
std::string PrimaryCause(const nlohmann::json& doc) {
  if (!doc.is_object() || !doc.contains("diagnoses") || !doc["diagnoses"].is_array()) return "";
  for (const auto& d : doc["diagnoses"]) {
    if (d.is_object() && !d.value("consequence", false)) return d.value("id", "");
  }
  return doc["diagnoses"].empty() || !doc["diagnoses"][0].is_object() ? "" : doc["diagnoses"][0].value("id", "");
}

StatusOr<Plan> LoadPlan(const Input& in) {
  if (in.flags_only) {
    Plan p;
    p.source = "flags";
    p.framework = "sglang";
    return p;
  }
  return PlanFromJson(in.doc, in.name);
}

std::string DryRunSteps(const Plan& p, const RankLayout& l, int gpus) {
  std::ostringstream o;
  o << "\nlayout: " << p.tp * p.pp << " ranks, " << gpus << " GPU(s) visible -> "
    << (l.colocated ? "co-located on GPU 0: rank " + std::to_string(l.rank) + " measured, the others emulated"
                    : "one process per rank (" + l.launcher + ")")
    << "\nsteps per rank (the server's order), free memory and time measured after each:\n";
  int i = 1;
  auto step = [&](const std::string& s) { o << "  " << i++ << ". " << s << "\n"; };
  step("CUDA context");
  step(l.colocated ? "NCCL communicator (1 rank: NCCL refuses 2 ranks on one GPU)" : "NCCL communicator");
  if (p.custom_allreduce && p.tp > 1) {
    step("custom all-reduce IPC buffers (" + FormatBytes(p.custom_allreduce_max_bytes) + " + meta + 8 MiB rank_data)");
  }
  step("ballast: free memory := the log's free at init (" + FormatBytes(p.free_at_init_bytes) + ")");
  step("free at init: all_reduce MIN over ranks");
  step("weights: " + FormatBytes(p.weights_bytes) + " per rank, allocated and written");
  if (!HasKvFormula(p.framework)) {
    o << "  (the replay ends after the weights: " << p.framework << "'s KV formula is not in memory/)\n";
    return o.str();
  }
  const bool warmup_first = p.warmup_bytes > 0 && p.framework != "lmdeploy" &&
                            (p.failed_step == kStepWarmup || p.framework == "tgi");
  if (warmup_first) {
    step("warm-up forward: " + FormatBytes(p.warmup_bytes) + " allocated and written" +
         (p.prefill_tokens > 0 ? " (" + std::to_string(p.prefill_tokens) + " prefill tokens)" : "") +
         ", held while the server measures");
    if (!IsStartupServer(p.framework)) {
      o << "  (the replay ends after the warm-up: the step the log names)\n";
      if (!p.fix.empty()) step("then the same with the fix, and the verdict");
      return o.str();
    }
  }
  step("the server's KV formula on the measured numbers (memory/)");
  step("KV pool allocation");
  if (p.framework == "lmdeploy" && p.warmup_bytes > 0) {
    step("TurboMind's run-time buffers after the cache: " + FormatBytes(p.warmup_bytes));
  }
  if (!p.cuda_graph_bs.empty()) {
    step("CUDA graph capture of a decode-like step: " + std::to_string(p.num_layers) + " layers x all-reduce of bs x " +
         std::to_string(p.hidden_size) + " bf16, " + std::to_string(p.cuda_graph_bs.size()) + " batch sizes");
  }
  if (!p.fix.empty()) step("then the same with the fix, and the verdict");
  return o.str();
}

// Parent of a local one-process-per-rank run: spawns the ranks (the same
// command line, TPT_REPRO_RANK/WORLD/LOCAL_RANK set), waits with a deadline,
// and when one rank dies or fails stops all others: it writes why to the
// abort file (rank 0's verdict quotes it), sends SIGINT (each rank aborts its
// communicator and frees its memory), SIGKILL 5 s later. When rank 0 itself
// is gone, the verdict is printed here. `extra_env`: more variables for the
// ranks. Returns rank 0's exit code, or inconclusive.
int SpawnRanks(const Args& args, int world, double deadline_s, bool same_gpu, const std::string& format,
               const std::vector<std::string>& extra_env = {}) {
  char dir_tmpl[] = "/tmp/tptriage-repro-XXXXXX";
  if (mkdtemp(dir_tmpl) == nullptr) return Fail("cannot create a rendezvous directory under /tmp");
  const std::string dir = dir_tmpl;
  const std::string abort_file = dir + "/abort";
  std::vector<pid_t> pids;
  std::vector<std::string> argv_s = {"tptriage", "repro"};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  auto stop_started = [&] {
    for (pid_t p : pids) kill(p, SIGKILL);
    for (pid_t p : pids) waitpid(p, nullptr, 0);
    std::filesystem::remove_all(dir);
  };
  for (int r = 0; r < world; ++r) {
    std::vector<std::string> env_s;
    for (char** e = environ; *e; ++e) env_s.emplace_back(*e);
    env_s.push_back("TPT_REPRO_RANK=" + std::to_string(r));
    env_s.push_back("TPT_REPRO_WORLD=" + std::to_string(world));
    env_s.push_back("TPT_REPRO_LOCAL_RANK=" + std::to_string(r));
    // Fewer GPUs than ranks (a functional check of this path): the ranks
    // share GPUs (launch.h), NCCL talks over sockets (process_group.h).
    if (same_gpu) env_s.push_back("TPT_REPRO_SAME_GPU=1");
    env_s.push_back("TPT_REPRO_ID_FILE=" + dir + "/nccl.id");
    env_s.push_back("TPT_REPRO_ABORT_FILE=" + abort_file);
    env_s.push_back("NCCL_NVLS_ENABLE=0");
    env_s.insert(env_s.end(), extra_env.begin(), extra_env.end());
    std::vector<char*> envp;
    for (auto& e : env_s) envp.push_back(e.data());
    envp.push_back(nullptr);
    pid_t pid = 0;
    if (posix_spawn(&pid, "/proc/self/exe", nullptr, nullptr, argv.data(), envp.data()) != 0) {
      stop_started();
      return Fail("cannot start rank " + std::to_string(r));
    }
    pids.push_back(pid);
  }
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<int> codes(world, -1);
  std::vector<int> signals(world, 0);
  int left = world;
  double rank0_done_at = -1;
  std::string failure;
  double stop_s = -1;
  while (left > 0) {
    for (int r = 0; r < world; ++r) {
      if (codes[r] != -1) continue;
      int st = 0;
      if (waitpid(pids[r], &st, WNOHANG) != pids[r]) continue;
      codes[r] = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
      signals[r] = WIFSIGNALED(st) ? WTERMSIG(st) : 0;
      --left;
      if (codes[r] > kExitFixFails && failure.empty()) {
        failure = "rank " + std::to_string(r) + " (pid " + std::to_string(pids[r]) + ") " +
                  (WIFEXITED(st) ? "exited with " + std::to_string(codes[r])
                                 : "was killed by " + SignalName(WTERMSIG(st)));
      }
    }
    const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    // Rank 0 has the verdict; ranks still running 15 s after it are stuck
    // in a collective it left (all ranks run the same steps otherwise).
    if (codes[0] != -1 && left > 0 && rank0_done_at < 0) rank0_done_at = waited;
    if (left > 0 && failure.empty() && rank0_done_at >= 0 && waited - rank0_done_at > 15) {
      failure = "rank 0 finished but other ranks did not within 15 s (stuck in a collective rank 0 left)";
    }
    if (left > 0 && (!failure.empty() || CancelFlag().load() || waited > deadline_s)) {
      if (failure.empty()) failure = CancelFlag().load() ? CancelReason() : "ranks still running after the deadline";
      {
        std::ofstream a(abort_file + ".tmp");
        a << failure << "\n";
      }
      std::rename((abort_file + ".tmp").c_str(), abort_file.c_str());
      for (int r = 0; r < world; ++r) {
        if (codes[r] == -1) kill(pids[r], SIGINT);  // each rank aborts its communicator and frees memory
      }
      for (int i = 0; i < 250 && left > 0; ++i) {  // up to 5 s
        for (int r = 0; r < world; ++r) {
          int st = 0;
          if (codes[r] == -1 && waitpid(pids[r], &st, WNOHANG) == pids[r]) {
            codes[r] = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
            signals[r] = WIFSIGNALED(st) ? WTERMSIG(st) : 0;
            --left;
          }
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
      for (int r = 0; r < world; ++r) {
        if (codes[r] == -1) {
          kill(pids[r], SIGKILL);
          waitpid(pids[r], nullptr, 0);
          codes[r] = 128 + SIGKILL;
          signals[r] = SIGKILL;
          --left;
        }
      }
      stop_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() - waited;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  std::filesystem::remove_all(dir);
  if (failure.empty()) return codes[0];
  char stopped[96];
  std::snprintf(stopped, sizeof stopped, "all ranks stopped %.2f s after that", stop_s < 0 ? 0.0 : stop_s);
  std::fprintf(stderr, "tptriage repro: %s; %s. verdict: inconclusive\n", failure.c_str(), stopped);
  // Rank 0 printed its verdict (quoting the abort file) unless a signal
  // ended it first: it is the one gone, or it was still reading the input.
  if (signals[0] != 0) {
    const std::string reason = "the run stopped: " + failure + "; " + stopped;
    if (format == "json") {
      std::cout << nlohmann::json{{"schema_version", kReproSchemaVersion},
                                  {"verdict", {{"outcome", "inconclusive"}, {"reason", reason},
                                               {"fix_outcome", "not checked"}, {"fix_reason", "rank 0 is gone"}}}}
                       .dump(2)
                << "\n";
    } else {
      std::cout << "verdict: INCONCLUSIVE: " << reason << "\n";
    }
  }
  return kExitInconclusive;
}

std::atomic<bool> report_printed{false};

// A rank told to stop (SIGINT/SIGTERM from a user, our launcher, torchrun or
// mpirun) that has not wound down soon after is blocked in a call that does
// not see the cancel: it prints the verdict (rank 0) and leaves without the
// teardown; the driver frees its GPU memory at exit. Open MPI sends SIGKILL
// soon after SIGTERM, so its ranks wait less.
void StartWatchdog(const RankLayout& l, const std::string& format, bool verdict = true) {
  std::thread([l, format, verdict] {
    while (!CancelFlag().load()) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    std::this_thread::sleep_for(std::chrono::milliseconds(l.launcher == "mpi" ? 300 : 2000));
    if (verdict && (l.rank == 0 || l.colocated) && !report_printed.exchange(true)) {
      const std::string reason = std::string("the run stopped at ") + CurrentStep().load() +
                                 " for a reason that is not the server's: " + CancelReason() +
                                 "; this rank did not wind down in time and exited without teardown";
      if (format == "json") {
        std::cout << nlohmann::json{{"schema_version", kReproSchemaVersion},
                                    {"verdict", {{"outcome", "inconclusive"}, {"reason", reason},
                                                 {"fix_outcome", "not checked"}, {"fix_reason", "the run was stopped"}}}}
                         .dump(2)
                  << "\n";
      } else {
        std::cout << "verdict: INCONCLUSIVE: " << reason << "\n";
      }
    }
    std::fflush(nullptr);
    std::cout.flush();
    _exit(kExitInconclusive);
  }).detach();
}

// Launcher-started ranks find rank 0 through NCCL_COMM_ID.
Status PrepareLauncherComm(const RankLayout& l) {
  if ((l.launcher != "torchrun" && l.launcher != "mpi" && l.launcher != "slurm") || std::getenv("NCCL_COMM_ID") != nullptr) {
    return OkStatus();
  }
  const std::string id = NcclCommIdFromEnv(ProcessEnv());
  if (id.empty()) {
    return InvalidArgumentError("launched by " + l.launcher +
                                " without MASTER_ADDR/MASTER_PORT (and not all ranks on this host): set them (or "
                                "NCCL_COMM_ID=host:port) so the ranks can find rank 0");
  }
  setenv("NCCL_COMM_ID", id.c_str(), 1);
  return OkStatus();
}

int BenchExit(const std::vector<BenchRow>& rows) {
  for (const auto& s : SummarizeBench(rows)) {
    if (s.wrong != 0) return kExitNotReproduced;  // wrong results
  }
  return 0;
}

int RunBench(const Args& args, const ReproConfig& c) {
  BenchOptions o;
  auto ranks = ParseIntList(c.bench_ranks);
  if (!ranks.ok()) return Fail("--bench-ranks: " + ranks.status().message());
  for (int n : *ranks) {
    if (n != 2 && n != 4 && n != 6 && n != 8) return Fail("--bench-ranks: " + std::to_string(n) + " (use 2, 4, 6 or 8)");
  }
  o.ranks = *ranks;
  auto lo = ParseSize(c.bench_min);
  auto hi = ParseSize(c.bench_max);
  if (!lo.ok() || !hi.ok() || *lo < 16 || *hi < *lo || *hi > (1ll << 30) || *lo % 16 != 0) {
    return Fail("--bench-min/--bench-max: sizes 16 B .. 1 GiB, multiples of 16 B, min <= max");
  }
  o.min_bytes = *lo;
  o.max_bytes = *hi;
  if (c.bench_iters < 1 || c.bench_iters > 10000) return Fail("--bench-iters: 1..10000");
  o.ops_per_graph = c.bench_iters;
  o.deadline_s = c.deadline_s;
  if (c.bench_mode != "auto" && c.bench_mode != "colocated" && c.bench_mode != "processes") {
    return Fail("--bench-mode '" + c.bench_mode + "': expected auto, colocated or processes");
  }
  if (!CudaBackendBuilt()) return Fail("--bench-allreduce: GPU support was not built into this tptriage");
  const int gpus = VisibleGpuCount();
  if (gpus == 0) {
    std::fprintf(stderr, "tptriage repro: --bench-allreduce: no CUDA device visible\n");
    return kExitInconclusive;
  }
  const EnvLookup env = ProcessEnv();
  if (auto world = LaunchedWorld(env)) {
    // One rank of the processes mode (started by us, torchrun or mpirun).
    auto layout = DetectLayout(env, *world, gpus);
    if (!layout.ok()) return Fail(layout.status().message());
    if (Status s = PrepareLauncherComm(*layout); !s.ok()) return Fail(s.message());
    o.mode = "processes";
    o.shared_gpu = layout->shared_gpu;
    StartWatchdog(*layout, "text", /*verdict=*/false);
    auto rows = RunAllreduceBenchRank(o, *layout);
    if (!rows.ok()) {
      std::fprintf(stderr, "tptriage repro: --bench-allreduce rank %d: %s\n", layout->rank,
                   rows.status().ToString().c_str());
      return kExitInconclusive;
    }
    if (layout->rank == 0) {
      if (const char* f = std::getenv("TPT_REPRO_BENCH_OUT")) {
        std::ofstream out(f);
        out << BenchRowsToJson(*rows).dump() << "\n";
        if (!out) return Fail(std::string("cannot write ") + f);
      } else {
        std::fputs(RenderBenchTable(o, *rows, GpuName()).c_str(), stdout);
      }
    }
    return BenchExit(*rows);
  }
  const int most = *std::max_element(o.ranks.begin(), o.ranks.end());
  const bool procs = c.bench_mode == "processes" || (c.bench_mode == "auto" && gpus >= most && gpus > 1);
  if (!procs) {
    auto rows = RunAllreduceBench(o);
    if (!rows.ok()) {
      std::fprintf(stderr, "tptriage repro: --bench-allreduce: %s\n", rows.status().ToString().c_str());
      return kExitInconclusive;
    }
    std::fputs(RenderBenchTable(o, *rows, GpuName()).c_str(), stdout);
    return BenchExit(*rows);
  }
  // Processes: one set of ranks per rank count, rank 0's rows through a file.
  o.mode = "processes";
  char dir_tmpl[] = "/tmp/tptriage-bench-XXXXXX";
  if (mkdtemp(dir_tmpl) == nullptr) return Fail("cannot create a directory under /tmp");
  std::vector<BenchRow> all;
  std::string failed;
  for (int n : o.ranks) {
    const bool shared = gpus < n;
    o.shared_gpu = o.shared_gpu || shared;
    const std::string file = std::string(dir_tmpl) + "/rows-" + std::to_string(n) + ".json";
    const int code = SpawnRanks(args, n, c.deadline_s * 10, shared, "text", {"TPT_REPRO_BENCH_OUT=" + file});
    std::ifstream in(file);
    nlohmann::json j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
    auto rows = BenchRowsFromJson(j);
    if (!rows.ok() || (code != 0 && code != kExitNotReproduced)) {
      failed += (failed.empty() ? "" : "; ") + std::to_string(n) + " ranks: exit " + std::to_string(code);
      continue;
    }
    all.insert(all.end(), rows->begin(), rows->end());
  }
  std::filesystem::remove_all(dir_tmpl);
  std::fputs(RenderBenchTable(o, all, GpuName() + " x " + std::to_string(gpus) + " visible").c_str(), stdout);
  if (!failed.empty()) {
    std::fprintf(stderr, "tptriage repro: --bench-allreduce: no rows for %s\n", failed.c_str());
    return kExitInconclusive;
  }
  return BenchExit(all);
}

// A root cause checked on the box rather than replayed (repro/box_check.h).
int RunBoxRepro(const ReproConfig& c, const Input& in) {
  auto plan = BoxPlanFromAnalysis(in.doc, in.events, in.name);
  if (!plan.ok()) return Fail(plan.status().message());
  BoxOverrides o;
  o.world = c.tp;
  o.port = c.port;
  o.bus_id = c.bus_id;
  o.disk_path = c.disk_path;
  if (c.shm_needed) {
    auto b = ParseSize(*c.shm_needed, BareNumber::kNeedsUnit);
    if (!b.ok()) return Fail("--shm-needed: " + b.status().message());
    o.shm_needed_bytes = *b;
  }
  if (c.required_cuda) {
    const int v = ParseCudaVersion(*c.required_cuda);
    if (v == 0) return Fail("--required-cuda '" + *c.required_cuda + "': expected a CUDA version like 12.8 or cu128");
    o.required_cuda = v;
  }
  if (c.built_archs) {
    auto l = ParseIntList(*c.built_archs);
    if (!l.ok()) return Fail("--built-archs: " + l.status().message() + " (compute capabilities x10: 80,86,90)");
    o.built_archs = *l;
  }
  if (c.tp && (*c.tp < 1 || *c.tp > 64)) return Fail("--tp must be 1..64");
  ApplyBoxOverrides(o, &*plan);
  plan->deadline_s = c.deadline_s;
  if (c.dry_run) {
    if (c.format == "json") {
      std::cout << nlohmann::json{{"schema_version", kReproSchemaVersion}, {"plan", BoxPlanToJson(*plan)}}.dump(2) << "\n";
    } else {
      std::cout << DescribeBoxPlan(*plan);
      if (!CudaBackendBuilt()) std::cout << "\nnote: GPU support was not built into this tptriage; the GPU steps will say so\n";
    }
    return 0;
  }
  std::unique_ptr<BoxProbe> probe;
  if (c.backend == "simulated") {
    SimulatedBox box;
    if (const char* j = std::getenv("TPT_REPRO_SIM_BOX")) {
      if (Status s = SimulatedBoxFromJson(j, &box); !s.ok()) return Fail(s.message());
    }
    probe = MakeSimulatedProbe(box);
  } else {
    probe = MakeHostProbe();
  }
  BoxOptions opt;
  opt.check_fix = !c.no_fix;
  opt.deadline_s = c.deadline_s;
  BoxReport rep = RunBoxCheck(*plan, *probe, opt);
  if (c.format == "json") {
    std::cout << RenderBoxJson(rep, *plan).dump(2) << "\n";
  } else {
    std::cout << DescribeBoxPlan(*plan) << "\n" << RenderBoxText(rep);
  }
  return ExitCodeOf(rep.verdict);
}

}  // namespace

int RunRepro(const Args& args) {
  ReproConfig c;
  po::options_description desc("options");
  auto opt_int = [](std::optional<int>* o) {
    return po::value<int>()->notifier([o](int v) { *o = v; });
  };
  auto opt_dbl = [](std::optional<double>* o) {
    return po::value<double>()->notifier([o](double v) { *o = v; });
  };
  auto opt_str = [](std::optional<std::string>* o) {
    return po::value<std::string>()->notifier([o](const std::string& v) { *o = v; });
  };
  desc.add_options()
      ("help,h", "show this help")
      ("dry-run", po::bool_switch(&c.dry_run), "print the plan and the steps; touch no GPU")
      ("backend", po::value(&c.backend)->default_value("cuda"), "cuda | simulated (a device in software, no GPU)")
      ("format", po::value(&c.format)->default_value("text"), "text | json")
      ("tp", opt_int(&c.tp), "tensor-parallel ranks")
      ("pp", opt_int(&c.pp), "pipeline-parallel stages")
      ("framework", opt_str(&c.framework), "sglang | vllm | tgi | lmdeploy | trtllm")
      ("mem-fraction-static", opt_dbl(&c.mfs), "SGLang --mem-fraction-static as logged")
      ("gpu-memory-utilization", opt_dbl(&c.gmu), "vLLM --gpu-memory-utilization as logged")
      ("target-gpu-mem", opt_str(&c.target_mem), "the original card's memory, e.g. 96GiB")
      ("gpu-catalog", po::value(&c.gpu_catalog), "more GPUs (or corrected figures) in gpu_catalog.json's shape, merged over the built-in catalog; default $TPTRIAGE_GPU_CATALOG or ~/.config/tptriage/gpus.json when present")
      ("free-at-init", opt_str(&c.free_at_init), "free memory per rank at init, e.g. 94GiB")
      ("weights", opt_str(&c.weights), "weight bytes per rank, e.g. 72.3GiB")
      ("kv-bytes-per-token", opt_str(&c.kv_bytes), "KV cache bytes per token per rank")
      ("warmup-bytes", opt_str(&c.warmup), "what the warm-up allocates (TGI's prefill, TurboMind's buffers), e.g. 4GiB")
      ("custom-allreduce", opt_str(&c.car), "on | off")
      ("custom-allreduce-max", opt_str(&c.car_max), "custom all-reduce buffer, e.g. 8MiB")
      ("cuda-graph-bs", opt_str(&c.graph_bs), "batch sizes captured: 1,2,4,8 or 1-8,16 or none")
      ("layers", opt_int(&c.layers), "layers of the decode-like graph (one all-reduce each)")
      ("hidden-size", opt_int(&c.hidden), "hidden size (all-reduce of bs x hidden bf16)")
      ("fix", opt_dbl(&c.fix), "value of the remedy to check (default: the diagnosis' remedy)")
      ("no-fix", po::bool_switch(&c.no_fix), "do not run the fix check")
      ("colocated", po::bool_switch(&c.colocated), "all ranks on GPU 0 even when there are enough GPUs")
      ("force", po::bool_switch(&c.force), "run even if other processes hold GPU memory")
      ("scale-to-fit", po::bool_switch(&c.scale_to_fit),
       "on a GPU with less free memory than the log's card: replay every figure of the card times one factor (the KV formulas are linear in them; graphs, context and buffers are not scaled), said in the verdict")
      ("deadline", po::value(&c.deadline_s)->default_value(60), "seconds any one wait may take")
      ("shm-needed", opt_str(&c.shm_needed), "shm_too_small: /dev/shm the ranks need, e.g. 160MiB (default: NCCL's segments)")
      ("port", opt_int(&c.port), "port_in_use: the port the server bound")
      ("bus-id", opt_str(&c.bus_id), "hardware_fault: the GPU's PCI bus id, e.g. 0000:3b:00.0")
      ("disk-path", opt_str(&c.disk_path), "disk_full: the path the write failed on, e.g. ~/.cache/huggingface")
      ("required-cuda", opt_str(&c.required_cuda), "cuda_driver_mismatch: the CUDA the runtime or wheel needs, e.g. 12.8")
      ("built-archs", opt_str(&c.built_archs), "unsupported_gpu_arch: architectures built for, e.g. 80,86,90")
      ("bench-allreduce", po::bool_switch(&c.bench), "benchmark custom one-/two-shot against NCCL in CUDA graphs")
      ("bench-ranks", po::value(&c.bench_ranks)->default_value("2,4,8"), "rank counts for --bench-allreduce")
      ("bench-min", po::value(&c.bench_min)->default_value("8KiB"), "smallest message")
      ("bench-max", po::value(&c.bench_max)->default_value("64MiB"), "largest message")
      ("bench-iters", po::value(&c.bench_iters)->default_value(20), "all-reduces per graph")
      ("bench-mode", po::value(&c.bench_mode)->default_value("auto"),
       "processes (one per rank over CUDA IPC; GPUs shared when too few) | colocated (all ranks on GPU 0) | auto "
       "(processes when there is a GPU per rank)");
  if (auto code = ParseCommandLine(args, desc, "repro", &c.inputs, nullptr, kExitReproUsage)) return *code;
  if (Status st = memory::LoadUserGpuCatalog(c.gpu_catalog); !st.ok()) return Fail(st.message());
  if (c.format != "text" && c.format != "json") return Fail("--format '" + c.format + "': expected text or json");
  if (c.backend != "cuda" && c.backend != "simulated") return Fail("--backend '" + c.backend + "': expected cuda or simulated");
  if (!(c.deadline_s > 0 && c.deadline_s <= 3600)) return Fail("--deadline: 0 < seconds <= 3600");
  setenv("NCCL_NVLS_ENABLE", "0", 1);  // never NVLink multicast, in this process and the ranks it starts
  // Caught even where SIGINT was inherited ignored (a job started with &):
  // a 100 MB log or a stdin pipe held open must not outlive Ctrl-C or kill.
  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);

  if (c.bench) {
    g_replaying.store(true);
    return RunBench(args, c);
  }

  auto input = LoadReproInput(c.inputs);
  if (!input.ok()) return Fail(input.status().message());
  const std::string cause = PrimaryCause(input->doc);
  if (const Checkability* ck = CheckabilityOf(cause); ck != nullptr && ck->kind != ReproKind::kMemoryReplay) {
    if (ck->kind == ReproKind::kNotCheckable) {
      return Fail(input->name + ": " + cause + " is not checkable on a box: " + std::string(ck->how));
    }
    g_replaying.store(true);
    return RunBoxRepro(c, *input);
  }
  auto plan = LoadPlan(*input);
  if (!plan.ok()) return Fail(plan.status().message());
  g_replaying.store(true);
  auto ov = ToOverrides(c);
  if (!ov.ok()) return Fail(ov.status().message());
  if (Status s = ApplyOverrides(*ov, &*plan); !s.ok()) return Fail(s.message());
  if (c.no_fix) plan->fix.clear();
  if (Status s = ValidatePlan(*plan); !s.ok()) return Fail(s.message());

  const int world = plan->tp * plan->pp;
  const int gpus = c.backend == "cuda" ? VisibleGpuCount() : 1;
  // TPT_REPRO_SAME_GPU=1: one process per rank even on one GPU (checks the
  // per-GPU path where only one GPU is lent; barriers across processes
  // time-slice, so its timings mean nothing). With --backend simulated: one
  // simulated device per process (tests of the launcher without a GPU).
  const char* same = std::getenv("TPT_REPRO_SAME_GPU");
  const bool same_gpu = same != nullptr && std::string(same) == "1" && world > 1;
  auto layout =
      DetectLayout(ProcessEnv(), world, gpus, c.colocated || (c.backend == "simulated" && !same_gpu));
  if (!layout.ok()) return Fail(layout.status().message());

  if (c.dry_run) {
    if (c.format == "json") {
      std::cout << nlohmann::json{{"schema_version", kReproSchemaVersion}, {"plan", PlanToJson(*plan)},
                                  {"colocated", layout->colocated}, {"gpus", gpus}}
                       .dump(2)
                << "\n";
    } else {
      std::cout << DescribePlan(*plan) << DryRunSteps(*plan, *layout, gpus);
      if (!CudaBackendBuilt()) std::cout << "\nnote: GPU support was not built into this tptriage; only --dry-run and --backend simulated run here\n";
    }
    return 0;
  }
  if (same_gpu && layout->launcher == "single") {
    layout->launcher = "spawn";
    layout->colocated = false;
    layout->real_ranks = world;
  }
  if (layout->launcher == "spawn" && !layout->colocated && world > 1) {
    return SpawnRanks(args, world, c.deadline_s * 10, same_gpu, c.format);
  }
  if (Status s = PrepareLauncherComm(*layout); !s.ok()) return Fail(s.message());
  std::unique_ptr<DeviceBackend> be;
  if (c.backend == "simulated") {
    SimulatedDevice dev;
    if (Status f = ParseSimulatedFaults(std::getenv("TPT_REPRO_SIM_FAULT"), std::getenv("TPT_REPRO_SIM_DELAY"), &dev);
        !f.ok()) {
      return Fail(f.message());
    }
    be = MakeSimulatedBackend(dev);
  } else {
    auto made = MakeCudaBackend();
    if (!made.ok()) {
      std::fprintf(stderr, "tptriage repro: %s\n", made.status().message().c_str());
      return CudaBackendBuilt() ? kExitInconclusive : kExitReproUsage;
    }
    be = std::move(*made);
  }
  ReproOptions opt;
  opt.check_fix = !c.no_fix;
  opt.force = c.force;
  opt.scale_to_fit = c.scale_to_fit;
  opt.step_deadline_s = c.deadline_s;
  if (!layout->colocated && world > 1) StartWatchdog(*layout, c.format);
  ReproReport rep = Reproduce(*plan, *be, *layout, opt);
  // A kernel that waits on a dead peer never finishes, and freeing memory
  // would wait for it: report first, then leave without the teardown (the
  // driver reclaims the process's GPU memory at exit).
  const bool stuck = be->Stuck();
  if (!stuck) be.reset();  // every GPU allocation and the communicator go back before we print
  if (CancelFlag().load() && (layout->rank == 0 || layout->colocated)) {
    std::fprintf(stderr, "tptriage repro: %s; the replay stopped\n", CancelReason().c_str());
  }
  if ((layout->rank == 0 || layout->colocated) && !report_printed.exchange(true)) {
    if (c.format == "json") {
      std::cout << RenderJson(rep).dump(2) << "\n";
    } else {
      std::cout << RenderText(rep);
    }
    std::cout.flush();
  }
  if (stuck) {
    std::fflush(nullptr);
    _exit(ExitCodeOf(rep.verdict));
  }
  return ExitCodeOf(rep.verdict);
}

}  // namespace tpt::cli
