// gpu_checks.h: the GPU parts of the box checks (box_check.h), each run in
// child processes so that this process never initialises CUDA (a forked
// child of a CUDA process cannot use CUDA) and so that a hang ends at the
// deadline by SIGKILL, the driver taking back whatever the child held.
// Built with CUDA (gpu_checks.cc); without it every call is UNAVAILABLE
// (cuda_stub.cc). NCCL_NVLS_ENABLE=0 in every child.
//
//   auto gpus = tpt::repro::GpuList(30);
//   Status s = tpt::repro::GpuTwoRanksOneGpu(0, 60);   // NCCL's refusal
#pragma once

#include <map>
#include <string>
#include <vector>

#include "base/status.h"
#include "repro/box_check.h"

namespace tpt::repro {

StatusOr<std::vector<GpuFacts>> GpuList(double deadline_s);
StatusOr<int> GpuDriverCudaVersion(double deadline_s);
Status GpuNcclBootstrap(const std::map<std::string, std::string>& env, double deadline_s);
Status GpuTwoRanksOneGpu(int device, double deadline_s);
StatusOr<std::vector<std::vector<int>>> GpuPeerMatrix(double deadline_s);
Status GpuIpcBetweenProcesses(double deadline_s);
StatusOr<std::string> GpuPeerCopy(double deadline_s);
StatusOr<int64_t> GpuCustomAllreduceWrong(int ranks, double deadline_s);
StatusOr<CollectiveRun> GpuCollective(const std::string& op, int64_t bytes, int ranks,
                                      const std::map<std::string, std::string>& env, double deadline_s);

}  // namespace tpt::repro
