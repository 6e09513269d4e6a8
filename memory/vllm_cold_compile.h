// vllm_cold_compile.h: vLLM V1's first start of a model and shape, whose torch.compile runs
// inside the memory profile that sizes the KV cache. What that charges is not given by any
// input a plan has (whether the compile cache is warm is the machine's state), so the plan
// keeps a warm start's point and states the cold start as the low end of a range.
//
//   if (VllmProfileCompiles(derived)) p.unknowns.push_back(VllmColdCompileUnknown(derived));
#pragma once

#include <string>

#include "memory/launch_plan.h"

namespace tpt::memory {

// True when vLLM's profiling run compiles the model: the V1 engine with torch.compile on
// (every V1 release; --enforce-eager turns it off: config/vllm.py 0.28.0 "Enforce eager set,
// disabling torch.compile and CUDAGraphs", mode NONE). gpu_worker.py
// determine_available_memory (0.9.2 and 0.28.0 read) calls model_runner.profile_run() inside
// utils/mem_utils.py memory_profiling(); the first forward there is where Dynamo and
// Inductor compile (or load from VLLM_CACHE_ROOT's torch_compile_cache) the graph for the
// batched-token shape.
bool VllmProfileCompiles(const PlanInput& derived);

// The most a cold compile has been logged to take from a rank's KV budget on a released
// vLLM: memory_profiling (0.28.0) charges total_consumed (the free-memory drop since init:
// kernels the compile loads stay as non-torch memory) plus the torch peak's headroom
// (Inductor's and Triton's autotuning scratch, freed by then); a warm start loads the
// compiled graph and charges neither. Logged cold minus warm, same flags: 2.49 GiB a rank
// (Quadro RTX 8000, torch peak +1.85 and non-torch +0.64 GiB; 1CatAI/1Cat-vLLM#518), 2.14
// (vLLM 0.30, Qwen3-8B: +1.14 non-torch, +1.0 peak), 0.47 (vLLM 0.28.0, 2 x RTX 4090, one
// shape; vllm#54479), none on a V100; vllm#54122 (a nightly on RTX PRO 6000) reports tens of
// GiB with heavy autotuning, beyond this bound.
inline constexpr double kVllmColdCompileHighBytes = 2.5 * 1024.0 * 1024.0 * 1024.0;

// The `unknown:` line: the point is a warm start's, a first start's pool can be up to
// kVllmColdCompileHighBytes a rank smaller (the range below), and where that changes the
// outcome the plan does not vouch for a first start.
std::string VllmColdCompileUnknown(const PlanInput& derived);

}  // namespace tpt::memory
