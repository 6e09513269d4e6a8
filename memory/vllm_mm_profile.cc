// vllm_mm_profile.cc: vLLM V1's encoder profiling (vllm_mm_profile.h), from the source of
// the 0.8.2, 0.9.2, 0.10.1.1 and 0.11.0 sdists (0.9.0 read for the rotary change, 0.10.0
// for the item count; 0.10.1's vision block fuses norm2 with the residual add, in place,
// and 0.11's merges gate and up, which leaves the MLP phase below as it was; 0.11's
// changes are marked where they apply). Read on through 0.21 for every tower here (the 0.12.0,
// 0.13.0, 0.14.1, 0.16.0, 0.18.1, 0.20.2 and 0.21.0 sdists; QwenVitLayerPeakFrom012 and the
// version checks in VllmV1EncoderProfile say what changed; Qwen2-VL's processing info, its
// dummy video's frames against max_model_len at most 14, is 0.11's throughout):
//
// profile_run (v1/worker/gpu_model_runner.py): the modality with the most tokens per item
// (MULTIMODAL_REGISTRY.get_max_tokens_per_item_by_nonzero_modality, at max_model_len,
// modalities off in --limit-mm-per-prompt left out; a tie keeps the first, image), then
// min(cdiv(encoder budget, item tokens), max_num_seqs x the modality's limit) (0.10 changes
// the rounding and the per-prompt count, below) copies of its
// largest dummy item, batched and moved to the GPU (MultiModalKwargs.as_kwargs, no cast:
// the HF processor's float32 pixel values), encoded in one call (get_multimodal_embeddings),
// the outputs kept in the encoder cache; `batched_dummy_mm_inputs` and the outputs stay
// referenced until profile_run returns, through `_dummy_run(max_num_tokens)` and
// `_dummy_sampler_run`. The budget is max(max_num_batched_tokens, item tokens)
// (v1/core/encoder_cache_manager.py compute_encoder_budget; SchedulerConfig sets
// max_num_encoder_input_tokens = encoder_cache_size = max_num_batched_tokens).
//
// The Qwen dummy items (model_executor/models/qwen2_vl.py Qwen2VLProcessingInfo): the
// largest image is max_pixels 12,845,056 = 65,536 patches of 14 x 14, 16,384 tokens after
// the 2 x 2 merge; the video has get_num_frames_with_most_features(max_model_len) frames:
// the most whose tokens fit max_model_len - 16,384 x the image limit, split over the video
// limit, at most _MAX_FRAMES_PER_VIDEO (16), at least 1, padded to the temporal patch (2
// frames share one grid step of 16,384 tokens).
//
// The vision transformer's forward (qwen2_5_vl.py / qwen2_vl.py, VisionBlock and
// VisionAttention): per layer, over P patches of width W (X = P x W x dtype):
//   attention: the residual stream and the normed input (held by the call) 2X, the qkv
//   output 3X (kept by the local `x`), q/k/v made contiguous by rearrange(...).contiguous()
//   3X, then the rotary embedding of q and of k over a float32 copy (t.float()):
//   0.8.x apply_rotary_emb_torch, its peak 8X (the copy 2X, x*cos 2X, rotate_half 2X, the
//   product 2X) unless the FLASH_ATTN backend (the flash-attn package, vision.py
//   get_vit_attn_backend; vLLM's wheel brings xformers instead); from 0.9.0 vLLM's
//   flash-attn rotary kernel on CUDA, 5X (the copy 2X, its output 2X, the cast back X).
//   The attention itself (xformers/flash varlen) is O(P) and comes after the rotary's
//   temporaries are gone. At TP > 1 split_qkv all-gathers qkv (3X) and the per-head
//   tensors are 1/tp.
//   MLP (M = P x MLP width x dtype, per rank): Qwen2.5-VL's gate (after SiLU), up, their
//   product and the down projection's output beside residual + normed, 3X + 3M; Qwen2-VL's
//   fc1 and its GELU, then the GELU and fc2's output, max(3X + 2M, 4X + M). The merger
//   after the last layer is narrower.
// Beside the layer: the pixel values in float32 (P x 1176 x 4) and the dtype copy the
// model encodes (pixel_values.type(self.visual.dtype)).
//
// Gemma-3 (gemma3_mm.py, siglip.py; 0.8.2, 0.9.2, 0.10.1.1 and 0.11.0 read, and on through
// 0.21.0: the same SiglipEncoderLayer / SiglipEncoder forwards, MultiHeadAttention (0.12-0.13)
// and MMEncoderAttention (0.14.1-0.21.0) viewing the qkv chunks for flash-attn's varlen
// kernel with no copy, _image_pixels_to_features with no cast, and the 256-token item from
// the dummy image's embeds; from 0.13 the outputs are not padded, as for Qwen3-VL): image only
// (get_supported_mm_limits), the dummy item is one image of 256 soft tokens (no crops), the
// pixel values the HF processor's float32 at 896 x 896 (3 x 14 x 14 values a patch). Held
// beside every layer after the first: the embeddings (SiglipVisionTransformer.forward's
// local, and SiglipEncoder.forward's hidden_states_pool, built even when only the last
// layer is returned) and the layer's input (the encoder loop's variable during the call),
// 2X. The SigLIP layer (SiglipEncoderLayer): the normed input X, then attention
// (SiglipAttention: qkv_proj's output 3X, chunked into views, MultiHeadAttention's output
// X, out_proj's X; xformers or SDPA, O(P) memory), added in place: 4X + 4X; the MLP: the
// attention's sum (the new residual) and the normed input 2X, fc1's output M and its GELU
// M (the caller's variable keeps the normed input through mlp()), then the GELU and fc2's
// output: max(4X + 2M, 5X + M). Column/row-parallel at TP (per-rank M and qkv). The cast of the
// pixel values to the tower's dtype (SiglipVisionEmbeddings.forward) is a temporary of the
// patch embedding, gone before the first layer; the projector after the last layer pools
// 4 x 4 and is narrower.
#include "memory/vllm_mm_profile.h"

