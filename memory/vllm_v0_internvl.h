// vllm_v0_internvl.h: vLLM V0's profiling run of InternVL (InternVLChatModel), read in the
// 0.6.5, 0.6.6.post1 and 0.7.0 sdists (worker/model_runner.py profile_run / _dummy_run,
// inputs/registry.py dummy_data_for_profiling, multimodal/registry.py
// init_mm_limits_per_prompt, models/internvl.py dummy_data and forward, models/clip.py
// dummy_seq_data_for_clip, models/intern_vit.py): how many dummy images it builds from
// --limit-mm-per-prompt, the tiles they make, the tokens the language model runs over, and
// InternViT's activation peak over all the tiles at once.
//
//   VllmV0InternVlProfile p = VllmV0InternVl(model, "0.6.6.post1", 8, 8192, 256, 16);
//   // p.tiles == 208, p.lm_tokens == 53248, p.vit_peak: InternViT-6B's widest layer + pixels
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "memory/model_config.h"

namespace tpt::memory {

struct VllmV0InternVlProfile {
  bool modelled = false;     // false: not InternVL, V1, or a version not read
  int64_t seqs = 1;          // dummy sequences: max(1, min(max_num_seqs, T // (images x image tokens)))
  int64_t images = 0;        // dummy images, all sequences
  int64_t tiles = 0;         // 448 x 448 tiles through InternViT in its one call
  int64_t image_tokens = 0;  // language-model tokens of those images
  int64_t lm_tokens = 0;     // tokens the language model runs over (a prompt is never cut below its images)
  double vit_peak = 0;       // bytes at InternViT's widest point, with the float32 pixel values
  double held = 0;           // bytes held through the language model's run: pixel values + image embeddings
  std::string arithmetic;    // the figures above, for plan's output
};

// `images_per_prompt` is --limit-mm-per-prompt's image count (V0's default when absent: 1,
// init_mm_limits_per_prompt `config_limits_per_plugin.get(key, 1)`). Modelled on V0
// 0.6.5-0.7.0; other versions, and models without ModelConfig::intern_vit, return
// modelled = false.
VllmV0InternVlProfile VllmV0InternVl(const ModelConfig& m, std::string_view version, int tp,
                                     int64_t max_num_batched_tokens, int64_t max_num_seqs, int64_t images_per_prompt);

// The most images one prompt of `max_model_len` tokens can carry (one tile each, the least an
// image takes): past it a larger --limit-mm-per-prompt only grows the profiling run. 0 when
// not InternVL.
int64_t InternVlMostImagesAPrompt(const ModelConfig& m, int64_t max_model_len);

}  // namespace tpt::memory
