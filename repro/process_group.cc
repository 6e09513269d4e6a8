// process_group.cc: NCCL rendezvous, all-gathers and deadline-bound waits.
#include "repro/process_group.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <thread>
#include <vector>

#include "repro/launch.h"

namespace tpt::repro {
namespace {

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

Status NcclStatus(ncclResult_t r, const char* what, int rank, ncclComm_t comm) {
  if (r == ncclSuccess || r == ncclInProgress) return OkStatus();
  std::string msg = std::string(what) + " failed on rank " + std::to_string(rank) + ": " + ncclGetErrorString(r);
  if (comm != nullptr) {
    const char* last = ncclGetLastError(comm);
    if (last != nullptr && *last) msg += " (" + std::string(last) + ")";
  }
  const std::string dead = DeadPeers();
  if (!dead.empty()) msg += "; " + dead;
  return InternalError(msg);
}

}  // namespace

ProcessGroup::~ProcessGroup() {
  if (comm_ == nullptr) return;
  // ncclCommDestroy and ncclCommAbort wait for a peer that is gone (seen on
  // the H200): leave the communicator to the process's exit.
  if (n_ > 1 && !DeadPeers().empty()) return;
  if (broken_) {
    ncclCommAbort(comm_);
  } else {
    ncclCommDestroy(comm_);
  }
}

void ProcessGroup::Abort() {
  if (comm_ != nullptr) ncclCommAbort(comm_);
  comm_ = nullptr;
}

Status ProcessGroup::Init(const RankLayout& layout, cudaStream_t stream) {
  n_ = layout.colocated ? 1 : layout.world;
  rank_ = layout.colocated ? 0 : layout.rank;
  stream_ = stream;
  setenv("NCCL_NVLS_ENABLE", "0", 1);  // never NVLink multicast (KINDS.md)
  if (layout.shared_gpu && std::getenv("NCCL_HOSTID") == nullptr) {
    // Each rank believes it is on its own host and talks over sockets
    // (measured on NCCL 2.28; anchors-allreduce.md §3).
    setenv("NCCL_HOSTID", ("tptriage-rank-" + std::to_string(rank_)).c_str(), 1);
  }
  ncclUniqueId id;
  TPT_RETURN_IF_ERROR(GetUniqueId(layout, &id));
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;  // so a stuck init can be aborted
  TPT_RETURN_IF_ERROR(Check(ncclCommInitRankConfig(&comm_, n_, id, rank_, &config), "ncclCommInitRank"));
  TPT_RETURN_IF_ERROR(WaitComm("ncclCommInitRank", 120));
  auto scratch = kernels::DeviceBuffer::Allocate(4096);
  if (!scratch.ok()) return scratch.status();
  scratch_ = std::move(*scratch);
  if (n_ > 1) {
    struct Who {
      int64_t pid;
      uint64_t host;
    } me{static_cast<int64_t>(getpid()), HostKey()};
    std::vector<Who> all(n_);
    TPT_RETURN_IF_ERROR(AllGatherBytes(&me, sizeof me, all.data()));
    std::vector<PeerProcess> peers;
    for (int r = 0; r < n_; ++r) peers.push_back({r, all[r].pid, all[r].host});
    SetPeers(std::move(peers));
  }
  return OkStatus();
}

Status ProcessGroup::GetUniqueId(const RankLayout& layout, ncclUniqueId* id) {
  if (n_ == 1 || std::getenv("NCCL_COMM_ID") != nullptr) {
    // NCCL_COMM_ID (launcher mode): every rank derives the same id locally.
    return Check(ncclGetUniqueId(id), "ncclGetUniqueId");
  }
  if (layout.nccl_id_file.empty()) {
    return InvalidArgumentError("rank " + std::to_string(rank_) +
                                ": no way to share the NCCL id: set MASTER_ADDR and MASTER_PORT (or NCCL_COMM_ID)");
  }
  const std::string& path = layout.nccl_id_file;
  if (rank_ == 0) {
    TPT_RETURN_IF_ERROR(Check(ncclGetUniqueId(id), "ncclGetUniqueId"));
    const std::string tmp = path + ".tmp";
    {
      std::ofstream out(tmp, std::ios::binary);
      out.write(reinterpret_cast<const char*>(id), sizeof *id);
      if (!out) return InternalError("cannot write the NCCL id to " + tmp);
    }
    if (std::rename(tmp.c_str(), path.c_str()) != 0) return InternalError("cannot rename " + tmp + " to " + path);
    return OkStatus();
  }
  const double t0 = Now();
  for (;;) {
    std::ifstream in(path, std::ios::binary);
    if (in && in.read(reinterpret_cast<char*>(id), sizeof *id)) return OkStatus();
    if (CancelFlag().load()) return CancelledError("waiting for the NCCL id from rank 0: " + CancelReason());
    if (Now() - t0 > 60) {
      return DeadlineExceededError("rank " + std::to_string(rank_) + ": no NCCL id from rank 0 in " + path +
                                   " after 60 s; did rank 0 start?");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

Status ProcessGroup::Check(ncclResult_t r, const char* what) {
  if (r == ncclInProgress) return WaitComm(what, 60);
  if (r != ncclSuccess) broken_ = true;
  return NcclStatus(r, what, rank_, comm_);
}

Status ProcessGroup::Stalled(const std::string& what, double deadline_s, const char* state) {
  const bool cancelled = CancelFlag().load();
  const std::string dead = DeadPeers();
  if (!dead.empty()) {
    // ncclCommAbort can block on a peer that is gone (seen on the H200 with
    // sockets): leave the communicator to the process's exit.
    comm_ = nullptr;
    if (cancelled) return CancelledError(what + ": " + CancelReason());
    return UnavailableError(what + " on rank " + std::to_string(rank_) + ": " + dead +
                            " (its process ended mid-run); this rank stops");
  }
  Abort();
  if (cancelled) return CancelledError(what + ": " + CancelReason() + "; communicator aborted");
  return DeadlineExceededError(what + ": " + state + " after " + std::to_string(static_cast<int>(deadline_s)) +
                               " s on rank " + std::to_string(rank_) + "; communicator aborted (" +
                               (dead.empty() ? "is every rank running?" : dead) + ")");
}

bool ProcessGroup::PeerGone() {
  const double now = Now();
  if (n_ < 2 || now - last_peer_check_ < 0.2) return false;
  last_peer_check_ = now;
  return !DeadPeers().empty();
}

Status ProcessGroup::WaitComm(const std::string& what, double deadline_s) {
  const double t0 = Now();
  for (;;) {
    ncclResult_t st = ncclSuccess;
    ncclResult_t r = ncclCommGetAsyncError(comm_, &st);
    if (r != ncclSuccess) st = r;
    if (st == ncclSuccess) return OkStatus();
    if (st != ncclInProgress) {
      broken_ = true;
      return NcclStatus(st, what.c_str(), rank_, comm_);
    }
    if (CancelFlag().load() || Now() - t0 > deadline_s || PeerGone()) return Stalled(what, deadline_s, "no progress");
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

Status ProcessGroup::Wait(cudaStream_t s, double deadline_s, const std::string& what) {
  const double t0 = Now();
  int spins = 0;
  for (;;) {
    ncclResult_t st = ncclSuccess;
    if (comm_ != nullptr) ncclCommGetAsyncError(comm_, &st);
    if (st != ncclSuccess && st != ncclInProgress) {
      broken_ = true;
      return NcclStatus(st, what.c_str(), rank_, comm_);
    }
    cudaError_t e = cudaStreamQuery(s);
    if (e == cudaSuccess && st == ncclSuccess) return OkStatus();  // InProgress: work may not be enqueued yet
    if (e != cudaSuccess && e != cudaErrorNotReady) return kernels::CudaStatus(e, what.c_str(), __FILE__, __LINE__);
    if (CancelFlag().load() || Now() - t0 > deadline_s || PeerGone()) return Stalled(what, deadline_s, "still running");
    // Busy-poll briefly (sub-millisecond waits are the norm), then back off.
    if (++spins > 1000) std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
}

Status ProcessGroup::AllGatherBytes(const void* mine, size_t bytes, void* out) {
  auto buf = kernels::DeviceBuffer::Allocate(bytes * (n_ + 1));
  if (!buf.ok()) return buf.status();
  char* send = static_cast<char*>(buf->get()) + bytes * n_;
  TPT_CUDA_RETURN(cudaMemcpyAsync(send, mine, bytes, cudaMemcpyHostToDevice, stream_));
  TPT_RETURN_IF_ERROR(Check(ncclAllGather(send, buf->get(), bytes, ncclChar, comm_, stream_), "ncclAllGather"));
  TPT_RETURN_IF_ERROR(Wait(stream_, 60, "all_gather"));
  TPT_CUDA_RETURN(cudaMemcpy(out, buf->get(), bytes * n_, cudaMemcpyDeviceToHost));
  return OkStatus();
}

Status ProcessGroup::Barrier() {
  std::vector<char> all(n_);
  char me = 1;
  return AllGatherBytes(&me, 1, all.data());
}

StatusOr<int64_t> ProcessGroup::AllReduceMin(int64_t v) {
  TPT_CUDA_RETURN(cudaMemcpyAsync(scratch_.get(), &v, sizeof v, cudaMemcpyHostToDevice, stream_));
  TPT_RETURN_IF_ERROR(
      Check(ncclAllReduce(scratch_.get(), scratch_.get(), 1, ncclInt64, ncclMin, comm_, stream_), "ncclAllReduce"));
  TPT_RETURN_IF_ERROR(Wait(stream_, 60, "all_reduce(MIN)"));
  int64_t out = 0;
  TPT_CUDA_RETURN(cudaMemcpy(&out, scratch_.get(), sizeof out, cudaMemcpyDeviceToHost));
  return out;
}

}  // namespace tpt::repro
