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

#include <functional>
#include <optional>
#include <string>

#include "base/status.h"
#include "repro/backend.h"

namespace tpt::repro {

using EnvLookup = std::function<std::optional<std::string>(const std::string&)>;
EnvLookup ProcessEnv();

// world: ranks in the plan; gpus: visible devices (0 when unknown/none).
// force_colocated: --colocated. Errors name the variable and what to fix
// (WORLD_SIZE != plan ranks, LOCAL_RANK beyond the GPUs, ...).
StatusOr<RankLayout> DetectLayout(const EnvLookup& env, int world, int gpus, bool force_colocated = false);

// launcher: "spawn" (no launcher, enough GPUs: the caller starts one process
// per rank), "spawned" (a rank started that way), "torchrun", "mpi", "slurm",
// or "single" (co-located, or one rank).
//
// NCCL_COMM_ID for launcher-started ranks: MASTER_ADDR:(MASTER_PORT+1) (the
// launcher's own store already listens on MASTER_PORT). Empty when unknown.
std::string NcclCommIdFromEnv(const EnvLookup& env);

}  // namespace tpt::repro
