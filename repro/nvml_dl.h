// nvml_dl.h: NVML loaded with dlopen at run time (libnvidia-ml.so.1, which
// the driver installs), read only: the few queries hardware_fault's check
// and nvls_fabric_manager's (the GPUs' fabric registration) need. No NVML
// header: the entry points are declared here with the driver's ABI (nvml.h
// of CUDA 12/13; stable since R450, the fabric query since R550).
//
//   auto gpus = tpt::repro::NvmlHealthOfAll();   // UNAVAILABLE without a driver
#pragma once

#include <vector>

#include "base/status.h"
#include "repro/box_check.h"

namespace tpt::repro {

// Every GPU the driver has (NVML ignores CUDA_VISIBLE_DEVICES), read only.
StatusOr<std::vector<GpuHealth>> NvmlHealthOfAll();
// The driver's CUDA version (nvmlSystemGetCudaDriverVersion_v2): 13000.
StatusOr<int> NvmlDriverCudaVersion();

}  // namespace tpt::repro
