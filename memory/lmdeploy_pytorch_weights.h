// lmdeploy_pytorch_weights.h: which weights LMDeploy's PyTorch engine keeps whole on every
// tensor-parallel rank. Its model files build the attention and MLP linears split by TP and
// leave the token embedding, the LM head and Qwen2-VL / Qwen2.5-VL's patch embedding and
// merger unsplit, so at TP > 1 each rank holds them in full (vLLM, SGLang and TurboMind split
// the vocabulary matrices by TP).
//
//   Sharding s; ... LmdeployPytorchWhole(model, version) -> s.embedding_whole, s.lm_head_whole,
//   s.vision_merger_whole
#pragma once

#include <string_view>

#include "memory/model_config.h"

namespace tpt::memory {

struct LmdeployWhole {
  bool embedding = false;      // embed_tokens on every rank in full (vocab x hidden)
  bool lm_head = false;        // lm_head on every rank in full (hidden x vocab)
  bool vision_merger = false;  // ModelConfig::vision_merger_params on every rank in full
};

// InternLM/lmdeploy, lmdeploy/pytorch/models/ (read at v0.6.0, v0.7.2, v0.9.2, v0.10.0,
// v0.12.0, v0.13.0, v0.16.0):
// - the embedding: qwen2.py (and llama.py, qwen2_5_vl.py, internlm2.py ...) build
//   `nn.Embedding(config.vocab_size, ...)` (v0.6.0-v0.12.x) or `build_embedding(...)` without
//   is_tp (v0.13.0 on; utils/model.py build_embedding: ParallelEmbedding(is_tp=False) by
//   default). DeepSeek-V2/V3's deepseek_v2.py (DeepseekV2/V3ForCausalLM, and the
//   architectures module_map.py maps to it) passes is_tp=True from v0.12.0
//   (ParallelEmbedding); deepseek_v4.py (v0.16.0) too.
// - the LM head: `build_rowwise_linear(hidden, vocab, bias=False, ...)` (v0.6.0-v0.12.x) or
//   DeployModelMixinV1.build_lm_head (v0.13.0 on), both without is_tp, whose default is
//   False (nn/linear.py build_rowwise_linear v0.6.0:1157, v0.7.2:1336, v0.9.2:166,
//   v0.13.0:147): no model passes is_tp for it at any tag read.
// - v0.5.x runs transformers' modules patched by lmdeploy: _distribute_partition_fn splits
//   only the attention and MLP projections (models/llama.py, qwen2.py v0.5.3), the same.
// - Qwen2-VL / Qwen2.5-VL's tower: PatchEmbed's nn.Conv3d and the PatchMerger's two
//   nn.Linear (qwen2_vl.py PatchMerger, qwen2_5_vl.py Qwen2_5_VLPatchMerger, v0.7.2, v0.9.2,
//   v0.12.0, v0.16.0) are whole; its blocks' qkv, proj and MLP pass is_tp=True (split).
// A tied head shares the embedding's tensor (one whole copy). Empty or unparsable version:
// the newest read.
LmdeployWhole LmdeployPytorchWhole(const ModelConfig& m, std::string_view version);

}  // namespace tpt::memory
