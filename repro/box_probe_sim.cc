// box_probe_sim.cc: a box in software for the checks' tests (box_check.h
// SimulatedBox): what the kernel, the driver, NVML and NCCL would answer.
#include <nlohmann/json.hpp>

#include "repro/box_check.h"

namespace tpt::repro {
namespace {

class SimulatedProbe : public BoxProbe {
 public:
  explicit SimulatedProbe(const SimulatedBox& b) : b_(b) {}
  std::string Name() const override { return "simulated"; }
  std::vector<NetInterface> Interfaces() override { return b_.interfaces; }
  std::vector<std::string> IbDevices() override { return b_.ib_devices; }
  StatusOr<int64_t> ShmFreeBytes() override { return b_.shm_bytes; }
  Status CreateShmSegments(int n, int64_t bytes) override {
    int64_t left = b_.shm_bytes;
    for (int i = 0; i < n; ++i) {
      if (bytes > left) {
        return InternalError("segment " + std::to_string(i + 1) + " of " + std::to_string(n) +
                                      ": posix_fallocate: No space left on device (NCCL: 'failed to extend "
                                      "/dev/shm/nccl-XXXXXX to " + std::to_string(bytes) + " bytes')");
      }
      left -= bytes;
    }
    return OkStatus();
  }
  StatusOr<DiskSpace> Space(const std::string& path) override {
    return DiskSpace{b_.disk_path_missing ? "/" : path, b_.disk_free_bytes, 1ll << 40, b_.disk_free_inodes, 1 << 24};
  }
  StatusOr<int> DriverCudaVersion() override { return b_.driver_cuda; }
  StatusOr<std::vector<GpuFacts>> Gpus() override {
    std::vector<GpuFacts> g;
    for (int i = 0; i < b_.gpus; ++i) {
      char bus[32];
      std::snprintf(bus, sizeof bus, "00000000:%02X:00.0", 0x18 + i);
      g.push_back({i, b_.gpu_name, bus, b_.sm});
    }
    return g;
  }
  StatusOr<std::vector<GpuHealth>> Health() override {
    auto g = Gpus();
    std::vector<GpuHealth> out;
    for (const auto& x : *g) {
      GpuHealth h;
      h.bus_id = x.bus_id;
      h.name = x.name;
      h.ecc_uncorrected_volatile = b_.ecc_uncorrected;
      h.ecc_uncorrected_aggregate = b_.ecc_uncorrected;
      h.remap_pending = b_.remap_pending;
      h.remap_failure = 0;
      h.pcie_gen = 5, h.pcie_gen_max = 5, h.pcie_width = b_.pcie_width, h.pcie_width_max = 16;
      h.fabric_state = b_.fabric_state;
      h.fabric_status = b_.fabric_status;
      out.push_back(h);
    }
    return out;
  }
  Status NcclBootstrap(const std::map<std::string, std::string>& env, double) override {
    auto it = env.find("NCCL_SOCKET_IFNAME");
    std::vector<std::string> names;
    for (const auto& i : b_.interfaces) {
      if (i.up && !i.address.empty()) names.push_back(i.name);
    }
    if (NcclSelectInterfaces(names, it == env.end() ? "" : it->second).empty()) {
      return InternalError("ncclCommInitRank: unhandled system error (NCCL WARN Bootstrap : no socket interface found)");
    }
    return OkStatus();
  }
  Status TwoRanksOneGpu(int device, double) override {
    if (device >= b_.gpus) return UnavailableError("no GPU " + std::to_string(device));
    return InvalidArgumentError("ncclCommInitRank: invalid usage (NCCL WARN Duplicate GPU detected : rank 1 and rank 0 "
                                "both on CUDA device 18000)");
  }
  StatusOr<std::vector<std::vector<int>>> PeerMatrix() override {
    std::vector<std::vector<int>> m(b_.gpus, std::vector<int>(b_.gpus, 1));
    return m;
  }
  Status IpcBetweenProcesses(double) override {
    if (b_.p2p_broken) return InternalError("the reader saw 4096 of 4194304 words wrong");
    return OkStatus();
  }
  StatusOr<std::string> PeerCopy(double) override {
    if (b_.gpus < 2) return UnavailableError("peer copies need 2 GPUs; this box has " + std::to_string(b_.gpus));
    if (b_.p2p_broken) return std::string("0->1: 1048576 of 2097152 words wrong");
    return std::string();
  }
  StatusOr<int64_t> CustomAllreduceWrong(int, double) override { return b_.p2p_broken ? 512 : 0; }
  StatusOr<CollectiveRun> Collective(const std::string&, int64_t bytes, int ranks, const std::map<std::string, std::string>&,
                                     double deadline_s) override {
    CollectiveRun r;
    r.ranks = ranks;
    if (ranks > b_.gpus) return UnavailableError("needs " + std::to_string(ranks) + " GPUs");
    if (b_.collective_hangs) {
      r.completed = false;
      r.seconds = deadline_s;
      r.note = "pair 0-1 did not complete within the deadline; communicators aborted";
      return r;
    }
    r.completed = true;
    r.seconds = bytes / 300e9;
    r.busbw_gbs = 300;
    return r;
  }
  Status BindPort(int port) override {
    if (b_.port_taken && port != 0) return InternalError("Address already in use (EADDRINUSE)");
    return OkStatus();
  }

