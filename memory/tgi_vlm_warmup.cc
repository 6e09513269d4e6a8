// tgi_vlm_warmup.cc: a VLM's warm-up in TGI v3 (tgi_vlm_warmup.h).
//
// Sources (huggingface/text-generation-inference, v3.3.4 unless named):
//   backends/v3/src/client/grpc_client.rs warmup(): the first warm-up request carries one
//     image, WARMUP_IMAGE_BASE64 (backends/client/src/lib.rs: a 20 x 20 px PNG), "1 request
//     is enough to test vision heads"; the server runs it through the tower in the same
//     generate_token as the prefill (models/vlm_causal_lm.py forward -> encode_images).
//   Gemma-3 (custom_modeling/flash_gemma3_modeling.py, gemma3/image_processing_gemma3.py):
//     the processor resizes every image to vision_config.image_size (896): (896 / 14)^2 =
//     4096 patches through SigLIP, pooled to mm_tokens_per_image (256). SiglipAttention
//     (custom_modeling/siglip.py) is eager, heads split by TP: bmm(q, k^T) * scale (two
//     heads x P^2 tensors in the model dtype while the product is made), softmax in float32
//     and .to(dtype) beside the input: heads/tp x P^2 x (2 x dtype + 4) bytes at its peak.
//     vlm_causal_lm.py forward (v3.3.0-v3.3.6) builds, for gemma3's prefill, get_attention_mask(bool_mask=
//     True) (batch x L^2 bool) and torch.where(mask, 0, min_dtype) (Python scalars: float32,
//     batch x L^2 x 4); FlashGemma3ForConditionalGeneration.forward adds sliding_window_mask
//     (bool) and attention_mask_local (float32); all four live through the text model:
//     10 bytes x L^2 a request, beside the decoder layer's peak.
//   Qwen2-VL / Qwen2.5-VL: the processor takes the 20 x 20 image up to min_pixels (56 x 56):
//     16 patches, 4 image tokens; the tower's warm-up is negligible.
//   Other towers (llava_next, idefics2/3, paligemma, mllama, llama4): not sized here; the
//     unknown's range goes up to the tower's eager attention on its own image size.
#include "memory/tgi_vlm_warmup.h"

#include <algorithm>

#include "memory/memory_model.h"

