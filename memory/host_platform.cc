// host_platform.cc: Windows and WSL2 hosts, what CUDA's free memory means there.
//
// Sources (NVIDIA documentation, read through the docs corpus, 2026-12):
//   cuMemGetInfo (CUDA driver API; cuda-python's cuMemGetInfo_v2 page): the free memory is
//     "the amount of memory on the device that is free according to the OS".
//   nvmlDeviceGetMemoryInfo_v2 (NVML; cuda-python nvml pages): "Under WDDM most device memory
//     is allocated and managed on startup by Windows. Under Linux and Windows TCC, the
//     reported amount of used memory is equal to the sum of memory allocated by all active
//     channels on the device." So under WDDM neither NVML's used nor CUDA's free is the sum
//     of this launch's allocations: the OS's video memory manager, the desktop compositor
//     and every other program's Direct3D/CUDA memory count.
//   nvmlDeviceSetDriverModel / DriverModel: a GPU with a display attached must run WDDM;
//     TCC (deprecated) or MCDM otherwise. TurboMind from LMDeploy 0.8.0 needs CUDA memory
//     pools, which TCC lacks (NVIDIA/cuda-python#206: cuDeviceGetMemPool NOT_SUPPORTED in
//     TCC), so a TurboMind launch that starts on Windows runs under WDDM or MCDM.
//   CUDA on WSL user guide (docs.nvidia.com/cuda/wsl-user-guide): WSL2's CUDA is GPU
//     paravirtualization over the Windows host's WDDM driver, so the host's desktop and
//     programs share the card the Linux guest sees.
// What the servers then see: every one sizes its cache from that free memory, so the host's
// share comes out of the KV pool. TensorRT-LLM's PyTorch backend (tensorrt_llm/_torch/
// pyexecutor/_util.py KvCacheCreator.configure_kv_cache_capacity, a 1.x copy) counts
// extra_cost = (total - free) - torch's allocated bytes as "memory used outside torch", which
// on such a host includes the desktop's; TurboMind's BlockManager takes its ratio of
// cudaMemGetInfo's free (turbomind_startup.cc); vLLM and SGLang read torch.cuda.mem_get_info.
// None of these gives a figure before the launch: what the OS and the desktop hold depends on
// the displays, their resolution and what else runs, and can change between `nvidia-smi` and
// the launch. So the share is measured from public logs of such hosts that print the free
// memory at init (vLLM's "Free memory on device (free/total GiB) on startup", SGLang's "Load
// weight begin. avail mem=", torch.cuda.mem_get_info, an idle nvidia-smi): share = (the total
// the host reports - the CUDA context the plan charges for the card - the logged free) / that
// total (bench/host_share.py; the set, 13 logs of which 11 usable, is outside the repository, its
// rules and figures in memory/README.md). Windows and WSL2 report a GeForce card whole (the
// catalog's wddm_mib, which `plan --host` takes as the total), so the share is of the whole card.
// The fit half (n = 6: WSL2 RTX 3090 x2, RTX 4080, RTX 5090, an 8 GB card, Windows RTX 3090)
// held 2.5% to 9.4% of the card, median 4.7%; the point takes the 80th percentile, kHostShare =
// 6.3%, so that most such hosts are not promised memory they keep, and the range still runs from
// none to kHostAllowance of the card (an allowance, not a measurement: a log from the held-aside
// half, an RTX 4070 SUPER under WSL2 with TensorRT-LLM, held 10.8%). The plan still says its
// point is not reliable there; --free-at-init measured on the host pins it.
#include "memory/host_platform.h"

#include <cstdio>

#include "memory/memory_model.h"

namespace tpt::memory {
namespace {
constexpr double kHostShare = 0.063;     // the measured point (above)
constexpr double kHostAllowance = 0.15;  // the range's end

std::string Percent(double share) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f%%", share * 100);
  return buf;
}
}  // namespace

StatusOr<HostPlatform> ParseHostPlatform(std::string_view name) {
  if (name == "linux") return HostPlatform::kLinux;
  if (name == "windows") return HostPlatform::kWindows;
  if (name == "wsl" || name == "wsl2") return HostPlatform::kWsl;
  return InvalidArgumentError("--host '" + std::string(name) + "' is not known; use linux, windows or wsl");
}

std::string HostPlatformName(HostPlatform host) {
  switch (host) {
    case HostPlatform::kWindows: return "windows";
    case HostPlatform::kWsl: return "wsl";
    case HostPlatform::kLinux: break;
  }
  return "linux";
}

std::optional<HostUnsized> HostUnsizedMemory(HostPlatform host, double total_bytes) {
  if (host == HostPlatform::kLinux || !(total_bytes > 0)) return std::nullopt;
  HostUnsized u;
  u.point_bytes = kHostShare * total_bytes;
  u.high_bytes = kHostAllowance * total_bytes;
  const std::string name = HostPlatformName(host);
  u.point_why = "host " + name + ": free at init less " + FormatGiB(u.point_bytes) +
                " (" + Percent(kHostShare) + " of the card), what Windows and WSL2 hosts held at a launch's start in 6 public logs "
                "(2.5% to 9.4% of the whole card, median 4.7%; the point takes the 80th percentile: memory/README.md)";
  const std::string where =
      host == HostPlatform::kWindows
          ? "a Windows host: under WDDM the OS manages the card's memory and CUDA's free memory is what the OS "
            "reports (cuMemGetInfo), less the desktop, its compositor and every other program's allocations"
          : "a WSL2 host: its CUDA runs over the Windows host's WDDM driver (CUDA on WSL user guide), so the "
            "Windows desktop and programs share the card and CUDA's free memory is what that OS reports";
  u.why = where + "; no documented figure sizes it before the launch, so the KV figure above is not reliable: "
          "the point takes " + FormatGiB(u.point_bytes) + " (" + Percent(kHostShare) + " of the card, measured on such "
          "hosts) and the range below runs from none to " + FormatGiB(u.high_bytes) + " (" + Percent(kHostAllowance) +
          " of the card, an allowance); pass "
          "--free-at-init with CUDA's free memory on this host just before the launch (python -c \"import torch; "
          "print(torch.cuda.mem_get_info()[0])\") to pin it";
  return u;
}

}  // namespace tpt::memory
