// sglang_multimodal.h: how SGLang lowers --mem-fraction-static for a multimodal model, by
// version: which architectures count as multimodal, the factor, and whether it touches a
// fraction the user gave or only the server's default. Sources (sgl-project/sglang, the
// released wheels named) in sglang_multimodal.cc.
#ifndef TPT_MEMORY_SGLANG_MULTIMODAL_H_
#define TPT_MEMORY_SGLANG_MULTIMODAL_H_

#include <string>
#include <string_view>

#include "memory/model_config.h"

namespace tpt::memory {

struct SglangMultimodalFraction {
  double factor = 1.0;      // what the fraction in force is multiplied by (1: untouched)
  std::string why;          // said under `assumed:` when the factor is not 1 or the model is a VLM
  std::string unknown;      // said under `unknown:` when the version's rule is not known here
  double unknown_low = 1.0, unknown_high = 1.0;  // the factor's range when `unknown` is set
};

// `given`: the user passed --mem-fraction-static (from 0.4.9 SGLang lowers only its own
// default); `fraction`: the value in force before the step. `gpu_bytes`: one card's memory
// (0 unknown; the 2026 post-capture path uses it).
// `enable_multimodal`: --enable-multimodal (0.4.6 on: Gemma-3 / Llama-4 are text-only without it).
SglangMultimodalFraction SglangMultimodalFactor(std::string_view version, const ModelConfig& m, bool given,
                                                double fraction, double gpu_bytes, bool enable_multimodal = false);

}  // namespace tpt::memory

#endif  // TPT_MEMORY_SGLANG_MULTIMODAL_H_
