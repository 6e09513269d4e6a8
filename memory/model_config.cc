// model_config.cc: config.json (+ the safetensors index, hf_quant_config.json) ->
// ModelConfig, and the TP checks. Weights per rank, KV dims and the activation peak
// are in model_weights.cc; model_config.h has the sharding rules.
#include "memory/model_config.h"
#include "base/read_file.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/strings.h"
#include "memory/model_defaults.h"

namespace tpt::memory {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

// A number field, trying several names (configs of different families spell them differently).
template <typename T>
std::optional<T> Num(const json& j, std::initializer_list<const char*> keys) {
  if (!j.is_object()) return std::nullopt;
  for (const char* k : keys) {
    auto it = j.find(k);
    if (it != j.end() && it->is_number()) {
      double v = it->get<double>();
      if (!std::isfinite(v)) continue;
      return static_cast<T>(v);
    }
  }
  return std::nullopt;
}

std::string Str(const json& j, const char* key) {
  if (!j.is_object()) return "";
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

std::optional<bool> Bool(const json& j, const char* key) {
  if (!j.is_object()) return std::nullopt;
  auto it = j.find(key);
  if (it != j.end() && it->is_boolean()) return it->get<bool>();
  return std::nullopt;
}

// A count the planner needs: absent or null -> nullopt; a whole number (above 0, or 0 too
// when `zero_ok`) -> its value; anything else (a string, a fraction, a negative or zero
// count) is an error naming the field and the file, never "missing".
StatusOr<std::optional<int64_t>> Count(const json& j, std::initializer_list<const char*> keys, const std::string& src,
                                       const std::string& where, bool zero_ok = false) {
  if (!j.is_object()) return std::optional<int64_t>();
  for (const char* k : keys) {
    auto it = j.find(k);
    if (it == j.end() || it->is_null()) continue;
    const std::string name = where + k;
    const std::string must = zero_ok ? "a whole number, 0 or more" : "a whole number above 0";
    if (!it->is_number()) {
      return InvalidArgumentError(src + ": " + name + " is " + it->dump() + " (" + it->type_name() + "): it must be " +
                                  must + "; fix the config.json");
    }
    const double v = it->get<double>();
    if (!std::isfinite(v) || v != std::floor(v) || v < (zero_ok ? 0 : 1) || v > 9.0e15) {
      return InvalidArgumentError(src + ": " + name + " is " + it->dump() + ": it must be " + must +
                                  "; fix the config.json");
    }
    return std::optional<int64_t>(static_cast<int64_t>(v));
  }
  return std::optional<int64_t>();
}

StatusOr<json> ReadJsonFile(const fs::path& p) {
  auto text = ReadSmallFile(p.string(), 64u << 20, "a model config (config.json)");
  if (!text.ok()) return InvalidArgumentError(text.status().message());
  json j = json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return InvalidArgumentError(p.string() + " is not valid JSON");
  return j;
}

// Effective bytes per element of a quantized linear weight, from quantization_config.
void ParseQuant(const json& qc, ModelConfig& m) {
  QuantInfo& q = m.quant;
  if (!qc.is_object()) return;
  std::string method = Lower(Str(qc, "quant_method"));
  if (method.empty() && qc.contains("quant_algo")) method = "modelopt";
  const bool bnb4 = Bool(qc, "load_in_4bit").value_or(false) || Bool(qc, "_load_in_4bit").value_or(false);
  const bool bnb8 = Bool(qc, "load_in_8bit").value_or(false) || Bool(qc, "_load_in_8bit").value_or(false);
  if (method.empty() && (bnb4 || bnb8 || qc.contains("load_in_4bit") || qc.contains("load_in_8bit"))) {
    method = "bitsandbytes";
  }
  // AutoGPTQ's quantize_config.json has no quant_method: GPTQ's bits/group_size, or AWQ's w_bit/q_group_size.
  if (method.empty() && qc.contains("w_bit")) method = "awq";
  if (method.empty() && qc.contains("bits") && qc.contains("group_size")) method = "gptq";
  q.method = method;
  auto add_skip = [&](const char* key) {
    auto it = qc.find(key);
    if (it == qc.end() || !it->is_array()) return;
    for (const auto& e : *it) {
      if (e.is_string()) q.skip.push_back(e.get<std::string>());
    }
  };
  for (const char* k : {"modules_to_not_convert", "ignored_layers", "ignore", "exclude_modules", "llm_int8_skip_modules"}) {
    add_skip(k);
  }
  char buf[128];
  if (method == "fp8" || method == "fbgemm_fp8" || method == "w8a8_fp8") {
    auto it = qc.find("weight_block_size");
    if (it != qc.end() && it->is_array() && it->size() == 2 && (*it)[0].is_number() && (*it)[1].is_number()) {
      double a = (*it)[0].get<double>(), b = (*it)[1].get<double>();
      q.linear_bytes = 1.0 + 4.0 / std::max(a * b, 1.0);  // fp32 scale per block
      std::snprintf(buf, sizeof(buf), "fp8 block %gx%g", a, b);
      q.scheme = buf;
    } else {
      q.linear_bytes = 1.0;
      q.scheme = "fp8 per-tensor/channel";
    }
  } else if (method == "awq" || method == "gptq" || method == "awq_marlin" || method == "gptq_marlin") {
    int bits = Num<int>(qc, {"bits", "w_bit"}).value_or(4);
    int group = Num<int>(qc, {"group_size", "q_group_size"}).value_or(128);
    double g = group > 0 ? group : 4096;  // per-channel: one scale per output column
    // packed weight + fp16 scale and packed zero point per group (+ GPTQ's int32 g_idx, negligible)
    q.linear_bytes = bits / 8.0 + (2.0 + bits / 8.0) / g;
    std::snprintf(buf, sizeof(buf), "%s int%d g%d", method.c_str(), bits, group);
    q.scheme = buf;
    if (Bool(qc, "lm_head").value_or(false)) q.scheme += " (lm_head quantized)";
  } else if (method == "compressed-tensors") {
    const json* w = nullptr;
    auto groups = qc.find("config_groups");
    if (groups != qc.end() && groups->is_object()) {
      for (const auto& [name, g] : groups->items()) {
        if (g.is_object() && g.contains("weights") && g["weights"].is_object()) {
          w = &g["weights"];
          break;
        }
      }
    }
    std::string fmt = Lower(Str(qc, "format"));
    if (w != nullptr) {
      int bits = Num<int>(*w, {"num_bits"}).value_or(8);
      std::string type = Lower(Str(*w, "type"));
      std::string strategy = Lower(Str(*w, "strategy"));
      int group = Num<int>(*w, {"group_size"}).value_or(0);
      bool symmetric = Bool(*w, "symmetric").value_or(true);
      if (type == "float" && bits == 4) {
        q.linear_bytes = 0.5 + 1.0 / (group > 0 ? group : 16);  // nvfp4: fp8 scale per 16
        q.scheme = "nvfp4 g" + std::to_string(group > 0 ? group : 16);
      } else if (type == "float" && bits == 8) {
        q.linear_bytes = 1.0;
        auto bs = w->find("block_structure");
        if (strategy == "block" && bs != w->end() && bs->is_array() && bs->size() == 2) {
          q.linear_bytes += 4.0 / std::max((*bs)[0].get<double>() * (*bs)[1].get<double>(), 1.0);
        }
        q.scheme = "fp8 " + (strategy.empty() ? std::string("tensor") : strategy);
      } else {
        double g = group > 0 ? group : 4096;
        q.linear_bytes = bits / 8.0 + 2.0 / g + (symmetric ? 0.0 : bits / 8.0 / g);
        q.scheme = "int" + std::to_string(bits) + (group > 0 ? " g" + std::to_string(group) : " per-channel");
      }
    } else if (fmt.find("fp4") != std::string::npos) {
      q.linear_bytes = 0.5625;
      q.scheme = fmt;
    } else if (fmt.find("float-quantized") != std::string::npos || fmt.find("int-quantized") != std::string::npos) {
      q.linear_bytes = 1.0;  // 8-bit formats
      q.scheme = fmt;
    } else {
      q.unsupported = "compressed-tensors with no weights scheme in config_groups" +
                      (fmt.empty() ? std::string() : " (format '" + fmt + "')");
    }
    auto kv = qc.find("kv_cache_scheme");
    if (kv != qc.end() && kv->is_object() && Num<int>(*kv, {"num_bits"}).value_or(16) == 8) q.kv_bytes = 1;
  } else if (method == "modelopt" || method == "modelopt_fp4" || method == "modelopt_fp8") {
    // ModelOpt writes {"quantization": {"quant_algo": ...}} (hf_quant_config.json, and
    // config.json's quantization_config in that shape) or a flat {"quant_algo": ...,
    // "quant_method": "modelopt"}; vLLM's quantization/modelopt.py reads both.
    const json& mq = qc.contains("quantization") && qc["quantization"].is_object() ? qc["quantization"] : qc;
    if (&mq != &qc) {
      for (const char* k : {"exclude_modules", "ignore"}) {
        if (auto it = mq.find(k); it != mq.end() && it->is_array()) {
          for (const auto& e : *it) {
            if (e.is_string()) q.skip.push_back(e.get<std::string>());
          }
        }
      }
    }
    std::string algo = Lower(Str(mq, "quant_algo"));
    if (algo.empty() && method != "modelopt") algo = method == "modelopt_fp4" ? "nvfp4" : "fp8";
    const int group = Num<int>(mq, {"group_size"}).value_or(0);
    if (algo == "nvfp4" || algo == "nvfp4_awq" || algo == "fp4") {
      const int g = group > 0 ? group : 16;
      q.linear_bytes = 0.5 + 1.0 / g;  // e2m1 + an fp8 scale per group (+ a per-tensor fp32 scale)
      q.scheme = "modelopt nvfp4 g" + std::to_string(g);
    } else if (algo == "fp8" || algo == "fp8_per_channel_per_token") {
      q.linear_bytes = 1.0;
      q.scheme = "modelopt fp8";
    } else if (algo == "fp8_pb_wo" || algo == "fp8_block") {
      q.linear_bytes = 1.0 + 4.0 / (128.0 * 128.0);
      q.scheme = "modelopt fp8 block 128x128";
    } else if (algo == "w4a8_awq" || algo == "w4a16_awq" || algo == "int4_awq") {
      const int g = group > 0 ? group : 128;
      q.linear_bytes = 0.5 + 2.0 / g;
      q.scheme = "modelopt " + algo + " g" + std::to_string(g);
    } else {
      q.unsupported = "ModelOpt quant_algo '" + (algo.empty() ? std::string("(none)") : algo) +
                      "' (known: FP8, FP8_PB_WO, NVFP4, W4A8_AWQ" +
                      std::string(algo == "mixed_precision" ? "; MIXED_PRECISION sets a scheme per layer" : "") + ")";
    }
    std::string kv_algo = Lower(Str(mq, "kv_cache_quant_algo"));
    if (kv_algo.empty()) kv_algo = Lower(Str(qc, "kv_cache_quant_algo"));
    if (kv_algo.find("fp8") != std::string::npos) q.kv_bytes = 1;
  } else if (method == "mxfp4") {
    q.linear_bytes = 0.5 + 1.0 / 32;  // e2m1 + one e8m0 scale per 32
    q.experts_only = true;
    q.scheme = "mxfp4 (MoE experts)";
  } else if (method == "bitsandbytes") {
    if (!bnb4 && !bnb8) {
      q.unsupported = "bitsandbytes with neither load_in_4bit nor load_in_8bit set";
    } else if (bnb4) {
      bool dq = Bool(qc, "bnb_4bit_use_double_quant").value_or(false);
      q.linear_bytes = 0.5 + (dq ? 1.0 / 64 + 4.0 / (64 * 256) : 4.0 / 64);
      q.scheme = std::string("bnb 4-bit") + (dq ? " double-quant" : "");
    } else {
      q.linear_bytes = 1.0;
      q.scheme = "bnb 8-bit";
    }
  } else if (!method.empty()) {
    q.unsupported = "quant_method '" + method +
                    "' (known: fp8, gptq, awq, compressed-tensors, modelopt, mxfp4, bitsandbytes)";
  }
  if (!q.unsupported.empty()) {
    q.linear_bytes = 0;
    q.method = "";
    m.notes.push_back("quantization not priced: " + q.unsupported + "; weights from the index total");
  }
}

// Name of the sub-config holding the language model ("" when the top level does),
// with a trailing dot: "text_config.", "thinker_config.text_config.".
std::string TextConfigPath(const json& j) {
  for (const char* k : {"text_config", "llm_config", "language_config", "thinker_config"}) {
    auto it = j.find(k);
    if (it != j.end() && it->is_object()) {
      if (std::string(k) == "thinker_config" && it->contains("text_config")) return "thinker_config.text_config.";
      return std::string(k) + ".";
    }
  }
  return "";
}

// The sub-config holding the language model.
const json& TextConfig(const json& j) {
  for (const char* k : {"text_config", "llm_config", "language_config", "thinker_config"}) {
    auto it = j.find(k);
    if (it != j.end() && it->is_object()) {
      if (std::string(k) == "thinker_config" && it->contains("text_config")) return (*it)["text_config"];
      return *it;
    }
  }
  return j;
}

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

// Layers with routed experts.
std::vector<bool> MoeLayers(const json& t, int layers, int experts) {
  std::vector<bool> moe(layers, experts > 0);
  if (experts <= 0) return moe;
  int first_dense = Num<int>(t, {"first_k_dense_replace"}).value_or(0);
  int freq = Num<int>(t, {"moe_layer_freq", "decoder_sparse_step", "interleave_moe_layer_step"}).value_or(1);
  if (freq < 1) freq = 1;
  for (int i = 0; i < layers; ++i) {
    bool is_moe = i >= first_dense;
    if (t.contains("decoder_sparse_step")) is_moe = is_moe && (i + 1) % freq == 0;  // Qwen MoE
    else if (t.contains("interleave_moe_layer_step")) is_moe = is_moe && (i + 1) % freq == 0;  // Llama 4
    else is_moe = is_moe && (i % freq == 0);
    moe[i] = is_moe;
  }
  auto mlp_only = t.find("mlp_only_layers");
  if (mlp_only != t.end() && mlp_only->is_array()) {
    for (const auto& e : *mlp_only) {
      if (e.is_number_integer() && e.get<int>() >= 0 && e.get<int>() < layers) moe[e.get<int>()] = false;
    }
  }
  return moe;
}

std::vector<std::string> LayerKinds(const json& t, const std::string& model_type, int layers, int sliding_window) {
  std::vector<std::string> kind(layers, "full");
  auto lt = t.find("layer_types");
  if (lt != t.end() && lt->is_array() && static_cast<int>(lt->size()) >= layers) {
    for (int i = 0; i < layers; ++i) {
      std::string s = (*lt)[i].is_string() ? Lower((*lt)[i].get<std::string>()) : "";
      if (s.find("sliding") != std::string::npos) kind[i] = "sliding";
      else if (s.find("linear") != std::string::npos || s.find("mamba") != std::string::npos ||
               s.find("conv") != std::string::npos) kind[i] = "linear";
      else kind[i] = "full";
    }
    return kind;
  }
  std::string pattern = Str(t, "hybrid_override_pattern");  // Nemotron-H: M mamba, * attention, - MLP
  if (!pattern.empty()) {
    // Each character is a layer; only '*' layers carry KV. num_hidden_layers counts them all.
    kind.assign(layers, "linear");
    for (int i = 0; i < layers && i < static_cast<int>(pattern.size()); ++i) {
      if (pattern[i] == '*') kind[i] = "full";
      else if (pattern[i] == '-' || pattern[i] == 'E') kind[i] = "mlp";
    }
    return kind;
  }
  if (auto interval = Num<int>(t, {"full_attention_interval"}); interval && *interval > 1) {  // Qwen3-Next
    for (int i = 0; i < layers; ++i) kind[i] = (i + 1) % *interval == 0 ? "full" : "linear";
    return kind;
  }
  if (auto period = Num<int>(t, {"attn_layer_period"}); period && *period > 0) {  // Jamba
    int offset = Num<int>(t, {"attn_layer_offset"}).value_or(0);
    for (int i = 0; i < layers; ++i) kind[i] = i % *period == offset ? "full" : "linear";
    return kind;
  }
  if (sliding_window > 0) {
    auto p = Num<int>(t, {"sliding_window_pattern"});
    if (!p && model_type == "gemma3_text") p = ArchitectureDefault(model_type, "sliding_window_pattern", nullptr);
    if (p && *p > 1) {  // Gemma 3: every p-th layer is global (Gemma3TextConfig: 6)
      for (int i = 0; i < layers; ++i) kind[i] = (i + 1) % *p == 0 ? "full" : "sliding";
    } else if (model_type == "gemma2") {
      for (int i = 0; i < layers; ++i) kind[i] = i % 2 == 0 ? "sliding" : "full";
    } else if (Bool(t, "use_sliding_window").value_or(model_type == "mistral")) {
      int max_window_layers = Num<int>(t, {"max_window_layers"}).value_or(layers);
      for (int i = 0; i < layers; ++i) kind[i] = i < max_window_layers ? "sliding" : "full";
    }
  }
  return kind;
}

// Parameters of one linear-attention / mamba mixer (no KV per token).
double LinearMixerParams(const json& t, int hidden) {
  if (auto vh = Num<int>(t, {"linear_num_value_heads"})) {  // Qwen3-Next gated delta net
    int kh = Num<int>(t, {"linear_num_key_heads"}).value_or(*vh);
    int kd = Num<int>(t, {"linear_key_head_dim"}).value_or(128);
    int vd = Num<int>(t, {"linear_value_head_dim"}).value_or(128);
    double qkvz = 2.0 * kh * kd + 2.0 * *vh * vd;
    return hidden * (qkvz + 2.0 * *vh) + static_cast<double>(*vh) * vd * hidden;
  }
  if (auto nh = Num<int>(t, {"mamba_num_heads"})) {  // Mamba2 (Nemotron-H)
    int hd = Num<int>(t, {"mamba_head_dim"}).value_or(64);
    int groups = Num<int>(t, {"n_groups", "mamba_n_groups"}).value_or(8);
    int state = Num<int>(t, {"ssm_state_size", "mamba_d_state"}).value_or(128);
    double inner = static_cast<double>(*nh) * hd;
    return hidden * (2 * inner + 2.0 * groups * state + *nh) + inner * hidden;
  }
  if (auto expand = Num<int>(t, {"mamba_expand"})) {  // Mamba1 (Jamba)
    int state = Num<int>(t, {"mamba_d_state"}).value_or(16);
    double inner = static_cast<double>(*expand) * hidden;
    return hidden * 2 * inner + inner * hidden + inner * (2.0 * state + 64);
  }
  return 4.0 * hidden * hidden;  // unknown mixer: attention-sized
}

}  // namespace

int ModelConfig::AttentionLayers() const { return FullAttentionLayers() + SlidingLayers(); }
int ModelConfig::FullAttentionLayers() const {
  if (layer_kind.empty()) return layers;
  return static_cast<int>(std::count(layer_kind.begin(), layer_kind.end(), "full"));
}
int ModelConfig::SlidingLayers() const {
  return static_cast<int>(std::count(layer_kind.begin(), layer_kind.end(), "sliding"));
}
int ModelConfig::LinearLayers() const {
  return static_cast<int>(std::count(layer_kind.begin(), layer_kind.end(), "linear"));
}

StatusOr<ModelConfig> ParseModelConfig(const json& j, std::string_view source) {
  const std::string src(source);
  if (!j.is_object()) return InvalidArgumentError(src + ": not a JSON object (expected a Hugging Face config.json)");
  ModelConfig m;
  m.source = src;
  const json& t = TextConfig(j);
  m.model_type = Str(j, "model_type");
  std::string text_type = Str(t, "model_type");
  if (m.model_type.empty()) m.model_type = text_type;
  if (auto it = j.find("architectures"); it != j.end() && it->is_array() && !it->empty() && (*it)[0].is_string()) {
    m.architecture = (*it)[0].get<std::string>();
  }
  std::string dtype = Str(t, "torch_dtype");
  if (dtype.empty()) dtype = Str(j, "torch_dtype");
  if (dtype.empty()) dtype = Str(t, "dtype");
  if (dtype.empty()) dtype = Str(j, "dtype");
  if (!dtype.empty()) m.torch_dtype = dtype;
  if (Lower(m.torch_dtype).find("float32") != std::string::npos) {
    m.notes.push_back("torch_dtype float32: the servers load it as 16-bit (dtype auto)");
  }
  // The language model's class decides the defaults of what config.json leaves out
  // (Gemma-3's terse text_config: Gemma3TextConfig's 8 heads, 4 KV heads, head_dim 256).
  std::string arch_type = text_type.empty() ? m.model_type : text_type;
  if (text_type.empty() && m.model_type == "gemma3") arch_type = "gemma3_text";
  const std::string where = TextConfigPath(j);
  std::vector<std::string> missing;
  // Reads a count; a field left out takes the class's documented default (said in
  // m.notes) or is listed as missing.
  auto count = [&](std::initializer_list<const char*> keys, const char* canonical,
                   bool required) -> StatusOr<int64_t> {
    auto v = Count(t, keys, src, where);
    if (!v.ok()) return v.status();
    if (*v) return **v;
    std::string cls;
    if (auto d = ArchitectureDefault(arch_type, canonical, &cls)) {
      m.notes.push_back(where + canonical + " not in config.json: " + std::to_string(*d) + ", the default of " + cls);
      return *d;
    }
    if (required) missing.push_back(where + canonical);
    return int64_t{0};
  };
#define TPT_COUNT(var, canonical, required, ...)         \
  do {                                                    \
    auto c_ = count({__VA_ARGS__}, canonical, required);  \
    if (!c_.ok()) return c_.status();                     \
    var = static_cast<decltype(var)>(*c_);                \
  } while (0)
  TPT_COUNT(m.layers, "num_hidden_layers", true, "num_hidden_layers", "n_layer", "num_layers", "n_layers");
  TPT_COUNT(m.hidden, "hidden_size", true, "hidden_size", "d_model", "n_embd", "dim");
  TPT_COUNT(m.heads, "num_attention_heads", true, "num_attention_heads", "n_head", "n_heads", "num_heads");
  TPT_COUNT(m.vocab, "vocab_size", false, "vocab_size", "padded_vocab_size", "n_vocab");
  if (m.vocab == 0 && &t != &j) {
    auto top = Count(j, {"vocab_size"}, src, "");
    if (!top.ok()) return top.status();
    m.vocab = top->value_or(0);
  }
  if (m.vocab == 0) missing.push_back(where + "vocab_size");
  TPT_COUNT(m.intermediate, "intermediate_size", false, "intermediate_size", "ffn_hidden_size", "n_inner", "ffn_dim", "d_ff");
  TPT_COUNT(m.kv_heads, "num_key_value_heads", false, "num_key_value_heads", "num_kv_heads", "multi_query_group_num", "n_kv_heads");
  TPT_COUNT(m.max_position, "max_position_embeddings", false, "max_position_embeddings", "n_positions", "seq_length", "max_seq_len");
  int64_t head_dim = 0;
  TPT_COUNT(head_dim, "head_dim", false, "head_dim", "kv_channels");
#undef TPT_COUNT
  if (!missing.empty()) {
    std::string list;
    for (const auto& s : missing) list += (list.empty() ? "" : ", ") + s;
    return InvalidArgumentError(src + ": missing " + list + " (model_type '" + arch_type +
                                "'; is this a model's config.json? for multimodal models the language model's "
                                "numbers are read from text_config/llm_config)");
  }
  if (m.kv_heads <= 0) {
    m.kv_heads = m.heads;
    m.notes.push_back(where + "num_key_value_heads not in config.json: " + std::to_string(m.heads) +
                      " (= num_attention_heads, multi-head attention: the transformers default)");
  }
  if (head_dim > 0) {
    m.head_dim = static_cast<int>(head_dim);
  } else {
    m.head_dim = m.hidden / m.heads;
    if (!t.contains("kv_lora_rank")) {  // MLA has its own head dims
      m.notes.push_back(where + "head_dim not in config.json: hidden_size / num_attention_heads = " +
                        std::to_string(m.head_dim) + " (the transformers default)");
    }
    if (m.hidden % m.heads != 0) {
      return InvalidArgumentError(src + ": " + where + "head_dim is not given and hidden_size " + std::to_string(m.hidden) +
                                  " is not a multiple of num_attention_heads " + std::to_string(m.heads) +
                                  "; add head_dim to the config.json");
    }
  }
  if (m.max_position <= 0) {
    m.notes.push_back(where + "max_position_embeddings not in config.json: no context length is derived "
                      "(pass --context-length/--max-model-len)");
  }
  if (auto tie = Bool(t, "tie_word_embeddings"); tie) {
    m.tied_embeddings = *tie;
    m.tied_known = true;
  } else if (auto tie2 = Bool(j, "tie_word_embeddings"); tie2) {
    m.tied_embeddings = *tie2;
    m.tied_known = true;
  } else {
    // transformers' PretrainedConfig default is True; Llama/Qwen/Mistral-family classes default to False.
    static const char* kTiedByDefault[] = {"gemma", "gemma2", "gemma3", "gemma3_text", "phi3small", "opt", "gpt2"};
    m.tied_embeddings = false;
    for (const char* t2 : kTiedByDefault) {
      if (text_type == t2 || m.model_type == t2) m.tied_embeddings = true;
    }
  }
  std::string mt = text_type.empty() ? m.model_type : text_type;
  m.qkv_bias = Bool(t, "attention_bias").value_or(false) || Bool(t, "qkv_bias").value_or(false) ||
               mt == "qwen2" || mt == "qwen2_moe" || mt == "qwen2_vl" || mt == "qwen2_5_vl";
  m.o_bias = Bool(t, "attention_bias").value_or(false);
  // MLA
  m.kv_lora_rank = Num<int>(t, {"kv_lora_rank"}).value_or(0);
  if (m.kv_lora_rank > 0) {
    m.q_lora_rank = Num<int>(t, {"q_lora_rank"}).value_or(0);
    m.qk_nope_head_dim = Num<int>(t, {"qk_nope_head_dim"}).value_or(128);
    m.qk_rope_head_dim = Num<int>(t, {"qk_rope_head_dim"}).value_or(64);
    m.v_head_dim = Num<int>(t, {"v_head_dim"}).value_or(128);
  }
  // MoE
  auto experts = Count(t, {"n_routed_experts", "num_experts", "num_local_experts", "moe_num_experts"}, src, where,
                       /*zero_ok=*/true);
  if (!experts.ok()) return experts.status();
  m.experts = static_cast<int>(experts->value_or(0));
  auto moe_width = Count(t, {"moe_intermediate_size", "expert_intermediate_size"}, src, where);
  if (!moe_width.ok()) return moe_width.status();
  if (m.experts > 0) {
    auto per_tok = Count(t, {"num_experts_per_tok", "moe_topk", "top_k", "num_experts_per_token"}, src, where);
    if (!per_tok.ok()) return per_tok.status();
    m.experts_per_tok = static_cast<int>(per_tok->value_or(2));
    if (!*per_tok) m.notes.push_back(where + "num_experts_per_tok not in config.json: 2 assumed");
    m.moe_intermediate = static_cast<int>(moe_width->value_or(m.intermediate));
    if (m.moe_intermediate <= 0) {
      return InvalidArgumentError(src + ": " + where + "moe_intermediate_size (or intermediate_size) is missing: the "
                                  "experts' width is unknown; add it to the config.json");
    }
    if (auto s = Num<int>(t, {"shared_expert_intermediate_size"}); s && *s > 0) {  // Qwen2-MoE: one wide shared expert
      m.shared_experts = 1;
      m.shared_intermediate = *s;
    } else {
      m.shared_experts = Num<int>(t, {"n_shared_experts", "num_shared_experts"}).value_or(0);
      if (mt == "llama4_text" || mt == "llama4") m.shared_experts = 1;
      m.shared_intermediate = m.moe_intermediate;
    }
    m.moe_layer = MoeLayers(t, m.layers, m.experts);
    if (auto dense = Num<int>(t, {"intermediate_size_mlp"}); dense && *dense > 0) m.intermediate = *dense;  // Llama 4
  }
  // The MLP width: a config without intermediate_size is not an MLP of 0. The family's
  // own rule (GPT-2's n_inner None = 4 x n_embd, MPT's expansion_ratio...), or, when every
  // layer routes to experts, their width; otherwise an error naming the field.
  if (m.intermediate <= 0) {
    const bool all_moe = m.IsMoe() && !m.moe_layer.empty() &&
                         std::find(m.moe_layer.begin(), m.moe_layer.end(), false) == m.moe_layer.end();
    std::string rule;
    if (auto w = DefaultMlpWidth(arch_type, m.hidden, Num<double>(t, {"expansion_ratio"}).value_or(0), &rule)) {
      m.intermediate = static_cast<int>(*w);
      m.notes.push_back(where + "intermediate_size not in config.json: " + std::to_string(*w) + " (" + rule + ")");
    } else if (all_moe) {
      m.intermediate = m.moe_intermediate;  // no dense MLP layer; only the TP checks read it
    } else {
      return InvalidArgumentError(src + ": " + where + "intermediate_size is missing (nor ffn_dim, n_inner, "
                                  "ffn_hidden_size" + std::string(m.IsMoe() ? "" : ", moe_intermediate_size") +
                                  "): the MLP width of model_type '" + arch_type +
                                  "' is unknown; add it to the config.json");
    }
  }
  {
    auto sw = Count(t, {"sliding_window"}, src, where, /*zero_ok=*/true);
    // Some configs write sliding_window: false/null when it is off; only numbers count.
    if (sw.ok()) {
      m.sliding_window = static_cast<int>(sw->value_or(0));
    } else if (auto it = t.find("sliding_window"); it != t.end() && !it->is_boolean()) {
      return sw.status();
    }
    if (m.sliding_window == 0 && !t.contains("sliding_window")) {
      std::string cls;
      if (auto d = ArchitectureDefault(arch_type, "sliding_window", &cls); d && arch_type.rfind("gemma", 0) == 0) {
        m.sliding_window = static_cast<int>(*d);
        m.notes.push_back(where + "sliding_window not in config.json: " + std::to_string(*d) + ", the default of " + cls);
      }
    }
  }
  m.layer_kind = LayerKinds(t, arch_type, m.layers, m.sliding_window);
  if (m.LinearLayers() > 0) {
    m.linear_mixer_params = LinearMixerParams(t, m.hidden);
    if (auto vh = Num<int>(t, {"linear_num_value_heads"})) {  // Qwen3-Next / Qwen3.5 gated delta net
      m.mamba_kind = "gdn";
      m.gdn_value_heads = *vh;
      m.gdn_key_heads = Num<int>(t, {"linear_num_key_heads"}).value_or(*vh);
      m.gdn_key_dim = Num<int>(t, {"linear_key_head_dim"}).value_or(128);
      m.gdn_value_dim = Num<int>(t, {"linear_value_head_dim"}).value_or(128);
      m.mamba_conv_kernel = Num<int>(t, {"linear_conv_kernel_dim"}).value_or(4);
    } else if (auto nh = Num<int>(t, {"mamba_num_heads", "mamba_n_heads"})) {  // Mamba2: Nemotron-H, Falcon-H1
      m.mamba_kind = "mamba2";
      m.mamba_heads = *nh;
      m.mamba_head_dim = Num<int>(t, {"mamba_head_dim", "mamba_d_head"}).value_or(64);
      m.mamba_state = Num<int>(t, {"ssm_state_size", "mamba_d_state"}).value_or(128);
      m.mamba_groups = Num<int>(t, {"n_groups", "mamba_n_groups"}).value_or(8);
      m.mamba_conv_kernel = Num<int>(t, {"conv_kernel", "mamba_d_conv"}).value_or(4);
    }
  }
  m.mtp_layers = Num<int>(t, {"num_nextn_predict_layers"}).value_or(0);
  // Towers
  for (const char* k : {"vision_config", "audio_config", "vision_tower_config"}) {
    auto it = j.find(k);
    if (it == j.end() && &t != &j) continue;
    if (it == j.end()) continue;
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
      } else {
        int64_t side = Num<int>(v, {"image_size"}).value_or(448) / std::max(patch, 1);
        m.vision_max_patches = side * side;
      }
    }
    if (p > 0) {
      m.vision_params += p;
      m.vision_note += (m.vision_note.empty() ? "" : "; ") + std::string(k) + ": " + note;
    }
  }
  // Quantization: quantization_config (text first: some VLMs nest it) or compression_config.
  const json* qc = nullptr;
  for (const json* c : {&j, &t}) {
    for (const char* k : {"quantization_config", "compression_config"}) {
      auto it = c->find(k);
      if (it != c->end() && it->is_object() && qc == nullptr) qc = &*it;
    }
  }
  if (qc != nullptr) ParseQuant(*qc, m);
  return m;
}

