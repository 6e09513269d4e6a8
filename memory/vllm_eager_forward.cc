#include "memory/vllm_eager_forward.h"

#include "memory/memory_model.h"

namespace tpt::memory {

bool VllmMlpKeepsGateUp(std::string_view a) {
  // vLLM 0.11's model files whose MLP forward is `gate_up, _ = self.gate_up_proj(x); x =
  // self.act_fn(gate_up); x, _ = self.down_proj(x)` (registry.py's architecture -> file):
  // qwen2.py (also the language model of Qwen2-VL / Qwen2.5-VL, built as Qwen2ForCausalLM),
  // qwen3.py (`from .qwen2 import Qwen2MLP as Qwen3MLP`), seed_oss.py, gemma.py, gemma2.py,
  // gemma3.py (and gemma3_mm.py's Gemma3ForCausalLM), internlm2.py, exaone.py, exaone4.py,
  // baichuan.py, commandr.py, granite.py, olmo.py, olmo2.py, stablelm.py, minicpm.py,
  // orion.py, solar.py, qwen.py, chameleon.py. MoE models are priced by their fused-MoE term.
  static constexpr std::string_view kKeeps[] = {
      "Qwen2ForCausalLM",   "Qwen3ForCausalLM",    "SeedOssForCausalLM",   "Qwen2VLForConditionalGeneration",
      "Qwen2_5_VLForConditionalGeneration",        "GemmaForCausalLM",     "Gemma2ForCausalLM",
      "Gemma3ForCausalLM",  "Gemma3ForConditionalGeneration",              "InternLM2ForCausalLM",
      "ExaoneForCausalLM",  "Exaone4ForCausalLM",  "BaichuanForCausalLM",  "BaiChuanForCausalLM",
      "CohereForCausalLM",  "Cohere2ForCausalLM",  "GraniteForCausalLM",   "OlmoForCausalLM",
      "Olmo2ForCausalLM",   "StableLmForCausalLM", "StableLMEpochForCausalLM", "MiniCPMForCausalLM",
      "OrionForCausalLM",   "SolarForCausalLM",    "QWenLMHeadModel",      "ChameleonForConditionalGeneration"};
  for (std::string_view k : kKeeps) {
    if (a == k) return true;
  }
  return false;
}

VllmEagerForward VllmEagerForwardFor(const ModelConfig& m, std::string_view version, bool v1, bool enforce_eager,
                                     int tp) {
  VllmEagerForward f;
  if (v1 && !enforce_eager) return f;  // torch.compile frees at last use
  auto v = ParseVersion(version);      // an unknown version: the newest
  // Before 0.6.4 V0 charges the caching allocator's reserve, not the allocated peak.
  if (v.ok() && CompareVersions(*v, {0, 6, 4}) < 0) return f;
  f.eager = true;
  f.out_of_place = tp > 1 && !(v.ok() && CompareVersions(*v, {0, 6, 5}) < 0);
  f.mlp_keeps_gate_up = VllmMlpKeepsGateUp(m.architecture);
  return f;
}

}  // namespace tpt::memory
