// vllm_v0_internvl.cc: vLLM V0's profiling run of InternVL (vllm_v0_internvl.h), from the
// 0.6.5, 0.6.6.post1 and 0.7.0 sdists (internvl.py and the profile run are the same in the
// three; intern_vit.py's InternSdpaAttention reshapes instead of viewing its output in 0.7.0,
// the same bytes where the view held).
//
// The dummy (worker/model_runner.py profile_run, 0.6.6:1270-1306): max_mm_tokens =
// limit x the largest image's tokens (MultiModalRegistry.get_max_multimodal_tokens), so
// max_num_seqs = max(1, min(max_num_seqs, max_num_batched_tokens // max_mm_tokens)) ("Computed
// max_num_seqs (min(256, 8192 // 53248)) to be less than 1" in a log), each sequence
// seq_len = T // seqs tokens. InternVL's dummy_data (internvl.py 0.6.6:419-465) puts `limit`
// images of max_dynamic_patch x 448 wide (12 tiles + the thumbnail for InternVL3) in each,
// and dummy_seq_data_for_clip (clip.py 0.6.6:48-67) makes the prompt image tokens then
// seq_len - image tokens zeros: never shorter than its images, so the language model runs
// over max(seq_len, images' tokens) a sequence.
//
// The forward (internvl.py 0.6.6 forward): the images first (get_multimodal_embeddings:
// pixel_values flattened to tiles, one call of InternViT over all of them, extract_feature's
// pixel shuffle and mlp1), then the prompt's embeddings, the merge and the language model.
// The pixel values reach the GPU as the input mapper made them, float32 (ToTensor +
// Normalize), and stay referenced by the model runner's kwargs through the whole forward.
//
// InternViT's layer (intern_vit.py 0.6.6), u = tiles x (patches + 1) x width x dtype bytes,
// what is allocated at its widest point:
//   held across the layers: the embeddings (InternVisionModel.forward's hidden_states and the
//   encoder's inputs_embeds) and the layer's input (the encoder's loop variable): 2u (1u for
//   a one-layer tower);
//   attention, whole on every rank when num_heads % tp != 0 (_init_attn falls back to
//   InternSdpaAttention): norm1's output (the caller's argument) 1u, qkv 3u, q after its
//   RMSNorm 1u, and k's RMSNorm in forward_native (layernorm.py 0.6.6:37-73: a float32 copy 2u
//   and x * rsqrt 2u): 9u with qk_normalization; without it qkv, F.scaled_dot_product_attention's
//   output and proj's: 6u;
//   attention split by TP (InternParallelAttention): qkv 3u/tp; with qk_normalization at
//   tp > 1 _apply_qk_norm all-gathers q and k whole for the norms (q's normed whole tensor
//   stays referenced by its split): 1u + 3u/tp + q 1u + k 1u + the norm's 4u; at tp 1 as
//   whole; without it 1u + 3u/tp + output u/tp + proj 1u;
//   the MLP (InternMLP, fc1/fc2 split by TP): the attention's residual 1u, norm2's output 1u,
//   then fc1 and its GELU (r = intermediate / (width x tp) each) or GELU and fc2 (r + 1u).
// The embeddings' own phase (the float32 pixels, their cast, the conv, the class token's cat
// and the position add: 3u) and extract_feature's pixel shuffle (two contiguous copies of u)
// stay below these for every config here.
#include "memory/vllm_v0_internvl.h"

#include <algorithm>
#include <cstdio>

#include "memory/memory_model.h"

namespace tpt::memory {

int64_t InternVlMostImagesAPrompt(const ModelConfig& m, int64_t max_model_len) {
  if (m.intern_vit.tiles <= 0 || m.intern_vit.tile_tokens <= 0) return 0;
  return std::max<int64_t>(max_model_len / m.intern_vit.tile_tokens, 1);
}

VllmV0InternVlProfile VllmV0InternVl(const ModelConfig& m, std::string_view version, int tp,
                                     int64_t max_num_batched_tokens, int64_t max_num_seqs, int64_t images_per_prompt) {
  VllmV0InternVlProfile p;
  const ModelConfig::InternVit& v = m.intern_vit;
  if (v.tiles <= 0 || VersionBefore(version, {0, 6, 5}) || !VersionBefore(version, {0, 7, 1})) return p;
  p.modelled = true;
  tp = std::max(tp, 1);
  const int64_t T = std::max<int64_t>(max_num_batched_tokens, 1);
  const int64_t limit = std::max<int64_t>(images_per_prompt, 0);
  const int64_t item_tokens = static_cast<int64_t>(v.tiles) * v.tile_tokens;
  const int64_t max_mm = limit * item_tokens;
  p.seqs = max_mm > 0 ? std::max<int64_t>(1, std::min(max_num_seqs, T / max_mm)) : std::min(max_num_seqs, T);
  p.lm_tokens = 0;
  for (int64_t s = 0; s < p.seqs; ++s) {
    const int64_t seq_len = T / p.seqs + (s < T % p.seqs ? 1 : 0);
    p.lm_tokens += std::max(seq_len, max_mm);
  }
  p.images = p.seqs * limit;
  p.tiles = p.images * v.tiles;
  p.image_tokens = p.images * item_tokens;
  if (p.tiles == 0) {
    p.arithmetic = "--limit-mm-per-prompt image=0: V0 profiles no image";
    return p;
  }
  const double e = m.dtype_bytes;
  const double u = static_cast<double>(p.tiles) * v.tile_patches * v.width * e;
  const bool whole = v.heads % tp != 0;
  double attn = 0;
  if (whole || tp == 1) {
    attn = v.qk_norm ? 9 : 6;
  } else {
    attn = v.qk_norm ? 7 + 3.0 / tp : 2 + 4.0 / tp;
  }
  const double r = static_cast<double>(v.mlp) / (static_cast<double>(v.width) * tp);
  const double mlp = 2 + std::max(2 * r, r + 1);
  const double base = v.layers >= 2 ? 2 : 1;
  const double units = base + std::max(attn, mlp);
  const double pixels = static_cast<double>(p.tiles) * v.channels * v.image_size * v.image_size * 4.0;
  p.vit_peak = units * u + pixels;
  p.held = pixels + static_cast<double>(p.image_tokens) * m.hidden * e;
  char buf[512];
  std::snprintf(buf, sizeof(buf),
                "V0 profiles %lld dummy sequence(s) of %lld image(s) (%lld tiles each, %lld tokens an image): "
                "InternViT runs over %lld tiles x %d rows at once, its widest layer %.2f x %s (%s attention%s) + "
                "float32 pixel values %s = %s; the language model runs over %lld tokens",
                static_cast<long long>(p.seqs), static_cast<long long>(limit), static_cast<long long>(v.tiles),
                static_cast<long long>(item_tokens), static_cast<long long>(p.tiles), v.tile_patches, units,
                FormatGiB(u).c_str(), whole ? "whole on every rank" : "split by TP",
                v.qk_norm ? ", q/k RMSNorm in float32" : "", FormatGiB(pixels).c_str(),
                FormatGiB(p.vit_peak).c_str(), static_cast<long long>(p.lm_tokens));
  p.arithmetic = buf;
  if (!v.defaults.empty()) p.arithmetic += " (InternVLChatConfig's defaults taken: " + v.defaults + ")";
  return p;
}

}  // namespace tpt::memory
