// cuda_stub.cc: the CUDA backend's entry points in a build without CUDA.
#include "repro/allreduce_bench.h"
#include "repro/backend.h"

namespace tpt::repro {

bool CudaBackendBuilt() { return false; }
int VisibleGpuCount() { return 0; }
std::string GpuName() { return ""; }

StatusOr<std::unique_ptr<DeviceBackend>> MakeCudaBackend() {
  return UnavailableError(
      "GPU support was not built into this tptriage (no nvcc/NCCL at build time); --dry-run and "
      "--backend simulated work; rebuild where /usr/local/cuda has nvcc and NCCL for GPU runs");
}

StatusOr<std::vector<BenchRow>> RunAllreduceBench(const BenchOptions&) {
  return UnavailableError("--bench-allreduce needs GPU support, which was not built into this tptriage");
}

StatusOr<std::vector<BenchRow>> RunAllreduceBenchRank(const BenchOptions&, const RankLayout&) {
  return UnavailableError("--bench-allreduce needs GPU support, which was not built into this tptriage");
}

}  // namespace tpt::repro
