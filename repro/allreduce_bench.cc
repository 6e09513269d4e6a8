// allreduce_bench.cc: the all-reduce benchmark, co-located in one process or
// one process per rank over CUDA IPC (CUDA builds).
#include "repro/allreduce_bench.h"

#include <nccl.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <utility>

#include "kernels/cuda_check.h"
#include "kernels/custom_allreduce.h"
#include "repro/backend.h"
#include "repro/process_group.h"

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

// Rank r's input of `elems` elements (bf16) and the exact sum over `n` ranks.
void FillInputs(int n, int r, size_t elems, std::vector<uint16_t>* mine, std::vector<float>* want) {
  mine->resize(elems);
  want->assign(elems, 0.f);
  for (size_t i = 0; i < elems; ++i) {
    (*mine)[i] = Bf16(Value(r, i));
    for (int k = 0; k < n; ++k) (*want)[i] += Value(k, i);
  }
}

int64_t CountWrong(const void* dev, size_t count, const std::vector<float>& want, Status* st) {
  std::vector<uint16_t> got(count);
  *st = TPT_CUDA_STATUS(cudaMemcpy(got.data(), dev, count * 2, cudaMemcpyDeviceToHost));
  int64_t wrong = 0;
  for (size_t i = 0; i < count; ++i) wrong += FromBf16(got[i]) != want[i];
  return wrong;
}

BenchCell Cell(double us, int64_t bytes, int n, int64_t wrong) {
  BenchCell c;
  c.time_us = us;
  c.algbw_gbs = double(bytes) / (us * 1e-6) / 1e9;
  c.busbw_gbs = c.algbw_gbs * 2.0 * (n - 1) / n;
  c.wrong = wrong;
  return c;
}

// Closes a peer's buffer mapped through CUDA IPC.
struct IpcMap {
  void* p = nullptr;
  explicit IpcMap(void* q) : p(q) {}
  IpcMap(IpcMap&& o) noexcept : p(std::exchange(o.p, nullptr)) {}
  IpcMap& operator=(IpcMap&&) = delete;
  ~IpcMap() {
    if (p) cudaIpcCloseMemHandle(p);
  }
};

// Opens every peer's handle of `mine` (rank order; our own pointer at `rank`).
Status ExchangeIpc(ProcessGroup& g, const std::vector<void*>& mine, std::vector<std::vector<void*>>* all,
                   std::vector<IpcMap>* maps) {
  const int n = g.size(), k = static_cast<int>(mine.size());
  std::vector<cudaIpcMemHandle_t> h(k), every(size_t(k) * n);
  for (int i = 0; i < k; ++i) TPT_CUDA_RETURN(cudaIpcGetMemHandle(&h[i], mine[i]));
  TPT_RETURN_IF_ERROR(g.AllGatherBytes(h.data(), h.size() * sizeof(cudaIpcMemHandle_t), every.data()));
  all->assign(k, std::vector<void*>(n, nullptr));
  for (int r = 0; r < n; ++r) {
    for (int i = 0; i < k; ++i) {
      if (r == g.rank()) {
        (*all)[i][r] = mine[i];
        continue;
      }
      void* p = nullptr;
      TPT_CUDA_RETURN(cudaIpcOpenMemHandle(&p, every[size_t(r) * k + i], cudaIpcMemLazyEnablePeerAccess));
      maps->emplace_back(p);
      (*all)[i][r] = p;
    }
  }
  return OkStatus();
}

}  // namespace

