// vllm_fi_allreduce.h: the FlashInfer all-reduce fusion workspace vLLM creates at TP > 1
// from 0.16 (its all-reduce + RMSNorm fusion pass, on by default at -O2 on Hopper and
// datacenter Blackwell): device memory outside torch's allocator, allocated while the
// profiling run compiles the model, so it is part of the logged non-torch increase.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace tpt::memory {

struct VllmFiArWorkspaceInput {
  std::string version;  // vLLM version
  int tp = 1, pp = 1, dp = 1;
  int gpu_sm = 0;                  // compute capability x10 (catalog "sm"): 90, 100, 103...
  std::string gpu_name;            // catalog name (H100 NVL / H200 NVL: NVLink bridges, no NVSwitch)
  std::string gpu_interconnect;    // "nvlink" | "pcie"
  int64_t hidden = 0;              // model hidden size
  int dtype_bytes = 2;             // model dtype
  int64_t max_num_batched_tokens = 8192;
  bool enforce_eager = false;      // no torch.compile, no fusion pass
};

struct VllmFiArWorkspace {
  bool created = false;
  int64_t max_token_num = 0;
  double bytes = 0;          // per rank, at the priced multicast granularity
  double bytes_min = 0;      // per rank, at the 2 MiB minimum granularity
  std::string arithmetic;    // how the bytes were reached, for the plan's assumptions
};

// Read at vLLM b92ef9ec5~1 (0.21-era main) and FlashInfer v0.6.8.post1 (the pin of
// requirements/cuda.txt then; v0.6.3 of 0.16 allocates the same way):
// - config/vllm.py enable_allreduce_rms_fusion (OPTIMIZATION_LEVEL_02/03, the default -O2;
//   vllm#34299, merged 2026-02-11: 0.16.0 taken as the first release with it, inferred from
//   the date): TP > 1, CUDA with FlashInfer, compute capability 9.0 or the 10.x family,
//   DP 1 and PP 1; --enforce-eager turns torch.compile off (compilation mode NONE), so no pass.
// - compilation/passes/fusion/allreduce_rms_fusion.py AllReduceFusionPass:
//   max_token_num = min(FI_ALLREDUCE_FUSION_MAX_SIZE_MB[sm][tp] MiB // (hidden x dtype
//   bytes), max_num_batched_tokens), the table {90: {2: 64, 4: 2, 8: 0.5}, 100: {2: 64,
//   4: 32, 8: 1}, 103: {2: 64, 4: 64, 8: 2}}; other TP sizes: no workspace. One workspace
//   (distributed/device_communicators/flashinfer_all_reduce.py get_fi_ar_workspace,
//   backend "trtllm" on one node; the quant workspace reuses it).
// - flashinfer/comm/trtllm_ar.py trtllm_create_ipc_workspace_for_all_reduce_fusion with
//   use_symm_dev_mem=True (comm/allreduce.py TRTLLMAllReduceFusionWorkspace): three
//   buffers a rank, tp x T x hidden x 2 B, tp x 256 x 4 B of flags and 3 x tp x T x
//   hidden x 2 B (x 4 with float32 lamport, the model in float32; capped at 2 GiB) of
//   lamport buffers, each rounded to 2 MiB, then (comm/mnnvl.py SymmDeviceMemory
//   _get_allocation_prop) with a 2,048-B signal pad to the allocation granularity and to
//   CU_MULTICAST_GRANULARITY_RECOMMENDED. It needs multicast (NVSwitch): without it
//   SymmDeviceMemory raises and vLLM logs "Failed to initialize FlashInfer All Reduce
//   workspace ... expected on GPUs without NVSwitch" and goes on without it.
// The recommended multicast granularity is the driver's; no source read gives it, and the
// lent one-GPU H100 box has no multicast to ask (bench/replays/multicast_granularity.c:
// cuMulticastGetGranularity returns CUDA_ERROR_NOT_SUPPORTED there). The plan prices
// kVllmMulticastGranularityBytes, the figure logged launches imply, not a source's: three
// vLLM 0.19 launches at TP 2 on H100 SXM (one operator's sweep) log 2.07-2.09 GiB of
// non-torch memory whatever the hidden size, one 512 MiB granule a buffer; the minimum's
// figure (2 MiB) is said as the range.
inline constexpr double kVllmMulticastGranularityBytes = 512.0 * 1024 * 1024;
VllmFiArWorkspace VllmFlashInferAllReduceWorkspace(const VllmFiArWorkspaceInput& in);

}  // namespace tpt::memory
