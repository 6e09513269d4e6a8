// launch.cc: rank layout from launcher environments.
#include "repro/launch.h"

#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <sstream>

#include "repro/backend.h"

namespace tpt::repro {
namespace {

std::optional<int> IntVar(const EnvLookup& env, const std::string& name, Status* err) {
  auto v = env(name);
  if (!v) return std::nullopt;
  char* end = nullptr;
  const long x = std::strtol(v->c_str(), &end, 10);
  if (v->empty() || *end != '\0' || x < 0 || x > 1 << 20) {
    *err = InvalidArgumentError("environment variable " + name + "='" + *v + "' is not a rank number");
    return std::nullopt;
  }
  return static_cast<int>(x);
}

struct Names {
  const char* launcher;
  const char* rank;
  const char* world;
  const char* local;
};
constexpr Names kLaunchers[] = {
    {"spawned", "TPT_REPRO_RANK", "TPT_REPRO_WORLD", "TPT_REPRO_LOCAL_RANK"},  // started by our own parent
    {"torchrun", "RANK", "WORLD_SIZE", "LOCAL_RANK"},
    {"mpi", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK"},
    {"slurm", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID"},
};

}  // namespace

EnvLookup ProcessEnv() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* v = std::getenv(name.c_str());
    if (v == nullptr) return std::nullopt;
    return std::string(v);
  };
}

std::string NcclCommIdFromEnv(const EnvLookup& env) {
  auto addr = env("MASTER_ADDR");
  auto port = env("MASTER_PORT");
  if (addr && port) {
    char* end = nullptr;
    const long p = std::strtol(port->c_str(), &end, 10);
    if (*end != '\0' && !port->empty()) return "";
    if (p <= 0 || p >= 65535) return "";
    return *addr + ":" + std::to_string(p + 1);
  }
  // mpirun / srun on one host set no MASTER_*: every rank of the job derives
  // the same loopback port from the job's id (all ranks must be local).
  struct Job {
    const char* size;
    const char* local_size;
    std::vector<const char*> ids;
  };
  const Job jobs[] = {
      {"OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_SIZE", {"PMIX_NAMESPACE", "OMPI_MCA_ess_base_jobid", "OMPI_MCA_orte_ess_jobid"}},
      {"SLURM_NTASKS", "SLURM_NTASKS_PER_NODE", {"SLURM_JOB_ID", "SLURM_STEP_ID"}},
  };
  for (const Job& j : jobs) {
    auto size = env(j.size);
    auto local = env(j.local_size);
    if (!size || !local || *size != *local) continue;
    std::string id;
    for (const char* name : j.ids) {
      if (auto v = env(name)) id += *v + "/";
    }
    if (id.empty()) continue;
    uint64_t h = 1469598103934665603ull;  // FNV-1a
    for (unsigned char c : id) h = (h ^ c) * 1099511628211ull;
    return "127.0.0.1:" + std::to_string(30000 + h % 20000);
  }
  return "";
}

StatusOr<RankLayout> DetectLayout(const EnvLookup& env, int world, int gpus, bool force_colocated) {
  RankLayout l;
  l.world = world;
  for (const Names& n : kLaunchers) {
    Status err;
    auto rank = IntVar(env, n.rank, &err);
    auto size = IntVar(env, n.world, &err);
    if (!err.ok()) return err;
    if (!rank || !size) continue;
    auto local = IntVar(env, n.local, &err);
    if (!err.ok()) return err;
    l.launcher = n.launcher;
    if (*size == 1 && world > 1) break;  // a one-task launch: decide from the GPUs below
    if (*size != world) {
      return InvalidArgumentError(std::string(n.world) + "=" + std::to_string(*size) + " but the plan has " +
                                  std::to_string(world) + " ranks (tp x pp); launch " + std::to_string(world) +
                                  " processes or pass --tp/--pp to match");
    }
    if (*rank >= world) {
      return InvalidArgumentError(std::string(n.rank) + "=" + std::to_string(*rank) + " is not below " + n.world);
    }
    l.rank = *rank;
    l.local_rank = local.value_or(*rank);
    auto same = env("TPT_REPRO_SAME_GPU");
    if (same && *same == "1" && gpus > 0 && world > gpus) {
      l.shared_gpu = true;
      l.local_rank %= gpus;
    }
    if (gpus > 0 && l.local_rank >= gpus) {
      return InvalidArgumentError(std::string(n.local) + "=" + std::to_string(l.local_rank) + " but this host has " +
                                  std::to_string(gpus) + " GPU(s); one GPU per rank is needed in launcher mode");
    }
    l.colocated = false;
    l.real_ranks = world;
    if (auto f = env("TPT_REPRO_ID_FILE")) l.nccl_id_file = *f;
    return l;
  }
  if (l.launcher.empty()) l.launcher = "single";
  l.rank = 0;
  l.local_rank = 0;
  if (world == 1 || (!force_colocated && gpus >= world)) {
    // Enough GPUs: the caller spawns one process per rank (world > 1).
    l.colocated = false;
    l.real_ranks = world;
    if (world > 1) l.launcher = "spawn";
  } else {
    l.colocated = true;
    l.real_ranks = 1;
  }
  return l;
}

std::optional<int> LaunchedWorld(const EnvLookup& env) {
  for (const Names& n : kLaunchers) {
    Status err;
    auto rank = IntVar(env, n.rank, &err);
    auto size = IntVar(env, n.world, &err);
    if (err.ok() && rank && size && *size > 1) return *size;
  }
  return std::nullopt;
}

namespace {
std::mutex peers_mu;
std::vector<PeerProcess>& Peers() {
  static std::vector<PeerProcess> p;
  return p;
}
}  // namespace

uint64_t HostKey() {
  char host[256] = {0};
  gethostname(host, sizeof host - 1);
  char ns[128] = {0};
  const ssize_t n = readlink("/proc/self/ns/pid", ns, sizeof ns - 1);  // "pid:[4026531836]"
  std::string key = std::string(host) + "|" + (n > 0 ? std::string(ns, size_t(n)) : "");
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (unsigned char c : key) h = (h ^ c) * 1099511628211ull;
  return h;
}

void SetPeers(std::vector<PeerProcess> peers) {
  std::lock_guard<std::mutex> lock(peers_mu);
  Peers() = std::move(peers);
}

bool ProcessAlive(int64_t pid) {
  if (pid <= 0) return false;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!stat || !std::getline(stat, line)) return kill(static_cast<pid_t>(pid), 0) == 0;
  // "pid (comm) S ...": the state follows the last ')'.
  const size_t close = line.rfind(')');
  if (close == std::string::npos || close + 2 >= line.size()) return true;
  const char state = line[close + 2];
  return state != 'Z' && state != 'X';
}

