// vllm_cold_compile.cc: see vllm_cold_compile.h.
//
// Sources: vLLM 0.28.0 sdist, v1/worker/gpu_worker.py determine_available_memory
// (memory_profiling around profile_run; available = requested - non_kv_cache_memory),
// utils/mem_utils.py memory_profiling (total_consumed = init free - free after the profile;
// transient_peak_headroom = torch peak - allocated; non_kv_cache_memory = their sum),
// compilation/decorators.py (the first call compiles, or loads the AOT artifact from
// VLLM_CACHE_ROOT/torch_compile_cache); config/cache.py compute_hash leaves
// gpu_memory_utilization out of the cache key, so a new model, --max-model-len,
// --max-num-batched-tokens or --max-num-seqs is a cold compile and a new utilisation is not.
// 0.9.2's determine_available_memory profiles the same way. vllm#54383 (first boot of a new
// shape ~5% smaller pool), vllm#54122, vllm#49892 (JIT kernels on SM120 stay as non-torch
// memory) and the open fixes vllm#54209 / #54479 describe the charge; none is in 0.28.0.
#include "memory/vllm_cold_compile.h"

#include "memory/launch_plan_internal.h"
#include "memory/memory_model.h"

namespace tpt::memory {

bool VllmProfileCompiles(const PlanInput& in) {
  return in.framework == "vllm" && !in.enforce_eager && internal::IsVllmV1(in);
}

std::string VllmColdCompileUnknown(const PlanInput& in) {
  return "vLLM " + in.version + " (V1) compiles the model inside the memory profile that sizes the KV cache "
         "(gpu_worker.py determine_available_memory): on a first start of this model and shape (a compile cache "
         "not kept across restarts, or a new --max-model-len / --max-num-batched-tokens / --max-num-seqs) the "
         "compiler's autotuning scratch is charged as activation peak and the kernels it loads as non-torch memory "
         "(vllm#54122, vllm#54383); a warm start loads the compiled graph and pays neither. The point is a warm "
         "start's; a first start's pool can be up to " + FormatGiB(kVllmColdCompileHighBytes) +
         " a rank smaller (logged 0.47-2.49 GiB on released versions; the range below), and where that changes "
         "the outcome the plan does not vouch for a first start; persist VLLM_CACHE_ROOT (~/.cache/vllm) to make "
         "restarts warm";
}

}  // namespace tpt::memory