namespace tpt::memory {

TgiVlmWarmup TgiVlmWarmupBytes(std::string_view version, const ModelConfig& m, int tp, int64_t requests, int64_t tokens) {
  TgiVlmWarmup w;
  w.vlm = m.top.vision_config;
  if (!w.vlm) return w;
  const double e = m.dtype_bytes > 0 ? m.dtype_bytes : 2;
  const int ranks = std::max(tp, 1);
  const double heads = m.vision_heads > 0 ? std::max(1, m.vision_heads / ranks) : 0;
  const double patches = static_cast<double>(m.vision_max_patches);
  const double eager = heads * patches * patches * (2 * e + 4);
  if (m.model_type == "gemma3" && heads > 0 && patches > 0) {
    w.vision_tokens = m.vision_max_patches;
    w.vision_peak_bytes = eager;
    const double l = static_cast<double>(std::max<int64_t>(tokens, 0));
    const double masks = 10.0 * l * l * static_cast<double>(std::max<int64_t>(requests, 1));
    w.what = "Gemma-3's warm-up image through SigLIP: " + std::to_string(m.vision_max_patches) + " patches (every image " +
             "resized to the tower's image_size), eager attention " + FormatGiB(eager) + " at its peak (" +
             std::to_string(static_cast<int>(heads)) + " heads a rank x patches^2 x (2 x " +
             std::to_string(static_cast<int>(e)) + " + 4) B; siglip.py)";
    if (VersionBefore(version, {3, 3, 0})) {
      // v3.2.x (flash_gemma3_modeling.py v3.2.1; v3.2.0-v3.2.3 the same): with the image,
      // FlashGemma3ForConditionalGeneration.forward builds get_attention_mask (l.703-753) and
      // keeps through the text model its float32 mask (torch.where with Python scalars, 4 B),
      // sliding_window_mask (bool) and attention_mask_local (float32, sliced to the whole
      // length when the batch's tokens exceed the window; l.847-862): 9 B x L^2 a request.
      // Every layer's prefill then pads q/k/v per request and calls
      // F.scaled_dot_product_attention(attn_mask=float mask, enable_gqa=heads != kv_heads)
      // (l.200, 266-293). With a float mask flash attention is out, and torch 2.6 (the
      // image's, Dockerfile PYTORCH_VERSION) runs GQA only in flash and math, so the math
      // kernel (aten/.../transformers/attention.cpp _scaled_dot_product_attention_math):
      // bf16/fp16 upcast to float32 (allow_fp16_bf16_reduction_math_sdp off by default from
      // torch 2.5), the scores q k^T (4 B), the mask added in place, the softmax into a new
      // tensor (4 B): 8 B x heads/tp x L^2 a request at its peak, beside the held masks.
      const double per_head = l * l * static_cast<double>(std::max<int64_t>(requests, 1));
      const double q_heads = std::max(1, m.heads / ranks);
      const double held = 0.9 * masks;
      const double sdpa = 8.0 * q_heads * per_head;
      if (m.heads > 0 && m.kv_heads > 0 && m.heads != m.kv_heads) {
        w.text_extra_bytes = held + sdpa;
        w.what += "; the image prefill's dense masks " + FormatGiB(held) + " held through the text model (9 B x " +
                  std::to_string(tokens) + "^2 a request: two float32, one bool) and SDPA's math kernel " +
                  FormatGiB(sdpa) + " (GQA with a float mask: float32 scores and softmax, 8 B x " +
                  std::to_string(static_cast<int>(q_heads)) + " heads a rank x " + std::to_string(tokens) +
                  "^2 a request; flash_gemma3_modeling.py v3.2.x, torch 2.6) beside the decoder layer; the read sees "
                  "the larger";
        return w;
      }
      // Without GQA SDPA may take the memory-efficient kernel: not sized.
      w.text_extra_bytes = held;
      w.unpriced_bytes = sdpa;
      w.what += "; the image prefill's dense masks " + FormatGiB(held) + " held through the text model";
      w.unknown = "TGI " + std::string(version) + " runs Gemma-3's image prefill through SDPA with dense " +
                  std::to_string(tokens) + "^2 masks (flash_gemma3_modeling.py v3.2.x): which kernel runs without "
                  "GQA is not sized here, up to " + FormatGiB(sdpa) + " more (the math kernel's float32 scores "
                  "and softmax)";
      return w;
    }
    w.text_extra_bytes = masks;
    w.what += "; the text prefill's dense masks " + FormatGiB(masks) + " beside the decoder layer (10 B x " +
              std::to_string(tokens) + "^2: two bool, two float32; vlm_causal_lm.py, flash_gemma3_modeling.py " +
              "v3.3.0-v3.3.6); the read sees the larger";
    return w;
  }
  if (m.model_type == "qwen2_vl" || m.model_type == "qwen2_5_vl") {
    w.what = "the warm-up's 20 x 20 px image is 16 patches (4 tokens) through " + m.model_type +
             "'s tower after the processor's min_pixels: not priced (backends/client/src/lib.rs, v3.3.4)";
    return w;
  }
  w.vision_max_bytes = eager;
  w.unpriced_bytes = eager;
  w.unknown = "TGI's warm-up sends one image to this VLM (" + m.model_type +
              "): its vision tower's peak is not sized here; 0 - " + FormatGiB(eager) +
              " more held at the free-memory read (the tower's eager attention at its image_size, " +
              std::to_string(m.vision_max_patches) + " patches; grpc_client.rs warmup v" + std::string(version) + ")";
  return w;
}

}  // namespace tpt::memory
