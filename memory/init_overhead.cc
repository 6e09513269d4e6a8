// init_overhead.cc: what a rank holds before its weights, by card: the CUDA context
// and torch, NCCL's communicator, the custom all-reduce's buffers (memory_model.h
// InitOverheadBytes, NcclCommBytes, CustomAllReduceOn); the plan's free memory at init
// is the card's total less this.
#include <string_view>

#include "memory/memory_model.h"

namespace tpt::memory {

double NcclCommBytes(std::string_view arch, std::string_view interconnect) {
  // 558 MiB on NVLink Hopper/Blackwell (NVLS, more channels), 0.13 GiB elsewhere (L4 TP4,
  // "Init torch distributed ends. mem usage=0.13 GB").
  const bool big = arch.empty() || arch == "hopper" || arch == "blackwell";
  const bool nvlink = interconnect.empty() || interconnect == "nvlink";
  return nvlink && big ? kNcclCommBytes : 0.13 * kGiB;
}

bool CustomAllReduceOn(std::string_view interconnect, int tp, bool pcie_peer_access) {
  // vLLM/SGLang custom_all_reduce.py: world sizes 2, 4, 6, 8 only, and "Custom allreduce
  // is disabled because it's not supported on more than two PCIe-only GPUs" (world_size
  // > 2 and not fully_connected; vLLM 0.10.1.1 and 0.11.0 read). Two PCIe GPUs keep it only
  // where `_can_p2p` passes (CustomAllreduce.__init__, vLLM 0.8.5:141-150: "Custom allreduce
  // is disabled because your platform lacks GPU P2P capability or P2P test failed";
  // custom_all_reduce_utils.py gpu_p2p_access_check asks cudaDeviceCanAccessPeer, then
  // copies): GeForce cards have no peer access over PCIe (sglang#4814, two RTX 4090s: "peer
  // access is not supported between these two devices"; NVIDIA/nccl-tests#117, RTX 2080 Ti:
  // "CANNOT Access Peer"); a 3090's or 2080 Ti's NVLink bridge gives it, and is no input.
  const bool nvlink = interconnect.empty() || interconnect == "nvlink";
  return (tp == 2 || tp == 4 || tp == 6 || tp == 8) && (nvlink || (tp == 2 && pcie_peer_access));
}

double InitOverheadBytes(std::string_view arch, std::string_view interconnect, int tp, bool pcie_peer_access) {
  // CUDA context + torch: 620.8 MiB measured on H200 (Hopper/Blackwell data-centre parts);
  // about 0.29 GiB on Ada/Ampere PCIe cards (L4: 22.05 total - 21.63 free - 0.13 NCCL).
  // NCCL and the custom all-reduce (24 MiB when on): NcclCommBytes, CustomAllReduceOn.
  // ROCm (MI300X): 9.35 GiB between the card's 191.98 GiB and "Load weight begin. avail
  // mem=182.63" (corpus).
  if (arch == "cdna3") return 9.35 * kGiB;
  const bool big = arch.empty() || arch == "hopper" || arch == "blackwell";
  double bytes = big ? kTorchContextBytes : 0.29 * kGiB;
  if (tp > 1) bytes += NcclCommBytes(arch, interconnect);
  if (CustomAllReduceOn(interconnect, tp, pcie_peer_access)) bytes += kCustomAllReduceBytes;
  return bytes;
}

}  // namespace tpt::memory
