// sglang_multimodal.cc: SGLang's lower --mem-fraction-static for multimodal models
// (sglang_multimodal.h).
//
// Sources: sgl-project/sglang as released on PyPI (the wheels' python/sglang/srt), read at
// 0.2.0, 0.2.7, 0.2.14, 0.3.0, 0.3.2, 0.3.4, 0.3.5, 0.3.6, 0.4.0, 0.4.4.post2, 0.4.4.post3,
// 0.4.4.post4, 0.4.5, 0.4.6, 0.4.7, 0.4.8, 0.4.9, 0.5.1 and 0.5.23; the architectures list also
// at 0.5.2, 0.5.3, 0.5.3.post3, 0.5.4, 0.5.4.post1-post3, 0.5.5, 0.5.5.post3, 0.5.6,
// 0.5.6.post1, 0.5.6.post2, 0.5.7, 0.5.8, 0.5.8.post1, 0.5.9, 0.5.10, 0.5.10.post1, 0.5.11 and
// 0.5.13.post1 (task launches32: Qwen3-VL came with 0.5.3, not 0.5.23):
//   0.2.x: no such step.
//   0.3.0-0.3.4: model_executor/model_runner.py ModelRunner.__init__ `if
//     self.is_multimodal_model: ... server_args.mem_fraction_static *= 0.95`, after the
//     constructor copied the fraction (`self.mem_fraction_static = mem_fraction_static`,
//     passed by managers/tp_worker.py from server_args): profile_max_num_token reads the
//     copy, so the pool does not move.
//   0.3.5-0.4.4.post3: the same file, `self.mem_fraction_static *= 0.95` ("Automatically
//     reduce --mem-fraction-static to {:.3f} because this is a multimodal model"): the
//     fraction in force, given or default, times 0.95 in profile_max_num_token's
//     `total_gpu_memory * (1 - self.mem_fraction_static)`.
//   0.4.4.post4-0.4.8: the same with `*= 0.90`.
//   0.4.9: server_args.py __post_init__, inside `if self.mem_fraction_static is None`:
//     `if model_config.is_multimodal: self.mem_fraction_static *= 0.90`; ModelRunner no
//     longer touches it: a fraction the user gave stands.
//   0.5.1, 0.5.23: server_args.adjust_mem_fraction_for_vlm (0.5.23: arg_groups/
//     memory_hook.py), still on the default only: nothing without a vision_config, else
//     x 0.95 x clamp(1 - 0.1 (ratio - 1), 0.8, 1.05), ratio = vision layers x hidden^2 over
//     24 x 1024^2 (num_hidden_layers 24, hidden_size 1024 when absent). 0.5.23 takes
//     `mem_fraction_static - 8 * 1024 / gpu_mem` (MB) instead when post-capture KV sizing
//     is planned (arg_groups/overrides.py); which 2026 builds plan it is not read here.
// Which models are multimodal: configs/model_config.py is_multimodal_model, an
// architectures list (kArchs below, with the first and the previous wheel read); from 0.4.6
// `enable_multimodal` (--enable-multimodal, default None) turns Gemma3ForConditionalGeneration
// and Llama4ForConditionalGeneration off unless asked ("Multimodal is disabled for ... To
// enable it, set --enable-multimodal"), Step3VLForConditionalGeneration from 0.5.1.
#include "memory/sglang_multimodal.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <vector>

#include "memory/memory_model.h"

