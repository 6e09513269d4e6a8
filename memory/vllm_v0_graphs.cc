// vllm_v0_graphs.cc: vLLM V0's decode CUDA graphs after the KV cache (vllm_v0_graphs.h).
#include "memory/vllm_v0_graphs.h"

#include <algorithm>
#include <cstdio>

#include "memory/memory_model.h"
#include "memory/nccl_graph_capture.h"

namespace tpt::memory {

VllmCaptureSizes VllmV0CaptureSizes(std::string_view version, int64_t max_num_seqs) {
  VllmCaptureSizes s;
  if (VersionBefore(version, {0, 2, 6}) || max_num_seqs <= 0) return s;
  // _get_graph_batch_size (0.4.3, 0.5.5) and _set_cudagraph_sizes' larger_sizes[0] (0.6.6,
  // 0.8.3): max_num_seqs padded to 1, 2, 4 or a multiple of 8; 0.4.x-0.5.x list sizes to 256
  // (_BATCH_SIZES_TO_CAPTURE, 0.5.5:63-66), 0.6.6 on to 8192 (0.6.0-0.6.5 not read, taken as 0.6.6).
  const int64_t cap = VersionBefore(version, {0, 6, 0}) ? 256 : 8192;
  const int64_t padded = max_num_seqs <= 2 ? max_num_seqs : max_num_seqs <= 4 ? 4 : (max_num_seqs + 7) / 8 * 8;
  for (int64_t b : {1, 2, 4}) {
    if (b <= padded) ++s.count, s.largest = b;
  }
  for (int64_t b = 8; b <= cap && b <= padded; b += 8) ++s.count, s.largest = b;
  return s;
}

VllmV0Graphs VllmV0GraphsFor(const ModelConfig& m, std::string_view version, int64_t max_num_seqs, int pp) {
  VllmV0Graphs g;
  if (m.layers <= 0) return g;
  if (m.model_type == "mllama" && VersionBefore(version, {0, 8, 2})) return g;
  if (m.model_type == "deepseek_v3" && !VersionBefore(version, {0, 6, 6}) && VersionBefore(version, {0, 7, 0})) return g;
  g.sizes = VllmV0CaptureSizes(version, max_num_seqs);
  if (g.sizes.count == 0) return g;
  g.captured = true;
  pp = std::max(pp, 1);
  const int64_t stage_layers = (m.layers + pp - 1) / pp;
  g.layer_graphs = static_cast<int64_t>(g.sizes.count) * stage_layers * pp;
  const double n = static_cast<double>(g.layer_graphs);
  g.low_bytes = n * kV0GraphLowPerLayerGraph;
  g.point_bytes = n * kV0GraphPointPerLayerGraph;
  g.high_bytes = n * kV0GraphHighPerLayerGraph;
  char per[96];
  std::snprintf(per, sizeof per, "%.2f MiB a graph and layer (logged %.2f-%.2f MiB)",
                kV0GraphPointPerLayerGraph / (1024.0 * 1024.0), kV0GraphLowPerLayerGraph / (1024.0 * 1024.0),
                kV0GraphHighPerLayerGraph / (1024.0 * 1024.0));
  g.why = "CUDA graphs " + FormatGiB(g.point_bytes) + " (estimate, " + FormatGiB(g.low_bytes) + "-" +
          FormatGiB(g.high_bytes) + " logged): V0 captures one whole-model decode graph a batch size, " +
          std::to_string(g.sizes.count) + " sizes (1-" + std::to_string(g.sizes.largest) + ", up to max_num_seqs " +
          std::to_string(max_num_seqs) + " padded) x " + std::to_string(stage_layers * pp) + " layers at " + per +
          ", after the KV cache, outside the --gpu-memory-utilization budget; pass --cuda-graph-mem from a launch's "
          "'Graph capturing finished ..., took', or --enforce-eager for none";
  return g;
}

VllmCaptureRisk VllmV0CaptureRisk(double room_bytes, const VllmV0Graphs& g, int tp, bool nccl) {
  VllmCaptureRisk r;
  if (!g.captured) return r;
  // The per graph and layer range was logged at TP 1; at TP > 1 the logged high end is
  // that of captured NCCL collectives, and with the custom all-reduce the point alone.
  const double high = tp <= 1 ? g.high_bytes : nccl ? kNcclCaptureHighBytes : g.point_bytes;
  const NcclCaptureNeed need = NcclCaptureNeedOf(g.point_bytes, high, 0);
  r.need_low_bytes = need.low_bytes;
  r.need_high_bytes = need.high_bytes;
  if (!(room_bytes >= r.need_low_bytes) || room_bytes >= r.need_high_bytes) return r;
  r.may_fail = true;
  r.text = "capture may fail: V0's CUDA graphs (" + std::to_string(g.sizes.count) + " batch sizes x " +
           std::to_string(g.layer_graphs / std::max(g.sizes.count, 1)) + " layers) need " + NcclCaptureNeedRange(need) +
           " a rank, the KV cache leaves " + FormatGiB(room_bytes) + " (what a graph takes is measured, not in vLLM's source: " +
           (tp <= 1 ? "0.16-2.0 MiB a graph and layer on the logged launches at TP 1"
                    : "with NCCL all-reduces captured, vllm#5517's 3.81 GiB a rank") +
           "): not a confident start; --enforce-eager, a lower --gpu-memory-utilization or a smaller --max-num-seqs "
           "makes it one";
  return r;
}

}  // namespace tpt::memory
