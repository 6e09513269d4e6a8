// custom_allreduce.h: one rank's view of a custom all-reduce group (the
// vLLM/SGLang CustomAllreduce), and a group of several ranks co-located in
// one process on one device.
//
// A rank owns three buffers (sizes as vLLM's _complete_init): meta (Signal +
// two-shot tmp of max_bytes), staging (max_bytes; eager inputs are copied
// here) and rank_data (8 MiB of 64-byte RankData slots). Slot 0 holds the
// staging pointers of every rank. During CUDA graph capture each all-reduce on
// an unregistered input takes the next slot and remembers the input; after
// capture the ranks exchange those pointers (CUDA IPC between processes, plain
// pointers in one process) and RegisterGraphBuffers fills the slots, so graph
// replays read the peers' activation buffers directly (zero copy).
//
//   auto group = tpt::kernels::ColocatedGroup::Create(/*world=*/8, /*max_bytes=*/8 << 20, /*sm_count=*/132);
//   group->rank(r).AllReduce(in, out, count, DType::kBFloat16, Algo::kOneShot, stream_r);
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <memory>
#include <unordered_map>
#include <vector>

#include "kernels/cuda_check.h"
#include "kernels/ipc_allreduce.h"
#include "base/status.h"

namespace tpt::kernels {

inline constexpr size_t kDefaultMaxBytes = size_t(8) << 20;       // vLLM/SGLang default max_size
inline constexpr size_t kDefaultRankDataBytes = size_t(8) << 20;  // vLLM rank_data

// The buffers one rank allocates on its own device.
struct OwnBuffers {
  DeviceBuffer meta;       // Signal + tmp (zeroed)
  DeviceBuffer staging;    // eager-mode registered input
  DeviceBuffer rank_data;  // RankData slots
  static StatusOr<OwnBuffers> Allocate(size_t max_bytes, size_t rank_data_bytes = kDefaultRankDataBytes);
};

// Which algorithm the servers pick (vLLM custom_all_reduce.cuh dispatch,
// full NVLink): world 2 -> one-shot; world <= 4 below 512 KiB and world <= 8
// below 256 KiB -> one-shot; otherwise two-shot.
Algo ServerDefaultAlgo(int world, size_t bytes);

class CustomAllreduce {
 public:
  // metas[i] / stagings[i]: rank i's buffers as this process sees them.
  // rank_data: this rank's slot array (device), rank_data_bytes long.
  // Writes slot 0 (the staging pointers); call outside any graph capture.
  static StatusOr<std::unique_ptr<CustomAllreduce>> Create(int world, int rank, std::vector<void*> metas,
                                                           std::vector<void*> stagings, void* rank_data,
                                                           size_t rank_data_bytes, size_t max_bytes, int blocks);

  // Eager: copies `in` to staging unless it already is the staging buffer.
  // Under capture on `stream`: uses a fresh slot for an unregistered `in`.
  Status AllReduce(const void* in, void* out, size_t count, DType dtype, Algo algo, cudaStream_t stream);

  // Inputs captured since the last registration, in slot order.
  const std::vector<const void*>& pending_graph_inputs() const { return pending_; }
  // peers[i][k]: rank i's k-th pending input (as this process sees it).
  Status RegisterGraphBuffers(const std::vector<std::vector<const void*>>& peers);

  int world() const { return world_; }
  int rank() const { return rank_; }
  size_t max_bytes() const { return max_bytes_; }
  void* staging(int i) const { return stagings_[i]; }
  size_t slots_used() const { return next_slot_; }

 private:
  CustomAllreduce(int world, int rank, std::vector<void*> metas, std::vector<void*> stagings, void* rank_data,
                  size_t rank_data_bytes, size_t max_bytes, int blocks);
  int world_, rank_;
  std::vector<void*> metas_, stagings_;
  RankSignals signals_{};
  RankData* slots_;  // device
  size_t n_slots_;
  size_t next_slot_ = 1;  // slot 0: staging
  size_t max_bytes_;
  int blocks_;
  std::unordered_map<const void*, RankData*> registered_;
  std::vector<const void*> pending_;
  std::vector<RankData*> pending_slots_;
};

// N ranks in one process on the current device (co-located mode): every
// rank's buffers are plain device pointers, one stream per rank, blocks per
// rank capped so all ranks are resident together.
class ColocatedGroup {
 public:
  static StatusOr<std::unique_ptr<ColocatedGroup>> Create(int world, size_t max_bytes, int sm_count,
                                                           size_t rank_data_bytes = kDefaultRankDataBytes);
  int world() const { return static_cast<int>(ranks_.size()); }
  CustomAllreduce& rank(int r) { return *ranks_[r]; }
  cudaStream_t stream(int r) const { return streams_[r].get(); }
  int blocks() const { return blocks_; }
  // After a capture: hands every rank's pending inputs to every rank.
  Status RegisterCapturedBuffers();
  // Bytes each rank allocated (meta + staging + rank_data).
  size_t bytes_per_rank() const;

 private:
  std::vector<OwnBuffers> own_;
  std::vector<std::unique_ptr<CustomAllreduce>> ranks_;
  std::vector<Stream> streams_;
  int blocks_ = 1;
};

}  // namespace tpt::kernels
