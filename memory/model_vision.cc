// model_vision.cc: a model's vision (and audio) towers from config.json: their weights
// (an estimate from the widths), and the fields vLLM's encoder profiling is priced from
// (vllm_mm_profile.cc): the Qwen2/2.5/3-VL transformers and their processors' largest
// image and video, Gemma-3's SigLIP.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>
#include <system_error>

#include "base/strings.h"
#include "memory/model_config.h"
#include "memory/model_config_internal.h"

namespace tpt::memory::internal {
namespace {

namespace fs = std::filesystem;

double VisionParams(const json& v, int text_hidden, std::string* note) {
  if (!v.is_object()) return 0;
  int h = Num<int>(v, {"hidden_size", "embed_dim", "width", "d_model"}).value_or(0);
  int layers = Num<int>(v, {"num_hidden_layers", "depth", "layers", "num_layers", "encoder_layers"}).value_or(0);
  if (h <= 0 || layers <= 0) return 0;
  int inter = Num<int>(v, {"intermediate_size", "encoder_ffn_dim"}).value_or(0);
  if (inter <= 0) inter = static_cast<int>(h * Num<double>(v, {"mlp_ratio"}).value_or(4.0));
  std::string act = Lower(Str(v, "hidden_act"));
  bool gated = act == "silu" || act == "swiglu";
  double per_layer = 4.0 * h * h + (gated ? 3.0 : 2.0) * h * inter + 4.0 * h;
  int merge = Num<int>(v, {"spatial_merge_size"}).value_or(1);
  int out = Num<int>(v, {"out_hidden_size", "projection_dim"}).value_or(text_hidden);
  double hm = static_cast<double>(h) * merge * merge;
  double projector = hm * hm + hm * std::max(out, 1);
  // Qwen3-VL: one more merger of the same shape for each deepstack layer (qwen3_vl.py
  // deepstack_merger_list), and a learned position table (num_position_embeddings x h).
  if (auto ds = v.find("deepstack_visual_indexes"); ds != v.end() && ds->is_array()) {
    projector *= 1.0 + static_cast<double>(ds->size());
  }
  projector += static_cast<double>(Num<int>(v, {"num_position_embeddings"}).value_or(0)) * h;
  int patch = Num<int>(v, {"patch_size"}).value_or(14);
  int channels = Num<int>(v, {"num_channels", "in_channels", "in_chans"}).value_or(3);
  int temporal = Num<int>(v, {"temporal_patch_size"}).value_or(1);
  double embed = static_cast<double>(patch) * patch * channels * temporal * h;
  double total = layers * per_layer + projector + embed;
  char buf[160];
  std::snprintf(buf, sizeof(buf), "encoder %d layers x hidden %d (~%.2fB params, estimated)", layers, h, total / 1e9);
  *note = buf;
  return total;
}

void SetQwenProcessorMaxPixels(ModelConfig& m, int64_t image_max_pixels, int64_t video_max_pixels) {
  if (m.vit_patch <= 0 || m.vit_merge <= 0) return;
  const int64_t patch_area = static_cast<int64_t>(m.vit_patch) * m.vit_patch;
  const int64_t merge_area = static_cast<int64_t>(m.vit_merge) * m.vit_merge;
  if (image_max_pixels > 0) {
    m.vision_max_patches = image_max_pixels / patch_area;
    m.mm_item_tokens = m.vision_max_patches / merge_area;
  }
  // video_smart_resize keeps frames x height x width within the max pixels, so the largest
  // video's rows do not grow with its frames (qwen3_vl.py _get_vision_info).
  if (video_max_pixels > 0) m.mm_video_rows = video_max_pixels / (patch_area * std::max(m.vit_temporal, 1) * merge_area);
}

// What vLLM V0 profiles InternViT from (vllm_v0_internvl.h): the dummy image's tiles and
// each tile's rows, from config.json. internvl.py 0.6.6: get_max_internvl_image_tokens (the
// tiles: max_dynamic_patch, +1 thumbnail when use_thumbnail and more than one, 1 without
// dynamic_image_size), num_image_token ((force_image_size or image_size) // patch)^2 x
// downsample_ratio^2, _init_vision_model (num_hidden_layers + select_layer + 1 layers run);
// intern_vit.py InternVisionEmbeddings (a class token before the patches). Fields the
// checkpoint's InternVLChatConfig leaves out take that class's defaults (said); without the
// tower's own sizes nothing is set.
void SetInternVitProfile(const json& top, const json& v, double ratio, ModelConfig& m) {
  ModelConfig::InternVit t;
  t.width = Num<int>(v, {"hidden_size"}).value_or(0);
  t.heads = Num<int>(v, {"num_attention_heads"}).value_or(0);
  t.mlp = Num<int>(v, {"intermediate_size"}).value_or(0);
  const int patch = Num<int>(v, {"patch_size"}).value_or(0);
  const int image = Num<int>(top, {"force_image_size"}).value_or(Num<int>(v, {"image_size"}).value_or(0));
  const int layers = Num<int>(v, {"num_hidden_layers"}).value_or(0);
  if (t.width <= 0 || t.heads <= 0 || t.mlp <= 0 || patch <= 0 || image < patch || layers <= 0) return;
  std::string defaults;
  auto take = [&](const char* key, const std::string& value) {
    if (!top.contains(key)) defaults += std::string(defaults.empty() ? "" : ", ") + key + " " + value;
  };
  take("select_layer", "-1");
  take("dynamic_image_size", "false");
  take("use_thumbnail", "false");
  take("max_dynamic_patch", "6");
  take("downsample_ratio", "0.5");
  const int select = Num<int>(top, {"select_layer"}).value_or(-1);
  t.layers = select < 0 ? layers + select + 1 : select + 1;
  const bool dynamic = Bool(top, "dynamic_image_size").value_or(false);
  int tiles = dynamic ? Num<int>(top, {"max_dynamic_patch"}).value_or(6) : 1;
  if (Bool(top, "use_thumbnail").value_or(false) && tiles > 1) ++tiles;
  t.tiles = std::max(tiles, 1);
  const int side = image / patch;
  if (side > 4096 || tiles > 4096) return;  // no real tower; keeps the products below in range
  t.tile_patches = side * side + 1;
  t.tile_tokens = static_cast<int>(side * side * ratio * ratio);
  t.channels = Num<int>(v, {"num_channels"}).value_or(3);
  t.image_size = image;
  t.qk_norm = Bool(v, "qk_normalization").value_or(false);
  t.defaults = defaults;
  if (t.layers <= 0 || t.tile_tokens <= 0) return;
  m.intern_vit = t;
}

// InternVL (InternVLChatModel; vLLM models/internvl.py + intern_vit.py, read at 0.6.6): the
// projector mlp1 is LayerNorm(4h) + Linear(4h, text hidden) + GELU + Linear(text hidden, text
// hidden) over the pixel-shuffled features (h / downsample_ratio^2 wide, _init_mlp1
// 0.6.6:561-571), in place of VisionParams' generic projector; the ViT's attention per layer
// is qkv (h x 3h, bias when qkv_bias), proj (h x h + bias) and the q/k RMSNorms when
// qk_normalization (InternSdpaAttention / InternParallelAttention, intern_vit.py 0.6.6:126-252).
void SetInternVlParts(const json& top, const json& v, int text_hidden, ModelConfig& m, double& params) {
  const int h = Num<int>(v, {"hidden_size"}).value_or(0);
  const int layers = Num<int>(v, {"num_hidden_layers"}).value_or(0);
  const double ratio = Num<double>(top, {"downsample_ratio"}).value_or(0.5);
  if (h <= 0 || layers <= 0 || text_hidden <= 0 || !(ratio > 0 && ratio <= 1)) return;
  const int shuffle = static_cast<int>(1 / ratio);  // int(1 / self.downsample_ratio)
  const double in = static_cast<double>(h) * shuffle * shuffle;
  const double out = text_hidden;
  const double mlp1 = 2 * in + in * out + out + out * out + out;
  const int vision_out = Num<int>(v, {"out_hidden_size", "projection_dim"}).value_or(text_hidden);
  const double generic = static_cast<double>(h) * h + static_cast<double>(h) * std::max(vision_out, 1);
  params += mlp1 - generic;
  m.vision_whole_params = mlp1;
  const bool bias = v.value("qkv_bias", false);
  const bool qk_norm = v.value("qk_normalization", false);
  m.vision_attn_params = layers * (4.0 * h * h + (bias ? 3.0 * h : 0.0) + h + (qk_norm ? 2.0 * h : 0.0));
  SetInternVitProfile(top, v, ratio, m);
}

}  // namespace

Status ReadVisionTowers(const json& j, const json& t, const std::string& src, ModelConfig& m) {
  // The sizes a tower is priced from: present means a whole number above 0 (an error naming
  // the field and the file otherwise, never a tower silently dropped or a division by 0).
  TPT_RETURN_IF_ERROR(Count(j, {"mm_tokens_per_image"}, src, "").status());
  for (const char* k : {"vision_config", "audio_config", "vision_tower_config"}) {
    auto it = j.find(k);
    if (it == j.end() && &t != &j) continue;
    if (it == j.end()) continue;
    if (it->is_object()) {
      const std::string where = std::string(k) + ".";
      for (const char* f : {"hidden_size", "embed_dim", "num_hidden_layers", "depth", "intermediate_size", "patch_size",
                            "spatial_patch_size", "image_size", "spatial_merge_size", "temporal_patch_size",
                            "num_heads", "num_attention_heads", "out_hidden_size", "num_position_embeddings",
                            "in_channels", "num_channels", "in_chans"}) {
        TPT_RETURN_IF_ERROR(Count(*it, {f}, src, where).status());
      }
      if (auto ds = it->find("deepstack_visual_indexes"); ds != it->end() && !ds->is_null() && !ds->is_array()) {
        return InvalidArgumentError(src + ": " + where + "deepstack_visual_indexes is " + ds->dump() +
                                    ": it must be a list of layer numbers; fix config.json");
      }
    }
    std::string note;
    double p = VisionParams(*it, m.hidden, &note);
    if (p > 0 && m.vision_hidden == 0) {
      const json& v = *it;
      m.vision_hidden = Num<int>(v, {"hidden_size", "embed_dim", "width", "d_model"}).value_or(0);
      m.vision_layers_attr = Num<int>(v, {"num_hidden_layers"}).value_or(24);
      m.vision_hidden_attr = Num<int>(v, {"hidden_size"}).value_or(1024);
      m.vision_intermediate = Num<int>(v, {"intermediate_size", "encoder_ffn_dim"}).value_or(4 * m.vision_hidden);
      int patch = Num<int>(v, {"patch_size", "spatial_patch_size"}).value_or(14);
      if (v.contains("spatial_merge_size") && v.contains("temporal_patch_size")) {
        // Qwen2/2.5-VL processors: max_pixels 12,845,056 (16,384 merged tokens) per image.
        m.vision_max_patches = 12845056 / (static_cast<int64_t>(patch) * patch);
        const int merge = std::max(Num<int>(v, {"spatial_merge_size"}).value_or(2), 1);
        m.mm_item_tokens = m.vision_max_patches / (static_cast<int64_t>(merge) * merge);
        m.mm_video = true;
        const int channels = Num<int>(v, {"in_chans", "in_channels", "num_channels"}).value_or(3);
        const int temporal = Num<int>(v, {"temporal_patch_size"}).value_or(2);
        m.vision_patch_elems = static_cast<int64_t>(channels) * temporal * patch * patch;
        const bool qwen25 = m.architecture == "Qwen2_5_VLForConditionalGeneration";
        const bool qwen3 = m.architecture == "Qwen3VLForConditionalGeneration" ||
                           m.architecture == "Qwen3VLMoeForConditionalGeneration";
        if (qwen3) {
          // Qwen3-VL (vLLM qwen3_vl.py 0.11.0; the checkpoints' preprocessor_config.json and
          // video_preprocessor_config.json, read when present: model_files.cc): images up
          // to 16,777,216 px, videos up to 25,165,824 px over all frames.
          m.vit_width = Num<int>(v, {"hidden_size"}).value_or(0);
          m.vit_heads = Num<int>(v, {"num_heads"}).value_or(0);
          m.vit_mlp = Num<int>(v, {"intermediate_size"}).value_or(0);
          m.vit_mlp_gated = false;
          m.vit_merge = merge;
          m.vit_temporal = temporal;
          m.vit_patch = patch;
          m.vit_qwen3 = true;
          const int out = Num<int>(v, {"out_hidden_size"}).value_or(m.hidden);
          int deepstack = 0;
          if (auto ds = v.find("deepstack_visual_indexes"); ds != v.end() && ds->is_array()) {
            deepstack = static_cast<int>(ds->size());
          }
          m.vit_out_width = out * (1 + deepstack);
          m.vit_deepstack_width = out * deepstack;
          m.vit_deepstack = deepstack;
          m.mm_video_token_scale = 12.5;
          SetQwenProcessorMaxPixels(m, 16777216, 25165824);
          if (m.vit_width <= 0 || m.vit_heads <= 0 || m.vit_mlp <= 0) m.vit_width = m.vit_heads = m.vit_mlp = 0;
        }
        if (qwen25 || m.architecture == "Qwen2VLForConditionalGeneration") {
          // Qwen2_5_VisionTransformer: hidden_size wide, gated MLP of intermediate_size;
          // Qwen2VisionTransformer: embed_dim wide (hidden_size is the merger's output),
          // MLP embed_dim x mlp_ratio (transformers' Qwen2VLVisionConfig default 4).
          m.vit_width = qwen25 ? Num<int>(v, {"hidden_size"}).value_or(0) : Num<int>(v, {"embed_dim"}).value_or(0);
          m.vit_heads = Num<int>(v, {"num_heads"}).value_or(0);
          m.vit_mlp = qwen25 ? Num<int>(v, {"intermediate_size"}).value_or(0)
                             : static_cast<int>(m.vit_width * Num<double>(v, {"mlp_ratio"}).value_or(4.0));
          m.vit_mlp_gated = qwen25;
          m.vit_merge = merge;
          m.vit_temporal = temporal;
          // Qwen2_5_VLPatchMerger / PatchMerger: ln_q (RMSNorm / LayerNorm) and mlp =
          // Linear(hm, hm) + GELU + Linear(hm, out), hm = width x merge^2, out =
          // out_hidden_size (2.5) or hidden_size (2); PatchEmbed's Conv3d has no bias.
          if (m.vit_width > 0) {
            const double hm = static_cast<double>(m.vit_width) * merge * merge;
            const double out = qwen25 ? Num<int>(v, {"out_hidden_size"}).value_or(m.hidden)
                                      : Num<int>(v, {"hidden_size"}).value_or(m.hidden);
            m.vision_merger_params = (qwen25 ? 1.0 : 2.0) * m.vit_width + hm * hm + hm + hm * out + out +
                                     static_cast<double>(m.vision_patch_elems) * m.vit_width;
          }
          if (m.vit_width <= 0 || m.vit_heads <= 0 || m.vit_mlp <= 0) m.vit_width = m.vit_heads = m.vit_mlp = 0;
        }
      } else {
        int64_t side = Num<int>(v, {"image_size"}).value_or(448) / std::max(patch, 1);
        m.vision_max_patches = side * side;
        if (m.architecture == "Gemma3ForConditionalGeneration") {
          // Gemma-3 (vLLM gemma3_mm.py 0.8.2-0.11.0, Gemma3MultiModalProjector): one SigLIP
          // pass per image at image_size (896 px: 64 x 64 patches of 14), average-pooled to
          // mm_tokens_per_image (256: 16 x 16) soft tokens; pan-and-scan is off by default
          // (Gemma3ProcessingInfo.get_num_crops), so the largest item is one image, no crops.
          const int64_t tokens = Num<int64_t>(j, {"mm_tokens_per_image"}).value_or(256);
          int64_t per_side = 1;
          while (per_side * per_side < tokens) ++per_side;
          const int width = Num<int>(v, {"hidden_size"}).value_or(0);
          const int heads = Num<int>(v, {"num_attention_heads"}).value_or(0);
          const int mlp = Num<int>(v, {"intermediate_size"}).value_or(0);
          if (per_side * per_side == tokens && side > 0 && side % per_side == 0 && width > 0 && heads > 0 &&
              mlp > 0) {
            const int channels = Num<int>(v, {"num_channels"}).value_or(3);
            m.mm_item_tokens = tokens;
            m.vision_patch_elems = static_cast<int64_t>(channels) * patch * patch;
            m.vit_width = width;
            m.vit_heads = heads;
            m.vit_mlp = mlp;
            m.vit_mlp_gated = false;
            m.vit_merge = static_cast<int>(side / per_side);
            m.vit_temporal = 1;
            m.vit_siglip = true;
          }
        }
      }
    }
    if (p > 0 && m.architecture == "MllamaForConditionalGeneration" && std::string(k) == "vision_config") {
      // vLLM's mllama.py (0.6.3, 0.8.3): tiles of image_size / 14 patches a side plus the
      // class embedding, padded to a multiple of 8 rows (num_padding_patches); the encoder
      // returns the hidden states of intermediate_layers_indices beside its output.
      const json& v = *it;
      const int side = Num<int>(v, {"image_size"}).value_or(560) / std::max(Num<int>(v, {"patch_size"}).value_or(14), 1);
      const int rows = side * side + 1;
      m.mllama_vit.tiles = Num<int>(v, {"max_num_tiles"}).value_or(4);
      m.mllama_vit.tile_rows = (rows + 7) / 8 * 8;
      m.mllama_vit.width = Num<int>(v, {"hidden_size"}).value_or(1280);
      auto ix = v.find("intermediate_layers_indices");
      m.mllama_vit.kept_layers = ix != v.end() && ix->is_array() ? static_cast<int>(ix->size()) : 5;
    }
    if (p > 0 && m.architecture == "InternVLChatModel" && std::string(k) == "vision_config") {
      SetInternVlParts(j, *it, m.hidden, m, p);
    }
    if (p > 0) {
      m.vision_params += p;
      m.vision_note += (m.vision_note.empty() ? "" : "; ") + std::string(k) + ": " + note;
    }
  }
  return Status();
}

Status ReadVisionProcessorFiles(const fs::path& dir, ModelConfig& m) {
  std::error_code ec;
  // Qwen3-VL's processors: their max pixels decide the profiling's dummy image and video
  // (vllm_mm_profile.cc); the files' size.longest_edge (or max_pixels) override the defaults.
  if (!m.vit_qwen3) return Status();
  int64_t px[2] = {0, 0};
  const char* files[2] = {"preprocessor_config.json", "video_preprocessor_config.json"};
  for (int i = 0; i < 2; ++i) {
    if (!fs::exists(dir / files[i], ec)) continue;
    auto pj = ReadJsonFile(dir / files[i]);
    if (!pj.ok()) return InvalidArgumentError("--model: " + pj.status().message());
    const json* size = pj->contains("size") && (*pj)["size"].is_object() ? &(*pj)["size"] : nullptr;
    const json* whole = &*pj;
    for (const json* o : {size, whole}) {
      if (o == nullptr || px[i] > 0) continue;
      const std::string where = o == size ? "size." : "";
      for (const char* k : {"longest_edge", "max_pixels"}) {
        auto n = Count(*o, {k}, (dir / files[i]).string(), where);
        if (!n.ok()) return n.status();
        if (*n && px[i] == 0) px[i] = **n;
      }
    }
    // A processor resizes to at most this many pixels; beyond 2^31 (46,340 px square) no
    // Qwen checkpoint's file goes, and the arithmetic would mean nothing.
    if (px[i] > (int64_t{1} << 31)) {
      return InvalidArgumentError((dir / files[i]).string() + ": the largest size " + std::to_string(px[i]) +
                                  " px is not a size a processor resizes to; fix size.longest_edge (Qwen3-VL's: "
                                  "16777216 for images, 25165824 for videos)");
    }
    if (px[i] > 0) m.notes.push_back(std::string(files[i]) + ": max pixels " + std::to_string(px[i]));
  }
  SetQwenProcessorMaxPixels(m, px[0], px[1]);
  return Status();
}

}  // namespace tpt::memory::internal
