// tgi_graph_capture.h: TGI's decode CUDA graphs, captured after the KV cache is allocated
// (flash_causal_lm.py warmup, v2.0.0-v3.3.7): which batch sizes by version and flags, the
// memory pool the source allocates for them, the NCCL collectives they capture at TP > 1,
// and what the plan can say of the room the KV sizing leaves them. Sources in
// tgi_graph_capture.cc.
#ifndef TPT_MEMORY_TGI_GRAPH_CAPTURE_H_
#define TPT_MEMORY_TGI_GRAPH_CAPTURE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "memory/model_config.h"

namespace tpt::memory {

// The batch sizes the server captures, in its order, and why (the launcher's default, the
// flag, or none). `given` is --cuda-graphs (0 entries dropped as the launcher does from
// v2.0.2); `quant_method` the checkpoint's (bitsandbytes turns the default off).
//
//   TgiCudaGraphSizes("2.2.0", std::nullopt, "").sizes;   // {32, 16, 8, 4, 2, 1}
//   TgiCudaGraphSizes("3.2.1", {{0}}, "").sizes;          // {}
//   TgiCudaGraphSizes("1.4.5", std::nullopt, "").sizes;   // {} (--enable-cuda-graphs, opt-in)
struct TgiCudaGraphs {
  std::vector<int> sizes;
  std::string why;
};
TgiCudaGraphs TgiCudaGraphSizes(const std::string& version, const std::optional<std::vector<int>>& given,
                                const std::string& quant_method);

// The graphs' memory pool as the source allocates it, per rank: the largest size's decode
// forward (the eager layer at bs tokens and the LM head's gather), the logits every graph
// keeps as its output, the static inputs (block tables of `max_s` tokens), and the private
// pool's first segments.
double TgiGraphPoolBytes(const std::string& version, const std::vector<int>& sizes, const ModelConfig& m, int tp,
                         int64_t max_s, int block_size);

// NCCL collectives the graphs capture at TP > 1: per graph, two all-reduces a layer
// (attention's o_proj and the MLP's or MoE's down projection, TensorParallelRowLinear) and
// the LM head's all-gather (TensorParallelHead); 0 at TP 1.
int64_t TgiCapturedCollectives(const std::vector<int>& sizes, int layers, int tp);

// What the plan says of the capture once the KV cache is allocated: `room_bytes` is what
// TGI's KV sizing leaves (free at init - weights - KV - buffers - what the process holds
// outside PyTorch's allocator). At TP > 1 may_fail is set when the room does not hold the
// priced pool and the measured high end of the captured collectives
// (kNcclCaptureHighBytesPerCollective, nccl_graph_capture.h); at TP 1 `uncertain` is set when
// the room does not hold the priced pool (PyTorch's out-of-memory there is caught and the
// server starts with the sizes captured so far).
struct TgiCaptureRisk {
  bool may_fail = false;
  bool uncertain = false;
  double need_low_bytes = 0;
  double need_high_bytes = 0;
  std::string text;
};
TgiCaptureRisk TgiNcclCaptureRisk(const std::string& version, const std::vector<int>& sizes, int tp,
                                  int64_t collectives, double room_bytes, double priced_bytes);

// "1,2,4,8" (the flag's form, smallest first).
std::string TgiCudaGraphsFlag(const std::vector<int>& sizes);

}  // namespace tpt::memory

#endif  // TPT_MEMORY_TGI_GRAPH_CAPTURE_H_
