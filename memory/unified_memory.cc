// unified_memory.cc: what the host holds on a unified-memory device and which server counts it.
//
// Sources:
//   cuMemGetInfo (CUDA driver API; cuda-python's cuMemGetInfo_v2 page, read 2026-12): "The
//     integrated GPU on Tegra shares memory with CPU and other component of the SoC ... See
//     Tegra app note on how to calculate total and free memory on Tegra." The catalog marks
//     such devices (gpu_catalog.json "unified_memory": DGX Spark's GB10, Jetson AGX Orin).
//   vLLM's MemorySnapshot.measure (vllm/utils/mem_utils.py; on main from 2025-10-03, commit
//     4f8f47e87 for SM 8.7/11.0/12.1 "Orin, Thor and Spark", then vllm#35356 by
//     `is_integrated`) cites the CUDA for Tegra app note ("Estimating total allocatable device
//     memory on an integrated GPU device"): there "cudaMemGetInfo underreports free memory
//     because it does not account for reclaimable OS memory (page cache, buffers)", and takes
//     psutil.virtual_memory().available instead. So on these devices the free memory every
//     server reads through cudaMemGetInfo / torch.cuda.mem_get_info is the system's free
//     memory less its page cache: the checkpoint the launch has just read (or an earlier
//     launch left cached) counts as used until the kernel reclaims it.
// By server:
//   TensorRT-LLM, PyTorch backend (tensorrt_llm/_torch/pyexecutor/_util.py KvCacheCreator,
//     0.20-1.x: `end, total = torch.cuda.mem_get_info()`, total_used = total - end,
//     extra_cost = total_used - torch's allocated, "memory used outside torch", peak = torch
//     peak + extra_cost, available = (total - peak + the estimation pass's KV) x fraction):
//     absolute, so whatever the host holds at the end of the estimation pass comes out of the
//     pool, cached before the launch or by it. The point takes the checkpoint's page cache in
//     full (as much as the pass leaves room for: the kernel reclaims the cache when torch
//     allocates, but never the pass's own KV cache, which the formula adds back); the range
//     runs up to none of it (all reclaimed). A TensorRT engine's executor reads cudaMemGetInfo
//     the same way (kvCacheManager.cpp calculateFreeMemBytes: free + the pool's free), after
//     the engine file was read: the same point.
//   vLLM before 0.11.1: torch.cuda.mem_get_info, and the profile counts the non-torch
//     increase from the snapshot taken at init (worker.py determine_num_available_blocks /
//     memory_profiling, V0 and V1): a checkpoint cached before the launch costs nothing (the
//     Jetson Orin 32GB launch in samples/models logged -0.05 GiB non-torch), one read by this
//     launch counts as it stays cached; the point stays, the range takes the checkpoint.
//     From 0.11.1 psutil's available (above) counts the cache as free: no range from it.
//   SGLang from 0.5.3: get_available_gpu_memory takes psutil.virtual_memory().available when
//     the device `is_integrated` (srt/utils/common.py, 2026, search-index file id 51788431665;
//     proposed for Orin, Thor and Spark in sgl-project/sglang#10075, 2025-09-05; 0.5.3, the
//     first release after it, assumed): the cache counts as free.
//   SGLang before it: torch.cuda.mem_get_info on every CUDA device (srt/utils.py
//     get_available_gpu_memory at commit 0094528c, mid-2025, no integrated branch). Its pool is
//     relative (model_runner.py profile_max_num_token: rest = free after the weights - free at
//     init x (1 - mem_fraction_static)), so a checkpoint this launch reads and keeps cached
//     comes out of the pool in full, one cached before the launch by the fraction's share: the
//     point leaves it out (as vLLM before 0.11.1), the range takes the checkpoint.
//   TGI (warmup: torch.cuda.mem_get_info after the warm-up) and LMDeploy's TurboMind
//     (cudaMemGetInfo in LlamaBatch) read the free memory as TensorRT-LLM does; no launch of
//     either on such a device was read, so their point is left as is and the range takes the
//     checkpoint.
// Every server: what other programs and the OS hold on the device's memory is the host's and
// not sized (a desktop on a Jetson or a Spark, other processes). For SGLang, whose pool loses
// fraction x what they hold, the plan's range runs down to no pool (launch_plan_remedies.cc).
#include "memory/unified_memory.h"

