// cuda_backend.cc: DeviceBackend on a real GPU: CUDA runtime, NCCL, and the
// custom all-reduce of kernels/. One process runs one rank (per-GPU mode) or
// plays all ranks on one device (co-located mode).
//
// Safety: every wait polls cudaStreamQuery / ncclCommGetAsyncError against a
// deadline and the Ctrl-C flag, and aborts the communicator on timeout; all
// memory is owned by RAII holders and freed on every path; GPU settings are
// never touched; NCCL_NVLS_ENABLE=0 is forced before NCCL initialises.
#include <nccl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include "kernels/cuda_check.h"
#include "kernels/custom_allreduce.h"
#include "repro/backend.h"

namespace tpt::repro {
namespace {

using kernels::DeviceBuffer;
using kernels::Stream;

Status NcclStatus(ncclResult_t r, const char* what, int rank, ncclComm_t comm) {
  if (r == ncclSuccess || r == ncclInProgress) return OkStatus();
  std::string msg = std::string(what) + " failed on rank " + std::to_string(rank) + ": " + ncclGetErrorString(r);
  if (comm != nullptr) {
    const char* last = ncclGetLastError(comm);
    if (last != nullptr && *last) msg += " (" + std::string(last) + ")";
  }
  return InternalError(msg);
}
// The communicator is non-blocking (so a stuck init can be aborted): a call
// may return ncclInProgress before its work is on the stream, so every call
// is followed by polling until the communicator reports ncclSuccess.
#define TPT_NCCL_RETURN(expr) TPT_RETURN_IF_ERROR(NcclDone((expr), #expr))

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// A peer's buffer mapped through CUDA IPC; closed on destruction.
class IpcMapping {
 public:
  IpcMapping() = default;
  explicit IpcMapping(void* p) : p_(p) {}
  IpcMapping(IpcMapping&& o) noexcept : p_(std::exchange(o.p_, nullptr)) {}
  IpcMapping& operator=(IpcMapping&& o) noexcept {
    std::swap(p_, o.p_);
    return *this;
  }
  ~IpcMapping() {
    if (p_) cudaIpcCloseMemHandle(p_);
  }
  void* get() const { return p_; }

 private:
  void* p_ = nullptr;
};

class CudaBackend : public DeviceBackend {
 public:
  ~CudaBackend() override {
    Release();
    if (comm_ != nullptr) {
      if (comm_broken_) {
        ncclCommAbort(comm_);
      } else {
        ncclCommDestroy(comm_);
      }
    }
  }

  std::string Name() const override { return "cuda"; }
  std::vector<std::string> Banner() const override { return banner_; }

  Status InitContext(const RankLayout& layout) override {
    layout_ = layout;
    setenv("NCCL_NVLS_ENABLE", "0", 1);  // never NVLink multicast (KINDS.md)
    TPT_CUDA_RETURN(cudaSetDevice(layout.local_rank));
    TPT_CUDA_RETURN(cudaFree(nullptr));  // create the context now
    TPT_CUDA_RETURN(cudaGetDeviceProperties(&prop_, layout.local_rank));
    char bus[32] = {0};
    cudaDeviceGetPCIBusId(bus, sizeof bus, layout.local_rank);
    char host[256] = {0};
    gethostname(host, sizeof host - 1);
    int rt = 0, drv = 0, nccl = 0;
    cudaRuntimeGetVersion(&rt);
    cudaDriverGetVersion(&drv);
    ncclGetVersion(&nccl);
    auto s = Stream::Create();
    if (!s.ok()) return s.status();
    stream_ = std::move(*s);
    char line[512];
    std::snprintf(line, sizeof line, "rank %d%s: host %s pid %d device %d bus %s %s (%zu MiB, %d SMs, cc %d.%d)",
                  layout.rank, layout.colocated ? " (measured; co-located ranks share this device)" : "", host,
                  static_cast<int>(getpid()), layout.local_rank, bus, prop_.name, prop_.totalGlobalMem >> 20,
                  prop_.multiProcessorCount, prop_.major, prop_.minor);
    banner_.push_back(line);
    std::snprintf(line, sizeof line, "CUDA runtime %d, driver %d, NCCL %d, NCCL_NVLS_ENABLE=0", rt, drv, nccl);
    banner_.push_back(line);
    return OkStatus();
  }

