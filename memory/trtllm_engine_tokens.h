// trtllm_engine_tokens.h: the token count a TensorRT engine's execution context is built for
// when the build line did not pass --max_num_tokens, and the batch it is built for without
// --max_batch_size, by TensorRT-LLM version (task launches30, issue #31).
//
// Before 0.8.0 an engine came from each example's own build.py (examples/llama/build.py of
// 0.5.0-0.7.x; stored copy NVIDIA/TensorRT-LLM 027cd518): `--max_batch_size` default=8,
// `--max_input_len` default=2048, `--max_num_tokens` default=None, passed as is to
// `prepare_inputs(max_batch_size, max_input_len, max_output_len, True, max_beam_width,
// max_num_tokens)`; GenerationMixin.prepare_basic_inputs of that era (tensorrt_llm/models/
// generation_mixin.py): `if max_num_tokens is None: num_tokens_range = [1, max_batch_size *
// max_beam_width, max(max_input_len * max_batch_size, max_beam_width * max_batch_size)]`, so the
// context profile (and the activation memory TensorRT reserves for it) runs to max_batch_size x
// max_input_len tokens, not 8192. From 0.8.0 the examples build with trtllm-build; its
// default when the flag is absent is taken as BuildConfig's 8192 (the 0.8-0.10 trtllm-build
// default was not read here: see memory/README.md, "left").
#ifndef TPT_MEMORY_TRTLLM_ENGINE_TOKENS_H_
#define TPT_MEMORY_TRTLLM_ENGINE_TOKENS_H_

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "memory/memory_model.h"
#include "memory/model_config.h"

namespace tpt::memory {

struct TrtllmEngineLimits {
  int64_t max_batch_size = 2048;
  int64_t max_num_tokens = 8192;
  std::string batch_assumption, tokens_assumption;  // empty when the flag was given
};

inline bool TrtllmPerExampleBuild(std::string_view version) {
  return !version.empty() && VersionBefore(version, {0, 8, 0});
}

inline TrtllmEngineLimits TrtllmEngineBuildLimits(std::string_view version, std::optional<int64_t> max_batch_size,
                                                  std::optional<int64_t> max_num_tokens,
                                                  std::optional<int64_t> max_seq_len) {
  TrtllmEngineLimits l;
  const bool old = TrtllmPerExampleBuild(version);
  l.max_batch_size = max_batch_size.value_or(old ? 8 : 2048);
  if (!max_batch_size) {
    l.batch_assumption = old ? "--max_batch_size 8 (build.py's default before 0.8.0)"
                             : "--max_batch_size 2048 (trtllm-build's default)";
  }
  if (max_num_tokens) {
    l.max_num_tokens = *max_num_tokens;
  } else if (old) {
    // max_input_len is build.py's 2048 (no input of the plan's); an engine whose whole
    // sequence is shorter cannot take longer inputs.
    const int64_t input = max_seq_len && *max_seq_len > 0 ? std::min<int64_t>(2048, *max_seq_len) : 2048;
    l.max_num_tokens = l.max_batch_size * input;
    l.tokens_assumption = "--max_num_tokens not passed: before 0.8.0 the engine's context profile runs to "
                          "max_batch_size x max_input_len = " + std::to_string(l.max_batch_size) + " x " +
                          std::to_string(input) + " = " + std::to_string(l.max_num_tokens) +
                          " tokens (build.py's max_input_len 2048; generation_mixin.py prepare_basic_inputs)";
  } else {
    l.tokens_assumption = "--max_num_tokens 8192 (trtllm-build's default)";
  }
  return l;
}

// What a TensorRT engine does not hold of the forward vLLM's estimate prices
// (VllmActivationPeakBytes: 3 x T x h alive across a layer, the residual, the normed input
// and the block's output, under the widest intermediates). TensorRT plans the activation
// memory of its execution context from tensor lifetimes: a tensor's memory is free once its
// last consumer ran. In the engine's decoder layer (tensorrt_llm/models/llama/model.py:
// residual = hidden; hidden = input_layernorm(hidden); ... hidden = residual + mlp(post_layernorm(...)))
// and GatedMLP (tensorrt_llm/layers/mlp.py: inter = act(fc(x)); gate = gate(x);
// proj(inter * gate); stored copy search-index 40580324052, the per-example-build era; later
// releases fuse fc and gate into one 2I GEMM, the same bytes) the widest point is the
// residual (h) beside fc's activation, gate and their product (3 I / tp), the normed input
// x dead once both GEMMs read it: h + 3 I / tp, not 3 h + 3 I / tp. At the attention the
// same holds (residual, qkv, the plugin's output). So 2 x T x h fewer bytes than vLLM's
// figure; nothing when the model is unknown.
inline double TrtllmEngineFreedBeforeThePeak(const ModelConfig* m, int64_t tokens, std::vector<std::string>& said) {
  if (!m || m->hidden <= 0 || tokens <= 0) return 0;
  const double e = m->dtype_bytes > 0 ? m->dtype_bytes : 2;
  const double freed = 2.0 * static_cast<double>(tokens) * m->hidden * e;
  said.push_back("the engine's execution context holds 2 x tokens x hidden fewer bytes than that forward: TensorRT frees "
                 "the normed input once its GEMMs ran and has no layer output beside the MLP's intermediates (" +
                 FormatGiB(freed) + " less)");
  return freed;
}

}  // namespace tpt::memory

#endif  // TPT_MEMORY_TRTLLM_ENGINE_TOKENS_H_
