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
#include "repro/launch.h"
#include "repro/process_group.h"

namespace tpt::repro {
namespace {

using kernels::DeviceBuffer;
using kernels::Stream;

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
  ~CudaBackend() override { Release(); }

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
    if (layout.shared_gpu) {
      // Ranks' processes share this GPU: each sees an equal share of it (after
      // a reserve for every rank's context and communicator), not the device.
      int sharers = 0, gpus = 1;
      cudaGetDeviceCount(&gpus);
      for (int r = 0; r < layout.world; ++r) sharers += (r % std::max(gpus, 1)) == layout.local_rank;
      sharers = std::max(sharers, 1);
      share_ = (static_cast<int64_t>(prop_.totalGlobalMem) - sharers * (int64_t(3) << 29)) / sharers;
    }
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
    if (share_ > 0) {
      // Shared GPU: this rank's share less what it allocated (never more than the device has).
      return MemInfo{std::min<int64_t>(static_cast<int64_t>(free), share_ - tracked_), share_};
    }
    return MemInfo{static_cast<int64_t>(free), static_cast<int64_t>(total)};
  }

  Status InitComm() override {
    TPT_RETURN_IF_ERROR(group_pg_.Init(layout_, stream_.get()));
    comm_up_ = true;
    return OkStatus();
  }

  StatusOr<int64_t> AllReduceMin(int64_t v) override { return group_pg_.AllReduceMin(v); }

  StatusOr<std::vector<int64_t>> AllGather(int64_t v) override {
    std::vector<int64_t> out(group_pg_.size());
    TPT_RETURN_IF_ERROR(group_pg_.AllGatherBytes(&v, sizeof v, out.data()));
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
    tracked_ += Rounded(own_.meta.bytes()) + Rounded(own_.staging.bytes()) + Rounded(own_.rank_data.bytes());
    // Exchange IPC handles of meta and staging over NCCL (all-gather of bytes).
    cudaIpcMemHandle_t mine[2];
    TPT_CUDA_RETURN(cudaIpcGetMemHandle(&mine[0], own_.meta.get()));
    TPT_CUDA_RETURN(cudaIpcGetMemHandle(&mine[1], own_.staging.get()));
    std::vector<cudaIpcMemHandle_t> all(2 * world);
    TPT_RETURN_IF_ERROR(group_pg_.AllGatherBytes(mine, sizeof mine, all.data()));
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
                                                own_.rank_data.bytes(), static_cast<size_t>(max_bytes),
                                                BlocksPerRank());
    if (!car.ok()) return car.status();
    car_ = std::move(*car);
    return OkStatus();
  }

  Status Allocate(const std::string& tag, int64_t bytes, bool touch) override {
    if (bytes <= 0) return OkStatus();
    if (share_ > 0 && tracked_ + Rounded(bytes) > share_) {
      return UnavailableError(tag + ": cudaMalloc(" + std::to_string(bytes) + " B): out of memory in this rank's share (" +
                              std::to_string(share_ >> 20) + " MiB) of the GPU its processes share, " +
                              std::to_string((share_ - tracked_) >> 20) + " MiB left");
    }
    auto b = DeviceBuffer::Allocate(static_cast<size_t>(bytes));
    if (!b.ok()) return UnavailableError(tag + ": " + b.status().message());
    if (touch) {
      TPT_CUDA_RETURN(cudaMemsetAsync(b->get(), 0, b->bytes(), stream_.get()));
      TPT_RETURN_IF_ERROR(kernels::WaitStream(stream_.get(), 120, &CancelFlag(), "writing " + tag));
    }
    tracked_ += Rounded(b->bytes());
    allocations_.push_back(std::move(*b));
    allocation_tags_.push_back(tag);
    return OkStatus();
  }

  void Free(const std::string& tag) override {
    if (Stuck()) return;  // cudaFree would wait for the stuck kernel (Release says what happens then)
    for (size_t i = allocations_.size(); i-- > 0;) {
      if (allocation_tags_[i] != tag) continue;
      tracked_ -= Rounded(static_cast<int64_t>(allocations_[i].bytes()));
      allocations_.erase(allocations_.begin() + static_cast<std::ptrdiff_t>(i));
      allocation_tags_.erase(allocation_tags_.begin() + static_cast<std::ptrdiff_t>(i));
    }
  }

  StatusOr<GraphResult> CaptureDecodeGraphs(const GraphSpec& spec) override;

  bool Stuck() const override {
    auto busy = [](cudaStream_t st) { return st != nullptr && cudaStreamQuery(st) == cudaErrorNotReady; };
    if (comm_up_ && !group_pg_.ok()) return true;  // aborted or left behind: a peer is gone or stuck
    if (comm_up_ && group_pg_.size() > 1 && !DeadPeers().empty()) return true;  // its collectives never finish
    if (busy(stream_.get())) return true;
    if (group_ != nullptr) {
      for (int r = 0; r < group_->world(); ++r) {
        if (busy(group_->stream(r))) return true;
      }
    }
    return false;
  }

  void Release() override {
    if (Stuck()) {
      // cudaFree would wait for the stuck kernel: hand everything to a heap
      // object that is never freed; the driver reclaims it at process exit.
      struct Abandoned {
        std::vector<DeviceBuffer> a, b;
        std::unique_ptr<kernels::ColocatedGroup> g;
        kernels::OwnBuffers own;
        std::vector<IpcMapping> m1, m2;
      };
      new Abandoned{std::move(allocations_), std::move(activations_), std::move(group_), std::move(own_),
                    std::move(peer_maps_), std::move(graph_peer_maps_)};
      execs_.clear();
      events_.clear();
      car_.reset();
      tracked_ = 0;
      return;
    }
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
    allocation_tags_.clear();
    tracked_ = 0;
  }

 private:
  static int64_t Rounded(int64_t b) { return (b + (int64_t(2) << 20) - 1) / (int64_t(2) << 20) * (int64_t(2) << 20); }
  Status NcclDone(ncclResult_t r, const char* what) { return group_pg_.Check(r, what); }
  Status WaitStreamAndComm(cudaStream_t s, double deadline_s, const std::string& what) {
    return group_pg_.Wait(s, deadline_s, what);
  }
  Status AllGatherBytes(const void* mine, size_t bytes, void* out) { return group_pg_.AllGatherBytes(mine, bytes, out); }
  // Blocks per rank: all of them with a GPU each; with ranks' processes on
  // one GPU their kernels time-slice, so a cap changes nothing but is kept
  // for when they run concurrently (MPS).
  int BlocksPerRank() const {
    if (!layout_.shared_gpu) return kernels::kMaxBlocks;
    return kernels::MaxBlocksPerRank(prop_.multiProcessorCount, layout_.world);
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
  ProcessGroup group_pg_;
  bool comm_up_ = false;
  int64_t share_ = 0;    // shared GPU: this rank's share of it (0: the whole device is ours)
  int64_t tracked_ = 0;  // bytes this rank allocated (what its share is charged)
  std::vector<DeviceBuffer> allocations_;
  std::vector<std::string> allocation_tags_;  // Allocate's tag of each of allocations_
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
          st = NcclDone(ncclAllReduce(h, o, count, ncclBfloat16, ncclSum, group_pg_.comm(), stream_of(r)), "ncclAllReduce");
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
                   : layout_.shared_gpu ? "ranks' processes share one GPU and time-slice: not a timing"
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
