// process_group.h (CUDA builds): the NCCL communicator of the real ranks, the
// control plane every multi-process piece of repro/ uses: the ncclUniqueId
// rendezvous (NCCL_COMM_ID for launchers, a file for our own spawn), byte
// all-gathers over NCCL, and waits that poll the stream and the
// communicator against a deadline, the cancel flag and the peers' processes
// (launch.h DeadPeers, every 0.2 s): a wait on a peer that died stops at
// once and says which rank is gone.
//
//   ProcessGroup g;
//   TPT_RETURN_IF_ERROR(g.Init(layout, stream));          // world ranks, or 1 co-located
//   TPT_RETURN_IF_ERROR(g.AllGatherBytes(&mine, sizeof mine, all.data()));
#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <string>

#include "kernels/cuda_check.h"
#include "base/status.h"
#include "repro/backend.h"

namespace tpt::repro {

class ProcessGroup {
 public:
  ProcessGroup() = default;
  ProcessGroup(const ProcessGroup&) = delete;
  ProcessGroup& operator=(const ProcessGroup&) = delete;
  ~ProcessGroup();

  // A non-blocking communicator of layout.world ranks (1 when co-located),
  // then an all-gather of every rank's pid and host for DeadPeers. Ranks
  // sharing one GPU (layout.shared_gpu) get distinct NCCL_HOSTIDs first:
  // NCCL 2.28 refuses two ranks of a communicator on one GPU otherwise.
  Status Init(const RankLayout& layout, cudaStream_t stream);

  int size() const { return n_; }
  int rank() const { return rank_; }
  ncclComm_t comm() const { return comm_; }
  bool ok() const { return comm_ != nullptr; }

  // Turns an NCCL return into a Status; ncclInProgress is waited out.
  Status Check(ncclResult_t r, const char* what);
  // Stream `s` done, or an NCCL error, the deadline or a cancel (then the
  // communicator is aborted and the message names the peers that are gone).
  Status Wait(cudaStream_t s, double deadline_s, const std::string& what);
  // `bytes` from every rank into `out` (host, rank order).
  Status AllGatherBytes(const void* mine, size_t bytes, void* out);
  Status Barrier();
  StatusOr<int64_t> AllReduceMin(int64_t v);
  void Abort();

 private:
  Status GetUniqueId(const RankLayout& layout, ncclUniqueId* id);
  Status WaitComm(const std::string& what, double deadline_s);
  Status Stalled(const std::string& what, double deadline_s, const char* state);
  // Every 0.2 s at most: whether a peer process of this host has ended.
  bool PeerGone();

  int n_ = 1, rank_ = 0;
  ncclComm_t comm_ = nullptr;
  bool broken_ = false;
  cudaStream_t stream_ = nullptr;
  double last_peer_check_ = 0;
  kernels::DeviceBuffer scratch_;
};

}  // namespace tpt::repro
