// ipc_allreduce.h: host entry points of the custom all-reduce kernels
// (kernels/ipc_allreduce.cuh). Plain C++: includes only the CUDA runtime API
// and the shared layouts, so g++-compiled code can call it.
//
//   // rank r of N, one call; `slot` is a device RankData with the N inputs.
//   cudaError_t e = tpt::kernels::LaunchAllreduce(Algo::kOneShot, DType::kBFloat16,
//                                                 N, r, slot, sg, out, count, blocks, stream);
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "kernels/ipc_allreduce_layout.h"

namespace tpt::kernels {

// Elements per 16-byte pack; a message must be a whole number of packs.
inline constexpr size_t PackElems(DType t) { return 16 / DTypeBytes(t); }

// Launches rank `rank`'s part of one all-reduce of `count` elements on
// `stream`. `slot` (device memory) holds the N ranks' input pointers;
// `sg.signals[i]` is rank i's meta buffer as this process sees it; `out` may
// be this rank's input. `blocks` is clamped to [1, kMaxBlocks]. Returns
// cudaErrorInvalidValue for world sizes outside {2,4,6,8}, counts that are not
// whole packs, or messages too big for int indexing.
cudaError_t LaunchAllreduce(Algo algo, DType dtype, int world, int rank, const RankData* slot,
                            const RankSignals& sg, void* out, size_t count, int blocks, cudaStream_t stream);

// One decode "layer" of compute: dst = src / 16 + 1 on `count` elements (see the .cuh).
cudaError_t LaunchDecodeLayer(DType dtype, const void* src, void* dst, size_t count, cudaStream_t stream);

// How many blocks each rank may use when `ranks_on_device` ranks share one
// device of `sm_count` SMs: every rank's blocks must be resident at once or
// the flag barriers deadlock (one 512-thread block per SM is guaranteed by
// __launch_bounds__(512, 1)).
inline int MaxBlocksPerRank(int sm_count, int ranks_on_device) {
  int b = ranks_on_device > 0 ? sm_count / ranks_on_device : sm_count;
  if (b > kMaxBlocks) b = kMaxBlocks;
  return b < 1 ? 1 : b;
}

}  // namespace tpt::kernels