namespace {

// A Hugging Face cache folder: `models--org--name/` (refs/main names the snapshot; a
// lone snapshot is taken when there is no ref) or `models--org--name/snapshots/` itself.
// Any other directory is returned as it is.
StatusOr<fs::path> FollowHfCache(const fs::path& dir, std::vector<std::string>* notes) {
  std::error_code ec;
  if (fs::exists(dir / "config.json", ec)) return dir;
  fs::path root = dir;
  if (dir.filename() == "snapshots") root = dir.parent_path();
  const fs::path snaps = root / "snapshots";
  if (!fs::is_directory(snaps, ec)) return dir;
  std::string rev, how;
  for (const char* ref : {"main", "master"}) {
    if (fs::exists(root / "refs" / ref, ec)) {
      auto text = ReadSmallFile((root / "refs" / ref).string(), 4096, "a Hugging Face cache ref");
      if (!text.ok()) return InvalidArgumentError("--model: " + text.status().message());
      rev = std::string(Trim(*text));
      how = std::string("refs/") + ref;
      break;
    }
  }
  if (rev.empty()) {
    std::vector<std::string> all;
    for (const auto& e : fs::directory_iterator(snaps, ec)) {
      if (e.is_directory(ec)) all.push_back(e.path().filename().string());
    }
    if (all.size() != 1) {
      std::string list;
      for (const auto& r : all) list += (list.empty() ? "" : ", ") + r;
      return InvalidArgumentError("--model " + dir.string() + ": a Hugging Face cache folder with " +
                                  std::to_string(all.size()) + " snapshots and no refs/main (" +
                                  (list.empty() ? "none" : list) + "); give the snapshot folder");
    }
    rev = all.front();
    how = "the only snapshot";
  }
  const fs::path snap = snaps / rev;
  if (!fs::exists(snap / "config.json", ec)) {
    return InvalidArgumentError("--model " + dir.string() + ": " + how + " names snapshot " + rev +
                                ", which has no config.json (is the download complete?)");
  }
  notes->push_back("Hugging Face cache: snapshot " + rev + " (" + how + ")");
  return snap;
}

// The weights' bytes of a single-file checkpoint: model.safetensors is an 8-byte
// little-endian header length, the JSON header, then the tensors.
std::optional<double> SafetensorsBytes(const fs::path& file) {
  std::ifstream f(file, std::ios::binary);
  unsigned char len[8];
  if (!f.read(reinterpret_cast<char*>(len), 8)) return std::nullopt;
  uint64_t header = 0;
  for (int i = 7; i >= 0; --i) header = header << 8 | len[i];
  std::error_code ec;
  const auto size = fs::file_size(file, ec);
  if (ec || header > size || size - header < 8 + 1024) return std::nullopt;  // a Git LFS pointer, or damaged
  return static_cast<double>(size - 8 - header);
}

// Tensor names that only quantized checkpoints have (scales, packed weights).
std::string QuantizedTensor(const std::vector<std::string>& names) {
  for (const auto& n : names) {
    for (const char* marker : {".weight_scale", ".qweight", ".weight_packed", ".scales", ".weight_scale_inv"}) {
      if (n.find(marker) != std::string::npos) return n;
    }
  }
  return "";
}

}  // namespace

