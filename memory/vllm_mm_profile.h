// vllm_mm_profile.h: what vLLM V1's profiling run does with a multimodal model's encoder
// before the language model's dummy run (v1/worker/gpu_model_runner.py profile_run,
// v1/core/encoder_cache_manager.py compute_encoder_budget, read in the 0.8.2, 0.9.2,
// 0.10.0, 0.10.1.1 and 0.11.0 sdists): which dummy items it encodes, the encoder's activation
// peak over their patches, and what stays allocated through the language model's run and
// the sampler.
// Priced from config.json's vision_config for the towers read (Qwen2-VL, Qwen2.5-VL, and
// Gemma-3's SigLIP).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"
#include "memory/model_config.h"

namespace tpt::memory {

// vLLM's --limit-mm-per-prompt: items of each modality one prompt may hold. Without the
// flag (given false) MultiModalConfig.get_limit_per_prompt's default: 1 in 0.8.2, 999 under
// V1 from 0.9 (config.py 0.9.2, config/__init__.py 0.10.1.1, config/multimodal.py 0.11.0).
struct VllmMmLimits {
  int image = 1, video = 1;
  bool given = true;
  static VllmMmLimits Default() { return {1, 1, false}; }  // the flag absent
};

// "image=10,video=10" (the flag's form before vLLM 0.10) or '{"image": 10, "video": 10}'.
StatusOr<VllmMmLimits> ParseVllmMmLimits(std::string_view text);
// The flag's value as `version` takes it, ready for a shell: key=value pairs before 0.9
// (arg_utils.py nullable_kvs, 0.8.2), JSON in single quotes from 0.9 (0.9.2 takes both and
// deprecates the pairs; 0.10.1.1 parses JSON only).
std::string VllmMmLimitsFlag(const VllmMmLimits& limits, std::string_view version);

// The Qwen2-VL / Qwen2.5-VL vision transformer's widest layer over `patches` patches at
// `version` (vllm_mm_profile.cc has the forward it follows), in bytes, with the arithmetic.
struct QwenVitPeak {
  double layer = 0;
  std::string arithmetic;
};
QwenVitPeak QwenVitLayerPeak(const ModelConfig& m, int64_t patches, int tp, std::string_view version);

struct VllmEncoderProfile {
  bool modelled = false;   // false: a tower or version not read; the rough estimate stays
  std::string modality;    // "image" | "video"; "" when --limit-mm-per-prompt turned both off
  int64_t item_tokens = 0; // language-model tokens of one dummy item (its encoder outputs)
  int64_t items = 0;       // items encoded in the one batch
  int64_t patches = 0;     // patches through the encoder, all items together
  double encoder_peak = 0; // bytes at the encoder's widest point, its inputs included
  double held = 0;         // bytes held through the language model's dummy run and the sampler
  std::string arithmetic;  // the figures above, for plan's output
};

// Qwen2-VL, Qwen2.5-VL and Gemma-3 (ModelConfig::vit_*) on vLLM V1 0.8.0-0.21.x, Qwen3-VL on
// 0.11.0-0.21.x (0.8.2-0.11.0 and 0.12.0, 0.13.0, 0.14.1, 0.16.0, 0.18.1, 0.20.2, 0.21.0
// read; 0.11.1-0.11.2 taken as 0.11.0, inferred); otherwise `modelled` is false. max_model_len decides the dummy video's frames, as vLLM's
// get_max_tokens_per_item_by_modality does.
VllmEncoderProfile VllmV1EncoderProfile(const ModelConfig& m, std::string_view version, int tp,
                                        int64_t max_num_batched_tokens, int64_t max_num_seqs,
                                        int64_t max_model_len, const VllmMmLimits& limits);

}  // namespace tpt::memory
