// custom_allreduce.cc: buffers, slots and graph-buffer registration of the
// custom all-reduce; the kernels are in ipc_allreduce.cu.
#include "kernels/custom_allreduce.h"

#include <chrono>
#include <thread>

namespace tpt::kernels {

Status WaitStream(cudaStream_t stream, double deadline_s, const std::atomic<bool>* cancel, const std::string& what) {
  const auto t0 = std::chrono::steady_clock::now();
  int spins = 0;
  for (;;) {
    cudaError_t e = cudaStreamQuery(stream);
    if (e == cudaSuccess) return OkStatus();
    if (e != cudaErrorNotReady) return CudaStatus(e, ("waiting for " + what).c_str(), __FILE__, __LINE__);
    const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (cancel != nullptr && cancel->load()) return CancelledError(what + ": interrupted after " + std::to_string(waited) + " s");
    if (waited > deadline_s) {
      return DeadlineExceededError(what + ": still running after " + std::to_string(waited) +
                                   " s (deadline " + std::to_string(deadline_s) + " s); a rank is not progressing");
    }
    // Busy-poll briefly (sub-millisecond waits are the norm), then back off.
    if (++spins > 1000) std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

StatusOr<OwnBuffers> OwnBuffers::Allocate(size_t max_bytes, size_t rank_data_bytes) {
  OwnBuffers b;
  auto meta = DeviceBuffer::Allocate(MetaBytes(max_bytes));
  if (!meta.ok()) return meta.status();
  b.meta = std::move(*meta);
  TPT_CUDA_RETURN(cudaMemset(b.meta.get(), 0, b.meta.bytes()));
  auto staging = DeviceBuffer::Allocate(max_bytes);
  if (!staging.ok()) return staging.status();
  b.staging = std::move(*staging);
  auto rd = DeviceBuffer::Allocate(rank_data_bytes);
  if (!rd.ok()) return rd.status();
  b.rank_data = std::move(*rd);
  return b;
}

Algo ServerDefaultAlgo(int world, size_t bytes) {
  if (world == 2) return Algo::kOneShot;
  if ((world <= 4 && bytes < (512u << 10)) || (world <= 8 && bytes < (256u << 10))) return Algo::kOneShot;
  return Algo::kTwoShot;
}

StatusOr<std::unique_ptr<CustomAllreduce>> CustomAllreduce::Create(int world, int rank, std::vector<void*> metas,
                                                                   std::vector<void*> stagings, void* rank_data,
                                                                   size_t rank_data_bytes, size_t max_bytes,
                                                                   int blocks) {
  if (world < 2 || world > kMaxRanks || rank < 0 || rank >= world || static_cast<int>(metas.size()) != world ||
      static_cast<int>(stagings.size()) != world || rank_data_bytes < 2 * sizeof(RankData)) {
    return InvalidArgumentError("custom all-reduce: inconsistent group (world " + std::to_string(world) + ", rank " +
                                std::to_string(rank) + ")");
  }
  std::unique_ptr<CustomAllreduce> car(
      new CustomAllreduce(world, rank, std::move(metas), std::move(stagings), rank_data, rank_data_bytes, max_bytes, blocks));
  // Slot 0: every rank's staging buffer (eager mode).
  RankData d{};
  for (int i = 0; i < world; ++i) d.ptrs[i] = car->stagings_[i];
  TPT_CUDA_RETURN(cudaMemcpy(car->slots_, &d, sizeof(d), cudaMemcpyHostToDevice));
  return car;
}

CustomAllreduce::CustomAllreduce(int world, int rank, std::vector<void*> metas, std::vector<void*> stagings,
                                 void* rank_data, size_t rank_data_bytes, size_t max_bytes, int blocks)
    : world_(world),
      rank_(rank),
      metas_(std::move(metas)),
      stagings_(std::move(stagings)),
      slots_(static_cast<RankData*>(rank_data)),
      n_slots_(rank_data_bytes / sizeof(RankData)),
      max_bytes_(max_bytes),
      blocks_(blocks) {
  for (int i = 0; i < world_ && i < kMaxRanks; ++i) signals_.signals[i] = static_cast<Signal*>(metas_[i]);
}

Status CustomAllreduce::AllReduce(const void* in, void* out, size_t count, DType dtype, Algo algo,
                                  cudaStream_t stream) {
  const size_t bytes = count * DTypeBytes(dtype);
  if (bytes > max_bytes_) {
    return InvalidArgumentError("custom all-reduce of " + std::to_string(bytes) + " B exceeds its buffer of " +
                                std::to_string(max_bytes_) + " B (the servers fall back to NCCL there)");
  }
  cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusNone;
  TPT_CUDA_RETURN(cudaStreamIsCapturing(stream, &capturing));
  const RankData* slot = slots_;
  if (in != stagings_[rank_]) {
    auto it = registered_.find(in);
    if (it != registered_.end()) {
      slot = it->second;
    } else if (capturing == cudaStreamCaptureStatusActive) {
      if (next_slot_ >= n_slots_) {
        return UnavailableError("custom all-reduce: all " + std::to_string(n_slots_) +
                                " graph-buffer slots used (rank_data too small)");
      }
      RankData* s = slots_ + next_slot_++;
      registered_[in] = s;
      pending_.push_back(in);
      pending_slots_.push_back(s);
      slot = s;
    } else {
      TPT_CUDA_RETURN(cudaMemcpyAsync(stagings_[rank_], in, bytes, cudaMemcpyDeviceToDevice, stream));
    }
  }
  TPT_CUDA_RETURN(LaunchAllreduce(algo, dtype, world_, rank_, slot, signals_, out, count, blocks_, stream));
  return OkStatus();
}

Status CustomAllreduce::RegisterGraphBuffers(const std::vector<std::vector<const void*>>& peers) {
  if (static_cast<int>(peers.size()) != world_) return InternalError("RegisterGraphBuffers: one list per rank expected");
  for (const auto& p : peers) {
    if (p.size() != pending_.size()) {
      return InternalError("RegisterGraphBuffers: ranks captured different numbers of all-reduces (" +
                           std::to_string(p.size()) + " vs " + std::to_string(pending_.size()) + ")");
    }
  }
  std::vector<RankData> host(pending_.size());
  for (size_t k = 0; k < pending_.size(); ++k) {
    for (int i = 0; i < world_; ++i) host[k].ptrs[i] = peers[i][k];
  }
  // Slots were taken consecutively, so one copy fills them all.
  if (!host.empty()) {
    TPT_CUDA_RETURN(cudaMemcpy(pending_slots_.front(), host.data(), host.size() * sizeof(RankData),
                               cudaMemcpyHostToDevice));
  }
  pending_.clear();
  pending_slots_.clear();
  return OkStatus();
}

StatusOr<std::unique_ptr<ColocatedGroup>> ColocatedGroup::Create(int world, size_t max_bytes, int sm_count,
                                                                 size_t rank_data_bytes) {
  if (world != 2 && world != 4 && world != 6 && world != 8) {
    return InvalidArgumentError("custom all-reduce supports 2, 4, 6 or 8 ranks (as vLLM/SGLang); got " +
                                std::to_string(world));
  }
  auto g = std::unique_ptr<ColocatedGroup>(new ColocatedGroup());
  g->blocks_ = MaxBlocksPerRank(sm_count, world);
  std::vector<void*> metas, stagings;
  for (int r = 0; r < world; ++r) {
    auto b = OwnBuffers::Allocate(max_bytes, rank_data_bytes);
    if (!b.ok()) return b.status();
    metas.push_back(b->meta.get());
    stagings.push_back(b->staging.get());
    g->own_.push_back(std::move(*b));
    auto s = Stream::Create();
    if (!s.ok()) return s.status();
    g->streams_.push_back(std::move(*s));
  }
  for (int r = 0; r < world; ++r) {
    auto car = CustomAllreduce::Create(world, r, metas, stagings, g->own_[r].rank_data.get(), rank_data_bytes,
                                       max_bytes, g->blocks_);
    if (!car.ok()) return car.status();
    g->ranks_.push_back(std::move(*car));
  }
  return g;
}

Status ColocatedGroup::RegisterCapturedBuffers() {
  std::vector<std::vector<const void*>> all;
  for (auto& r : ranks_) all.push_back(r->pending_graph_inputs());
  for (auto& r : ranks_) TPT_RETURN_IF_ERROR(r->RegisterGraphBuffers(all));
  return OkStatus();
}

size_t ColocatedGroup::bytes_per_rank() const {
  if (own_.empty()) return 0;
  return own_[0].meta.bytes() + own_[0].staging.bytes() + own_[0].rank_data.bytes();
}

}  // namespace tpt::kernels
