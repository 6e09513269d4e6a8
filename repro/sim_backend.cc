// sim_backend.cc: a DeviceBackend that keeps books instead of calling CUDA,
// with the memory figures measured on the H200 (anchors-allreduce.md §4.1).
#include <csignal>
#include <map>
#include <string>

#include "repro/backend.h"

namespace tpt::repro {

std::atomic<bool>& CancelFlag() {
  static std::atomic<bool> flag{false};
  return flag;
}

std::atomic<int>& CancelSignal() {
  static std::atomic<int> signo{0};
  return signo;
}

std::string CancelReason() {
  const int sig = CancelSignal().load();
  if (sig == SIGTERM) return "interrupted (SIGTERM)";
  if (sig == SIGINT) return "interrupted (SIGINT, Ctrl-C)";
  return sig > 0 ? "interrupted (signal " + std::to_string(sig) + ")" : "interrupted";
}

namespace {

class SimulatedBackend : public DeviceBackend {
 public:
  explicit SimulatedBackend(const SimulatedDevice& d) : d_(d) {}

  std::string Name() const override { return "simulated"; }
  std::vector<std::string> Banner() const override {
    return {"rank " + std::to_string(layout_.rank) + ": simulated device (" + std::to_string(d_.total_bytes >> 20) +
            " MiB total), no GPU used"};
  }

  Status InitContext(const RankLayout& layout) override {
    layout_ = layout;
    used_ = d_.other_processes_bytes;
    return Charge("context", d_.context_bytes, &fixed_);
  }
  StatusOr<MemInfo> GetMemInfo() override { return MemInfo{d_.total_bytes - used_, d_.total_bytes}; }
  Status InitComm() override {
    if (d_.fail_step == "nccl_comm") return InternalError("simulated ncclCommInitRank failure: unhandled system error");
    return Charge("nccl", d_.nccl_bytes, &fixed_);
  }
  StatusOr<int64_t> AllReduceMin(int64_t v) override { return v; }
  StatusOr<std::vector<int64_t>> AllGather(int64_t v) override { return std::vector<int64_t>{v}; }
  Status InitCustomAllreduce(int world, int64_t max_bytes) override {
    if (d_.fail_step == "custom_ar") return InternalError("simulated cudaIpcOpenMemHandle failure: peer access is not supported");
    // meta (Signal + tmp) + staging + 8 MiB rank_data, for every rank on this device.
    const int64_t per_rank = Round(2560 + max_bytes) + Round(max_bytes) + Round(8 << 20);
    return Charge("custom_ar", per_rank * (layout_.colocated ? world : 1), &released_);
  }
  Status Allocate(const std::string& tag, int64_t bytes, bool touch) override {
    return Charge(tag, bytes, &released_);
  }
  StatusOr<GraphResult> CaptureDecodeGraphs(const GraphSpec& spec) override {
    if (d_.hang_in_graphs) {
      return DeadlineExceededError("graph replay: still running after " + std::to_string(spec.deadline_s) +
                                   " s (deadline " + std::to_string(spec.deadline_s) + " s); a rank is not progressing");
    }
    TPT_RETURN_IF_ERROR(Charge("cuda_graphs", d_.graph_bytes_per_bs * int64_t(spec.batch_sizes.size()), &released_));
    GraphResult r;
    r.graphs = static_cast<int>(spec.batch_sizes.size());
    r.allreduces_per_step = spec.layers;
    r.custom_ar_calls = spec.custom_allreduce ? spec.layers : 0;
    r.nccl_calls = spec.custom_allreduce ? 0 : spec.layers;
    r.note = "simulated";
    return r;
  }
  void Release() override {
    used_ -= released_;
    released_ = 0;
  }

 private:
  int64_t Round(int64_t b) const { return (b + d_.granularity - 1) / d_.granularity * d_.granularity; }
  Status Charge(const std::string& tag, int64_t bytes, int64_t* bucket) {
    const int64_t r = Round(bytes);
    if (r > d_.total_bytes - used_) {
      return UnavailableError("simulated cudaMalloc(" + std::to_string(bytes) + " B) for " + tag +
                              ": cudaErrorMemoryAllocation (out of memory), " +
                              std::to_string((d_.total_bytes - used_) >> 20) + " MiB free");
    }
    used_ += r;
    *bucket += r;
    return OkStatus();
  }

  SimulatedDevice d_;
  RankLayout layout_;
  int64_t used_ = 0;
  int64_t fixed_ = 0;     // context + communicator: kept across runs
  int64_t released_ = 0;  // freed by Release()
};

}  // namespace

std::unique_ptr<DeviceBackend> MakeSimulatedBackend(const SimulatedDevice& device) {
  return std::make_unique<SimulatedBackend>(device);
}

}  // namespace tpt::repro
