// vllm_nccl_connect.cc: see vllm_nccl_connect.h.
#include "memory/vllm_nccl_connect.h"

#include "memory/memory_model.h"

namespace tpt::memory {

namespace {
// One channel's connection to one peer, a receive and a send side: 12 MiB either way.
// Hopper (no P2P read): receive = ncclRecvMem + LL 0.5 + LL128 4.69 + Simple 4 MiB -> 10 MiB,
// send = ncclSendMem -> 2 MiB. Ampere sm80 pairs read (paths.cc:365): Simple moves to the
// sender, receive = ncclRecvMem + LL + LL128 -> 6 MiB, send = ncclSendMem + Simple -> 6 MiB.
constexpr double kChannelPeerBytes = 12.0 * kMiB;

std::string CardName(const std::string& gpu_name) { return gpu_name.substr(0, gpu_name.find(" [")); }

bool IsHopperNvSwitchPart(const std::string& name) {
  return name == "H100 SXM 80GB" || name == "H200 141GB" || name == "H20 96GB" || name == "H20 141GB";
}
}  // namespace

int VllmNcclChannels(const std::string& gpu_name) {
  // The catalog's names, without the CLI's "[assumed: ...]" or "[total ...]" note.
  const std::string name = CardName(gpu_name);
  // Hopper SXM parts with 18 NVLinks to NVSwitches, and A100 SXM4 with 12 (HGX A100 8-GPU).
  if (IsHopperNvSwitchPart(name)) return 24;
  // An A100 named without SXM may be the PCIe card (memory_model.h GpuFormFactorOpen).
  if ((name == "A100 SXM 80GB" || name == "A100 SXM 40GB") && gpu_name.find(kGpuFormFactorOpen) == std::string::npos) {
    return 24;
  }
  return 0;
}

double VllmNcclConnectBytes(const VllmNcclConnectInput& in) {
  if (in.tp < 2) return 0;
  auto v = ParseVersion(in.version);
  if (!v.ok()) return 0;
  const int channels = VllmNcclChannels(in.gpu_name);
  if (CompareVersions(*v, {0, 10, 2}) >= 0) {
    // Runtime connect: the ring alone, one receive and one send connection a channel at any
    // TP. On Hopper at 3 or more GPUs the first all-gather may take NVLS instead: not derived.
    if (in.tp >= 3 && IsHopperNvSwitchPart(CardName(in.gpu_name))) return 0;
    return channels * kChannelPeerBytes;
  }
  const int peers = in.tp >= 3 ? 2 : 1;  // a middle rank of the chain: prev and next
  return channels * peers * kChannelPeerBytes;
}

}  // namespace tpt::memory