  StatusOr<MemInfo> GetMemInfo() override {
    size_t free = 0, total = 0;
    TPT_CUDA_RETURN(cudaMemGetInfo(&free, &total));
    return MemInfo{static_cast<int64_t>(free), static_cast<int64_t>(total)};
  }

  Status InitComm() override {
    const int n = layout_.colocated ? 1 : layout_.world;
    const int rank = layout_.colocated ? 0 : layout_.rank;
    ncclUniqueId id;
    TPT_RETURN_IF_ERROR(GetUniqueId(&id));
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;  // so a stuck init can be aborted
    TPT_NCCL_RETURN(ncclCommInitRankConfig(&comm_, n, id, rank, &config));
    TPT_RETURN_IF_ERROR(WaitNccl("ncclCommInitRank", 120));
    auto scratch = DeviceBuffer::Allocate(4096);
    if (!scratch.ok()) return scratch.status();
    scratch_ = std::move(*scratch);
    return OkStatus();
  }

  StatusOr<int64_t> AllReduceMin(int64_t v) override {
    TPT_CUDA_RETURN(cudaMemcpyAsync(scratch_.get(), &v, sizeof v, cudaMemcpyHostToDevice, stream_.get()));
    TPT_NCCL_RETURN(ncclAllReduce(scratch_.get(), scratch_.get(), 1, ncclInt64, ncclMin, comm_, stream_.get()));
    TPT_RETURN_IF_ERROR(WaitStreamAndComm(stream_.get(), 60, "all_reduce(MIN)"));
    int64_t out = 0;
    TPT_CUDA_RETURN(cudaMemcpy(&out, scratch_.get(), sizeof out, cudaMemcpyDeviceToHost));
    return out;
  }

  StatusOr<std::vector<int64_t>> AllGather(int64_t v) override {
    const int n = layout_.colocated ? 1 : layout_.world;
    std::vector<int64_t> out(n);
    TPT_RETURN_IF_ERROR(AllGatherBytes(&v, sizeof v, out.data()));
    return out;
  }

  Status InitCustomAllreduce(int world, int64_t max_bytes) override {
    if (layout_.colocated) {
      auto g = kernels::ColocatedGroup::Create(world, static_cast<size_t>(max_bytes), prop_.multiProcessorCount);
      if (!g.ok()) return g.status();
      group_ = std::move(*g);
      return OkStatus();
    }
    auto own = kernels::OwnBuffers::Allocate(static_cast<size_t>(max_bytes));
    if (!own.ok()) return own.status();
    own_ = std::move(*own);
    // Exchange IPC handles of meta and staging over NCCL (all-gather of bytes).
    cudaIpcMemHandle_t mine[2];
    TPT_CUDA_RETURN(cudaIpcGetMemHandle(&mine[0], own_.meta.get()));
    TPT_CUDA_RETURN(cudaIpcGetMemHandle(&mine[1], own_.staging.get()));
    std::vector<cudaIpcMemHandle_t> all(2 * world);
    TPT_RETURN_IF_ERROR(AllGatherBytes(mine, sizeof mine, all.data()));
    std::vector<void*> metas(world), stagings(world);
    for (int r = 0; r < world; ++r) {
      if (r == layout_.rank) {
        metas[r] = own_.meta.get();
        stagings[r] = own_.staging.get();
        continue;
      }
      for (int k = 0; k < 2; ++k) {
        void* p = nullptr;
        TPT_CUDA_RETURN(cudaIpcOpenMemHandle(&p, all[2 * r + k], cudaIpcMemLazyEnablePeerAccess));
        peer_maps_.emplace_back(p);
        (k == 0 ? metas : stagings)[r] = p;
      }
    }
    auto car = kernels::CustomAllreduce::Create(world, layout_.rank, metas, stagings, own_.rank_data.get(),
                                                own_.rank_data.bytes(), static_cast<size_t>(max_bytes), kernels::kMaxBlocks);
    if (!car.ok()) return car.status();
    car_ = std::move(*car);
    return OkStatus();
  }

