// cuda_stub.cc: the CUDA backend's entry points in a build without CUDA.
#include "repro/allreduce_bench.h"
#include "repro/backend.h"
#include "repro/gpu_checks.h"

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

// The GPU parts of the box checks (gpu_checks.h).
namespace {
Status NotBuilt() {
  return UnavailableError("GPU support was not built into this tptriage (no nvcc/NCCL at build time): this check needs it");
}
}  // namespace
StatusOr<std::vector<GpuFacts>> GpuList(double) { return NotBuilt(); }
StatusOr<int> GpuDriverCudaVersion(double) { return NotBuilt(); }
Status GpuNcclBootstrap(const std::map<std::string, std::string>&, double) { return NotBuilt(); }
Status GpuTwoRanksOneGpu(int, double) { return NotBuilt(); }
StatusOr<std::vector<std::vector<int>>> GpuPeerMatrix(double) { return NotBuilt(); }
Status GpuIpcBetweenProcesses(double) { return NotBuilt(); }
StatusOr<std::string> GpuPeerCopy(double) { return NotBuilt(); }
StatusOr<int64_t> GpuCustomAllreduceWrong(int, double) { return NotBuilt(); }
StatusOr<CollectiveRun> GpuCollective(const std::string&, int64_t, int, const std::map<std::string, std::string>&, double) {
  return NotBuilt();
}

}  // namespace tpt::repro
