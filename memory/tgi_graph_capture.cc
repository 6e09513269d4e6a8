// tgi_graph_capture.cc: TGI's decode CUDA graphs after the KV cache (tgi_graph_capture.h) and
// the plan's side of them (launch_plan_servers.cc PlanTgi, launch_plan_remedies.cc).
//
// Sources (huggingface/text-generation-inference, by tag):
//   launcher/src/main.rs: `--cuda-graphs` from v2.0.0 ("Use "0" to disable. Default =
//     "1,2,4,8,16,32"", v2.0.0 l.309-313); the sizes (v2.0.0 l.1374-1393): a given list only
//     with --quantize ((Some(cuda_graphs), Some(_q))), none for bitsandbytes, else the
//     default; from v2.0.2 a given list always, zeros dropped (`filter(|&c| c > 0)`, v2.0.2
//     l.1396-1397, v2.2.0 l.1517-1536, v3.3.7 l.2169-2185); from v2.3.0 the quantization is
//     the flag or the config's quantization_config.quant_method (l.1607, 1694) and exl2 turns
//     the default off too. v1.4.1-v1.4.5: `--enable-cuda-graphs`, opt-in, sizes [1, 2, 4] +
//     8..64, every exception caught (flash_causal_lm.py v1.4.5 l.801-810); none before.
//   models/globals.py: MEM_POOL = torch.cuda.graph_pool_handle(), one pool for every size;
//     CUDA_GRAPHS sorted largest first from v2.1.0 (`cuda_graphs.sort(reverse=True)`).
//   models/flash_causal_lm.py warmup: the KV cache is allocated from the free memory after
//     the warm-up (v2.2.0 l.1117-1135; v3.2.1 l.1562-1588), init_kv_cache first drops the
//     warm-up's cache and empties PyTorch's (`self.kv_cache = []; empty_cache()`, v2.2.0
//     l.968-969), so the prefill's blocks are given back and what the KV sizing does not give
//     to blocks (the wiggle room and those blocks) is what the graphs have; then `for bs in
//     CUDA_GRAPHS: self.cuda_graph_warmup(...)` (v2.2.0 l.1188-1198, v3.2.1 l.1652-1680) in a
//     `try` whose only `except` is torch.cuda.OutOfMemoryError (v2.0.0 l.817, v2.2.0 l.1197,
//     v3.2.1 l.1679): PyTorch's allocator running out inside the capture is logged ("Decode
//     cuda graph warmup failed") and the server starts; a CUDA error ("CUDA error: out of
//     memory" from capture_end, tgi#2572) is a RuntimeError and ends the warm-up.
//   cuda_graph_warmup (v2.2.0 l.1025-1080): per size int64 input_ids and slots, int32
//     position_ids and input_lengths, int32 block_tables of bs x max_bt (the warm-up batch's
//     max_blocks), one eager forward, then the forward captured `with torch.cuda.graph(graph,
//     pool=MEM_POOL)` and its logits kept in self.cuda_graphs[bs]; from v3.0.0 the smaller
//     sizes slice the largest's inputs, flashinfer's block tables are ragged (bs x max_s at a
//     block of 1) and max_s is max_total_tokens (v3.2.1 l.1372-1420).
//   layers/tensor_parallel.py (v2.2.0 l.90-125, 216-258): TensorParallelRowLinear's
//     torch.distributed.all_reduce (o_proj, down_proj; the MoE blocks' the same) and
//     TensorParallelHead's all_gather(_into_tensor) into a full-vocab output; utils/dist.py:
//     torch's ProcessGroupNCCL, no custom all-reduce anywhere in server/ (git grep, v2.0.0-
//     v3.3.7); the launcher sets TORCH_NCCL_AVOID_RECORD_STREAMS only (main.rs v2.2.0 l.598),
//     so NCCL_CUMEM_ENABLE is NCCL's default (on from 2.19; NCCL 2.20.5 in v2.2.0's
//     poetry.lock, 2.26.2 in v3.3.7's uv.lock), which costs memory in captured collectives
//     (NVIDIA/nccl#1234, vllm#5091).
//   c10/cuda/CUDACachingAllocator.cpp: a private pool's first small and large segments are
//     2 MiB (kSmallBuffer) and 20 MiB (kLargeBuffer); inside a capture cached blocks of
//     other pools are not released (release_cached_blocks only when no capture is underway).
#include "memory/tgi_graph_capture.h"

#include <algorithm>
#include <functional>
#include <numeric>

#include "memory/launch_plan_internal.h"
#include "memory/memory_model.h"
#include "memory/nccl_graph_capture.h"

