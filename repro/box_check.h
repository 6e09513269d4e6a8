// box_check.h: runs a BoxPlan (box_plan.h) on this box and judges it in
// repro's one vocabulary (runner.h Verdict: reproduced / not reproduced /
// inconclusive, then the fix passes / fails / ...; the same exit codes).
// The box is reached through BoxProbe: the real one (MakeHostProbe: the
// network interfaces, /dev/shm, NVML loaded at run time, ports, and the GPU
// checks of gpu_checks.h in CUDA builds) or a simulated box for tests.
// Read-only towards the machine: nothing here changes a GPU setting; shared
// memory segments and ports are released before a step returns.
//
//   auto probe = tpt::repro::MakeHostProbe();
//   tpt::repro::BoxReport rep = tpt::repro::RunBoxCheck(plan, *probe, {});
//   std::cout << tpt::repro::RenderBoxText(rep);
//   return tpt::repro::ExitCodeOf(rep.verdict);
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "repro/box_plan.h"
#include "repro/runner.h"

namespace tpt::repro {

struct NetInterface {
  std::string name;
  std::string address;  // "10.0.0.2", "fe80::1"; "" without an address
  bool ipv6 = false;
  bool up = true;
  bool loopback = false;
};

struct GpuFacts {
  int index = 0;
  std::string name, bus_id;  // "NVIDIA H200", "0000:18:00.0"
  int sm = 0;                // 90
};

// What NVML says about one GPU (-1: NVML could not tell).
struct GpuHealth {
  std::string bus_id, name;
  int64_t ecc_uncorrected_volatile = -1, ecc_uncorrected_aggregate = -1;
  int retired_pending = -1;           // pages waiting for retirement (pre-Ampere)
  int remap_pending = -1, remap_failure = -1;  // row remapping (Ampere and later)
  int pcie_gen = 0, pcie_gen_max = 0, pcie_width = 0, pcie_width_max = 0;
  // The GPU's registration with the NVLink fabric (nvmlDeviceGetGpuFabricInfo, R550 on): what
  // `nvidia-smi -q` prints under Fabric. kFabric*; -1: NVML could not say.
  int fabric_state = -1;
  int fabric_status = 0;  // its nvmlReturn_t once completed (0: success)
};
// nvmlGpuFabricState_t (nvml.h): NVLS needs every GPU registered by the fabric manager.
inline constexpr int kFabricNotSupported = 0;  // no NVLink fabric (PCIe, or NVLink without NVSwitch)
inline constexpr int kFabricNotStarted = 1;
inline constexpr int kFabricInProgress = 2;
inline constexpr int kFabricCompleted = 3;

struct CollectiveRun {
  bool completed = false;
  double seconds = 0;
  double busbw_gbs = 0;   // nccl-tests' bus bandwidth
  int ranks = 0;
  std::string note;
};

// A filesystem as statvfs reads it, for the nearest directory of a path this
// box has.
struct DiskSpace {
  std::string checked;  // the path read: the one asked for, or its nearest ancestor here
  int64_t avail_bytes = 0, total_bytes = 0;
  int64_t avail_inodes = 0, total_inodes = 0;  // total 0: the filesystem counts none (btrfs)
};

// The machine, as the checks see it.
class BoxProbe {
 public:
  virtual ~BoxProbe() = default;
  virtual std::string Name() const = 0;  // "host" or "simulated"
  virtual std::vector<NetInterface> Interfaces() = 0;
  virtual std::vector<std::string> IbDevices() = 0;  // /sys/class/infiniband
  // Free bytes of /dev/shm (statvfs).
  virtual StatusOr<int64_t> ShmFreeBytes() = 0;
  // statvfs of `path`, or of its nearest ancestor that exists here.
  virtual StatusOr<DiskSpace> Space(const std::string& path) = 0;
  // Creates `n` segments of `bytes` in /dev/shm as NCCL does (open, posix_fallocate,
  // mmap) and removes them all; the error names the segment that failed.
  virtual Status CreateShmSegments(int n, int64_t bytes) = 0;
  virtual StatusOr<int> DriverCudaVersion() = 0;  // 13000
  virtual StatusOr<std::vector<GpuFacts>> Gpus() = 0;
  virtual StatusOr<std::vector<GpuHealth>> Health() = 0;
  // A communicator of one rank with `env` applied (bootstrap, interface choice).
  virtual Status NcclBootstrap(const std::map<std::string, std::string>& env, double deadline_s) = 0;
  // Two processes, one communicator, both on device `device`: NCCL's answer.
  virtual Status TwoRanksOneGpu(int device, double deadline_s) = 0;
  virtual StatusOr<std::vector<std::vector<int>>> PeerMatrix() = 0;
  // A buffer exported through CUDA IPC by one process, opened, checked and
  // written by another, checked back by the first.
  virtual Status IpcBetweenProcesses(double deadline_s) = 0;
  // Copies between every pair of GPUs with a data check; "" when all are right.
  virtual StatusOr<std::string> PeerCopy(double deadline_s) = 0;
  // Elements the custom all-reduce got wrong over `ranks` ranks (co-located).
  virtual StatusOr<int64_t> CustomAllreduceWrong(int ranks, double deadline_s) = 0;
  virtual StatusOr<CollectiveRun> Collective(const std::string& op, int64_t bytes, int ranks,
                                             const std::map<std::string, std::string>& env, double deadline_s) = 0;
  // Binds `port` on all addresses and releases it.
  virtual Status BindPort(int port) = 0;
};

std::unique_ptr<BoxProbe> MakeHostProbe();

// A box in software. Defaults: a container with 64 MiB of /dev/shm, eth0 +
// lo, one H200 (sm_90) on a CUDA 13.0 driver, NVML clean, PCIe Gen5 x16.
// TPT_REPRO_SIM_BOX (a JSON object of these keys) changes them in tests.
struct SimulatedBox {
  std::vector<NetInterface> interfaces = {{"lo", "127.0.0.1", false, true, true}, {"eth0", "10.0.0.2", false, true, false}};
  std::vector<std::string> ib_devices;
  int64_t shm_bytes = 64ll << 20;
  int driver_cuda = 13000;
  int gpus = 1;
  int sm = 90;
  std::string gpu_name = "NVIDIA H200";
  int64_t ecc_uncorrected = 0;
  int remap_pending = 0;
  int pcie_width = 16;
  int fabric_state = -1;       // GpuHealth's, on every GPU
  int fabric_status = 0;
  int64_t disk_free_bytes = 100ll << 30;  // every path's filesystem
  int64_t disk_free_inodes = 1 << 20;
  bool disk_path_missing = false;  // the path is not on this box (its nearest ancestor: /)
  bool p2p_broken = false;     // peer copies come back wrong
  bool collective_hangs = false;
  bool port_taken = false;
};
Status SimulatedBoxFromJson(const std::string& text, SimulatedBox* box);
std::unique_ptr<BoxProbe> MakeSimulatedProbe(const SimulatedBox& box);

struct BoxReport {
  std::string probe;
  std::vector<std::string> banner;
  RunResult original;          // the steps as the log's configuration runs them
  std::optional<RunResult> fix;
  Verdict verdict;
  std::vector<std::string> notes;  // what needs more GPUs than this box has, ...
  double seconds = 0;
};

struct BoxOptions {
  bool check_fix = true;
  double deadline_s = 60;
};

BoxReport RunBoxCheck(const BoxPlan& plan, BoxProbe& probe, const BoxOptions& opt);

std::string RenderBoxText(const BoxReport& r);
nlohmann::json RenderBoxJson(const BoxReport& r, const BoxPlan& plan);

}  // namespace tpt::repro
