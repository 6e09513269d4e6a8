// backend.h: the device operations a reproduction needs, behind one interface
// so the step logic and the verdict run the same against a real GPU
// (CudaBackend, repro/cuda_backend.cc, built with CUDA) and a simulated one
// (SimulatedBackend, for tests and machines without a GPU).
//
//   auto be = tpt::repro::MakeSimulatedBackend(tpt::repro::SimulatedDevice{});
//   TPT_RETURN_IF_ERROR(be->InitContext(layout));
//   auto mem = be->GetMemInfo();    // free/total of this rank's device
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"

namespace tpt::repro {

struct MemInfo {
  int64_t free_bytes = 0;
  int64_t total_bytes = 0;
};

// Who this process is. In per-GPU mode every rank is a process with its own
// device; in co-located mode one process plays all ranks on one device: rank
// `rank` is measured, the others are emulated from the plan.
struct RankLayout {
  int world = 1;          // ranks of the plan (tp x pp)
  int rank = 0;           // this process's (representative) rank
  int local_rank = 0;     // device index on this host
  bool colocated = false;
  int real_ranks = 1;     // ranks that run for real (world in per-GPU mode, 1 co-located)
  std::string nccl_id_file;   // rank 0 writes the ncclUniqueId here, others read it (local spawn)
  std::string launcher;       // "torchrun", "mpi", "slurm", "spawn", "single"
  // Several ranks' processes share one GPU (TPT_REPRO_SAME_GPU=1 with fewer
  // GPUs than ranks: a functional check of the per-process path; NCCL then
  // talks over sockets and memory figures are each rank's share).
  bool shared_gpu = false;
};

struct GraphSpec {
  std::vector<int> batch_sizes;
  int layers = 1;
  int hidden = 8192;
  bool custom_allreduce = true;  // all-reduce with the custom kernel, else NCCL
  int64_t custom_allreduce_max_bytes = 8 << 20;
  double deadline_s = 60;
};

struct GraphResult {
  int graphs = 0;
  int64_t allreduces_per_step = 0;  // per rank
  int64_t custom_ar_calls = 0;      // per rank, by the custom kernel
  int64_t nccl_calls = 0;           // per rank, by NCCL (messages over the custom buffer)
  double capture_s = 0;
  double replay_us = 0;             // one replay of the largest graph
  std::string note;                 // what was real and what was emulated
};

class DeviceBackend {
 public:
  virtual ~DeviceBackend() = default;
  virtual std::string Name() const = 0;  // "cuda" or "simulated"
  // One line per rank this process runs: host, pid, device, bus id, name.
  virtual std::vector<std::string> Banner() const = 0;

  virtual Status InitContext(const RankLayout& layout) = 0;
  virtual StatusOr<MemInfo> GetMemInfo() = 0;
  // NCCL communicator over the real ranks (1 rank in co-located mode).
  virtual Status InitComm() = 0;
  // MIN of `v` over the real ranks, through the communicator (the servers'
  // all_reduce(MIN) of get_available_gpu_memory).
  virtual StatusOr<int64_t> AllReduceMin(int64_t v) = 0;
  // `v` of every real rank, in rank order.
  virtual StatusOr<std::vector<int64_t>> AllGather(int64_t v) = 0;
  // Custom all-reduce buffers for `world` ranks: this rank's own, and (in
  // co-located mode) the emulated peers' on the same device.
  virtual Status InitCustomAllreduce(int world, int64_t max_bytes) = 0;
  // Allocates and keeps `bytes` (released by Release). `touch`: write it all,
  // as weights and the KV pool are written.
  virtual Status Allocate(const std::string& tag, int64_t bytes, bool touch) = 0;
  // Frees what Allocate kept under `tag` (a server dropping a buffer and
  // emptying its allocator's cache: TGI's warm-up batch before its KV cache).
  virtual void Free(const std::string& tag) = 0;
  virtual StatusOr<GraphResult> CaptureDecodeGraphs(const GraphSpec& spec) = 0;
  // Frees everything Allocate, InitCustomAllreduce and CaptureDecodeGraphs
  // made; keeps the context and the communicator for the next run.
  virtual void Release() = 0;
  // The communicator is gone (a peer died, or it was aborted) or work of
  // ours still runs on the device and will not finish (a kernel
  // waits on a peer that died): freeing would wait for it forever, so
  // Release leaves the memory to the process's exit, and the caller reports,
  // then exits without the CUDA runtime's teardown.
  virtual bool Stuck() const { return false; }
};

// Set by the SIGINT/SIGTERM handler; every wait checks it.
std::atomic<bool>& CancelFlag();
// The signal that set CancelFlag (SIGINT, SIGTERM), 0 when none did.
std::atomic<int>& CancelSignal();
// Why the run was cancelled, for the verdict: the reason our launcher wrote
// (TPT_REPRO_ABORT_FILE: "rank 1 (pid 4242) was killed by SIGKILL"), else
// the signal ("interrupted (SIGTERM)", "interrupted (SIGINT, Ctrl-C)"), plus
// which peer processes of this host are gone (repro/launch.h PeerProcess).
std::string CancelReason();
// The step the runner is in (a string literal), for a watchdog's message.
std::atomic<const char*>& CurrentStep();

// A device in software: what a GPU and its libraries would report.
struct SimulatedDevice {
  int64_t total_bytes = int64_t(143156) << 20;     // H200 cudaMemGetInfo total
  int64_t other_processes_bytes = 0;               // held by someone else
  int64_t context_bytes = 527ll << 20;             // measured (anchors-allreduce.md §4.1)
  int64_t nccl_bytes = 580ll << 20;
  int64_t granularity = 2ll << 20;                 // cudaMalloc rounding
  int64_t graph_bytes_per_bs = 1ll << 20;          // graph pool growth per captured batch size
  bool hang_in_graphs = false;                     // a rank never reaches the barrier
  std::string fail_step;                           // InitComm / InitCustomAllreduce fail (tests)
  int64_t real_ranks_free_skew_bytes = 0;          // rank r sees r x skew less (per-process mode)
  // Fault injection for tests of the per-process path (one simulated device
  // per process; AllReduceMin and AllGather exchange the ranks' figures
  // through files next to TPT_REPRO_ID_FILE): rank die_rank SIGKILLs itself on reaching die_step
  // (custom_ar, ballast, weights, kv_pool, cuda_graphs), and every such step
  // takes step_delay_s (cancellable).
  int die_rank = -1;
  std::string die_step;
  double step_delay_s = 0;
};
// "kill:RANK:STEP" (TPT_REPRO_SIM_FAULT) and a delay in seconds
// (TPT_REPRO_SIM_DELAY) into `d`; errors name the variable.
Status ParseSimulatedFaults(const char* fault, const char* delay, SimulatedDevice* d);
std::unique_ptr<DeviceBackend> MakeSimulatedBackend(const SimulatedDevice& device);

// The CUDA backend, or UNAVAILABLE naming why (not built with CUDA, no device).
StatusOr<std::unique_ptr<DeviceBackend>> MakeCudaBackend();
// Whether this binary was built with the CUDA backend.
bool CudaBackendBuilt();
// Devices visible to this process (0 without CUDA or without a GPU).
int VisibleGpuCount();
// "NVIDIA H200 (143156 MiB)" for device 0, or "" without one.
std::string GpuName();

}  // namespace tpt::repro
