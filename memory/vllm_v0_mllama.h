// vllm_v0_mllama.h: the least vLLM V0's profiling run of Llama-3.2-Vision
// (MllamaForConditionalGeneration) holds in its vision tower, read in the 0.6.3 and 0.8.3
// wheels (worker/enc_dec_model_runner.py profile_run, models/mllama.py).
//
// profile_run builds max_num_seqs dummy sequences, each with --limit-mm-per-prompt's images
// (1 by default) of max_num_tiles tiles (0.6.3 mllama.py dummy_encoder_data_for_mllama: a
// 1024 x 1024 image; 0.8.3 get_image_size_with_most_features: max_num_tiles x image_size
// high), and runs them in one forward: the vision tower takes every tile of every sequence
// at once (MllamaVisionModel.forward: pixel_values reshaped to batch x images x tiles). Held
// together at the end of its local transformer, whatever the attention kernel:
// - the aspect-ratio attention mask, (images, 1, N, N) in the model dtype with N = tiles x
//   rows a tile (_prepare_aspect_ratio_attention_mask: attention_mask @ attention_mask.T);
// - the tuple of the intermediate_layers_indices' hidden states (MllamaVisionEncoder.forward
//   `encoder_states + (hidden_states,)`), images x N x width each, and their torch.stack copy
//   (0.6.3:561, 0.8.3:763) while the tuple is still referenced;
// - the running hidden state.
// That sum is a floor on the encoder's peak (its MLP and attention temporaries come on top):
// the plan takes it as the activation peak where it is the larger and never prices below it.
//
//   VllmV0MllamaFloor f = VllmV0Mllama(model, "0.6.3", 256, 1);
//   // 256 images x 4 tiles x 1,608 rows: mask 19.7 GiB + 2 x 5 kept states 19.6 GiB each ...
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "memory/model_config.h"

namespace tpt::memory {

struct VllmV0MllamaFloor {
  bool modelled = false;  // false: not mllama, or a version outside 0.6.2-0.9.x (V0 with mllama)
  int64_t images = 0;     // dummy images through the tower at once
  double floor = 0;       // bytes the tower holds at once at the least
  std::string arithmetic;
};

VllmV0MllamaFloor VllmV0Mllama(const ModelConfig& m, std::string_view version, int64_t max_num_seqs,
                               int64_t images_per_prompt);

}  // namespace tpt::memory
