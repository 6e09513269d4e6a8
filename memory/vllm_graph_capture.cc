// vllm_graph_capture.cc: vLLM V1's CUDA-graph capture sizes before 0.21 and the plan's
// `unknown:` line about their memory (vllm_graph_capture.h).
#include "memory/vllm_graph_capture.h"

#include <algorithm>

#include "memory/memory_model.h"

namespace tpt::memory {

VllmCaptureSizes VllmV1CaptureSizes(int64_t max_num_batched_tokens) {
  VllmCaptureSizes s;
  for (int64_t b : {1, 2, 4}) {
    if (b <= max_num_batched_tokens) { ++s.count; s.largest = b; }
  }
  for (int64_t b = 8; b <= 512 && b <= max_num_batched_tokens; b += 8) {
    ++s.count;
    s.largest = b;
  }
  return s;
}

std::string VllmV1CaptureUnknown(const std::string& version, int64_t max_num_batched_tokens, int layers, int tp,
                                 bool custom_all_reduce, double left_bytes, double priced_bytes) {
  const VllmCaptureSizes s = VllmV1CaptureSizes(max_num_batched_tokens);
  if (s.count == 0 || tp <= 1 || custom_all_reduce || layers <= 0) return "";
  // gpu_model_runner.py capture_model (0.8.5, 0.9.2): the sizes largest first, each
  // warmed up and captured through the piecewise backend, after initialize_kv_cache
  // (gpu_worker.py compile_or_warm_up_model); its "Graph capturing finished ..., took"
  // is measured by cudaMemGetInfo.
  const int64_t collectives = static_cast<int64_t>(s.count) * layers * 2;
  return "vLLM " + version + " (V1) captures CUDA graphs after the KV cache, outside the budget: " +
         std::to_string(s.count) + " batch sizes (1-" + std::to_string(s.largest) + ") x " +
         std::to_string(layers + 1) + " piecewise graphs, from the " + FormatGiB(std::max(left_bytes, 0.0)) +
         " a rank the pool leaves; at TP " + std::to_string(tp) +
         " without the custom all-reduce they capture " + std::to_string(collectives) +
         " NCCL all-reduces, whose memory in CUDA graphs grows with the captures (NVIDIA/nccl#1234) and is not "
         "sized from vLLM's source: the plan prices " + FormatGiB(priced_bytes) +
         " (logged 0.06-0.36 GiB elsewhere); a capture that runs out of memory is served by --enforce-eager, a "
         "lower --gpu-memory-utilization, or fewer sizes (--compilation-config "
         "'{\"cudagraph_capture_sizes\": [...]}'); pass --cuda-graph-mem from a launch's log";
}

}  // namespace tpt::memory
