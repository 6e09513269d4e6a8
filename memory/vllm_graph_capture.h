// vllm_graph_capture.h: vLLM V1's CUDA-graph capture before 0.21, which runs after the KV
// cache is allocated, outside the --gpu-memory-utilization budget, from what the pool
// leaves: the capture sizes by version, and what the plan can and cannot say about it.
#pragma once

#include <cstdint>
#include <string>

#include "memory/nccl_graph_capture.h"

namespace tpt::memory {

// The batch sizes V1 captures by default (config.py VllmConfig._set_cudagraph_sizes):
// [1, 2, 4] + range(8, 513, 8), those <= max_num_batched_tokens (read in 0.8.5's wheel;
// 0.9.2 builds the same list from SchedulerConfig.cuda_graph_sizes = [512]). Each size
// is captured as one piecewise graph per piece of the model split at its attention ops
// (CompilationConfig.splitting_ops): layers + 1 graphs a size.
struct VllmCaptureSizes {
  int count = 0;
  int64_t largest = 0;
};
VllmCaptureSizes VllmV1CaptureSizes(int64_t max_num_batched_tokens);

// The `unknown:` line for V1 before 0.21 when its graphs capture NCCL collectives: at
// TP > 1 without the custom all-reduce (off on more than two PCIe-only GPUs), every
// all-reduce of the captured pieces is PyNccl's ncclAllReduce (two a layer: attention's
// output and the MLP's/MoE's), and NCCL collectives captured into CUDA graphs hold device
// memory of their own that grows with the captures (vLLM's env_override.py sets
// NCCL_CUMEM_ENABLE=0 because "it will cost 1~2 GiB GPU memory with cudagraph+allreduce",
// NVIDIA/nccl#1234; 0.8.5). Nothing in vLLM's source sizes what remains, so the plan keeps
// its estimate (priced_bytes) and says what the pool leaves for the capture (left_bytes)
// and the remedies a capture OOM takes. Empty when no NCCL collective is captured.
std::string VllmV1CaptureUnknown(const std::string& version, int64_t max_num_batched_tokens, int layers, int tp,
                                 bool custom_all_reduce, double left_bytes, double priced_bytes);

// V0's capture (worker/model_runner.py capture_model: one whole graph a batch size, the sizes
// of VllmV0CaptureSizes, vllm_v0_graphs.h, after the KV cache, outside the budget: "CUDA
// graphs can take additional 1~3 GiB memory per GPU"), priced at `priced_bytes`
// (VllmV0GraphsFor); at TP > 1 without the custom all-reduce the same NCCL all-reduces are
// captured, and the `unknown:` line says so. Empty otherwise.
std::string VllmV0CaptureUnknown(const std::string& version, int64_t max_num_seqs, int layers, int tp,
                                 bool custom_all_reduce, double left_bytes, double priced_bytes);

// The capture's risk once the KV cache is allocated: `room_bytes` is what the pool leaves
// (free at init - weights - non-torch - KV), `priced_bytes` the graphs the plan prices,
// `after_bytes` what must still fit after them (V1's sampler warm-up, 0.8 on). may_fail is
// set when the room holds the priced end but not the measured high end (kNcclCaptureHighBytes,
// nccl_graph_capture.h): the plan cannot say the
// server starts, nor that it fails; `text` says what it needs, what is left and what makes
// the launch certain.
struct VllmCaptureRisk {
  bool may_fail = false;
  double need_low_bytes = 0;
  double need_high_bytes = 0;
  std::string text;
};
VllmCaptureRisk VllmNcclCaptureRisk(double room_bytes, double priced_bytes, double after_bytes);

}  // namespace tpt::memory
