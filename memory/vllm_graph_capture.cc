// vllm_graph_capture.cc: vLLM V1's CUDA-graph capture sizes before 0.21 and the plan's
// `unknown:` line about their memory (vllm_graph_capture.h).
#include "memory/vllm_graph_capture.h"

#include <algorithm>

#include "memory/memory_model.h"
#include "memory/vllm_v0_graphs.h"

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

std::string VllmV0CaptureUnknown(const std::string& version, int64_t max_num_seqs, int layers, int tp,
                                 bool custom_all_reduce, double left_bytes, double priced_bytes) {
  if (tp <= 1 || custom_all_reduce || layers <= 0 || max_num_seqs <= 0) return "";
  const VllmCaptureSizes s = VllmV0CaptureSizes(version, max_num_seqs);
  if (s.count == 0) return "";
  const int64_t collectives = static_cast<int64_t>(s.count) * layers * 2;
  return "vLLM " + version + " (V0) captures CUDA graphs after the KV cache, outside the budget: " +
         std::to_string(s.count) + " batch sizes (1-" + std::to_string(s.largest) + "), one graph each, from the " +
         FormatGiB(std::max(left_bytes, 0.0)) + " a rank the pool leaves (\"CUDA graphs can take additional 1~3 GiB "
         "memory per GPU\", model_runner.py); at TP " + std::to_string(tp) + " without the custom all-reduce they capture " +
         std::to_string(collectives) + " NCCL all-reduces, whose memory in CUDA graphs is not sized from vLLM's source "
         "(NVIDIA/nccl#1234): the plan prices " + FormatGiB(priced_bytes) + " (V0's estimate, vllm_v0_graphs.h); a "
         "capture that runs out of memory is served by --enforce-eager, a lower --gpu-memory-utilization or a smaller "
         "--max-num-seqs; pass --cuda-graph-mem from a launch's log";
}

VllmCaptureRisk VllmNcclCaptureRisk(double room_bytes, double priced_bytes, double after_bytes) {
  VllmCaptureRisk r;
  const NcclCaptureNeed need = NcclCaptureNeedOf(priced_bytes, kNcclCaptureHighBytes, after_bytes);
  r.need_low_bytes = need.low_bytes;
  r.need_high_bytes = need.high_bytes;
  if (!(room_bytes >= r.need_low_bytes) || room_bytes >= r.need_high_bytes) return r;
  r.may_fail = true;
  r.text = "capture may fail: the CUDA graphs with NCCL all-reduces need " + NcclCaptureNeedRange(need) + " a rank" +
           (after_bytes > 0 ? " with the sampler warm-up after them (" + FormatGiB(after_bytes) + ")" : "") +
           ", the KV cache leaves " + FormatGiB(room_bytes) +
           " (vllm#5517: 3.81 GiB of graphs a rank on A10G/L4 with CUDA drivers before 12.4, 1.14 GiB from 12.4; "
           "the driver, NCCL and topology decide, and no input gives them): not a confident start; "
           "--enforce-eager or a lower --gpu-memory-utilization makes it one";
  return r;
}

}  // namespace tpt::memory