 private:
  SimulatedBox b_;
};

}  // namespace

Status SimulatedBoxFromJson(const std::string& text, SimulatedBox* b) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return InvalidArgumentError("TPT_REPRO_SIM_BOX: expected a JSON object");
  try {
    if (j.contains("shm_bytes")) b->shm_bytes = j["shm_bytes"].get<int64_t>();
    if (j.contains("driver_cuda")) b->driver_cuda = j["driver_cuda"].get<int>();
    if (j.contains("gpus")) b->gpus = j["gpus"].get<int>();
    if (j.contains("sm")) b->sm = j["sm"].get<int>();
    if (j.contains("gpu_name")) b->gpu_name = j["gpu_name"].get<std::string>();
    if (j.contains("ecc_uncorrected")) b->ecc_uncorrected = j["ecc_uncorrected"].get<int64_t>();
    if (j.contains("remap_pending")) b->remap_pending = j["remap_pending"].get<int>();
    if (j.contains("pcie_width")) b->pcie_width = j["pcie_width"].get<int>();
    if (j.contains("fabric_state")) b->fabric_state = j["fabric_state"].get<int>();
    if (j.contains("fabric_status")) b->fabric_status = j["fabric_status"].get<int>();
    if (j.contains("disk_free_bytes")) b->disk_free_bytes = j["disk_free_bytes"].get<int64_t>();
    if (j.contains("disk_free_inodes")) b->disk_free_inodes = j["disk_free_inodes"].get<int64_t>();
    if (j.contains("disk_path_missing")) b->disk_path_missing = j["disk_path_missing"].get<bool>();
    if (j.contains("p2p_broken")) b->p2p_broken = j["p2p_broken"].get<bool>();
    if (j.contains("collective_hangs")) b->collective_hangs = j["collective_hangs"].get<bool>();
    if (j.contains("port_taken")) b->port_taken = j["port_taken"].get<bool>();
    if (j.contains("ib_devices")) b->ib_devices = j["ib_devices"].get<std::vector<std::string>>();
    if (j.contains("interfaces")) {
      b->interfaces.clear();
      for (const auto& i : j["interfaces"]) {
        NetInterface n;
        n.name = i.value("name", "");
        n.address = i.value("address", "");
        n.up = i.value("up", true);
        n.loopback = n.name == "lo";
        b->interfaces.push_back(n);
      }
    }
  } catch (const nlohmann::json::exception& e) {
    return InvalidArgumentError(std::string("TPT_REPRO_SIM_BOX: a key has the wrong type (") + e.what() + ")");
  }
  return OkStatus();
}

std::unique_ptr<BoxProbe> MakeSimulatedProbe(const SimulatedBox& box) { return std::make_unique<SimulatedProbe>(box); }

}  // namespace tpt::repro
