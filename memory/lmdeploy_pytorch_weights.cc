// lmdeploy_pytorch_weights.cc: the weights LMDeploy's PyTorch engine keeps whole on every
// rank (sources in the header).
#include "memory/lmdeploy_pytorch_weights.h"

#include "memory/memory_model.h"

namespace tpt::memory {

LmdeployWhole LmdeployPytorchWhole(const ModelConfig& m, std::string_view version) {
  LmdeployWhole w;
  w.lm_head = true;
  // deepseek_v2.py's ParallelEmbedding(is_tp=True) from v0.12.0 (DeepseekV2/V3, V3.2 and
  // GLM-4-MoE-Lite through module_map.py); deepseek_v4.py's build_embedding(is_tp=True).
  const bool deepseek = m.architecture == "DeepseekV2ForCausalLM" || m.architecture == "DeepseekV3ForCausalLM" ||
                        m.architecture == "DeepseekV32ForCausalLM" || m.architecture == "Glm4MoeLiteForCausalLM" ||
                        m.architecture == "DeepseekV4ForCausalLM";
  const bool split_embedding = deepseek && !VersionBefore(version, {0, 12, 0});
  w.embedding = !split_embedding;
  w.vision_merger = m.architecture == "Qwen2VLForConditionalGeneration" ||
                    m.architecture == "Qwen2_5_VLForConditionalGeneration";
  return w;
}

}  // namespace tpt::memory
