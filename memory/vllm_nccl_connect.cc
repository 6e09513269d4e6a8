// vllm_nccl_connect.cc: see vllm_nccl_connect.h.
#include "memory/vllm_nccl_connect.h"

#include "memory/memory_model.h"

namespace tpt::memory {

namespace {
// A receive connection: ncclRecvMem + LL 0.5 + LL128 4.69 + Simple 4 MiB, aligned to 2 MiB;
// a send connection on Hopper: ncclSendMem aligned to 2 MiB.
constexpr double kRecvConnBytes = 10.0 * kMiB;
constexpr double kSendConnBytes = 2.0 * kMiB;
}  // namespace

int VllmNcclChannels(const std::string& gpu_name) {
  // Hopper SXM parts with 18 NVLinks to NVSwitches (the catalog's names, without the CLI's
  // "[assumed: ...]" or "[total ...]" note).
  const std::string name = gpu_name.substr(0, gpu_name.find(" ["));
  if (name == "H100 SXM 80GB" || name == "H200 141GB" || name == "H20 96GB" || name == "H20 141GB") {
    return 24;
  }
  return 0;
}

double VllmNcclConnectBytes(const VllmNcclConnectInput& in) {
  if (in.tp < 2) return 0;
  auto v = ParseVersion(in.version);
  if (!v.ok() || CompareVersions(*v, {0, 10, 2}) >= 0) return 0;
  const int channels = VllmNcclChannels(in.gpu_name);
  const int peers = in.tp >= 3 ? 2 : 1;  // a middle rank of the chain: prev and next
  return channels * peers * (kRecvConnBytes + kSendConnBytes);
}

}  // namespace tpt::memory
