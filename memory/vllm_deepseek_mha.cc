#include "memory/vllm_deepseek_mha.h"

namespace tpt::memory {

bool VllmDeepseekKvAsMha(const ModelConfig& m, std::string_view version, KvDims* dims, std::string* why) {
  if (!m.IsMla()) return false;
  if (m.architecture != "DeepseekV2ForCausalLM" && m.architecture != "DeepseekV3ForCausalLM") return false;
  auto v = ParseVersion(version);
  if (!v.ok() || CompareVersions(*v, {0, 7, 1}) >= 0) return false;
  constexpr int kPaddedHead = 256;  // deepseek_v2.py 0.5.1:279, 0.6.6.post1:267
  KvDims d;
  d.layers = dims->layers;
  d.kv_heads = m.heads;  // num_kv_heads = num_local_heads: every query head keeps its K and V
  d.head_dim = kPaddedHead;
  d.dtype_bytes = dims->dtype_bytes;
  *dims = d;
  *why = "KV cell: vLLM " + std::string(version) + " runs " + m.architecture +
         " attention as multi-head attention padded to 256 (deepseek_v2.py: Attention(num_local_heads, 256, "
         "num_kv_heads=num_local_heads), before MLA in 0.7.1): K and V of " + std::to_string(m.heads) +
         " heads x 256 a layer, not the " + std::to_string(m.kv_lora_rank + m.qk_rope_head_dim) + "-wide latent";
  return true;
}

}  // namespace tpt::memory
