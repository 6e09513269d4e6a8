// vllm_v0_gemma3.cc: vLLM V0's profiling run of Gemma-3 (vllm_v0_gemma3.h).
//
// The dummy (worker/model_runner.py _dummy_run, 0.8.3:1302-1311, the same lines in 0.8.4,
// 0.8.5 and 0.9.2): max_mm_tokens = mm_registry.get_max_multimodal_tokens(model_config), the
// limit (1 by default in V0) times an image's tokens, and max_num_seqs = min(max_num_seqs,
// max_num_batched_tokens // max_mm_tokens) (1 at least), each sequence T // seqs tokens (the
// first T % seqs one more). An image's tokens there:
//   0.8.0-0.8.3: Gemma3ProcessingInfo.get_mm_max_tokens_per_item -> get_max_image_tokens ->
//     get_num_image_tokens, the length of the replacement's features encoded: the processor's
//     full_image_sequence stripped of its "\n\n", <start_of_image> + mm_tokens_per_image soft
//     tokens + <end_of_image> (gemma3_mm.py 0.8.3:80-85, 176-244; 0.8.1:84, 209-232): 258;
//   0.8.4 on: the profiler's placeholders counted by get_num_embeds, the image soft tokens
//     alone (PromptUpdateDetails.select_token_id, gemma3_mm.py 0.8.4:160-211;
//     multimodal/profiling.py 0.8.4:185-194, 0.9.2:180-189): 256.
// Pan-and-scan is off by default (get_num_crops returns 0), so an image is one 896 x 896
// SigLIP input. The dummy prompt is the processor's text for `limit` images: BOS, then
// "\n\n" <start_of_image> soft tokens <end_of_image> "\n\n" an image (transformers'
// Gemma3Processor.full_image_sequence; "\n\n" is one token in Gemma's vocabulary), padded with
// zeros to seq_len and never cut (multimodal/profiling.py get_decoder_dummy_data: V0 only
// warns when the prompt is longer).
//
// The forward (gemma3_mm.py 0.8.3:604-690, 0.9.2:560-640): get_multimodal_embeddings runs the
// vision tower once over every dummy image's pixel values (_process_image_input), then the
// projector; the prompt's embeddings are merged, prepare_attn_masks builds two seq_len^2 masks a
// sequence, and the language model runs over all the tokens. The pixel values reach the GPU in
// the HF processor's float32 and stay referenced by the model runner's kwargs through the whole
// forward; 0.8.x casts them to the model dtype in _image_pixels_to_features
// (`vision_tower(pixel_values.to(dtype=target_dtype))`, an argument the tower's frames keep
// through its call), 0.9.2 passes them as they are (the patch embedding casts a temporary).
// forward's local vision_embeddings (the projector's outputs) stays referenced through the
// language model's run. SigLIP's layer is priced as vLLM V1's encoder profile prices it
// (vllm_mm_profile.cc: the same siglip.py serves both engines at a version). With images the
// V0 layers attend per sequence with the dense masks (gemma3.py naive_attn_with_masks: k and v
// repeated to the query heads, 2 x T x heads x head_dim): below the MLP's tensors at these
// sizes, and the masks a few MiB: neither is priced.
#include "memory/vllm_v0_gemma3.h"

#include <algorithm>

#include "memory/launch_plan_internal.h"
#include "memory/memory_model.h"
#include "memory/vllm_mm_profile.h"

namespace tpt::memory {

VllmV0Gemma3Profile VllmV0Gemma3(const ModelConfig& m, std::string_view version, int tp, int64_t max_num_batched_tokens,
                                 int64_t max_num_seqs, int64_t images_per_prompt) {
  VllmV0Gemma3Profile p;
  if (m.architecture != "Gemma3ForConditionalGeneration" || !m.vit_siglip || m.mm_item_tokens <= 0 ||
      m.vision_max_patches <= 0 || VersionBefore(version, {0, 8, 0}) || !VersionBefore(version, {0, 10, 0})) {
    return p;
  }
  p.modelled = true;
  tp = std::max(tp, 1);
  const int64_t T = std::max<int64_t>(max_num_batched_tokens, 1);
  const int64_t limit = std::max<int64_t>(images_per_prompt, 0);
  const bool features = VersionBefore(version, {0, 8, 4});  // boi + soft tokens + eoi
  p.item_tokens = m.mm_item_tokens + (features ? 2 : 0);
  const int64_t max_mm = limit * p.item_tokens;
  p.seqs = max_mm > 0 ? std::max<int64_t>(1, std::min(max_num_seqs, T / max_mm)) : std::max<int64_t>(max_num_seqs, 1);
  const int64_t prompt = 1 + limit * (m.mm_item_tokens + 4);  // BOS + "\n\n" boi soft eoi "\n\n" an image
  p.lm_tokens = 0;
  for (int64_t s = 0; s < p.seqs; ++s) {
    const int64_t seq_len = T / p.seqs + (s < T % p.seqs ? 1 : 0);
    p.lm_tokens += limit > 0 ? std::max(seq_len, prompt) : seq_len;
  }
  p.images = p.seqs * limit;
  if (p.images == 0) {
    p.arithmetic = "--limit-mm-per-prompt image=0: V0 profiles no image";
    return p;
  }
  p.patches = p.images * m.vision_max_patches;
  const QwenVitPeak vit = QwenVitLayerPeak(m, p.patches, tp, version);
  const double P = static_cast<double>(p.patches), elems = static_cast<double>(m.vision_patch_elems);
  const double pixels = P * elems * 4.0;
  const double cast = VersionBefore(version, {0, 9, 0}) ? P * elems * m.dtype_bytes : 0.0;
  p.encoder_phase = vit.layer + pixels + cast;
  const double embeds = static_cast<double>(p.images) * static_cast<double>(m.mm_item_tokens) * m.hidden * m.dtype_bytes;
  p.held = pixels + embeds;
  p.arithmetic = "V0 profiles " + std::to_string(p.seqs) + " dummy sequence(s) (min(" + std::to_string(max_num_seqs) +
                 ", " + internal::WithCommas(T) + " // " + std::to_string(max_mm) + " multimodal tokens: " +
                 std::to_string(limit) + " image(s) of " + std::to_string(p.item_tokens) + ")) of " +
                 std::to_string(limit) + " image(s) each: SigLIP runs over " + std::to_string(p.images) +
                 " images at once, " + vit.arithmetic + " + float32 pixel values " + FormatGiB(pixels) +
                 (cast > 0 ? " + their cast " + FormatGiB(cast) : "") + " = " + FormatGiB(p.encoder_phase) +
                 "; the language model runs over " + internal::WithCommas(p.lm_tokens) + " tokens beside the pixel values "
                 "and the images' embeddings (" + FormatGiB(p.held) + ")";
  return p;
}

}  // namespace tpt::memory
