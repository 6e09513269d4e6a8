// nvml_dl.cc: see nvml_dl.h.
#include "repro/nvml_dl.h"

#include <dlfcn.h>

#include <mutex>
#include <string>

namespace tpt::repro {
namespace {

using nvmlReturn_t = int;
using nvmlDevice_t = void*;
constexpr nvmlReturn_t kNvmlSuccess = 0;
constexpr int kEccUncorrected = 1;     // NVML_MEMORY_ERROR_TYPE_UNCORRECTED
constexpr int kVolatileEcc = 0;        // NVML_VOLATILE_ECC
constexpr int kAggregateEcc = 1;       // NVML_AGGREGATE_ECC
constexpr int kRetiredPendingTrue = 1; // NVML_FEATURE_ENABLED

struct PciInfo {  // nvmlPciInfo_t (v3 layout, NVML >= R450)
  char bus_id_legacy[16];
  unsigned int domain, bus, device, pci_device_id, pci_subsystem_id;
  char bus_id[32];
};

struct FabricInfo {  // nvmlGpuFabricInfo_t (nvml.h, R550 on)
  unsigned char cluster_uuid[16];  // NVML_GPU_FABRIC_UUID_LEN
  nvmlReturn_t status;
  unsigned int clique_id;
  unsigned char state;             // nvmlGpuFabricState_t
};

struct Nvml {
  void* handle = nullptr;
  std::string error;
  nvmlReturn_t (*init)() = nullptr;
  nvmlReturn_t (*shutdown)() = nullptr;
  nvmlReturn_t (*count)(unsigned int*) = nullptr;
  nvmlReturn_t (*by_index)(unsigned int, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*name)(nvmlDevice_t, char*, unsigned int) = nullptr;
  nvmlReturn_t (*pci)(nvmlDevice_t, PciInfo*) = nullptr;
  nvmlReturn_t (*ecc)(nvmlDevice_t, int, int, unsigned long long*) = nullptr;
  nvmlReturn_t (*retired_pending)(nvmlDevice_t, int*) = nullptr;
  nvmlReturn_t (*remapped)(nvmlDevice_t, unsigned int*, unsigned int*, unsigned int*, unsigned int*) = nullptr;
  nvmlReturn_t (*gen)(nvmlDevice_t, unsigned int*) = nullptr;
  nvmlReturn_t (*gen_max)(nvmlDevice_t, unsigned int*) = nullptr;
  nvmlReturn_t (*width)(nvmlDevice_t, unsigned int*) = nullptr;
  nvmlReturn_t (*width_max)(nvmlDevice_t, unsigned int*) = nullptr;
  nvmlReturn_t (*cuda_version)(int*) = nullptr;
  nvmlReturn_t (*fabric)(nvmlDevice_t, FabricInfo*) = nullptr;
};

template <typename F>
void Bind(void* h, const char* sym, F* f) {
  *f = reinterpret_cast<F>(dlsym(h, sym));
}

Nvml& Load() {
  static Nvml n;
  static std::once_flag once;
  std::call_once(once, [] {
    n.handle = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (n.handle == nullptr) {
      n.error = std::string("NVML (libnvidia-ml.so.1, part of the NVIDIA driver) did not load: ") + dlerror();
      return;
    }
    Bind(n.handle, "nvmlInit_v2", &n.init);
    Bind(n.handle, "nvmlShutdown", &n.shutdown);
    Bind(n.handle, "nvmlDeviceGetCount_v2", &n.count);
    Bind(n.handle, "nvmlDeviceGetHandleByIndex_v2", &n.by_index);
    Bind(n.handle, "nvmlDeviceGetName", &n.name);
    Bind(n.handle, "nvmlDeviceGetPciInfo_v3", &n.pci);
    Bind(n.handle, "nvmlDeviceGetTotalEccErrors", &n.ecc);
    Bind(n.handle, "nvmlDeviceGetRetiredPagesPendingStatus", &n.retired_pending);
    Bind(n.handle, "nvmlDeviceGetRemappedRows", &n.remapped);
    Bind(n.handle, "nvmlDeviceGetCurrPcieLinkGeneration", &n.gen);
    Bind(n.handle, "nvmlDeviceGetMaxPcieLinkGeneration", &n.gen_max);
    Bind(n.handle, "nvmlDeviceGetCurrPcieLinkWidth", &n.width);
    Bind(n.handle, "nvmlDeviceGetMaxPcieLinkWidth", &n.width_max);
    Bind(n.handle, "nvmlSystemGetCudaDriverVersion_v2", &n.cuda_version);
    Bind(n.handle, "nvmlDeviceGetGpuFabricInfo", &n.fabric);
    if (!n.init || !n.shutdown || !n.count || !n.by_index) {
      n.error = "NVML loaded but lacks nvmlInit_v2/nvmlDeviceGetCount_v2 (a driver older than R450?)";
      n.handle = nullptr;
    }
  });
  return n;
}

}  // namespace

StatusOr<std::vector<GpuHealth>> NvmlHealthOfAll() {
  Nvml& n = Load();
  if (n.handle == nullptr) return UnavailableError(n.error);
  if (n.init() != kNvmlSuccess) return UnavailableError("nvmlInit failed (no NVIDIA driver running?)");
  std::vector<GpuHealth> out;
  unsigned int count = 0;
  n.count(&count);
  for (unsigned int i = 0; i < count && i < 64; ++i) {
    nvmlDevice_t d = nullptr;
    if (n.by_index(i, &d) != kNvmlSuccess) continue;
    GpuHealth h;
    char name[96] = {0};
    if (n.name && n.name(d, name, sizeof name) == kNvmlSuccess) h.name = name;
    PciInfo pci{};
    if (n.pci && n.pci(d, &pci) == kNvmlSuccess) h.bus_id = pci.bus_id;
    unsigned long long v = 0;
    if (n.ecc && n.ecc(d, kEccUncorrected, kVolatileEcc, &v) == kNvmlSuccess) h.ecc_uncorrected_volatile = static_cast<int64_t>(v);
    if (n.ecc && n.ecc(d, kEccUncorrected, kAggregateEcc, &v) == kNvmlSuccess) h.ecc_uncorrected_aggregate = static_cast<int64_t>(v);
    int pending = 0;
    if (n.retired_pending && n.retired_pending(d, &pending) == kNvmlSuccess) h.retired_pending = pending == kRetiredPendingTrue;
    unsigned int corr = 0, unc = 0, is_pending = 0, failure = 0;
    if (n.remapped && n.remapped(d, &corr, &unc, &is_pending, &failure) == kNvmlSuccess) {
      h.remap_pending = static_cast<int>(is_pending);
      h.remap_failure = static_cast<int>(failure);
    }
    unsigned int x = 0;
    if (n.gen && n.gen(d, &x) == kNvmlSuccess) h.pcie_gen = static_cast<int>(x);
    if (n.gen_max && n.gen_max(d, &x) == kNvmlSuccess) h.pcie_gen_max = static_cast<int>(x);
    if (n.width && n.width(d, &x) == kNvmlSuccess) h.pcie_width = static_cast<int>(x);
    if (n.width_max && n.width_max(d, &x) == kNvmlSuccess) h.pcie_width_max = static_cast<int>(x);
    FabricInfo f{};
    if (n.fabric && n.fabric(d, &f) == kNvmlSuccess) {
      h.fabric_state = f.state;
      h.fabric_status = f.status;
    }
    out.push_back(h);
  }
  n.shutdown();
  return out;
}

StatusOr<int> NvmlDriverCudaVersion() {
  Nvml& n = Load();
  if (n.handle == nullptr) return UnavailableError(n.error);
  if (n.cuda_version == nullptr) return UnavailableError("NVML lacks nvmlSystemGetCudaDriverVersion_v2");
  if (n.init() != kNvmlSuccess) return UnavailableError("nvmlInit failed (no NVIDIA driver running?)");
  int v = 0;
  const nvmlReturn_t r = n.cuda_version(&v);
  n.shutdown();
  if (r != kNvmlSuccess) return UnavailableError("nvmlSystemGetCudaDriverVersion_v2 failed");
  return v;
}

}  // namespace tpt::repro