StatusOr<ModelConfig> LoadModel(const std::string& path) {
  std::error_code ec;
  fs::path p(path);
  if (!fs::exists(p, ec)) {
    return InvalidArgumentError("--model " + path +
                                ": no such file or directory (give a local model directory or its config.json; "
                                "nothing is downloaded)");
  }
  std::vector<std::string> found;
  fs::path dir = p, config = p;
  if (fs::is_directory(p, ec)) {
    auto snap = FollowHfCache(p, &found);
    if (!snap.ok()) return snap.status();
    dir = *snap;
    config = dir / "config.json";
    if (!fs::exists(config, ec)) {
      return InvalidArgumentError("--model " + path + ": the directory has no config.json");
    }
  } else {
    dir = p.parent_path();
  }
  auto j = ReadJsonFile(config);
  if (!j.ok()) return InvalidArgumentError("--model: " + j.status().message());
  auto m = ParseModelConfig(*j, config.string());
  if (!m.ok()) return m.status();
  m->notes.insert(m->notes.begin(), found.begin(), found.end());
  if (!m->quant.method.empty() || !m->quant.unsupported.empty()) m->quant.source = config.string() + " quantization_config";
  // ModelOpt writes its quantization into hf_quant_config.json next to config.json;
  // AutoGPTQ/AutoAWQ into quantize_config.json (vLLM's get_quant_config reads both).
  if (m->quant.method.empty() && m->quant.unsupported.empty()) {
    for (const char* name : {"hf_quant_config.json", "quantize_config.json", "quant_config.json"}) {
      if (!fs::exists(dir / name, ec)) continue;
      auto hq = ReadJsonFile(dir / name);
      if (!hq.ok()) return InvalidArgumentError("--model: " + hq.status().message());
      json qc = *hq;
      if (std::string(name) == "hf_quant_config.json") {
        if (!qc.contains("quantization") || !qc["quantization"].is_object()) {
          return InvalidArgumentError("--model: " + (dir / name).string() +
                                      " has no \"quantization\" object (a ModelOpt export writes "
                                      "{\"quantization\": {\"quant_algo\": ...}})");
        }
        qc["quant_method"] = "modelopt";
      }
      ParseQuant(qc, *m);
      m->quant.source = (dir / name).string();
      break;
    }
  }
  fs::path index = dir / "model.safetensors.index.json";
  if (fs::exists(index, ec)) {
    auto ij = ReadJsonFile(index);
    if (!ij.ok()) return InvalidArgumentError("--model: " + ij.status().message());
    if (auto meta = ij->find("metadata"); meta != ij->end() && meta->is_object()) {
      auto ts = Count(*meta, {"total_size"}, index.string(), "metadata.");
      if (!ts.ok()) return ts.status();
      if (*ts) m->index_total_bytes = static_cast<double>(**ts);
    }
    if (auto wm = ij->find("weight_map"); wm != ij->end() && wm->is_object()) {
      for (const auto& [name, file] : wm->items()) m->tensor_names.push_back(name);
    }
    if (!m->tensor_names.empty()) {
      bool has_lm_head = false;
      for (const auto& n : m->tensor_names) {
        if (n.find("lm_head.weight") != std::string::npos) has_lm_head = true;
      }
      if (!m->tied_known) {
        m->tied_embeddings = !has_lm_head;
        m->tied_known = true;
        m->notes.push_back(std::string("tied embeddings from the index: ") + (has_lm_head ? "lm_head present" : "no lm_head"));
      }
    }
    if (!m->index_total_bytes) m->notes.push_back(index.string() + " has no metadata.total_size: weights from the config");
  } else if (fs::exists(dir / "model.safetensors", ec)) {
    if (auto b = SafetensorsBytes(dir / "model.safetensors")) {
      m->index_total_bytes = *b;
      m->notes.push_back("weights: model.safetensors holds " + FormatGiB(*b) + " of tensors");
    }
  }
  if (m->quant.method.empty() && m->quant.unsupported.empty()) {
    if (std::string t = QuantizedTensor(m->tensor_names); !t.empty()) {
      return InvalidArgumentError("--model " + path + ": the index has quantized tensors (" + t +
                                  ") but neither config.json's quantization_config nor hf_quant_config.json/"
                                  "quantize_config.json says the scheme; add the checkpoint's quantization file");
    }
  }
  if (!m->quant.unsupported.empty() && !m->index_total_bytes) {
    return InvalidArgumentError("--model " + path + ": " + m->quant.source + " names " + m->quant.unsupported +
                                ", which tptriage cannot price, and there is no model.safetensors.index.json total; "
                                "give --weights-per-rank");
  }
  if (!m->tied_known) {
    m->notes.push_back(std::string("tie_word_embeddings not in config.json: ") +
                       (m->tied_embeddings ? "tied" : "untied") + " assumed (the model class default)");
  }
  return m;
}