std::string DeadPeers() {
  std::lock_guard<std::mutex> lock(peers_mu);
  const uint64_t me = HostKey();
  std::string out;
  for (const PeerProcess& p : Peers()) {
    if (p.host != me || p.pid == getpid() || ProcessAlive(p.pid)) continue;
    if (!out.empty()) out += ", ";
    out += "rank " + std::to_string(p.rank) + " (pid " + std::to_string(p.pid) + ") is gone";
  }
  return out;
}

// Set by the signal handler of `tptriage repro`; read by the backends.
std::atomic<int>& CancelSignal() {
  static std::atomic<int> signo{0};
  return signo;
}

std::string CancelReason() {
  std::string why;
  if (const char* f = std::getenv("TPT_REPRO_ABORT_FILE")) {
    std::ifstream in(f);
    std::stringstream ss;
    ss << in.rdbuf();
    why = ss.str();
    while (!why.empty() && (why.back() == '\n' || why.back() == '\r')) why.pop_back();
    if (!why.empty()) why = "stopped by tptriage's launcher: " + why;
  }
  if (why.empty()) {
    const int sig = CancelSignal().load();
    why = sig == SIGTERM  ? "interrupted (SIGTERM)"
          : sig == SIGINT ? "interrupted (SIGINT, Ctrl-C)"
          : sig > 0       ? "interrupted (signal " + std::to_string(sig) + ")"
                          : "interrupted";
  }
  if (why.rfind("stopped by", 0) != 0) {  // the launcher's reason already names the rank
    const std::string dead = DeadPeers();
    if (!dead.empty()) why += "; " + dead;
  }
  return why;
}

}  // namespace tpt::repro