#include "memory/memory_model.h"

namespace tpt::memory {

std::optional<UnifiedHostUse> UnifiedMemoryHostUse(const UnifiedMemoryInput& in) {
  const std::string& fw = in.framework;
  if (fw != "sglang" && fw != "vllm" && fw != "tgi" && fw != "trtllm" && fw != "lmdeploy") return std::nullopt;
  UnifiedHostUse u;
  const double c = in.checkpoint_bytes > 0 ? in.checkpoint_bytes : 0;
  const std::string cache = "a unified-memory device: the GPU's memory is the system's, and cudaMemGetInfo's free "
                            "memory leaves out what the kernel could reclaim (the page cache; CUDA for Tegra app note, "
                            "as vLLM's mem_utils.py cites it), so the checkpoint's page cache (up to " +
                            FormatGiB(c) + ") and what other programs hold are the host's use";
  const std::string others = "; what the OS and other programs hold is not sized";
  if (fw == "trtllm" && in.trtllm_backend != "tensorrt" && in.logged_peak) {
    u.why = cache + "; the logged peak given (--activation-peak) holds it as TensorRT-LLM measured it (KvCacheCreator's "
                    "'memory used outside torch'), so the point takes it from there" + others;
  } else if (fw == "trtllm") {
    u.point_bytes = c;
    u.range_bytes = c;
    u.why = cache + "; TensorRT-LLM counts all of it (" +
            (in.trtllm_backend == "tensorrt"
                 ? std::string("the engine executor's free memory, kvCacheManager.cpp calculateFreeMemBytes")
                 : std::string("KvCacheCreator's 'memory used outside torch' = total - free - torch's, _util.py")) +
            "), so the point takes the checkpoint's cache in full, as far as the estimation leaves room, and the range "
            "runs to none of it (the kernel reclaimed it)" +
            (in.trtllm_backend == "tensorrt"
                 ? std::string("")
                 : std::string("; a log's 'Peak memory during memory usage profiling' less the weights, passed as "
                               "--activation-peak, holds the launch's own figure")) +
            others;
  } else if (fw == "vllm" && (in.version.empty() || VersionBefore(in.version, {0, 11, 1}))) {
    u.range_bytes = c;
    u.why = cache + "; vLLM before 0.11.1 counts what grows after its start snapshot as non-torch memory: the point "
                    "takes a checkpoint already cached before the launch (none counted), the range one this launch "
                    "reads and keeps cached" + others;
  } else if (fw == "sglang" && !in.version.empty() && VersionBefore(in.version, {0, 5, 3})) {
    u.range_bytes = c;
    u.why = cache + "; SGLang before 0.5.3 reads that free memory too (torch.cuda.mem_get_info in "
                    "get_available_gpu_memory; psutil's available from 0.5.3, sglang#10075): its pool is the free "
                    "memory after the weights less (1 - fraction) of the free memory at init, so the point takes a "
                    "checkpoint already cached before the launch (none counted), the range one this launch reads and "
                    "keeps cached" + others;
  } else if (fw == "vllm" || fw == "sglang") {
    u.why = cache + "; " + (fw == "vllm" ? std::string("vLLM from 0.11.1 (MemorySnapshot)") : std::string("SGLang")) +
            " reads psutil's available memory there instead, which counts the cache as free" + others;
  } else {
    u.range_bytes = c;
    u.why = cache + "; " + (fw == "tgi" ? std::string("TGI") : std::string("LMDeploy")) +
            " reads that free memory too, but no launch of it on such a device was read: the point leaves the cache "
            "out and the range takes it" + others;
  }
  return u;
}

}  // namespace tpt::memory
