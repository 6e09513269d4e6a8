// ipc_allreduce.cuh: custom all-reduce over peer-visible buffers, one-shot and
// two-shot, with per-block signal flags (the vLLM/SGLang design:
// vLLM csrc/custom_all_reduce.cuh v0.11, SGLang sgl-kernel "adapted from vllm
// v0.8.2"). Device code only; layouts in ipc_allreduce_layout.h, host launch
// API in ipc_allreduce.h.
//
// One-shot: start barrier; each rank reads all N inputs (16-byte vector
// loads), accumulates in fp32 in rank order 0..N-1 and writes the full sum;
// end barrier. Every rank computes bit-identical results.
// Two-shot: start barrier; reduce-scatter (rank r reduces slice r of all
// inputs into its own tmp); release/acquire barrier; all-gather of every
// peer's tmp slice into the output.
//
//   CrossDeviceReduceOneShot<float, 4><<<blocks, kThreads, 0, s>>>(slot, sg, self, out, rank, packed);
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/ipc_allreduce_layout.h"

namespace tpt::kernels {

#define TPT_DINLINE __device__ __forceinline__

// 16 bytes of T, and the fp32 accumulator for it.
template <typename T, int N>
struct __align__(alignof(T) * N) Array {
  T data[N];
};
template <typename T>
struct Packed {
  using P = Array<T, 16 / sizeof(T)>;   // what one thread loads
  using A = Array<float, 16 / sizeof(T)>;  // what it accumulates in
};
static_assert(sizeof(Packed<float>::P) == 16 && sizeof(Packed<__nv_bfloat16>::P) == 16);

TPT_DINLINE float ToFloat(float x) { return x; }
TPT_DINLINE float ToFloat(__nv_bfloat16 x) { return __bfloat162float(x); }
template <typename T>
TPT_DINLINE T FromFloat(float x);
template <>
TPT_DINLINE float FromFloat<float>(float x) { return x; }
template <>
TPT_DINLINE __nv_bfloat16 FromFloat<__nv_bfloat16>(float x) { return __float2bfloat16(x); }

// Sum of element `idx` of the N inputs, in the order ptrs[0..N-1].
template <typename T, int N>
TPT_DINLINE typename Packed<T>::P PackedReduce(const typename Packed<T>::P* const* ptrs, int idx) {
  using P = typename Packed<T>::P;
  using A = typename Packed<T>::A;
  constexpr int kLanes = 16 / sizeof(T);
  A acc;
  P first = ptrs[0][idx];
#pragma unroll
  for (int k = 0; k < kLanes; ++k) acc.data[k] = ToFloat(first.data[k]);
#pragma unroll
  for (int r = 1; r < N; ++r) {
    P v = ptrs[r][idx];
#pragma unroll
    for (int k = 0; k < kLanes; ++k) acc.data[k] += ToFloat(v.data[k]);
  }
  P out;
#pragma unroll
  for (int k = 0; k < kLanes; ++k) out.data[k] = FromFloat<T>(acc.data[k]);
  return out;
}

// Flag stores/loads. ".sys" scope because the peer may be another GPU (or
// another process on this one); release/acquire where data written before
// the flag must be visible after it (the two-shot mid barrier), volatile
// (relaxed) where only the flag itself matters.
TPT_DINLINE void StoreRelease(uint32_t* p, uint32_t v) {
  asm volatile("st.release.sys.global.u32 [%1], %0;" ::"r"(v), "l"(p) : "memory");
}
TPT_DINLINE uint32_t LoadAcquire(const uint32_t* p) {
  uint32_t v;
  asm volatile("ld.acquire.sys.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
TPT_DINLINE void StoreVolatile(uint32_t* p, uint32_t v) {
  asm volatile("st.volatile.global.u32 [%1], %0;" ::"r"(v), "l"(p) : "memory");
}
TPT_DINLINE uint32_t LoadVolatile(const uint32_t* p) {
  uint32_t v;
  asm volatile("ld.volatile.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}

// Start barrier: thread t < N of block b tells peer t "block b of `rank` is
// here" and waits until peer t said the same. Uses release/acquire (vLLM
// uses relaxed here): inputs written by earlier kernels on the peer must be
// visible before we read them, and with several ranks in one process sharing
// one device nothing else orders those writes.
template <int N>
TPT_DINLINE void BarrierAtStart(const RankSignals& sg, Signal* self, int rank) {
  const uint32_t flag = self->flag[blockIdx.x] + 1;
  if (threadIdx.x < N) {
    StoreRelease(&sg.signals[threadIdx.x]->start[blockIdx.x][rank], flag);
    while (LoadAcquire(&self->start[blockIdx.x][threadIdx.x]) != flag) {
    }
  }
  __syncthreads();
  if (threadIdx.x == 0) self->flag[blockIdx.x] = flag;
}

// End barrier. Mid-kernel (kFinal = false): release/acquire so the tmp slice
// this block wrote is visible to the peers that gather it. Final
// (kFinal = true): only guarantees no rank leaves before all finished reading
// its input, so relaxed flags are enough.
template <int N, bool kFinal>
TPT_DINLINE void BarrierAtEnd(const RankSignals& sg, Signal* self, int rank) {
  __syncthreads();
  const uint32_t flag = self->flag[blockIdx.x] + 1;
  if (threadIdx.x < N) {
    uint32_t* peer = &sg.signals[threadIdx.x]->end[blockIdx.x][rank];
    const uint32_t* mine = &self->end[blockIdx.x][threadIdx.x];
    if constexpr (kFinal) {
      StoreVolatile(peer, flag);
      while (LoadVolatile(mine) != flag) {
      }
    } else {
      StoreRelease(peer, flag);
      while (LoadAcquire(mine) != flag) {
      }
    }
  }
  if constexpr (!kFinal) __syncthreads();
  if (threadIdx.x == 0) self->flag[blockIdx.x] = flag;
}

// `packed`: number of 16-byte packs in the message.
template <typename T, int N>
__global__ void __launch_bounds__(kThreads, 1)
    CrossDeviceReduceOneShot(const RankData* slot, RankSignals sg, Signal* self, T* __restrict__ out,
                             int rank, int packed) {
  using P = typename Packed<T>::P;
  const RankData dp = *slot;
  BarrierAtStart<N>(sg, self, rank);
  for (int idx = blockIdx.x * blockDim.x + threadIdx.x; idx < packed; idx += gridDim.x * blockDim.x) {
    reinterpret_cast<P*>(out)[idx] = PackedReduce<T, N>(reinterpret_cast<const P* const*>(dp.ptrs), idx);
  }
  BarrierAtEnd<N, true>(sg, self, rank);
}

template <typename T, int N>
__global__ void __launch_bounds__(kThreads, 1)
    CrossDeviceReduceTwoShot(const RankData* slot, RankSignals sg, Signal* self, T* __restrict__ out,
                             int rank, int packed) {
  using P = typename Packed<T>::P;
  const int tid = blockIdx.x * blockDim.x + threadIdx.x;
  const int stride = gridDim.x * blockDim.x;
  const int part = packed / N;
  const int start = rank * part;
  const int end = rank == N - 1 ? packed : start + part;
  const int largest_part = part + packed % N;
  // in[r]: rank r's input. tmps[i]: the tmp area of rank (rank+i)%N, so
  // tmps[0] is this rank's own.
  const P* in[N];
  P* tmps[N];
#pragma unroll
  for (int i = 0; i < N; ++i) {
    in[i] = static_cast<const P*>(slot->ptrs[i]);
    const int target = (rank + i) % N;
    tmps[i] = reinterpret_cast<P*>(reinterpret_cast<char*>(sg.signals[target]) + sizeof(Signal));
  }
  BarrierAtStart<N>(sg, self, rank);
  // Reduce-scatter, summing in rank order 0..N-1 (bit-identical to one-shot).
  // The same thread (tid) must handle the same indices in both stages:
  // visibility after the mid barrier is only promised between the threads
  // that synchronised, i.e. per block.
  for (int idx = start + tid; idx < end; idx += stride) {
    tmps[0][idx - start] = PackedReduce<T, N>(in, idx);
  }
  BarrierAtEnd<N, false>(sg, self, rank);
  // All-gather.
  for (int idx = tid; idx < largest_part; idx += stride) {
#pragma unroll
    for (int i = 0; i < N; ++i) {
      const int from = (rank + i) % N;
      if (from == N - 1 || idx < part) reinterpret_cast<P*>(out)[from * part + idx] = tmps[i][idx];
    }
  }
  // No final barrier: the next call's start barrier (same block, same tids)
  // orders our next tmp write after the peers' gather of this one.
}

// Stand-in for a decoder layer's compute in the decode-like graph:
// dst = src / 16 + 1 (src: the previous all-reduce's output), so each
// all-reduce depends on the one before and values stay finite for N <= 16.
template <typename T>
__global__ void DecodeLayerStandIn(const T* src, T* dst, int64_t count) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < count; i += int64_t(gridDim.x) * blockDim.x) {
    dst[i] = FromFloat<T>(ToFloat(src[i]) * 0.0625f + 1.0f);
  }
}

#undef TPT_DINLINE

}  // namespace tpt::kernels
