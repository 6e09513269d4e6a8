// launch.cc: rank layout from launcher environments.
#include "repro/launch.h"

#include <cstdlib>

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
  if (!addr || !port) return "";
  char* end = nullptr;
  const long p = std::strtol(port->c_str(), &end, 10);
  if (*end != '\0' || p <= 0 || p >= 65535) return "";
  return *addr + ":" + std::to_string(p + 1);
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

}  // namespace tpt::repro
