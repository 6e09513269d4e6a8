// ipc_allreduce_layout.h: the memory layouts host and device share for the
// custom all-reduce (kernels/ipc_allreduce.cuh), after vLLM/SGLang's
// csrc/custom_all_reduce.cuh (vLLM v0.11 flag protocol).
//
// Every rank owns one "meta" buffer: a Signal followed by the two-shot tmp
// area. Peers reach it through CUDA IPC (one process per GPU) or through a
// plain pointer (several ranks in one process, co-located on one GPU). The
// kernel takes, per call, a RankData slot: the N ranks' input pointers.
//
//   void* meta = ...;                       // kMetaHeaderBytes + max_bytes, zeroed
//   auto* sig = static_cast<tpt::kernels::Signal*>(meta);
//   void* tmp = tpt::kernels::TmpOf(meta);  // two-shot scratch
#pragma once

#include <cstddef>
#include <cstdint>

namespace tpt::kernels {

// Upper bounds of the design. kMaxBlocks = 36 and 512 threads come from
// vLLM's grid search (PR #2192, A100/A10/A30/T4/V100) and are kept by
// SGLang's port; on one H200 with N co-located ranks the launcher caps blocks
// at SMs/N so every rank's blocks are resident at once (measured deadlock
// otherwise, knowledge/anchors-allreduce.md §1.6, H200, 2026-11-29).
inline constexpr int kMaxRanks = 8;
inline constexpr int kMaxBlocks = 36;
inline constexpr int kThreads = 512;

// Per-block barrier flags. start[b][r] / end[b][r] are written by peer r's
// block b; flag[b] is this rank's epoch for block b (only this rank touches
// it). No atomics: peer atomics are not available over PCIe, and the flags
// only ever grow, so a stale value can never look like the awaited one.
struct alignas(128) Signal {
  alignas(128) uint32_t start[kMaxBlocks][kMaxRanks];
  alignas(128) uint32_t end[kMaxBlocks][kMaxRanks];
  alignas(128) uint32_t flag[kMaxBlocks];
};
static_assert(sizeof(Signal) % 128 == 0, "tmp area after Signal must stay 128-byte aligned");
static_assert(sizeof(Signal) == 2560, "Signal layout is shared by every rank; do not change it silently");

// The N input pointers of one all-reduce call, as the calling rank sees them.
struct alignas(64) RankData {
  const void* ptrs[kMaxRanks];
};
static_assert(sizeof(RankData) == 64, "RankData slots are indexed by 64-byte stride");

// Every rank's Signal (its meta buffer), passed by value to each launch.
struct RankSignals {
  Signal* signals[kMaxRanks];
};

inline constexpr size_t kMetaHeaderBytes = sizeof(Signal);

// Bytes of one rank's meta buffer for a given maximum message.
inline constexpr size_t MetaBytes(size_t max_bytes) { return kMetaHeaderBytes + max_bytes; }

// The two-shot scratch area that follows a rank's Signal.
inline void* TmpOf(void* meta) { return static_cast<char*>(meta) + kMetaHeaderBytes; }

enum class Algo : int { kOneShot = 1, kTwoShot = 2 };
enum class DType : int { kFloat32 = 0, kBFloat16 = 1 };

inline constexpr size_t DTypeBytes(DType t) { return t == DType::kFloat32 ? 4 : 2; }

}  // namespace tpt::kernels
