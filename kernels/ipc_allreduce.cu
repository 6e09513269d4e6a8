// ipc_allreduce.cu: instantiates the custom all-reduce kernels and launches
// them (thin: the mechanism is in ipc_allreduce.cuh).
#include "kernels/ipc_allreduce.cuh"
#include "kernels/ipc_allreduce.h"

#include <climits>

namespace tpt::kernels {
namespace {

template <typename T, int N>
cudaError_t Launch(Algo algo, int rank, const RankData* slot, const RankSignals& sg, void* out, int packed,
                   int blocks, cudaStream_t stream) {
  Signal* self = sg.signals[rank];
  if (algo == Algo::kOneShot) {
    CrossDeviceReduceOneShot<T, N><<<blocks, kThreads, 0, stream>>>(slot, sg, self, static_cast<T*>(out), rank, packed);
  } else {
    CrossDeviceReduceTwoShot<T, N><<<blocks, kThreads, 0, stream>>>(slot, sg, self, static_cast<T*>(out), rank, packed);
  }
  return cudaGetLastError();
}

template <typename T>
cudaError_t DispatchWorld(Algo algo, int world, int rank, const RankData* slot, const RankSignals& sg, void* out,
                          int packed, int blocks, cudaStream_t stream) {
  switch (world) {
    case 2: return Launch<T, 2>(algo, rank, slot, sg, out, packed, blocks, stream);
    case 4: return Launch<T, 4>(algo, rank, slot, sg, out, packed, blocks, stream);
    case 6: return Launch<T, 6>(algo, rank, slot, sg, out, packed, blocks, stream);
    case 8: return Launch<T, 8>(algo, rank, slot, sg, out, packed, blocks, stream);
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace

cudaError_t LaunchAllreduce(Algo algo, DType dtype, int world, int rank, const RankData* slot, const RankSignals& sg,
                            void* out, size_t count, int blocks, cudaStream_t stream) {
  const size_t lanes = PackElems(dtype);
  if (rank < 0 || rank >= world || count % lanes != 0 || count / lanes > size_t(INT_MAX)) return cudaErrorInvalidValue;
  const int packed = static_cast<int>(count / lanes);
  if (blocks > kMaxBlocks) blocks = kMaxBlocks;
  if (blocks < 1) blocks = 1;
  if (dtype == DType::kFloat32) return DispatchWorld<float>(algo, world, rank, slot, sg, out, packed, blocks, stream);
  return DispatchWorld<__nv_bfloat16>(algo, world, rank, slot, sg, out, packed, blocks, stream);
}

cudaError_t LaunchDecodeLayer(DType dtype, const void* src, void* dst, size_t count, cudaStream_t stream) {
  const int threads = 256;
  const int blocks = static_cast<int>(count / threads + 1 > 1024 ? 1024 : count / threads + 1);
  if (dtype == DType::kFloat32) {
    DecodeLayerStandIn<float><<<blocks, threads, 0, stream>>>(static_cast<const float*>(src), static_cast<float*>(dst),
                                                              int64_t(count));
  } else {
    DecodeLayerStandIn<__nv_bfloat16><<<blocks, threads, 0, stream>>>(static_cast<const __nv_bfloat16*>(src),
                                                                      static_cast<__nv_bfloat16*>(dst), int64_t(count));
  }
  return cudaGetLastError();
}

}  // namespace tpt::kernels
