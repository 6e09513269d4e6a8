// sim_backend.cc: a DeviceBackend that keeps books instead of calling CUDA,
// with the memory figures measured on the H200 (anchors-allreduce.md §4.1).
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>
#include <thread>

#include "repro/backend.h"

namespace tpt::repro {

std::atomic<bool>& CancelFlag() {
  static std::atomic<bool> flag{false};
  return flag;
}

std::atomic<const char*>& CurrentStep() {
  static std::atomic<const char*> step{"start"};
  return step;
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
  StatusOr<MemInfo> GetMemInfo() override {
    // Per-process ranks may differ (real_ranks_free_skew_bytes): rank r sees r x skew less.
    const int64_t skew = layout_.colocated ? 0 : int64_t(layout_.rank) * d_.real_ranks_free_skew_bytes;
    return MemInfo{d_.total_bytes - used_ - skew, d_.total_bytes};
  }
  Status InitComm() override {
    if (d_.fail_step == "nccl_comm") return InternalError("simulated ncclCommInitRank failure: unhandled system error");
    return Charge("nccl", d_.nccl_bytes, &fixed_);
  }
  StatusOr<int64_t> AllReduceMin(int64_t v) override {
    auto all = Exchange(v);
    if (!all.ok()) return all.status();
    return *std::min_element(all->begin(), all->end());
  }
  StatusOr<std::vector<int64_t>> AllGather(int64_t v) override { return Exchange(v); }
  Status InitCustomAllreduce(int world, int64_t max_bytes) override {
    TPT_RETURN_IF_ERROR(Fault("custom_ar"));
    if (d_.fail_step == "custom_ar") return InternalError("simulated cudaIpcOpenMemHandle failure: peer access is not supported");
    // meta (Signal + tmp) + staging + 8 MiB rank_data, for every rank on this device.
    const int64_t per_rank = Round(2560 + max_bytes) + Round(max_bytes) + Round(8 << 20);
    return Charge("custom_ar", per_rank * (layout_.colocated ? world : 1), &released_);
  }
  Status Allocate(const std::string& tag, int64_t bytes, bool touch) override {
    TPT_RETURN_IF_ERROR(Fault(tag));
    TPT_RETURN_IF_ERROR(Charge(tag, bytes, &released_));
    by_tag_[tag] += Round(bytes);
    return OkStatus();
  }
  void Free(const std::string& tag) override {
    auto it = by_tag_.find(tag);
    if (it == by_tag_.end()) return;
    used_ -= it->second;
    released_ -= it->second;
    by_tag_.erase(it);
  }
  StatusOr<GraphResult> CaptureDecodeGraphs(const GraphSpec& spec) override {
    TPT_RETURN_IF_ERROR(Fault("cuda_graphs"));
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
    by_tag_.clear();
  }

 private:
  // Every real rank's `v`, in rank order: each rank writes its value to
  // `<id file>.simN.RANK` (whole, then renamed) and reads its peers' (N counts
  // the collectives, so every rank must call them in the same order, as with
  // NCCL). One rank (co-located mode) exchanges nothing.
  StatusOr<std::vector<int64_t>> Exchange(int64_t v) {
    const int n = layout_.colocated ? 1 : layout_.real_ranks;
    if (n <= 1) return std::vector<int64_t>{v};
    if (layout_.nccl_id_file.empty()) {
      return InvalidArgumentError("rank " + std::to_string(layout_.rank) + ": the simulated collectives of " +
                                  std::to_string(n) + " processes need a rendezvous file (TPT_REPRO_ID_FILE)");
    }
    const std::string base = layout_.nccl_id_file + ".sim" + std::to_string(collectives_++) + ".";
    const std::string mine = base + std::to_string(layout_.rank);
    {
      std::ofstream out(mine + ".tmp");
      out << v << "\n";
      if (!out) return InternalError("cannot write " + mine + ".tmp");
    }
    if (std::rename((mine + ".tmp").c_str(), mine.c_str()) != 0) return InternalError("cannot rename to " + mine);
    std::vector<int64_t> all(n);
    const auto t0 = std::chrono::steady_clock::now();
    for (int r = 0; r < n;) {
      std::ifstream in(base + std::to_string(r));
      if (in >> all[r]) {
        ++r;
        continue;
      }
      if (CancelFlag().load()) return CancelledError("simulated collective: " + CancelReason());
      if (std::chrono::steady_clock::now() - t0 > std::chrono::seconds(60)) {
        return DeadlineExceededError("rank " + std::to_string(layout_.rank) + ": rank " + std::to_string(r) +
                                     " did not join the simulated collective in 60 s");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return all;
  }
  Status Fault(const std::string& step) {
    if (layout_.rank == d_.die_rank && step == d_.die_step) raise(SIGKILL);
    for (double t = 0; t < d_.step_delay_s; t += 0.01) {
      if (CancelFlag().load()) return CancelledError(step + ": " + CancelReason());
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return OkStatus();
  }
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

  std::map<std::string, int64_t> by_tag_;  // what Allocate charged, by tag (Free)
  SimulatedDevice d_;
  RankLayout layout_;
  int64_t used_ = 0;
  int64_t fixed_ = 0;     // context + communicator: kept across runs
  int64_t released_ = 0;  // freed by Release()
  int collectives_ = 0;   // collectives called so far (names the exchange files)
};

}  // namespace

Status ParseSimulatedFaults(const char* fault, const char* delay, SimulatedDevice* d) {
  if (fault != nullptr && *fault) {
    const std::string f = fault;
    const size_t a = f.find(':'), b = f.find(':', a == std::string::npos ? a : a + 1);
    char* end = nullptr;
    const long rank = a == std::string::npos ? -1 : std::strtol(f.c_str() + a + 1, &end, 10);
    if (f.compare(0, a, "kill") != 0 || b == std::string::npos || rank < 0 || end != f.c_str() + b || b + 1 >= f.size()) {
      return InvalidArgumentError("TPT_REPRO_SIM_FAULT='" + f + "': expected kill:RANK:STEP");
    }
    d->die_rank = static_cast<int>(rank);
    d->die_step = f.substr(b + 1);
  }
  if (delay != nullptr && *delay) {
    char* end = nullptr;
    const double s = std::strtod(delay, &end);
    if (*end != '\0' || !(s >= 0 && s <= 60)) {
      return InvalidArgumentError(std::string("TPT_REPRO_SIM_DELAY='") + delay + "': expected seconds, 0..60");
    }
    d->step_delay_s = s;
  }
  return OkStatus();
}

std::unique_ptr<DeviceBackend> MakeSimulatedBackend(const SimulatedDevice& device) {
  return std::make_unique<SimulatedBackend>(device);
}

}  // namespace tpt::repro