  Status Allocate(const std::string& tag, int64_t bytes, bool touch) override {
    if (bytes <= 0) return OkStatus();
    auto b = DeviceBuffer::Allocate(static_cast<size_t>(bytes));
    if (!b.ok()) return UnavailableError(tag + ": " + b.status().message());
    if (touch) {
      TPT_CUDA_RETURN(cudaMemsetAsync(b->get(), 0, b->bytes(), stream_.get()));
      TPT_RETURN_IF_ERROR(kernels::WaitStream(stream_.get(), 120, &CancelFlag(), "writing " + tag));
    }
    allocations_.push_back(std::move(*b));
    return OkStatus();
  }

  StatusOr<GraphResult> CaptureDecodeGraphs(const GraphSpec& spec) override;

  void Release() override {
    for (auto e : execs_) cudaGraphExecDestroy(e);
    execs_.clear();
    for (auto e : events_) cudaEventDestroy(e);
    events_.clear();
    activations_.clear();
    group_.reset();
    car_.reset();
    peer_maps_.clear();
    graph_peer_maps_.clear();
    own_ = kernels::OwnBuffers{};
    allocations_.clear();
  }

 private:
  Status GetUniqueId(ncclUniqueId* id) {
    if (layout_.colocated || layout_.world == 1 || std::getenv("NCCL_COMM_ID") != nullptr) {
      // NCCL_COMM_ID (launcher mode): every rank derives the same id locally.
      TPT_NCCL_RETURN(ncclGetUniqueId(id));
      return OkStatus();
    }
    if (layout_.nccl_id_file.empty()) {
      return InvalidArgumentError("rank " + std::to_string(layout_.rank) +
                                  ": no way to share the NCCL id: set MASTER_ADDR and MASTER_PORT (or NCCL_COMM_ID)");
    }
    const std::string& path = layout_.nccl_id_file;
    if (layout_.rank == 0) {
      TPT_NCCL_RETURN(ncclGetUniqueId(id));
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
      if (CancelFlag().load()) return CancelledError("waiting for the NCCL id from rank 0: interrupted");
      if (Now() - t0 > 60) {
        return DeadlineExceededError("rank " + std::to_string(layout_.rank) + ": no NCCL id from rank 0 in " + path +
                                     " after 60 s; did rank 0 start?");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }

  Status NcclDone(ncclResult_t r, const char* what) {
    if (r == ncclInProgress) return WaitNccl(what, 60);
    return NcclStatus(r, what, layout_.rank, comm_);
  }

  // Polls the communicator until it leaves ncclInProgress.
  Status WaitNccl(const std::string& what, double deadline_s) {
    const double t0 = Now();
    for (;;) {
      ncclResult_t st = ncclSuccess;
      ncclResult_t r = ncclCommGetAsyncError(comm_, &st);
      if (r != ncclSuccess) st = r;
      if (st == ncclSuccess) return OkStatus();
      if (st != ncclInProgress) {
        comm_broken_ = true;
        return NcclStatus(st, what.c_str(), layout_.rank, comm_);
      }
      if (CancelFlag().load() || Now() - t0 > deadline_s) {
        ncclCommAbort(comm_);
        comm_ = nullptr;
        if (CancelFlag().load()) return CancelledError(what + ": interrupted; communicator aborted");
        return DeadlineExceededError(what + ": no progress after " + std::to_string(deadline_s) +
                                     " s; communicator aborted (is every rank running?)");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }

  // Waits for a stream that runs NCCL work: stream done, or an async NCCL
  // error, or the deadline (then the communicator is aborted).
  Status WaitStreamAndComm(cudaStream_t s, double deadline_s, const std::string& what) {
    const double t0 = Now();
    for (;;) {
      ncclResult_t st = ncclSuccess;
      if (comm_ != nullptr) ncclCommGetAsyncError(comm_, &st);
      if (st != ncclSuccess && st != ncclInProgress) {
        comm_broken_ = true;
        return NcclStatus(st, what.c_str(), layout_.rank, comm_);
      }
      cudaError_t e = cudaStreamQuery(s);
      if (e == cudaSuccess && st == ncclSuccess) return OkStatus();  // InProgress: work may not be enqueued yet
      if (e != cudaSuccess && e != cudaErrorNotReady) return kernels::CudaStatus(e, what.c_str(), __FILE__, __LINE__);
      if (CancelFlag().load() || Now() - t0 > deadline_s) {
        if (comm_ != nullptr) ncclCommAbort(comm_);
        comm_ = nullptr;
        if (CancelFlag().load()) return CancelledError(what + ": interrupted; communicator aborted");
        return DeadlineExceededError(what + ": still running after " + std::to_string(deadline_s) +
                                     " s on rank " + std::to_string(layout_.rank) + "; communicator aborted");
      }
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
  }

  // ncclAllGather of `bytes` from every real rank into `out` (host).
  Status AllGatherBytes(const void* mine, size_t bytes, void* out) {
    const int n = layout_.colocated ? 1 : layout_.world;
    auto buf = DeviceBuffer::Allocate(bytes * (n + 1));
    if (!buf.ok()) return buf.status();
    char* send = static_cast<char*>(buf->get()) + bytes * n;
    TPT_CUDA_RETURN(cudaMemcpyAsync(send, mine, bytes, cudaMemcpyHostToDevice, stream_.get()));
    TPT_NCCL_RETURN(ncclAllGather(send, buf->get(), bytes, ncclChar, comm_, stream_.get()));
    TPT_RETURN_IF_ERROR(WaitStreamAndComm(stream_.get(), 60, "all_gather"));
    TPT_CUDA_RETURN(cudaMemcpy(out, buf->get(), bytes * n, cudaMemcpyDeviceToHost));
    return OkStatus();
  }

  // Per-GPU mode: exchange the captured inputs' IPC handles and register them.
  Status RegisterGraphInputsOverIpc() {
    const auto pending = car_->pending_graph_inputs();
    const int world = layout_.world;
    std::vector<int64_t> counts(world);
    int64_t mine_n = static_cast<int64_t>(pending.size());
    TPT_RETURN_IF_ERROR(AllGatherBytes(&mine_n, sizeof mine_n, counts.data()));
    for (int64_t c : counts) {
      if (c != mine_n) return InternalError("ranks captured different numbers of custom all-reduce inputs");
    }
    if (mine_n == 0) return OkStatus();
    std::vector<cudaIpcMemHandle_t> mine(pending.size());
    for (size_t k = 0; k < pending.size(); ++k) {
      // Our graph inputs are whole allocations of ours, so offset 0.
      TPT_CUDA_RETURN(cudaIpcGetMemHandle(&mine[k], const_cast<void*>(pending[k])));
    }
    std::vector<cudaIpcMemHandle_t> all(pending.size() * world);
    TPT_RETURN_IF_ERROR(AllGatherBytes(mine.data(), mine.size() * sizeof(cudaIpcMemHandle_t), all.data()));
    std::vector<std::vector<const void*>> peers(world);
    for (int r = 0; r < world; ++r) {
      for (size_t k = 0; k < pending.size(); ++k) {
        if (r == layout_.rank) {
          peers[r].push_back(pending[k]);
          continue;
        }
        void* p = nullptr;
        TPT_CUDA_RETURN(cudaIpcOpenMemHandle(&p, all[r * pending.size() + k], cudaIpcMemLazyEnablePeerAccess));
        graph_peer_maps_.emplace_back(p);
        peers[r].push_back(p);
      }
    }
    return car_->RegisterGraphBuffers(peers);
  }

  RankLayout layout_;
  cudaDeviceProp prop_{};
  std::vector<std::string> banner_;
  Stream stream_;
  ncclComm_t comm_ = nullptr;
  bool comm_broken_ = false;
  DeviceBuffer scratch_;
  std::vector<DeviceBuffer> allocations_;
  // Custom all-reduce: co-located group, or this rank's buffers + IPC peers.
  std::unique_ptr<kernels::ColocatedGroup> group_;
  kernels::OwnBuffers own_;
  std::vector<IpcMapping> peer_maps_, graph_peer_maps_;
  std::unique_ptr<kernels::CustomAllreduce> car_;
  // Graphs.
  std::vector<DeviceBuffer> activations_;
  std::vector<cudaGraphExec_t> execs_;
  std::vector<cudaEvent_t> events_;
};

StatusOr<GraphResult> CudaBackend::CaptureDecodeGraphs(const GraphSpec& spec) {
  using kernels::DType;
  GraphResult res;
  const double t0 = Now();
  const bool co = layout_.colocated;
  const bool custom = spec.custom_allreduce && (co ? group_ != nullptr : car_ != nullptr);
  // Ranks whose kernels run in this process.
  const int here = co ? (custom ? group_->world() : 1) : 1;
  int max_bs = 1;
  for (int bs : spec.batch_sizes) max_bs = std::max(max_bs, bs);
  const size_t max_elems = size_t(max_bs) * size_t(spec.hidden);
  // Per rank: h (the all-reduce input, registered once) and o (its output).
  for (int r = 0; r < 2 * here; ++r) {
    auto b = DeviceBuffer::Allocate(max_elems * 2);
    if (!b.ok()) return b.status();
    TPT_CUDA_RETURN(cudaMemset(b->get(), 0, b->bytes()));
    activations_.push_back(std::move(*b));
  }
  auto stream_of = [&](int r) { return co && custom ? group_->stream(r) : stream_.get(); };
  auto car_of = [&](int r) -> kernels::CustomAllreduce& { return co ? group_->rank(r) : *car_; };
  const int world = layout_.world;
  cudaStream_t s0 = stream_of(0);
  for (int i = 0; i < 2 * kernels::kMaxRanks + 1; ++i) {
    cudaEvent_t e;
    TPT_CUDA_RETURN(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    events_.push_back(e);
  }
  cudaGraphExec_t largest = nullptr;
  int largest_bs = 0;
  for (int bs : spec.batch_sizes) {
    const size_t count = size_t(bs) * size_t(spec.hidden);
    const size_t bytes = count * 2;
    const bool use_custom = custom && bytes <= size_t(spec.custom_allreduce_max_bytes);
    const kernels::Algo algo = kernels::ServerDefaultAlgo(world, bytes);
    TPT_CUDA_RETURN(cudaStreamBeginCapture(s0, cudaStreamCaptureModeThreadLocal));
    Status st;
    TPT_CUDA_RETURN(cudaEventRecord(events_[0], s0));
    for (int r = 1; r < here; ++r) TPT_CUDA_RETURN(cudaStreamWaitEvent(stream_of(r), events_[0], 0));
    for (int layer = 0; layer < spec.layers && st.ok(); ++layer) {
      for (int r = 0; r < here && st.ok(); ++r) {
        void* h = activations_[2 * r].get();
        void* o = activations_[2 * r + 1].get();
        st = kernels::CudaStatus(kernels::LaunchDecodeLayer(DType::kBFloat16, layer == 0 ? h : o, h, count, stream_of(r)),
                                 "decode layer", __FILE__, __LINE__);
        if (!st.ok()) break;
        if (use_custom) {
          st = car_of(r).AllReduce(h, o, count, DType::kBFloat16, algo, stream_of(r));
        } else if (!co || r == 0) {  // co-located: only the measured rank has a (1-rank) communicator
          st = NcclDone(ncclAllReduce(h, o, count, ncclBfloat16, ncclSum, comm_, stream_of(r)), "ncclAllReduce");
        }
      }
    }
    for (int r = 1; r < here; ++r) {
      cudaEventRecord(events_[r], stream_of(r));
      cudaStreamWaitEvent(s0, events_[r], 0);
    }
    cudaGraph_t graph = nullptr;
    cudaError_t end = cudaStreamEndCapture(s0, &graph);
    if (!st.ok()) {
      if (graph) cudaGraphDestroy(graph);
      return st;
    }
    TPT_CUDA_RETURN(end);
    if (use_custom) {
      TPT_RETURN_IF_ERROR(co ? group_->RegisterCapturedBuffers() : RegisterGraphInputsOverIpc());
    }
    cudaGraphExec_t exec = nullptr;
    cudaError_t inst = cudaGraphInstantiate(&exec, graph, 0);
    cudaGraphDestroy(graph);
    TPT_CUDA_RETURN(inst);
    execs_.push_back(exec);
    // Warm-up replay, as the servers do after capture.
    TPT_CUDA_RETURN(cudaGraphLaunch(exec, s0));
    TPT_RETURN_IF_ERROR(WaitStreamAndComm(s0, spec.deadline_s, "replay of the decode graph bs=" + std::to_string(bs)));
    ++res.graphs;
    res.custom_ar_calls = use_custom ? spec.layers : 0;
    res.nccl_calls = use_custom ? 0 : spec.layers;
    if (bs >= largest_bs) {
      largest_bs = bs;
      largest = exec;
    }
  }
  res.capture_s = Now() - t0;
  res.allreduces_per_step = spec.layers;
  if (largest != nullptr) {
    cudaEvent_t a, b;
    cudaEventCreate(&a);
    cudaEventCreate(&b);
    cudaEventRecord(a, s0);
    const int reps = 5;
    for (int i = 0; i < reps; ++i) cudaGraphLaunch(largest, s0);
    cudaEventRecord(b, s0);
    Status w = WaitStreamAndComm(s0, spec.deadline_s, "timed replays");
    float ms = 0;
    if (w.ok()) cudaEventElapsedTime(&ms, a, b);
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    TPT_RETURN_IF_ERROR(w);
    res.replay_us = ms * 1000.0 / reps;
  }
  char note[256];
  std::snprintf(note, sizeof note, "bs %d step replays in %.0f us (%s)", largest_bs, res.replay_us,
                co ? (custom ? "all ranks' kernels on this GPU: not an NVLink timing" : "rank 0 only, 1-rank NCCL")
                   : "one GPU per rank");
  res.note = note;
  return res;
}

}  // namespace

bool CudaBackendBuilt() { return true; }

int VisibleGpuCount() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return n;
}

std::string GpuName() {
  cudaDeviceProp p{};
  if (VisibleGpuCount() == 0 || cudaGetDeviceProperties(&p, 0) != cudaSuccess) return "";
  return std::string(p.name) + " (" + std::to_string(p.totalGlobalMem >> 20) + " MiB, " +
         std::to_string(p.multiProcessorCount) + " SMs)";
}

StatusOr<std::unique_ptr<DeviceBackend>> MakeCudaBackend() {
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess || n == 0) {
    return UnavailableError(std::string("no CUDA device here (cudaGetDeviceCount: ") +
                            (e == cudaSuccess ? "0 devices" : cudaGetErrorString(e)) +
                            "); use --dry-run or --backend simulated");
  }
  return std::unique_ptr<DeviceBackend>(new CudaBackend());
}

}  // namespace tpt::repro
