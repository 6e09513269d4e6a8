// launch.h: who this process is among the plan's ranks. Ranks come from an
// existing launcher's environment (torchrun RANK/WORLD_SIZE/LOCAL_RANK/
// MASTER_ADDR/MASTER_PORT, Open MPI OMPI_COMM_WORLD_*, Slurm SLURM_PROCID/
// SLURM_NTASKS/SLURM_LOCALID), from our own local spawn (TPT_REPRO_RANK...),
// or, with no launcher, from the GPU count: one process per rank when there
// are enough GPUs, else co-located on one GPU. No remote launcher of our own.
//
//   auto layout = tpt::repro::DetectLayout(tpt::repro::ProcessEnv(), /*world=*/8, /*gpus=*/1);
//   // layout->colocated == true, layout->launcher == "single"
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "repro/backend.h"

namespace tpt::repro {

using EnvLookup = std::function<std::optional<std::string>(const std::string&)>;
EnvLookup ProcessEnv();

// world: ranks in the plan; gpus: visible devices (0 when unknown/none).
// force_colocated: --colocated. Errors name the variable and what to fix
// (WORLD_SIZE != plan ranks, LOCAL_RANK beyond the GPUs, ...).
// TPT_REPRO_SAME_GPU=1 lets launcher ranks share GPUs (device = local rank
// mod GPUs, layout.shared_gpu): a functional check on a box with one GPU.
StatusOr<RankLayout> DetectLayout(const EnvLookup& env, int world, int gpus, bool force_colocated = false);

// launcher: "spawn" (no launcher, enough GPUs: the caller starts one process
// per rank), "spawned" (a rank started that way), "torchrun", "mpi", "slurm",
// or "single" (co-located, or one rank).
//
// NCCL_COMM_ID for launcher-started ranks: MASTER_ADDR:(MASTER_PORT+1) (the
// launcher's own store already listens on MASTER_PORT); without MASTER_*,
// for an Open MPI or Slurm job whose ranks are all on this host, a loopback
// port derived from the job id (PMIX_NAMESPACE, OMPI_MCA_ess_base_jobid,
// SLURM_JOB_ID/STEP_ID), the same in every rank. Empty when unknown.
std::string NcclCommIdFromEnv(const EnvLookup& env);

// The world size a launcher (or our own spawn) gave this process, or none
// when it was not started as one of several ranks.
std::optional<int> LaunchedWorld(const EnvLookup& env);

// The peer processes of a communicator, as all-gathered at its creation, so
// that a stall or a cancel can say which rank is gone. `host` is HostKey():
// only peers with this process's key are checked (same host and PID
// namespace, where their pids mean something here).
struct PeerProcess {
  int rank = -1;
  int64_t pid = 0;
  uint64_t host = 0;
};
uint64_t HostKey();
void SetPeers(std::vector<PeerProcess> peers);
// "rank 1 (pid 4242) is gone" for each checkable peer whose process no
// longer runs (absent, or a zombie); "" when all run or none is checkable.
std::string DeadPeers();
// Whether process `pid` runs here (exists and is not a zombie).
bool ProcessAlive(int64_t pid);

}  // namespace tpt::repro
