// vllm_v0_graphs.h: vLLM V0's decode CUDA graphs, captured after the KV cache is allocated,
// outside the --gpu-memory-utilization budget (worker.py initialize_cache -> _warm_up_model ->
// model_runner.py capture_model; read at 0.4.3, 0.5.5, 0.6.6.post1, 0.8.1, 0.8.3, 0.8.5 and
// 0.9.2): how many graphs a rank captures, what the plan prices for them, the range their logs
// span, and the verdict against the room the pool leaves.
//
// From the source: one whole-model graph a batch size (CUDAGraphRunner.capture runs the model
// twice, then captures model.forward into one torch.cuda.graph sharing one memory pool), the
// sizes [1, 2, 4, 8, 16, ...] up to max_num_seqs padded (_get_graph_batch_size; the list stops
// at 256 before 0.6, at 8192 from 0.6: VllmConfig._set_cudagraph_sizes), largest first, for
// each pipeline stage's virtual engine; capture_model logs "Graph capturing finished in N
// secs, took X GiB" (the free memory's drop; vllm#10027, late 2024). So every graph holds every layer's
// kernels of the rank: what the capture takes grows with sizes x layers. What a graph takes a
// layer (the driver's graph objects beside the pool's decode tensors) is not in vLLM's source:
// it is measured, and the logged launches span more than 10x (kV0Graph*PerLayerGraph below).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "memory/model_config.h"
#include "memory/vllm_graph_capture.h"

namespace tpt::memory {

// The batch sizes V0 captures at `version` for `max_num_seqs` (count 0 before 0.2.6, which
// captured none: vllm#1926 added the graphs and --enforce-eager, merged 2023-12-17).
VllmCaptureSizes VllmV0CaptureSizes(std::string_view version, int64_t max_num_seqs);

// What a captured graph takes a layer, from V0's "took" lines (35 graphs each but the one
// said): 0.13 GiB over 35 x 24 (Qwen2.5-0.5B, 0.6.6.post1, T4, XFormers), 0.17 GiB over
// 35 x 28 (Qwen2.5-1.5B, 0.7.2, T4), 0.21 GiB over 35 x 16 (Llama-3.2-1B, vllm#11349, 0.6.5
// dev), 0.58 GiB over 23 x 32 (Llama-3.1-8B bnb-4bit with LoRA, 0.7.2, T4), 1.92 GiB over
// 35 x 28 (UI-TARS-7B, a Qwen2-VL, 0.6.6, a 23.67 GiB card, FlashAttention). The point is the
// median of the five, the range their ends.
inline constexpr double kV0GraphLowPerLayerGraph = 0.13 * 1024.0 * 1024.0 * 1024.0 / (35.0 * 24.0);
inline constexpr double kV0GraphPointPerLayerGraph = 0.21 * 1024.0 * 1024.0 * 1024.0 / (35.0 * 16.0);
inline constexpr double kV0GraphHighPerLayerGraph = 1.92 * 1024.0 * 1024.0 * 1024.0 / (35.0 * 28.0);

struct VllmV0Graphs {
  bool captured = false;     // V0 captures decode graphs at this version and model
  VllmCaptureSizes sizes;
  int64_t layer_graphs = 0;  // the graphs x the layers each holds, on a rank
  double low_bytes = 0, point_bytes = 0, high_bytes = 0;
  std::string why;           // the plan's assumption line
};
// `layers` is the model's; a rank of pipeline stage size ceil(layers / pp) captures each size
// once for each of its pp virtual engines. Graphs are off (captured false) for mllama before
// 0.8.2 (config.py MODEL_NOT_SUPPORT_CUDA_GRAPH, 0.8.1) and DeepSeek-V3 at 0.6.6.x (config.py
// 0.6.6.post1: "CUDA graph is not supported for Deepseek V3 yet").
VllmV0Graphs VllmV0GraphsFor(const ModelConfig& m, std::string_view version, int64_t max_num_seqs, int pp);

// The capture against `room_bytes` (free at init - weights - non-torch - KV: the profiling
// run's tensors are freed and torch's cache emptied before the pool, worker.py 0.8.3
// determine_num_available_blocks / utils.py memory_profiling). may_fail where the room holds
// the priced graphs but not the logged high end: at TP 1 the per graph and layer range's (all
// five logs are TP 1 launches); at TP > 1 without the custom all-reduce (`nccl`) the measured
// high end of captured NCCL collectives (kNcclCaptureHighBytes; InternVL3-78B at TP 8 logged
// 0.36 GiB over 35 x 80, 0.13 MiB a graph and layer, and Llama-3.1-405B FP8 at TP 8 started
// with 2.1 at most: the TP 1 figures do not carry over); at TP > 1 with the custom all-reduce
// none beyond the point. Below the priced graphs the pool's own check (vllm_model.cc) already
// calls the capture a failure.
VllmCaptureRisk VllmV0CaptureRisk(double room_bytes, const VllmV0Graphs& g, int tp, bool nccl);

}  // namespace tpt::memory