StatusOr<std::vector<BenchRow>> RunAllreduceBenchRank(const BenchOptions& opt, const RankLayout& layout) {
  setenv("NCCL_NVLS_ENABLE", "0", 1);
  const int n = layout.world, me = layout.rank;
  if (n != 2 && n != 4 && n != 6 && n != 8) {
    return InvalidArgumentError("--bench-allreduce: " + std::to_string(n) + " ranks (the custom kernels take 2, 4, 6 or 8)");
  }
  TPT_CUDA_RETURN(cudaSetDevice(layout.local_rank));
  int sms = 0;
  TPT_CUDA_RETURN(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, layout.local_rank));
  auto stream = kernels::Stream::Create();
  if (!stream.ok()) return stream.status();
  cudaStream_t s0 = stream->get();
  ProcessGroup g;
  TPT_RETURN_IF_ERROR(g.Init(layout, s0));
  // Own buffers as the servers size them for a max_bytes message; peers' through IPC.
  auto own = kernels::OwnBuffers::Allocate(size_t(opt.max_bytes));
  if (!own.ok()) return own.status();
  std::vector<std::vector<void*>> peer;  // [meta, staging][rank]
  std::vector<IpcMap> maps, graph_maps;
  TPT_RETURN_IF_ERROR(ExchangeIpc(g, {own->meta.get(), own->staging.get()}, &peer, &maps));
  const int blocks = layout.shared_gpu ? kernels::MaxBlocksPerRank(sms, n) : kernels::kMaxBlocks;
  auto car = kernels::CustomAllreduce::Create(n, me, peer[0], peer[1], own->rank_data.get(), own->rank_data.bytes(),
                                              size_t(opt.max_bytes), blocks);
  if (!car.ok()) return car.status();
  const size_t max_elems = size_t(opt.max_bytes) / 2;
  std::vector<uint16_t> host;
  std::vector<float> want;
  FillInputs(n, me, max_elems, &host, &want);
  auto in = DeviceBuffer::Allocate(opt.max_bytes);
  auto out = DeviceBuffer::Allocate(opt.max_bytes);
  if (!in.ok()) return in.status();
  if (!out.ok()) return out.status();
  TPT_CUDA_RETURN(cudaMemcpy(in->get(), host.data(), opt.max_bytes, cudaMemcpyHostToDevice));
  // After the first capture: the input buffer's IPC handles, registered in its slot.
  auto register_inputs = [&]() -> Status {
    const auto pending = (*car)->pending_graph_inputs();
    int64_t k = static_cast<int64_t>(pending.size());
    std::vector<int64_t> ks(n);
    TPT_RETURN_IF_ERROR(g.AllGatherBytes(&k, sizeof k, ks.data()));
    for (int64_t x : ks) {
      if (x != k) return InternalError("ranks captured different numbers of custom all-reduce inputs");
    }
    if (k == 0) return OkStatus();
    std::vector<void*> mine;
    for (const void* p : pending) mine.push_back(const_cast<void*>(p));
    std::vector<std::vector<void*>> all;
    TPT_RETURN_IF_ERROR(ExchangeIpc(g, mine, &all, &graph_maps));
    std::vector<std::vector<const void*>> by_rank(n);
    for (int r = 0; r < n; ++r) {
      for (int64_t i = 0; i < k; ++i) by_rank[r].push_back(all[i][r]);
    }
    return (*car)->RegisterGraphBuffers(by_rank);
  };
  // One timed graph on every rank: barrier, capture, warm-up, barrier, replays.
  auto timed = [&](auto&& one, auto&& after) -> StatusOr<double> {
    cudaGraph_t graph = nullptr;
    TPT_CUDA_RETURN(cudaStreamBeginCapture(s0, cudaStreamCaptureModeThreadLocal));
    Status st;
    for (int i = 0; i < opt.ops_per_graph && st.ok(); ++i) st = one();
    cudaError_t end = cudaStreamEndCapture(s0, &graph);
    if (!st.ok()) {
      if (graph) cudaGraphDestroy(graph);
      return st;
    }
    TPT_CUDA_RETURN(end);
    if (Status a = after(); !a.ok()) {
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
    TPT_RETURN_IF_ERROR(g.Barrier());
    TPT_CUDA_RETURN(cudaGraphLaunch(exec, s0));  // warm-up
    TPT_RETURN_IF_ERROR(g.Wait(s0, opt.deadline_s, "benchmark warm-up"));
    TPT_RETURN_IF_ERROR(g.Barrier());
    cudaEvent_t a, b;
    cudaEventCreate(&a);
    cudaEventCreate(&b);
    cudaEventRecord(a, s0);
    for (int i = 0; i < opt.replays; ++i) cudaGraphLaunch(exec, s0);
    cudaEventRecord(b, s0);
    Status w = g.Wait(s0, opt.deadline_s, "benchmark graph");
    float ms = 0;
    if (w.ok()) cudaEventElapsedTime(&ms, a, b);
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    TPT_RETURN_IF_ERROR(w);
    return ms * 1000.0 / (double(opt.ops_per_graph) * opt.replays);
  };
  // The slowest rank's time and the sum of wrong elements.
  auto gather = [&](double us, int64_t wrong, int64_t bytes, int ranks_for_bw) -> StatusOr<BenchCell> {
    struct Pair {
      double us;
      int64_t wrong;
    } mine{us, wrong};
    std::vector<Pair> all(n);
    TPT_RETURN_IF_ERROR(g.AllGatherBytes(&mine, sizeof mine, all.data()));
    double worst = 0;
    int64_t sum = 0;
    for (const Pair& p : all) {
      worst = std::max(worst, p.us);
      sum += p.wrong;
    }
    return Cell(worst, bytes, ranks_for_bw, sum);
  };
  std::vector<BenchRow> rows;
  for (int64_t bytes = opt.min_bytes; bytes <= opt.max_bytes; bytes *= 2) {
    BenchRow row;
    row.ranks = n;
    row.bytes = bytes;
    const size_t count = size_t(bytes) / 2;
    for (Algo algo : {Algo::kOneShot, Algo::kTwoShot}) {
      TPT_CUDA_RETURN(cudaMemset(out->get(), 0xff, bytes));  // poison
      auto us = timed([&] { return (*car)->AllReduce(in->get(), out->get(), count, DType::kBFloat16, algo, s0); },
                      register_inputs);
      if (!us.ok()) return us.status();
      Status st;
      const int64_t wrong = CountWrong(out->get(), count, want, &st);
      TPT_RETURN_IF_ERROR(st);
      auto cell = gather(*us, wrong, bytes, n);
      if (!cell.ok()) return cell.status();
      (algo == Algo::kOneShot ? row.one_shot : row.two_shot) = *cell;
    }
    if (!layout.shared_gpu) {
      TPT_CUDA_RETURN(cudaMemset(out->get(), 0xff, bytes));
      auto us = timed(
          [&] {
            return g.Check(ncclAllReduce(in->get(), out->get(), count, ncclBfloat16, ncclSum, g.comm(), s0),
                           "ncclAllReduce");
          },
          [] { return OkStatus(); });
      if (!us.ok()) return us.status();
      Status st;
      const int64_t wrong = CountWrong(out->get(), count, want, &st);
      TPT_RETURN_IF_ERROR(st);
      auto cell = gather(*us, wrong, bytes, n);
      if (!cell.ok()) return cell.status();
      row.nccl = *cell;
    }
    rows.push_back(row);
  }
  TPT_RETURN_IF_ERROR(g.Barrier());  // no rank unmaps a buffer a peer still reads
  return rows;
}

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