namespace tpt::memory {

TgiCudaGraphs TgiCudaGraphSizes(const std::string& version, const std::optional<std::vector<int>>& given,
                                const std::string& quant_method) {
  TgiCudaGraphs g;
  if (VersionBefore(version, {2, 0, 0})) {
    g.why = "none before TGI v2.0 (v1.4.1-v1.4.5: --enable-cuda-graphs, opt-in, every error caught)";
    return g;
  }
  const bool takes_given = given && (!VersionBefore(version, {2, 0, 2}));
  const bool config_quant = !VersionBefore(version, {2, 3, 0});  // before v2.3.0 the --quantize flag only
  std::vector<int> s;
  if (takes_given) {
    for (int b : *given) {
      if (b > 0) s.push_back(b);
    }
    g.why = s.empty() ? "--cuda-graphs 0: none captured" : "--cuda-graphs";
  } else if (!given && config_quant && (quant_method == "bitsandbytes" || quant_method == "exl2")) {
    g.why = "none: TGI's launcher turns the default off for " + quant_method;
    return g;
  } else {
    s = {1, 2, 4, 8, 16, 32};
    g.why = given ? "the launcher's default: TGI v2.0.0-v2.0.1 takes --cuda-graphs only with --quantize"
                  : "the launcher's default";
  }
  if (!VersionBefore(version, {2, 1, 0})) std::sort(s.begin(), s.end(), std::greater<int>());
  g.sizes = s;
  return g;
}

double TgiGraphPoolBytes(const std::string& version, const std::vector<int>& sizes, const ModelConfig& m, int tp,
                         int64_t max_s, int block_size) {
  if (sizes.empty()) return 0;
  const double e = m.dtype_bytes > 0 ? m.dtype_bytes : 2;
  const int ranks = std::max(tp, 1);
  const double largest = *std::max_element(sizes.begin(), sizes.end());
  const double sum = std::accumulate(sizes.begin(), sizes.end(), 0.0);
  const double vocab = static_cast<double>(m.vocab);
  // The largest size's decode forward (the pool is shared and the sizes run one after the
  // other, so the smaller ones reuse its freed blocks): the eager layer at bs tokens, and at
  // TP > 1 the head's slice beside the gathered output.
  const double inter = m.intermediate > 0 ? static_cast<double>(m.intermediate) : 4.0 * m.hidden;
  double forward = TgiDenseLayerPeakBytes(static_cast<int64_t>(largest), m.hidden, inter / ranks, e);
  if (ranks > 1) forward += largest * vocab / ranks * e;
  // Every graph keeps its output: bs x the full vocabulary.
  const double kept = sum * vocab * e;
  // The static inputs: 24 B a row and the block table (int32) of max_s tokens.
  const double cols = block_size <= 1 ? static_cast<double>(max_s)
                                      : static_cast<double>((max_s + block_size - 1) / block_size);
  const double rows = VersionBefore(version, {3, 0, 0}) ? sum : largest;
  const double inputs = rows * (24.0 + 4.0 * cols);
  const double first_segments = 22.0 * 1024 * 1024;
  return forward + kept + inputs + first_segments;
}

int64_t TgiCapturedCollectives(const std::vector<int>& sizes, int layers, int tp) {
  if (tp <= 1 || layers <= 0) return 0;
  return static_cast<int64_t>(sizes.size()) * (2 * static_cast<int64_t>(layers) + 1);
}

std::string TgiCudaGraphsFlag(const std::vector<int>& sizes) {
  std::vector<int> s = sizes;
  std::sort(s.begin(), s.end());
  std::string out;
  for (int b : s) {
    if (!out.empty()) out += ',';
    out += std::to_string(b);
  }
  return out.empty() ? "0" : out;
}

TgiCaptureRisk TgiNcclCaptureRisk(const std::string& version, const std::vector<int>& sizes, int tp,
                                  int64_t collectives, double room_bytes, double priced_bytes) {
  TgiCaptureRisk r;
  if (sizes.empty()) return r;
  const std::string graphs = std::to_string(sizes.size()) + " decode CUDA graphs (batch sizes " +
                             TgiCudaGraphsFlag(sizes) + ")";
  const double room = std::max(room_bytes, 0.0);
  if (tp <= 1 || collectives <= 0) {
    r.need_low_bytes = r.need_high_bytes = priced_bytes;
    if (room_bytes >= priced_bytes) return r;
    r.uncertain = true;
    r.text = "TGI " + version + "'s " + graphs + ", " + FormatGiB(priced_bytes) + " priced, may not fit the " +
             FormatGiB(room) + " a rank its KV sizing leaves: PyTorch's out-of-memory inside the capture is caught "
             "(flash_causal_lm.py warmup) and the server starts with the sizes captured so far; a CUDA error from "
             "the capture is not";
    return r;
  }
  const NcclCaptureNeed need =
      NcclCaptureNeedOf(priced_bytes, static_cast<double>(collectives) * kNcclCaptureHighBytesPerCollective, 0);
  r.need_low_bytes = need.low_bytes;
  r.need_high_bytes = need.high_bytes;
  if (room_bytes >= need.high_bytes) return r;
  r.may_fail = true;
  r.text = "capture may fail: TGI " + version + " captures " + graphs + " after the KV cache, with " +
           std::to_string(collectives) + " NCCL collectives at TP " + std::to_string(tp) +
           " (torch.distributed's; TGI has no custom all-reduce); they need " + NcclCaptureNeedRange(need) +
           " a rank (the priced pool to 1.6 MiB a collective, the most measured: NVIDIA/nccl#1234), the KV cache "
           "leaves " + FormatGiB(room) + "; a CUDA error in the capture is not the torch.cuda.OutOfMemoryError "
           "flash_causal_lm.py catches (tgi#2572: 'CUDA error: out of memory' in capture_end): not a confident "
           "start; fewer --cuda-graphs sizes, or 0, make it one";
  return r;
}

namespace internal {

void SayTgiCaptureAfterPool(const PlanInput& in, Plan& p) {
  if (!in.model || !p.fits || p.kv_tokens <= 0 || !p.figures.contains("tgi_graph_room_bytes")) return;
  const double room_bytes = p.figures["tgi_graph_room_bytes"].get<double>();
  const int block_size = p.figures["tgi_block_size"].get<int>();
  // v3 sets max_total_tokens to the pool when the context was not asked and is longer.
  int64_t max_s = p.figures["tgi_graph_tokens"].get<int64_t>();
  if (!VersionBefore(in.version, {3, 0, 0})) max_s = std::min(max_s, p.kv_tokens);
  const TgiCudaGraphs g = TgiCudaGraphSizes(in.version, in.tgi_cuda_graphs, in.model->quant.method);
  if (g.sizes.empty()) {
    if (in.tgi_cuda_graphs || !g.why.starts_with("none before")) p.assumptions.push_back("CUDA graphs: " + g.why);
    return;
  }
  const double priced = TgiGraphPoolBytes(in.version, g.sizes, *in.model, in.tp, max_s, block_size);
  const int64_t collectives = TgiCapturedCollectives(g.sizes, in.model->layers, in.tp);
  p.figures["tgi_graph_pool_bytes"] = priced;
  p.figures["tgi_graph_room_bytes"] = room_bytes;
  p.assumptions.push_back(
      "CUDA graphs for batch sizes " + TgiCudaGraphsFlag(g.sizes) + " (" + g.why + ") captured after the KV cache " +
      "(flash_causal_lm.py warmup): a pool of " + FormatGiB(priced) + " (the largest size's decode forward, each " +
      "graph's logits, the block tables of " + std::to_string(max_s) + " tokens) from the " +
      FormatGiB(std::max(room_bytes, 0.0)) + " a rank the KV sizing leaves" +
      (collectives > 0 ? ", with " + std::to_string(collectives) + " NCCL collectives captured (two all-reduces a " +
                             "layer and the LM head's all-gather a graph)"
                       : std::string("")));
  if (collectives > 0) {
    p.unknowns.push_back(
        "what the " + std::to_string(collectives) + " NCCL collectives in TGI's CUDA graphs hold: no source sizes it "
        "(NCCL_CUMEM_ENABLE is NCCL's default, NVIDIA/nccl#1234; the driver and topology decide); up to " +
        FormatGiB(static_cast<double>(collectives) * kNcclCaptureHighBytesPerCollective) +
        " at the most measured a collective (1.6 MiB); --cuda-graphs with fewer sizes captures fewer");
  }
  const TgiCaptureRisk risk = TgiNcclCaptureRisk(in.version, g.sizes, in.tp, collectives, room_bytes, priced);
  if (risk.may_fail) {
    SayCaptureMayFail(risk.need_low_bytes, risk.need_high_bytes, risk.text, p);
  } else if (risk.uncertain) {
    p.outcome_certain = false;
    p.unknowns.push_back(risk.text);
  }
}

}  // namespace internal
}  // namespace tpt::memory
