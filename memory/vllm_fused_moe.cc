// vllm_fused_moe.cc: vLLM's fused-MoE caches in the profiling forward (vllm_fused_moe.h).
#include "memory/vllm_fused_moe.h"

#include <algorithm>

#include "memory/memory_model.h"

namespace tpt::memory {

VllmMoeCaches VllmMoeCachesFor(std::string_view version, const ModelConfig& m) {
  if (!m.quant.method.empty() && m.quant.method != "fp8") return VllmMoeCaches::kSeparate;
  auto v = ParseVersion(version);
  if (!v.ok()) return VllmMoeCaches::kShared13;  // the newest source
  return CompareVersions(*v, {0, 8}) >= 0 ? VllmMoeCaches::kShared13 : VllmMoeCaches::kSeparate;
}

double VllmFusedMoeBytes(const ModelConfig& m, int tp, int64_t tokens, VllmMoeCaches caches) {
  if (!m.IsMoe() || tokens <= 0) return 0;
  const double M = static_cast<double>(std::min<int64_t>(tokens, kVllmFusedMoeChunkTokens));
  const double k = m.experts_per_tok, e = m.dtype_bytes;
  const double N = 2.0 * m.moe_intermediate / std::max(tp, 1), K = m.hidden;
  // fused_moe.py fused_experts_impl: cache1 (M, k, N) and cache3 (M, k, K), shared from
  // 0.8 as cache13 = M x k x max(N, K); cache2 (M x k, N / 2) on its own.
  const double cache13 = caches == VllmMoeCaches::kShared13 ? std::max(N, K) : N + K;
  double bytes = M * k * (cache13 + N / 2) * e;
  if (m.quant.method == "fp8") {
    // use_fp8_w8a8 with dynamic activation scales: qcurr_hidden_states (M, K) and
    // qintermediate_cache2 (M x k, N / 2) in fp8, a float32 scale per 128 elements.
    bytes += (M * K + M * k * N / 2) * (1.0 + 4.0 / 128);
  }
  return bytes;
}

int64_t VllmDpMoeTokens(const ModelConfig& m, int dp, int64_t tokens) {
  if (!m.IsMoe() || dp <= 1 || tokens <= 0) return tokens;
  return static_cast<int64_t>(dp) * tokens;
}

double VllmDpMoeGatherBytes(const ModelConfig& m, int64_t rows) {
  if (!m.IsMoe() || rows <= 0) return 0;
  return static_cast<double>(rows) * (m.hidden + m.experts) * m.dtype_bytes;
}

}  // namespace tpt::memory
