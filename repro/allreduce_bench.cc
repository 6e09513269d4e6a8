// allreduce_bench.cc: the co-located all-reduce benchmark (CUDA builds).
#include "repro/allreduce_bench.h"

#include <nccl.h>

#include <cmath>
#include <cstdio>
#include <cstring>

#include "kernels/cuda_check.h"
#include "kernels/custom_allreduce.h"
#include "repro/backend.h"

namespace tpt::repro {
namespace {

using kernels::Algo;
using kernels::DeviceBuffer;
using kernels::DType;

uint16_t Bf16(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return uint16_t(b >> 16);  // exact for the small integers used here
}
float FromBf16(uint16_t h) {
  uint32_t b = uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}
// Rank r's element i: an integer in [-8, 8]; sums of 8 are exact in bf16.
float Value(int r, size_t i) { return float(int((i * 5 + r * 3) % 17) - 8); }

// Times `ops` launches of `one` (enqueued on stream s0, forking to others
// inside `one`) captured into a graph; `after_capture` runs before the first
// launch (graph-buffer registration). Returns microseconds per op.
template <typename Fn, typename After>
StatusOr<double> TimeInGraph(cudaStream_t s0, int ops, int replays, double deadline, Fn&& one, After&& after_capture) {
  cudaGraph_t graph = nullptr;
  TPT_CUDA_RETURN(cudaStreamBeginCapture(s0, cudaStreamCaptureModeThreadLocal));
  Status st;
  for (int i = 0; i < ops && st.ok(); ++i) st = one();
  cudaError_t end = cudaStreamEndCapture(s0, &graph);
  if (!st.ok()) {
    if (graph) cudaGraphDestroy(graph);
    return st;
  }
  TPT_CUDA_RETURN(end);
  if (Status a = after_capture(); !a.ok()) {
    cudaGraphDestroy(graph);
    return a;
  }
  cudaGraphExec_t exec = nullptr;
  cudaError_t inst = cudaGraphInstantiate(&exec, graph, 0);
  cudaGraphDestroy(graph);
  TPT_CUDA_RETURN(inst);
  struct ExecOwner {
    cudaGraphExec_t e;
    ~ExecOwner() { cudaGraphExecDestroy(e); }
  } owner{exec};
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  TPT_CUDA_RETURN(cudaGraphLaunch(exec, s0));  // warm-up
  cudaEventRecord(a, s0);
  for (int i = 0; i < replays; ++i) TPT_CUDA_RETURN(cudaGraphLaunch(exec, s0));
  cudaEventRecord(b, s0);
  Status w = kernels::WaitStream(s0, deadline, &CancelFlag(), "benchmark graph");
  float ms = 0;
  if (w.ok()) cudaEventElapsedTime(&ms, a, b);
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  TPT_RETURN_IF_ERROR(w);
  return ms * 1000.0 / (double(ops) * replays);
}

BenchCell Cell(double us, int64_t bytes, int n, int64_t wrong) {
  BenchCell c;
  c.time_us = us;
  c.algbw_gbs = double(bytes) / (us * 1e-6) / 1e9;
  c.busbw_gbs = c.algbw_gbs * 2.0 * (n - 1) / n;
  c.wrong = wrong;
  return c;
}

}  // namespace

StatusOr<std::vector<BenchRow>> RunAllreduceBench(const BenchOptions& opt) {
  setenv("NCCL_NVLS_ENABLE", "0", 1);
  int dev = 0, sms = 0;
  TPT_CUDA_RETURN(cudaGetDevice(&dev));
  TPT_CUDA_RETURN(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  const size_t max_elems = size_t(opt.max_bytes) / 2;
  // NCCL: one rank on this GPU.
  ncclComm_t comm = nullptr;
  ncclUniqueId id;
  if (ncclGetUniqueId(&id) != ncclSuccess || ncclCommInitRank(&comm, 1, id, 0) != ncclSuccess) {
    return InternalError("ncclCommInitRank (1 rank) failed");
  }
  struct CommOwner {
    ncclComm_t c;
    ~CommOwner() { ncclCommDestroy(c); }
  } comm_owner{comm};
  std::vector<BenchRow> rows;
  for (int n : opt.ranks) {
    auto group = kernels::ColocatedGroup::Create(n, size_t(opt.max_bytes), sms);
    if (!group.ok()) return group.status();
    kernels::ColocatedGroup& g = **group;
    std::vector<DeviceBuffer> in, out;
    std::vector<float> want(max_elems, 0.f);
    std::vector<uint16_t> host(max_elems);
    for (int r = 0; r < n; ++r) {
      for (size_t i = 0; i < max_elems; ++i) {
        host[i] = Bf16(Value(r, i));
        want[i] += Value(r, i);
      }
      auto bi = DeviceBuffer::Allocate(opt.max_bytes);
      auto bo = DeviceBuffer::Allocate(opt.max_bytes);
      if (!bi.ok()) return bi.status();
      if (!bo.ok()) return bo.status();
      TPT_CUDA_RETURN(cudaMemcpy(bi->get(), host.data(), opt.max_bytes, cudaMemcpyHostToDevice));
      in.push_back(std::move(*bi));
      out.push_back(std::move(*bo));
    }
    cudaStream_t s0 = g.stream(0);
    cudaEvent_t fork, join[kernels::kMaxRanks];
    cudaEventCreateWithFlags(&fork, cudaEventDisableTiming);
    for (int r = 0; r < n; ++r) cudaEventCreateWithFlags(&join[r], cudaEventDisableTiming);
    for (int64_t bytes = opt.min_bytes; bytes <= opt.max_bytes; bytes *= 2) {
      BenchRow row;
      row.ranks = n;
      row.bytes = bytes;
      const size_t count = size_t(bytes) / 2;
      for (Algo algo : {Algo::kOneShot, Algo::kTwoShot}) {
        for (int r = 0; r < n; ++r) TPT_CUDA_RETURN(cudaMemset(out[r].get(), 0xff, bytes));  // poison
        auto us = TimeInGraph(s0, opt.ops_per_graph, opt.replays, opt.deadline_s, [&]() -> Status {
          TPT_CUDA_RETURN(cudaEventRecord(fork, s0));
          for (int r = 1; r < n; ++r) TPT_CUDA_RETURN(cudaStreamWaitEvent(g.stream(r), fork, 0));
          for (int r = 0; r < n; ++r) {
            TPT_RETURN_IF_ERROR(g.rank(r).AllReduce(in[r].get(), out[r].get(), count, DType::kBFloat16, algo, g.stream(r)));
          }
          for (int r = 1; r < n; ++r) {
            TPT_CUDA_RETURN(cudaEventRecord(join[r], g.stream(r)));
            TPT_CUDA_RETURN(cudaStreamWaitEvent(s0, join[r], 0));
          }
          return OkStatus();
        }, [&] { return g.RegisterCapturedBuffers(); });
        if (!us.ok()) return us.status();
        int64_t wrong = 0;
        for (int r = 0; r < n; r += n - 1) {  // first and last rank
          std::vector<uint16_t> got(count);
          TPT_CUDA_RETURN(cudaMemcpy(got.data(), out[r].get(), bytes, cudaMemcpyDeviceToHost));
          for (size_t i = 0; i < count; ++i) wrong += FromBf16(got[i]) != want[i];
        }
        (algo == Algo::kOneShot ? row.one_shot : row.two_shot) = Cell(*us, bytes, n, wrong);
      }
      if (n == opt.ranks.front()) {
        auto us = TimeInGraph(s0, opt.ops_per_graph, opt.replays, opt.deadline_s, [&]() -> Status {
          if (ncclAllReduce(in[0].get(), out[0].get(), count, ncclBfloat16, ncclSum, comm, s0) != ncclSuccess) {
            return InternalError("ncclAllReduce failed");
          }
          return OkStatus();
        }, [] { return OkStatus(); });
        if (!us.ok()) return us.status();
        row.nccl = Cell(*us, bytes, 1, -1);
      }
      rows.push_back(row);
    }
    cudaEventDestroy(fork);
    for (int r = 0; r < n; ++r) cudaEventDestroy(join[r]);
  }
  return rows;
}

}  // namespace tpt::repro