namespace tpt::memory {
namespace {

bool Before(const std::vector<int>& v, std::vector<int> bound) {
  bound.resize(4, 0);
  return CompareVersions(v, bound) < 0;
}

struct Arch {
  const char* name;
  std::vector<int> since;  // first wheel read whose list has it
  std::vector<int> after;  // the wheel read before it, whose list lacks it ({} when none)
  std::vector<int> until = {};  // the first wheel whose list no longer has it ({} when all do)
};

// is_multimodal_model's list (0.3.5-0.4.0: the or-chain; 0.4.4.post2 on: multimodal_model_archs).
const std::vector<Arch>& Archs() {
  static const std::vector<Arch> kArchs = {
      {"LlavaLlamaForCausalLM", {0, 3, 5}, {}},
      {"LlavaQwenForCausalLM", {0, 3, 5}, {}},
      {"LlavaMistralForCausalLM", {0, 3, 5}, {}},
      {"LlavaVidForCausalLM", {0, 3, 5}, {}},
      {"MllamaForConditionalGeneration", {0, 3, 5}, {}},
      {"Qwen2VLForConditionalGeneration", {0, 3, 5}, {}},
      {"DeepseekVL2ForCausalLM", {0, 4, 4, 2}, {0, 4, 0}},
      {"Gemma3ForConditionalGeneration", {0, 4, 4, 2}, {0, 4, 0}},
      {"Grok1VForCausalLM", {0, 4, 4, 2}, {0, 4, 0}},
      {"Grok1AForCausalLM", {0, 4, 4, 2}, {0, 4, 0}},
      {"MiniCPMO", {0, 4, 4, 2}, {0, 4, 0}},
      {"MiniCPMV", {0, 4, 4, 2}, {0, 4, 0}},
      {"MultiModalityCausalLM", {0, 4, 4, 2}, {0, 4, 0}},
      {"Qwen2_5_VLForConditionalGeneration", {0, 4, 4, 2}, {0, 4, 0}},
      {"CLIPModel", {0, 4, 4, 3}, {0, 4, 4, 2}},
      {"Llama4ForConditionalGeneration", {0, 4, 5}, {0, 4, 4, 4}},
      {"LlavaForConditionalGeneration", {0, 4, 7}, {0, 4, 6}},
      {"Mistral3ForConditionalGeneration", {0, 4, 7}, {0, 4, 6}},
      {"KimiVLForConditionalGeneration", {0, 4, 7}, {0, 4, 6}},
      {"InternVLChatModel", {0, 4, 7}, {0, 4, 6}},
      {"Phi4MMForCausalLM", {0, 4, 7}, {0, 4, 6}},
      {"VILAForConditionalGeneration", {0, 4, 8}, {0, 4, 7}, {0, 5, 4, 1}},  // NVILA's from 0.5.4.post1
      {"Gemma3nForConditionalGeneration", {0, 4, 9}, {0, 4, 8}},
      {"Qwen2AudioForConditionalGeneration", {0, 4, 9}, {0, 4, 8}},
      {"Glm4vForConditionalGeneration", {0, 5, 1}, {0, 4, 9}},
      {"Glm4vMoeForConditionalGeneration", {0, 5, 1}, {0, 4, 9}},
      {"InternS1ForConditionalGeneration", {0, 5, 1}, {0, 4, 9}},
      {"Step3VLForConditionalGeneration", {0, 5, 1}, {0, 4, 9}},
      // Read wheel by wheel (task launches32): 0.5.2 has none of these, 0.5.3 the first five
      // (configs/model_config.py 0.5.3:803-811); 0.5.3.post3 nothing more.
      {"Qwen3VLForConditionalGeneration", {0, 5, 3}, {0, 5, 2}},
      {"Qwen3VLMoeForConditionalGeneration", {0, 5, 3}, {0, 5, 2}},
      {"DotsVLMForCausalLM", {0, 5, 3}, {0, 5, 2}},
      {"DotsOCRForCausalLM", {0, 5, 3}, {0, 5, 2}},
      {"Sarashina2VisionForCausalLM", {0, 5, 3}, {0, 5, 2}},
      {"Qwen3OmniMoeForConditionalGeneration", {0, 5, 4}, {0, 5, 3, 3}},  // 0.5.4:913
      {"POINTSV15ChatModel", {0, 5, 4}, {0, 5, 3, 3}},
      {"DeepseekOCRForCausalLM", {0, 5, 4}, {0, 5, 3, 3}},
      {"NVILAForConditionalGeneration", {0, 5, 4, 1}, {0, 5, 4}},  // VILA (above) leaves the list here
      {"NVILALiteForConditionalGeneration", {0, 5, 4, 1}, {0, 5, 4}},
      {"NemotronH_Nano_VL_V2", {0, 5, 6}, {0, 5, 5, 3}},
      {"JetVLMForConditionalGeneration", {0, 5, 6}, {0, 5, 5, 3}},
      {"PixtralForConditionalGeneration", {0, 5, 6, 1}, {0, 5, 6}},
      {"PaddleOCRVLForConditionalGeneration", {0, 5, 6, 2}, {0, 5, 6, 1}},
      {"GlmAsrForConditionalGeneration", {0, 5, 7}, {0, 5, 6, 2}},
      {"MiDashengLMModel", {0, 5, 7}, {0, 5, 6, 2}},
      {"Qwen3_5ForConditionalGeneration", {0, 5, 9}, {0, 5, 8, 1}},  // 0.5.9 (0.5.8.post1 lacks them)
      {"Qwen3_5MoeForConditionalGeneration", {0, 5, 9}, {0, 5, 8, 1}},
      {"Ernie4_5_VLMoeForConditionalGeneration", {0, 5, 9}, {0, 5, 8, 1}},
      {"KimiK25ForConditionalGeneration", {0, 5, 9}, {0, 5, 8, 1}},
      {"GlmOcrForConditionalGeneration", {0, 5, 9}, {0, 5, 8, 1}},
      {"LightOnOCRForConditionalGeneration", {0, 5, 9}, {0, 5, 8, 1}},
      {"InternS1ProForConditionalGeneration", {0, 5, 9}, {0, 5, 8, 1}},
      {"StepVLForConditionalGeneration", {0, 5, 9}, {0, 5, 8, 1}},
      {"Lfm2VlForConditionalGeneration", {0, 5, 10}, {0, 5, 9}},
      {"WhisperForConditionalGeneration", {0, 5, 10}, {0, 5, 9}},
      {"Gemma4ForConditionalGeneration", {0, 5, 11}, {0, 5, 10, 1}},
      {"MossVLForConditionalGeneration", {0, 5, 11}, {0, 5, 10, 1}},
      {"NemotronH_Nano_Omni_Reasoning_V3", {0, 5, 11}, {0, 5, 10, 1}},
      {"Qwen3ASRForConditionalGeneration", {0, 5, 11}, {0, 5, 10, 1}},
      {"VoxtralForConditionalGeneration", {0, 5, 11}, {0, 5, 10, 1}},
      {"Cohere2VisionForConditionalGeneration", {0, 5, 13, 1}, {0, 5, 11}},  // 0.5.12-0.5.13 not read
      {"Gemma4UnifiedForConditionalGeneration", {0, 5, 13, 1}, {0, 5, 11}},
      {"InternS2PreviewForConditionalGeneration", {0, 5, 13, 1}, {0, 5, 11}},
      {"Step3p7ForConditionalGeneration", {0, 5, 13, 1}, {0, 5, 11}},
      {"Cosmos3EdgeForConditionalGeneration", {0, 5, 23}, {0, 5, 13, 1}},  // 0.5.14-0.5.22 not read
      {"MiniMaxM3SparseForConditionalGeneration", {0, 5, 23}, {0, 5, 13, 1}},
      {"EmbeddingGemma2Model", {0, 5, 23}, {0, 5, 13, 1}},
      {"DiffusionGemmaForBlockDiffusion", {0, 5, 23}, {0, 5, 13, 1}},
      {"Glm5NextForConditionalGeneration", {0, 5, 23}, {0, 5, 13, 1}},
      {"GlmImageForConditionalGeneration", {0, 5, 23}, {0, 5, 13, 1}},
      {"MiMoV2ASRForCausalLM", {0, 5, 23}, {0, 5, 13, 1}},
      {"NemotronH_Omni_Reasoning_V3", {0, 5, 23}, {0, 5, 13, 1}},
      {"MuseGlimmerForConditionalGeneration", {0, 5, 23}, {0, 5, 13, 1}},
      {"MuseSparkForConditionalGeneration", {0, 5, 23}, {0, 5, 13, 1}},
      {"Qwen4ExpForConditionalGeneration", {0, 5, 23}, {0, 5, 13, 1}},
      {"InternS2MobiusForConditionalGeneration", {0, 5, 23}, {0, 5, 13, 1}},
      {"LocateAnythingForConditionalGeneration", {0, 5, 23}, {0, 5, 13, 1}},
      {"Dots3NoteForCausalLM", {0, 5, 23}, {0, 5, 13, 1}},
      {"UnlimitedOCRForCausalLM", {0, 5, 23}, {0, 5, 13, 1}},
      {"BailingMMNativeForConditionalGeneration", {0, 5, 23}, {0, 5, 13, 1}},
      {"BailingMM2NativeForConditionalGeneration", {0, 5, 23}, {0, 5, 13, 1}},
      {"BailingMoeV3VLForConditionalGeneration", {0, 5, 23}, {0, 5, 13, 1}},
  };
  return kArchs;
}

std::string Three(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.3f", v);
  return b;
}

std::string VersionText(const std::vector<int>& v) {
  std::string s = std::to_string(v[0]) + "." + std::to_string(v[1]) + "." + std::to_string(v.size() > 2 ? v[2] : 0);
  if (v.size() > 3 && v[3] > 0) s += ".post" + std::to_string(v[3]);
  return s;
}

}  // namespace

SglangMultimodalFraction SglangMultimodalFactor(std::string_view version, const ModelConfig& m, bool given,
                                                double fraction, double gpu_bytes, bool enable_multimodal) {
  SglangMultimodalFraction out;
  const std::vector<int> v = VersionWithPost(version);
  const Arch* arch = nullptr;
  for (const Arch& a : Archs()) {
    if (m.architecture == a.name) arch = &a;
  }
  if (arch == nullptr) return out;  // not in any list read: a text model to SGLang
  const std::string name = m.architecture;
  if (!arch->until.empty() && !Before(v, arch->until)) return out;  // left the list: a text model again
  if (Before(v, arch->since)) {
    std::vector<int> after = arch->after;
    after.resize(4, 0);
    if (!arch->after.empty() && CompareVersions(v, after) > 0 && !Before(v, {0, 3, 5})) {
      out.unknown = name + " is in SGLang's multimodal list (configs/model_config.py) at " + VersionText(arch->since) +
                    " and not at " + VersionText(arch->after) + "; at " + std::string(version) +
                    " --mem-fraction-static may be lowered for it or not";
      out.unknown_low = Before(v, {0, 4, 4, 4}) ? 0.95 : 0.90;
    }
    return out;
  }
  const bool off_by_default =
      !enable_multimodal &&
      ((!Before(v, {0, 4, 6}) && (name == "Gemma3ForConditionalGeneration" || name == "Llama4ForConditionalGeneration")) ||
       (!Before(v, {0, 5, 1}) && name == "Step3VLForConditionalGeneration"));
  if (off_by_default) {
    out.why = "SGLang " + std::string(version) + " runs " + name +
              " text-only unless --enable-multimodal is given (configs/model_config.py, from 0.4.6): "
              "--mem-fraction-static not lowered for it (plan with --enable-multimodal to serve it as one)";
    return out;
  }
  if (Before(v, {0, 3, 5})) {
    out.why = "SGLang 0.3.0-0.3.4 lowers server_args' --mem-fraction-static for " + name +
              " after ModelRunner copied it (model_runner.py): the pool is sized at the fraction as given";
    return out;
  }
  const std::string at = " = " + Three(fraction);
  if (Before(v, {0, 4, 9})) {
    out.factor = Before(v, {0, 4, 4, 4}) ? 0.95 : 0.90;
    out.why = "--mem-fraction-static " + Three(fraction) + " x " + Three(out.factor) + " = " +
              Three(fraction * out.factor) + ": SGLang " + std::string(version) + " lowers it for a multimodal model (" +
              name + "; ModelRunner.__init__, model_executor/model_runner.py " +
              (out.factor == 0.95 ? "0.3.5-0.4.4.post3" : "0.4.4.post4-0.4.8") + ")";
    return out;
  }
  if (given) {
    out.why = "--mem-fraction-static" + at + " as given: from 0.4.9 SGLang lowers only its own default for a "
              "multimodal model (server_args.py)";
    return out;
  }
  if (Before(v, {0, 5, 1})) {
    out.factor = 0.90;
    out.why = "the default --mem-fraction-static" + at + " x 0.90 for a multimodal model (" + name +
              "; server_args.py __post_init__ 0.4.9)";
    if (!Before(v, {0, 4, 10})) {
      out.unknown = "SGLang " + std::string(version) +
                    ": whether the multimodal default is 0.4.9's x 0.90 or 0.5.1's adjust_mem_fraction_for_vlm "
                    "is not read here";
      out.unknown_low = 0.80 * 0.95;
      out.unknown_high = 1.05 * 0.95;
    }
    return out;
  }
  if (!m.top.vision_config) {
    out.why = "the default --mem-fraction-static" + at + " stands: " + name +
              "'s config has no vision_config (adjust_mem_fraction_for_vlm, server_args.py 0.5.1)";
    return out;
  }
  const double ratio = static_cast<double>(m.vision_layers_attr) * m.vision_hidden_attr * m.vision_hidden_attr /
                       (24.0 * 1024 * 1024);
  out.factor = 0.95 * std::clamp(1.0 - 0.1 * (ratio - 1.0), 0.8, 1.05);
  out.why = "the default --mem-fraction-static" + at + " x " + Three(out.factor) +
            " for the vision tower: 0.95 x clamp(1 - 0.1 x (" + std::to_string(m.vision_layers_attr) + " x " +
            std::to_string(m.vision_hidden_attr) + "^2 / (24 x 1024^2) - 1), 0.8, 1.05) (adjust_mem_fraction_for_vlm, "
            "server_args.py 0.5.1, arg_groups/memory_hook.py 0.5.23)";
  if (!Before(v, {0, 5, 7}) && gpu_bytes > 0 && fraction > 0) {
    // memory_hook.py 0.5.23: with post-capture KV sizing planned, f - 8 GiB / gpu_mem.
    const double post = (fraction - 8.0 * kGiB / gpu_bytes) / fraction;
    out.unknown = "SGLang " + std::string(version) +
                  " with post-capture KV sizing lowers the default by 8 GiB / the card instead (to " +
                  Three(fraction * post) + "; arg_groups/memory_hook.py 0.5.23): which builds plan it is not read here";
    out.unknown_low = std::min(out.factor, post);
    out.unknown_high = std::max(out.factor, post);
  }
  return out;
}

}  // namespace tpt::memory