Status CheckTensorParallel(const ModelConfig& m, int tp, std::string_view framework) {
  if (tp <= 0) return InvalidArgumentError("--tp must be >= 1");
  auto valid = [&]() {
    std::string s;
    for (int v : ValidTensorParallelSizes(m, 64)) s += (s.empty() ? "" : ", ") + std::to_string(v);
    return s;
  };
  if (m.heads % tp != 0) {
    return InvalidArgumentError("--tp " + std::to_string(tp) + " does not divide the model's " +
                                std::to_string(m.heads) + " attention heads (" + std::string(framework) +
                                " requires it); TP sizes that work: " + valid());
  }
  if (m.intermediate > 0 && m.intermediate % tp != 0 && m.FullAttentionLayers() + m.SlidingLayers() > 0 &&
      (!m.IsMoe() || std::find(m.moe_layer.begin(), m.moe_layer.end(), false) != m.moe_layer.end())) {
    return InvalidArgumentError("--tp " + std::to_string(tp) + " does not divide the MLP width " +
                                std::to_string(m.intermediate) + " (intermediate_size; the column-parallel layers "
                                "split it evenly); TP sizes that work: " + valid());
  }
  if (!m.IsMla() && m.kv_heads > 0) {
    bool ok = m.kv_heads >= tp ? m.kv_heads % tp == 0 : tp % m.kv_heads == 0;
    if (!ok) {
      return InvalidArgumentError("--tp " + std::to_string(tp) + " and the model's " + std::to_string(m.kv_heads) +
                                  " KV heads: " + std::string(framework) +
                                  " needs kv_heads % tp == 0, or tp % kv_heads == 0 when heads are replicated; "
                                  "TP sizes that work: " + valid());
    }
  }
  return OkStatus();
}

std::vector<int> ValidTensorParallelSizes(const ModelConfig& m, int max_tp) {
  std::vector<int> out;
  for (int tp = 1; tp <= max_tp; ++tp) {
    if (m.heads % tp != 0) continue;
    if (m.intermediate > 0 && m.intermediate % tp != 0 &&
        (!m.IsMoe() || std::find(m.moe_layer.begin(), m.moe_layer.end(), false) != m.moe_layer.end())) {
      continue;
    }
    if (!m.IsMla() && m.kv_heads > 0 && !(m.kv_heads >= tp ? m.kv_heads % tp == 0 : tp % m.kv_heads == 0)) continue;
    out.push_back(tp);
  }
  return out;
}

}  // namespace tpt::memory
