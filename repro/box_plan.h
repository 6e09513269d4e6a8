// box_plan.h: the plan of a check for a root cause this box can settle
// without replaying the server's memory (checkability.h kBoxCheck):
// shm_too_small, nccl_network_config, duplicate_gpu, custom_allreduce_failure,
// p2p_topology_problem, nccl_timeout_hang, collective_desync, nccl_error,
// cuda_driver_mismatch, unsupported_gpu_arch, hardware_fault, port_in_use,
// nvls_fabric_manager, disk_full.
// Every figure says where it came from: the log, an environment dump, the
// GPU catalogue, NCCL's or the server's default, or assumed (then the flag
// that sets it is named once, in `asked`).
//
//   auto plan = tpt::repro::BoxPlanFromAnalysis(analysis_json, events_json, "server.log");
//   std::cout << tpt::repro::DescribeBoxPlan(*plan);     // --dry-run
//   auto rep = tpt::repro::RunBoxCheck(*plan, probe, {});  // box_check.h
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "repro/repro_plan.h"

namespace tpt::repro {

// Check steps, in the order they run (ids in box_check.cc).
inline constexpr const char* kCheckInterfaces = "interfaces";
inline constexpr const char* kCheckIbHcas = "ib_hcas";
inline constexpr const char* kCheckBootstrap = "nccl_bootstrap";
inline constexpr const char* kCheckShm = "shm_segments";
inline constexpr const char* kCheckDuplicateGpu = "duplicate_gpu";
inline constexpr const char* kCheckPeerMatrix = "peer_matrix";
inline constexpr const char* kCheckIpc = "ipc_between_processes";
inline constexpr const char* kCheckPeerCopy = "peer_copy";
inline constexpr const char* kCheckCustomAr = "custom_allreduce";
inline constexpr const char* kCheckCollective = "collective";
inline constexpr const char* kCheckDriver = "driver_cuda";
inline constexpr const char* kCheckArch = "compute_capability";
inline constexpr const char* kCheckNvml = "nvml_health";
inline constexpr const char* kCheckPort = "port_bind";
inline constexpr const char* kCheckFabric = "nvlink_fabric";
inline constexpr const char* kCheckDisk = "disk_space";

struct BoxPlan {
  std::string source;      // input name
  std::string root_cause;
  std::string framework, version, gpu;
  int world = 1;           // ranks of the failing communicator
  std::map<std::string, std::string> env;  // NCCL_*, CUDA_*, TORCH_NCCL_*, MASTER_* as the log shows them
  std::vector<PlanFigure> figures;
  std::vector<std::string> steps;          // kCheck*, in order
  std::vector<std::string> asked;          // "--shm-size-needed 147MiB (assumed: ...)": a figure the log lacks
  std::string failure_message;             // the log's line
  std::string log_verdict;                 // analyze's one-line verdict (names the rank that stopped)
  std::string fix;                         // what the fix run changes, for a person
  std::map<std::string, std::string> fix_env;  // environment of the fix run

  // Typed parameters of the steps (0 / empty: not known).
  int64_t shm_segment_bytes = 0;  // one NCCL SHM segment
  int shm_segments = 0;           // segments the ranks of one host create
  double shm_segments_per_rank = 0;  // SHM connections a rank opens (the log's 'via SHM' lines, or assumed)
  bool shm_channels_assumed = true;  // no 'via SHM' line and no NCCL_MIN_NCHANNELS gave the count
  std::string shm_count_how, shm_count_source;  // how the count was had, and from where (the plan's figure)
  std::vector<int> built_archs;   // sm_XX the kernels or wheel were built for (75, 80, 90...)
  int log_gpu_sm = 0;             // the log's GPU's compute capability x10 (75 = 7.5)
  int required_cuda = 0;          // CUDA version the runtime or wheel needs, x1000+x10 (12080 = 12.8)
  int log_driver_cuda = 0;        // the driver's CUDA version the log shows (same encoding)
  std::string bus_id;             // the GPU the log names (hardware_fault)
  int port = 0;                   // port_in_use
  std::string disk_path;          // disk_full: the path the write failed on
  int disk_errno = 0;             // 28 ENOSPC, 122 EDQUOT (a quota statvfs does not show)
  std::string collective = "all_reduce";
  int64_t collective_bytes = 0;
  double deadline_s = 60;
};

// The plan for `analysis`'s primary diagnosis (analyze's JSON) and the log's
// events (`tptriage events` records: env_var, nccl_net, shm_error, ...; may
// be empty). Error when the root cause is not a kBoxCheck one.
StatusOr<BoxPlan> BoxPlanFromAnalysis(const nlohmann::json& analysis, const nlohmann::json& events,
                                      const std::string& name);

// Flags that set figures the log lacked ("--shm-size-needed", "--port", ...).
struct BoxOverrides {
  std::optional<int> world;
  std::optional<int64_t> shm_needed_bytes;
  std::optional<int> port;
  std::optional<std::string> bus_id;
  std::optional<std::string> disk_path;
  std::optional<int> required_cuda;            // 12080
  std::optional<std::vector<int>> built_archs;  // 80, 90
};
void ApplyBoxOverrides(const BoxOverrides& o, BoxPlan* plan);

// NCCL's interface selection (misc/socket.cc ncclFindInterfaces): the
// NCCL_SOCKET_IFNAME list ("eth", "^docker,lo", "=eth0") against the names;
// without one, "ib*" first, then anything but docker*/lo/virbr*, then
// docker*, then lo. Returns the names NCCL would use, in order.
std::vector<std::string> NcclSelectInterfaces(const std::vector<std::string>& names, const std::string& ifname_env);

// "12.8" / "12080" / "cu128" -> 12080; 0 when not a CUDA version.
int ParseCudaVersion(const std::string& text);
std::string FormatCudaVersion(int v);  // 12080 -> "12.8"

nlohmann::json BoxPlanToJson(const BoxPlan& p);
std::string DescribeBoxPlan(const BoxPlan& p);

}  // namespace tpt::repro