#include <algorithm>
#include <cctype>
#include <vector>

#include <nlohmann/json.hpp>

#include "memory/launch_plan_internal.h"
#include "memory/memory_model.h"

namespace tpt::memory {
namespace {

// qwen2_vl.py _MAX_FRAMES_PER_VIDEO: 16 in 0.8.2-0.10.1.1, 14 in 0.11.0.
int MaxFramesPerVideo(const std::vector<int>& v) { return CompareVersions(v, {0, 11}) >= 0 ? 14 : 16; }

// Qwen2VLProcessingInfo._get_vision_info at the largest frame size: frames padded to the
// temporal patch, at least one grid step of `step_tokens`.
int64_t VideoTokens(int64_t frames, int temporal, int64_t step_tokens) {
  const int64_t padded = frames + frames % temporal;
  return std::max<int64_t>(padded / temporal, 1) * step_tokens;
}

}  // namespace

StatusOr<VllmMmLimits> ParseVllmMmLimits(std::string_view text) {
  VllmMmLimits l;
  const std::string what = "--limit-mm-per-prompt '" + std::string(text) + "'";
  auto set = [&](const std::string& key, int64_t n) -> Status {
    if (n < 0 || n > 1000000) return InvalidArgumentError(what + ": " + key + " must be 0 or more");
    if (key == "image") {
      l.image = static_cast<int>(n);
    } else if (key == "video") {
      l.video = static_cast<int>(n);
    } else if (key != "audio") {
      return InvalidArgumentError(what + ": unknown modality '" + key + "' (image, video, audio)");
    }
    return Status();
  };
  std::string_view t = text;
  while (!t.empty() && std::isspace(static_cast<unsigned char>(t.front()))) t.remove_prefix(1);
  if (!t.empty() && t.front() == '{') {
    auto j = nlohmann::json::parse(t, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object()) return InvalidArgumentError(what + ": not a JSON object");
    for (auto it = j.begin(); it != j.end(); ++it) {
      if (!it.value().is_number_integer()) {
        return InvalidArgumentError(what + ": " + it.key() + " must be a whole number of items");
      }
      TPT_RETURN_IF_ERROR(set(it.key(), it.value().get<int64_t>()));
    }
    return l;
  }
  if (t.empty()) return InvalidArgumentError(what + ": empty; e.g. image=10,video=10");
  size_t start = 0;
  const std::string s(t);
  while (start <= s.size()) {
    size_t comma = s.find(',', start);
    const std::string part = s.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    const size_t eq = part.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == part.size() ||
        part.find_first_not_of("0123456789", eq + 1) != std::string::npos || part.size() - eq > 8) {
      return InvalidArgumentError(what + ": '" + part + "' is not modality=count (e.g. image=10,video=10)");
    }
    TPT_RETURN_IF_ERROR(set(part.substr(0, eq), std::stoll(part.substr(eq + 1))));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return l;
}

std::string VllmMmLimitsFlag(const VllmMmLimits& limits, std::string_view version) {
  const std::string image = std::to_string(limits.image), video = std::to_string(limits.video);
  if (VersionBefore(version, {0, 9})) return "image=" + image + ",video=" + video;
  return "'{\"image\": " + image + ", \"video\": " + video + "}'";
}

namespace {

QwenVitPeak SiglipLayerPeak(const ModelConfig& m, int64_t patches, int tp) {
  QwenVitPeak q;
  const double e = m.dtype_bytes, P = static_cast<double>(patches);
  const double X = P * m.vit_width * e, M = P * m.vit_mlp * e;
  const double attn = 4 * X + 4 * X / tp;
  const double mlp = std::max(4 * X + 2 * M / tp, 5 * X + M / tp);
  q.layer = std::max(attn, mlp);
  q.arithmetic = internal::WithCommas(patches) + " patches x width " + std::to_string(m.vit_width) + " = " +
                 FormatGiB(X) + " a tensor; SigLIP layer peak " + FormatGiB(q.layer) +
                 " (embeddings, layer input, residual and normed input " + FormatGiB(4 * X) +
                 " + attention's qkv and output, or the MLP's fc1 and GELU, " + internal::WithCommas(m.vit_mlp) +
                 " wide: " + FormatGiB(attn) + " / " + FormatGiB(mlp) + ")";
  return q;
}

// The Qwen vision blocks from 0.12 (qwen2_5_vl.py Qwen2_5_VisionAttention, shared by
// Qwen2.5-VL and Qwen3-VL; qwen2_vl.py Qwen2VisionAttention; 0.12.0-0.21.0): the rotary
// kernel over q and k in the model dtype (its output 2X/tp; vllm_flash_attn apply_rotary_emb,
// no float32 copy: ApplyRotaryEmb's enable_fp32_compute is off), the attention's output (X/tp,
// a view when rearranged for one item) and the projection's X while they are all still
// referenced, beside the layer's input and normed input: 3X + qkv 3X/tp + rotary 2X/tp +
// output X/tp + what q/k take first: Qwen2_5_VisionAttention keeps each rank's heads (no
// all-gather) and from 0.15 copies the strided q/k slice (`.contiguous()`, 2X/tp; 0.12-0.14
// pass the view): 3X + 6X/tp (0.12-0.14) or 3X + 8X/tp. Qwen2VisionAttention concatenates q and k
// (torch.cat, 2X/tp): 3X + 8X/tp, and from 0.13 all-gathers qkv again at TP > 1 (split_qkv,
// 3X; 0.12 has no gather). The MLPs as before: Qwen2.5-VL's gate_up (kept by its local),
// SiluAndMul and down, 3X + 3M/tp (the fused add-RMSNorm works in place); fc1 and its GELU,
// then the GELU and fc2's output, max(3X + 2M/tp, 4X + M/tp).
QwenVitPeak QwenVitLayerPeakFrom012(const ModelConfig& m, int64_t patches, int tp, std::string_view version) {
  QwenVitPeak q;
  const double e = m.dtype_bytes, P = static_cast<double>(patches);
  const double X = P * m.vit_width * e, M = P * m.vit_mlp * e;
  const bool qwen2 = !m.vit_qwen3 && !m.vit_mlp_gated;  // Qwen2VisionAttention
  const bool v013 = !VersionBefore(version, {0, 13});
  // The q/k copy: `qk_reshaped.contiguous()` before the rotary, qwen2_5_vl.py from 0.16.0
  // (line 378; vllm#32687, merged 2026-01-21, so 0.15 too: it has no sdist to read); 0.13.0
  // and 0.14.1 hand the rearranged view (one item: (two b) merges with b = 1, no copy) to
  // the rotary kernel, whose output is the same 2X/tp either way.
  const bool qk_copy = !VersionBefore(version, {0, 15});
  const double per_rank = qwen2 || qk_copy ? 8.0 : 6.0;
  const double gathered = qwen2 && v013 && tp > 1 ? 3 * X : 0;
  const double attn = 3 * X + gathered + per_rank * X / tp;
  const double mlp = m.vit_mlp_gated ? 3 * X + 3 * M / tp : std::max(3 * X + 2 * M / tp, 4 * X + M / tp);
  q.layer = std::max(attn, mlp);
  q.arithmetic = internal::WithCommas(patches) + " patches x width " + std::to_string(m.vit_width) + " = " +
                 FormatGiB(X) + " a tensor; encoder layer peak " + FormatGiB(q.layer) +
                 " (attention: input, normed input and projection " + FormatGiB(3 * X) +
                 (gathered > 0 ? " + gathered qkv " + FormatGiB(gathered) : "") + " + qkv, " +
                 (qwen2 ? "q/k concatenated, " : qk_copy ? "q/k copy, " : "") + "rotary output and attention output " +
                 FormatGiB(per_rank * X / tp) + " (>= 0.12, no float32 rotary); MLP " + FormatGiB(mlp) + ")";
  return q;
}

}  // namespace

QwenVitPeak QwenVitLayerPeak(const ModelConfig& m, int64_t patches, int tp, std::string_view version) {
  QwenVitPeak q;
  if (m.vit_width <= 0 || patches <= 0) return q;
  if (m.vit_siglip) return SiglipLayerPeak(m, patches, std::max(tp, 1));
  tp = std::max(tp, 1);
  const double e = m.dtype_bytes, P = static_cast<double>(patches);
  const double X = P * m.vit_width * e, M = P * m.vit_mlp * e;
  // The torch rotary path in the versions read before 0.9 (0.7.3 and 0.8.2); unparsed
  // versions take the newest code.
  // The rotary embedding's temporaries: before 0.9 the torch path on q, then on k (8X);
  // 0.9-0.10 the kernel on q, then on k (5X: the float32 copy, its output, the cast back);
  // 0.11 the kernel once over torch.cat([q, k]) (12X: the concatenation 2X, then 4X, 4X, 2X).
  if (!VersionBefore(version, {0, 12})) return QwenVitLayerPeakFrom012(m, patches, std::max(tp, 1), version);
  const bool torch_rotary = VersionBefore(version, {0, 9});
  const bool concat_rotary = !VersionBefore(version, {0, 11});
  const double rotary = (torch_rotary ? 8.0 : concat_rotary ? 12.0 : 5.0) * X / tp;
  const double gathered = tp > 1 ? 3 * X : 0;
  const double attn = 2 * X + gathered + 6 * X / tp + rotary;
  // Beside the layer's input (the loop's variable), the attention's sum and the normed
  // input (3X): gated, gate (after SiLU), up, their product; plain, fc1 and its GELU, then
  // the GELU and fc2's output.
  const double mlp = m.vit_mlp_gated ? 3 * X + 3 * M / tp : std::max(3 * X + 2 * M / tp, 4 * X + M / tp);
  q.layer = std::max(attn, mlp);
  q.arithmetic = internal::WithCommas(patches) + " patches x width " + std::to_string(m.vit_width) + " = " +
                 FormatGiB(X) + " a tensor; encoder layer peak " + FormatGiB(q.layer) +
                 " (attention: residual + normed input " + FormatGiB(2 * X) +
                 (tp > 1 ? " + gathered qkv " + FormatGiB(gathered) : "") + " + qkv and contiguous q/k/v " +
                 FormatGiB(6 * X / tp) + " + rotary " +
                 (torch_rotary    ? "float32 temporaries (torch, < 0.9) "
                  : concat_rotary ? "of q and k concatenated, float32 copy and output (kernel, >= 0.11) "
                                  : "float32 copy and output (kernel, >= 0.9) ") +
                 FormatGiB(rotary) + "; MLP " + FormatGiB(mlp) + ")";
  return q;
}

VllmEncoderProfile VllmV1EncoderProfile(const ModelConfig& m, std::string_view version, int tp,
                                        int64_t max_num_batched_tokens, int64_t max_num_seqs,
                                        int64_t max_model_len, const VllmMmLimits& limits) {
  VllmEncoderProfile p;
  auto v = ParseVersion(version);
  // Read through 0.21.0 for every tower priced here (below); 0.22 on is not read.
  if (m.vit_width <= 0 || m.mm_item_tokens <= 0 || m.vision_patch_elems <= 0 || !v.ok() ||
      CompareVersions(*v, {0, 8}) < 0 || CompareVersions(*v, {0, 22}) >= 0) {
    return p;
  }
  p.modelled = true;
  tp = std::max(tp, 1);
  const int64_t image_tokens = m.mm_item_tokens;
  const int temporal = std::max(m.vit_temporal, 1);
  // The items one prompt may hold; from 0.9 the tokens of the largest item are measured
  // with one item of each modality the limits leave on (registry.py
  // get_max_tokens_per_item_by_modality: {modality: 1 for limit > 0}); 0.8.2 passes the limits.
  const bool v09 = CompareVersions(*v, {0, 9}) >= 0;
  const int default_limit = v09 ? 999 : 1;
  const int64_t image_limit = limits.given ? limits.image : default_limit;
  const int64_t video_limit = limits.given ? limits.video : default_limit;
  const int64_t image_count = v09 ? (image_limit > 0 ? 1 : 0) : image_limit;
  const int64_t video_count = v09 ? 1 : video_limit;
  int64_t video_tokens = 0, video_rows = 0;
  if (video_limit > 0 && m.mm_video && m.mm_video_rows > 0) {
    // Qwen3-VL: the video processor's max pixels over all frames, whatever the frames;
    // each row formatted with its timestamp, x12.5 (qwen3_vl.py get_max_video_tokens).
    // From 0.13 get_max_video_tokens counts the rows alone (0.13.0 drops the x12.5; 0.16
    // on, 2 frames at the video's max pixels / temporal patch: the same rows).
    video_rows = m.mm_video_rows;
    const double scale = CompareVersions(*v, {0, 13}) < 0 ? m.mm_video_token_scale : 1.0;
    video_tokens = static_cast<int64_t>(static_cast<double>(video_rows) * scale);
  } else if (video_limit > 0 && m.mm_video) {
    // _get_max_video_frames(max_model_len - image tokens x image limit), per video, capped.
    // 0.11 counts the frames against max_model_len alone (get_num_frames_with_most_features).
    const bool v011 = CompareVersions(*v, {0, 11}) >= 0;
    const int64_t room = v011 ? max_model_len : max_model_len - image_tokens * image_count;
    int64_t frames = 0;
    while (frames < (1 << 20) && VideoTokens(frames + 1, temporal, image_tokens) <= room) ++frames;
    frames = std::max<int64_t>(std::min<int64_t>(frames / video_count, MaxFramesPerVideo(*v)), 1);
    video_tokens = VideoTokens(frames, temporal, image_tokens);
    video_rows = video_tokens;
  }
  // A tie keeps the first (image) through 0.16; from 0.18 the larger name (video) wins it
  // (multimodal/encoder_budget.py get_modality_with_max_tokens: key=(tokens, modality) in
  // 0.18.1, key=tokens in 0.16.0; 0.17 not read, taken as 0.18).
  const bool video_wins_tie = CompareVersions(*v, {0, 17}) >= 0;
  const bool image_first = video_wins_tie ? image_tokens > video_tokens : image_tokens >= video_tokens;
  if (image_limit > 0 && (video_limit <= 0 || !m.mm_video || image_first)) {
    p.modality = "image";
    p.item_tokens = image_tokens;
  } else if (video_limit > 0 && m.mm_video) {
    p.modality = "video";
    p.item_tokens = video_tokens;
  } else {
    p.arithmetic = "--limit-mm-per-prompt turns every modality off: no encoder profiling";
    return p;
  }
  // Items: the encoder budget over the item, rounded up before 0.10 (cdiv, 0.8.2-0.9.2) and
  // down from 0.10.0 (at least 1); at most max_num_seqs x the items one prompt holds: the
  // limit, or from 0.10.1 (MultiModalBudget.get_max_items, v1/worker/utils.py 0.10.1.1)
  // max(1, min(limit, max_model_len // item)).
  const int64_t limit = p.modality == "image" ? image_limit : video_limit;
  const int64_t budget = std::max(max_num_batched_tokens, p.item_tokens);
  const bool floor_items = CompareVersions(*v, {0, 10}) >= 0;
  const int64_t per_prompt = CompareVersions(*v, {0, 10, 1}) >= 0
                                 ? std::max<int64_t>(1, std::min<int64_t>(limit, max_model_len / p.item_tokens))
                                 : limit;
  const int64_t by_budget = floor_items ? budget / p.item_tokens : (budget + p.item_tokens - 1) / p.item_tokens;
  p.items = std::max<int64_t>(1, std::min(by_budget, max_num_seqs * per_prompt));
  const int64_t merge = std::max(m.vit_merge, 1);
  const int64_t rows = p.modality == "video" ? video_rows : p.item_tokens;  // encoder output rows an item
  p.patches = p.items * rows * merge * merge;

  const QwenVitPeak vit = QwenVitLayerPeak(m, p.patches, tp, version);
  const double e = m.dtype_bytes, P = static_cast<double>(p.patches);
  const double pixels32 = P * static_cast<double>(m.vision_patch_elems) * 4;
  // Before 0.11 the model casts the pixel values into a local that lives through the
  // encoder (_process_image_input: pixel_values.type(self.visual.dtype)); 0.11 casts them
  // inside the transformer's forward (x.to(dtype)) and drops the copy after patch_embed.
  const bool v011 = CompareVersions(*v, {0, 11}) >= 0;
  // SigLIP's cast is a temporary of the patch embedding (above); Qwen3-VL's 0.11
  // _process_image_input / _process_video_input still cast into a local.
  const double pixels_cast =
      (v011 && !m.vit_qwen3) || m.vit_siglip ? 0 : P * static_cast<double>(m.vision_patch_elems) * e;
  // Qwen3-VL's deepstack mergers keep their outputs from their layers to the end, and the
  // interpolated position embeddings (pos_embeds, P x width) stay referenced by the
  // transformer's forward through every layer (Qwen3_VisionTransformer.forward 0.11.0-0.21.0).
  const double deepstack = static_cast<double>(p.items) * static_cast<double>(rows) * m.vit_deepstack_width * e;
  const double pos_embeds = m.vit_qwen3 ? P * m.vit_width * e : 0;
  p.encoder_peak = vit.layer + pixels32 + pixels_cast + deepstack + pos_embeds;
  // 0.11-0.12 pad each dummy output to the encoder budget (output.new_zeros((budget,
  // width))): the language model's hidden, or Qwen3-VL's merger and deepstack rows side by
  // side; from 0.13 profile_run keeps the outputs as they are (encoder_cache[f"tmp_{i}"]).
  const bool padded = v011 && CompareVersions(*v, {0, 13}) < 0;
  const int64_t kept = padded ? std::max(budget, rows) : rows;
  const int width = m.vit_out_width > 0 ? m.vit_out_width : m.hidden;
  const double outputs = static_cast<double>(p.items) * static_cast<double>(kept) * width * e;
  p.held = pixels32 + outputs;

  p.arithmetic = "V1 encodes " + std::to_string(p.items) + " dummy " + p.modality + (p.items > 1 ? "s" : "") +
                 " of " + internal::WithCommas(p.item_tokens) + " tokens (min(" + (floor_items ? "floor" : "ceil") +
                 "(max(" + internal::WithCommas(max_num_batched_tokens) + " batched tokens, item) / item), " +
                 internal::WithCommas(max_num_seqs) + " seqs x " + std::to_string(per_prompt) + " a prompt)" +
                 (video_limit > 0 && m.mm_video && p.modality == "image" ? "; a video would be " + internal::WithCommas(video_tokens)
                                                            : "") +
                 (rows != p.item_tokens ? "; " + internal::WithCommas(rows) + " encoder rows an item" : "") +
                 "): " + vit.arithmetic + " + pixel values " + FormatGiB(pixels32) + " float32 + " +
                 FormatGiB(pixels_cast) + " cast" +
                 (deepstack > 0 ? " + deepstack outputs " + FormatGiB(deepstack) : "") +
                 (pos_embeds > 0 ? " + position embeddings " + FormatGiB(pos_embeds) : "") + " = " +
                 FormatGiB(p.encoder_peak) +
                 "; held through the language model's run: pixel values " + FormatGiB(pixels32) +
                 " + encoder outputs " + FormatGiB(outputs) + " = " + FormatGiB(p.held);
  return p;
}

}  // namespace tpt::memory
