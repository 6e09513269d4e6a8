// vllm_v0_gemma3.h: vLLM V0's profiling run of Gemma-3 (Gemma3ForConditionalGeneration),
// read in the 0.8.1 wheel and the 0.8.3, 0.8.4, 0.8.5 and 0.9.2 sdists
// (worker/model_runner.py _dummy_run, multimodal/registry.py get_max_multimodal_tokens,
// multimodal/profiling.py, models/gemma3_mm.py, models/siglip.py): how many dummy sequences
// it runs, the images they carry, the tokens the language model runs over, and SigLIP's
// activation peak over all the images at once.
//
//   VllmV0Gemma3Profile p = VllmV0Gemma3(gemma3_27b, "0.8.3", 1, 5120, 256, 1);
//   // p.item_tokens == 258, p.seqs == 19 (5120 // 258), p.patches == 19 x 4096
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "memory/model_config.h"

namespace tpt::memory {

struct VllmV0Gemma3Profile {
  bool modelled = false;     // false: not Gemma-3's SigLIP tower, or a version not read
  int64_t item_tokens = 0;   // an image's tokens in max_mm_tokens (the profile's divisor)
  int64_t seqs = 1;          // dummy sequences: max(1, min(max_num_seqs, T // (images x item_tokens)))
  int64_t images = 0;        // dummy images, all sequences (the limit a prompt, 1 by default)
  int64_t patches = 0;       // SigLIP patches in its one call over every image
  int64_t lm_tokens = 0;     // tokens the language model runs over (a prompt is never cut below its images)
  double encoder_phase = 0;  // bytes at SigLIP's widest layer, with the pixel values it is given
  double held = 0;           // bytes held through the language model's run: pixel values + image embeddings
  std::string arithmetic;    // the figures above, for plan's output
};

// `images_per_prompt` is --limit-mm-per-prompt's image count (V0's default when absent: 1).
// Modelled on V0 0.8.0-0.9.x (Gemma-3 came with 0.8.0; 0.8.0 and 0.8.2 taken as 0.8.1 and
// 0.8.3, the same processor code); other versions and models return modelled = false.
VllmV0Gemma3Profile VllmV0Gemma3(const ModelConfig& m, std::string_view version, int tp, int64_t max_num_batched_tokens,
                                 int64_t max_num_seqs, int64_t images_per_prompt);

}  // namespace tpt::memory
