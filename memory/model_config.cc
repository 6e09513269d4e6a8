// model_config.cc: config.json -> ModelConfig; weights per rank; KV dims; vLLM's
// profiling activation peak. See model_config.h for the sharding rules.
#include "memory/model_config.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

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

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

int64_t PadTo(int64_t v, int64_t m) { return (v + m - 1) / m * m; }
int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

StatusOr<json> ReadJsonFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return InvalidArgumentError("cannot read " + p.string());
  std::stringstream ss;
  ss << in.rdbuf();
  json j = json::parse(ss.str(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return InvalidArgumentError(p.string() + " is not valid JSON");
  return j;
}

// Effective bytes per element of a quantized linear weight, from quantization_config.
void ParseQuant(const json& qc, ModelConfig& m) {
  QuantInfo& q = m.quant;
  if (!qc.is_object()) return;
  std::string method = Lower(Str(qc, "quant_method"));
  if (method.empty() && qc.contains("quant_algo")) method = "modelopt";
  if (method.empty() && (qc.contains("load_in_4bit") || qc.contains("load_in_8bit"))) method = "bitsandbytes";
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
    } else {
      q.linear_bytes = fmt.find("fp4") != std::string::npos ? 0.5625 : 1.0;
      q.scheme = fmt.empty() ? "compressed-tensors (scheme unknown: 8-bit assumed)" : fmt;
    }
    auto kv = qc.find("kv_cache_scheme");
    if (kv != qc.end() && kv->is_object() && Num<int>(*kv, {"num_bits"}).value_or(16) == 8) q.kv_bytes = 1;
  } else if (method == "modelopt" || method == "modelopt_fp4" || method == "modelopt_fp8") {
    std::string algo = Lower(Str(qc, "quant_algo"));
    if (algo.find("fp4") != std::string::npos || method == "modelopt_fp4") {
      q.linear_bytes = 0.5 + 1.0 / 16;
      q.scheme = "nvfp4 g16";
    } else {
      q.linear_bytes = 1.0;
      q.scheme = "fp8";
    }
    if (Lower(Str(qc, "kv_cache_quant_algo")).find("fp8") != std::string::npos) q.kv_bytes = 1;
  } else if (method == "mxfp4") {
    q.linear_bytes = 0.5 + 1.0 / 32;  // e2m1 + one e8m0 scale per 32
    q.experts_only = true;
    q.scheme = "mxfp4 (MoE experts)";
  } else if (method == "bitsandbytes") {
    if (Bool(qc, "load_in_4bit").value_or(false)) {
      bool dq = Bool(qc, "bnb_4bit_use_double_quant").value_or(false);
      q.linear_bytes = 0.5 + (dq ? 1.0 / 64 + 4.0 / (64 * 256) : 4.0 / 64);
      q.scheme = std::string("bnb 4-bit") + (dq ? " double-quant" : "");
    } else {
      q.linear_bytes = 1.0;
      q.scheme = "bnb 8-bit";
    }
  } else if (!method.empty()) {
    q.linear_bytes = 0;
    m.notes.push_back("quantization method '" + method + "' is not modelled: weights counted at " +
                      std::to_string(static_cast<int>(m.dtype_bytes * 8)) + " bits (the index total corrects this when present)");
    q.method = "";
  }
}

// Name of the sub-config holding the language model.
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

bool MatchesSkip(const std::string& name, const std::vector<std::string>& skip) {
  for (const auto& s : skip) {
    if (s.rfind("re:", 0) == 0) {
      try {
        if (std::regex_search(name, std::regex(s.substr(3)))) return true;
      } catch (const std::regex_error&) {
      }
    } else if (!s.empty() && name.find(s) != std::string::npos) {
      return true;
    }
  }
  return false;
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
    if (auto p = Num<int>(t, {"sliding_window_pattern"}); p && *p > 1) {  // Gemma 3: every p-th layer is global
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
  m.layers = Num<int>(t, {"num_hidden_layers", "n_layer", "num_layers", "n_layers"}).value_or(0);
  m.hidden = Num<int>(t, {"hidden_size", "d_model", "n_embd", "dim"}).value_or(0);
  m.intermediate = Num<int>(t, {"intermediate_size", "ffn_hidden_size", "n_inner", "ffn_dim"}).value_or(0);
  m.heads = Num<int>(t, {"num_attention_heads", "n_head", "n_heads", "num_heads"}).value_or(0);
  m.kv_heads = Num<int>(t, {"num_key_value_heads", "num_kv_heads", "multi_query_group_num", "n_kv_heads"})
                   .value_or(m.heads);
  m.vocab = Num<int64_t>(t, {"vocab_size", "padded_vocab_size", "n_vocab"}).value_or(0);
  if (m.vocab == 0) m.vocab = Num<int64_t>(j, {"vocab_size"}).value_or(0);
  m.max_position = Num<int64_t>(t, {"max_position_embeddings", "n_positions", "seq_length", "max_seq_len"}).value_or(0);
  std::vector<std::string> missing;
  if (m.layers <= 0) missing.push_back("num_hidden_layers");
  if (m.hidden <= 0) missing.push_back("hidden_size");
  if (m.heads <= 0) missing.push_back("num_attention_heads");
  if (m.vocab <= 0) missing.push_back("vocab_size");
  if (!missing.empty()) {
    std::string list;
    for (const auto& s : missing) list += (list.empty() ? "" : ", ") + s;
    return InvalidArgumentError(src + ": missing " + list +
                                " (is this a model's config.json? for multimodal models the language model's "
                                "numbers are read from text_config/llm_config)");
  }
  if (m.kv_heads <= 0) m.kv_heads = m.heads;
  auto hd = Num<int>(t, {"head_dim", "kv_channels"});
  m.head_dim = hd && *hd > 0 ? *hd : m.hidden / m.heads;
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
  m.experts = Num<int>(t, {"n_routed_experts", "num_experts", "num_local_experts", "moe_num_experts"}).value_or(0);
  if (m.experts > 0) {
    m.experts_per_tok = Num<int>(t, {"num_experts_per_tok", "moe_topk", "top_k", "num_experts_per_token"}).value_or(2);
    m.moe_intermediate = Num<int>(t, {"moe_intermediate_size", "expert_intermediate_size"}).value_or(m.intermediate);
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
  m.sliding_window = Num<int>(t, {"sliding_window"}).value_or(0);
  m.layer_kind = LayerKinds(t, mt, m.layers, m.sliding_window);
  if (m.LinearLayers() > 0) m.linear_mixer_params = LinearMixerParams(t, m.hidden);
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

StatusOr<ModelConfig> LoadModel(const std::string& path) {
  std::error_code ec;
  fs::path p(path);
  if (!fs::exists(p, ec)) {
    return InvalidArgumentError("--model " + path +
                                ": no such file or directory (give a local model directory or its config.json; "
                                "nothing is downloaded)");
  }
  fs::path dir = p, config = p;
  if (fs::is_directory(p, ec)) {
    config = p / "config.json";
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
  // ModelOpt writes its quantization into hf_quant_config.json next to config.json.
  if (m->quant.method.empty() && fs::exists(dir / "hf_quant_config.json", ec)) {
    auto hq = ReadJsonFile(dir / "hf_quant_config.json");
    if (hq.ok() && hq->contains("quantization") && (*hq)["quantization"].is_object()) {
      json qc = (*hq)["quantization"];
      qc["quant_method"] = "modelopt";
      ParseQuant(qc, *m);
    }
  }
  fs::path index = dir / "model.safetensors.index.json";
  if (fs::exists(index, ec)) {
    auto ij = ReadJsonFile(index);
    if (!ij.ok()) return InvalidArgumentError("--model: " + ij.status().message());
    if (auto meta = ij->find("metadata"); meta != ij->end() && meta->is_object()) {
      if (auto ts = Num<double>(*meta, {"total_size"}); ts && *ts > 0) m->index_total_bytes = *ts;
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

namespace {

// Bytes of one model replica's tensors as held by one rank. `tp`, `moe_world` = 1
// gives the unsharded total. Layers [first, last) are on this rank.
struct Tally {
  double bytes = 0;
  double quantized = 0, unquantized = 0;
  double rounding = 0;  // allocator rounding of large tensors (not in `bytes`)
};

class WeightCounter {
 public:
  WeightCounter(const ModelConfig& m, int tp, int attn_tp, int moe_world, bool sglang_ep)
      : m_(m), tp_(tp), attn_tp_(attn_tp), moe_world_(moe_world), sglang_ep_(sglang_ep) {}

  // elements of a linear's weight, `quantizable` if quantization applies to it.
  double Linear(const std::string& name, double elems, bool quantizable = true) {
    bool q = quantizable && m_.quant.linear_bytes > 0 && !MatchesSkip(name, m_.quant.skip);
    if (q && m_.quant.experts_only && name.find("experts") == std::string::npos) q = false;
    if (q && name.find("shared_expert") != std::string::npos && m_.quant.experts_only) q = false;
    double b = elems * (q ? m_.quant.linear_bytes : m_.dtype_bytes);
    t_.bytes += b;
    (q ? t_.quantized : t_.unquantized) += b;
    return b;
  }
  double Plain(double elems) {  // norms, biases, embeddings: 16-bit
    t_.bytes += elems * m_.dtype_bytes;
    t_.unquantized += elems * m_.dtype_bytes;
    return elems * m_.dtype_bytes;
  }
  // One tensor the server allocates (fused qkv, gate_up, an expert stack...). torch's
  // caching allocator gives tensors over 10 MiB their own segment rounded up to 2 MiB;
  // SGLang measures weights with cudaMemGetInfo, so it sees the rounding.
  void Alloc(double bytes) {
    constexpr double kRound = 2.0 * 1024 * 1024, kLarge = 10.0 * 1024 * 1024;
    if (bytes > kLarge) t_.rounding += std::ceil(bytes / kRound) * kRound - bytes;
  }

  void Layer(int i) {
    const std::string p = "model.layers." + std::to_string(i) + ".";
    const double h = m_.hidden;
    const std::string kind = i < static_cast<int>(m_.layer_kind.size()) ? m_.layer_kind[i] : "full";
    Plain(2 * h);  // input/post-attention norms, replicated
    if (kind == "linear") {
      Linear(p + "linear_attn", linear_mixer_params_ / tp_);
    } else if (kind == "mlp") {
      // Nemotron-H MLP-only layer: no mixer.
    } else if (m_.IsMla()) {
      const double qk = m_.qk_nope_head_dim + m_.qk_rope_head_dim;
      if (m_.q_lora_rank > 0) {
        Alloc(Linear(p + "self_attn.q_a_proj", h * m_.q_lora_rank));  // replicated
        Plain(m_.q_lora_rank);
        Alloc(Linear(p + "self_attn.q_b_proj", static_cast<double>(m_.q_lora_rank) * m_.heads * qk / attn_tp_));
      } else {
        Alloc(Linear(p + "self_attn.q_proj", h * m_.heads * qk / attn_tp_));
      }
      Alloc(Linear(p + "self_attn.kv_a_proj_with_mqa", h * (m_.kv_lora_rank + m_.qk_rope_head_dim)));  // replicated
      Plain(m_.kv_lora_rank);
      Alloc(Linear(p + "self_attn.kv_b_proj",
                   static_cast<double>(m_.kv_lora_rank) * m_.heads * (m_.qk_nope_head_dim + m_.v_head_dim) / attn_tp_));
      Alloc(Linear(p + "self_attn.o_proj", static_cast<double>(m_.heads) * m_.v_head_dim * h / attn_tp_));
    } else {
      const double q_cols = static_cast<double>(m_.heads) * m_.head_dim / attn_tp_;
      const double kv_cols = static_cast<double>(KvHeadsPerRank(m_.kv_heads, attn_tp_)) * m_.head_dim;
      Alloc(Linear(p + "self_attn.q_proj", h * q_cols) + Linear(p + "self_attn.k_proj", h * kv_cols) +
            Linear(p + "self_attn.v_proj", h * kv_cols));  // fused qkv_proj
      Alloc(Linear(p + "self_attn.o_proj", q_cols * h));
      if (m_.qkv_bias) Plain(q_cols + 2 * kv_cols);
      if (m_.o_bias) Plain(h);
      if (m_.model_type.find("qwen3") != std::string::npos) Plain(2.0 * m_.head_dim);  // q_norm, k_norm
    }
    const bool moe = i < static_cast<int>(m_.moe_layer.size()) && m_.moe_layer[i];
    if (moe) {
      Linear(p + "mlp.gate", h * m_.experts, /*quantizable=*/false);  // router, replicated, never quantized
      // Routed experts over the MoE group: vLLM EP gives each rank experts/ep whole experts;
      // SGLang EP gives experts/ep and splits each by tp/ep; without EP each expert is split by TP.
      double per_expert = 3.0 * h * m_.moe_intermediate;
      double experts_here = moe_world_ > 1 ? static_cast<double>(CeilDiv(m_.experts, moe_world_)) : m_.experts;
      double split = sglang_ep_ ? static_cast<double>(tp_) / moe_world_ : (moe_world_ > 1 ? 1.0 : tp_);
      if (split < 1) split = 1;
      double experts = Linear(p + "mlp.experts", experts_here * per_expert / split);
      Alloc(experts * 2 / 3);  // w13 (gate and up of every expert), then w2
      Alloc(experts / 3);
      if (m_.shared_experts > 0) {
        double shared = Linear(p + "mlp.shared_experts", 3.0 * h * m_.shared_intermediate * m_.shared_experts / tp_);
        Alloc(shared * 2 / 3);
        Alloc(shared / 3);
      }
    } else if (m_.intermediate > 0) {
      double mlp = Linear(p + "mlp.gate_up_proj", (gated_ ? 3.0 : 2.0) * h * m_.intermediate / tp_);
      Alloc(gated_ ? mlp * 2 / 3 : mlp / 2);
      Alloc(gated_ ? mlp / 3 : mlp / 2);
    }
  }

  void Embedding(bool first_stage, bool last_stage) {
    const double padded = static_cast<double>(PadTo(m_.vocab, 64));
    const double per_rank = std::ceil(padded / tp_) * m_.hidden;
    if (first_stage) Alloc(Plain(per_rank));
    if (last_stage) {
      Plain(m_.hidden);  // final norm
      if (!m_.tied_embeddings || !first_stage) {
        bool q = m_.quant.method == "compressed-tensors" && !MatchesSkip("lm_head", m_.quant.skip);
        Alloc(q ? Linear("lm_head", per_rank) : Plain(per_rank));
      }
    }
  }

  void Vision() { Plain(m_.vision_params / tp_); }


  void set_linear_mixer_params(double v) { linear_mixer_params_ = v; }
  void set_gated(bool g) { gated_ = g; }
  Tally Take() {
    Tally t = t_;
    t_ = Tally();
    return t;
  }

 private:
  const ModelConfig& m_;
  int tp_, attn_tp_, moe_world_;
  bool sglang_ep_;
  double linear_mixer_params_ = 0;
  bool gated_ = true;
  Tally t_;
};

bool GatedMlp(const std::string& model_type) {
  static const char* kPlain[] = {"gpt2", "gpt_neox", "phi", "starcoder2", "falcon", "bloom", "opt", "gpt_bigcode",
                                 "gptj", "mpt"};
  for (const char* p : kPlain) {
    if (model_type == p) return false;
  }
  return true;
}

}  // namespace

StatusOr<WeightEstimate> WeightsPerRank(const ModelConfig& m, const Sharding& s) {
  if (s.tp < 1 || s.pp < 1 || s.ep < 1 || s.dp < 1) return InvalidArgumentError("tp, pp, ep and dp must be >= 1");
  WeightEstimate w;
  const bool sglang = s.framework == "sglang";
  const int attn_tp = sglang && s.enable_dp_attention ? std::max(1, s.tp / s.dp) : s.tp;
  const int moe_world = s.ep > 1 ? s.ep : 1;
  const bool sglang_ep = sglang && s.ep > 1;
  const bool gated = GatedMlp(m.model_type);
  const double mixer = m.linear_mixer_params > 0 ? m.linear_mixer_params : 4.0 * m.hidden * m.hidden;

  auto count = [&](int tp, int atp, int mw, bool sep, int first, int last, bool first_stage, bool last_stage,
                   bool vision) {
    WeightCounter c(m, tp, atp, mw, sep);
    c.set_gated(gated);
    c.set_linear_mixer_params(mixer);
    for (int i = first; i < last; ++i) c.Layer(i);
    c.Embedding(first_stage, last_stage);
    if (vision) c.Vision();
    return c.Take();
  };

  // Per rank: the first and last PP stages (embedding, LM head), ceil(layers/pp) layers each.
  const int per_stage = static_cast<int>(CeilDiv(m.layers, s.pp));
  double per_rank, rounding;
  if (s.pp == 1) {
    Tally t = count(s.tp, attn_tp, moe_world, sglang_ep, 0, m.layers, true, true, true);
    per_rank = t.bytes;
    rounding = t.rounding;
  } else {
    Tally first = count(s.tp, attn_tp, moe_world, sglang_ep, 0, per_stage, true, false, true);
    Tally last = count(s.tp, attn_tp, moe_world, sglang_ep, m.layers - per_stage, m.layers, false, true, false);
    const Tally& big = first.bytes >= last.bytes ? first : last;
    per_rank = big.bytes;
    rounding = big.rounding;
  }
  Tally total = count(1, 1, 1, false, 0, m.layers, true, true, true);
  w.config_total_bytes = total.bytes;
  w.loaded_total_bytes = total.bytes;
  w.per_rank_bytes = per_rank;
  w.source = "config";
  // The rotary embedding's cos/sin cache (one per model, on every rank, not in the
  // checkpoint): max_position x rotary dim in the model dtype. vLLM's Llama-3.1-8B
  // "Model loading took 14.9888 GiB" is its 16,060,522,496 checkpoint bytes plus this 32 MiB.
  const double rotary = static_cast<double>(std::min<int64_t>(m.max_position, 1 << 20)) *
                        (m.IsMla() ? m.qk_rope_head_dim : m.head_dim) * m.dtype_bytes;
  if (m.index_total_bytes) {
    // Checkpoint extras the servers do not load by default: MTP layers (DeepSeek's
    // num_nextn_predict_layers) are in the index but not in the served model.
    double extras = 0;
    if (m.mtp_layers > 0) {
      int mtp_in_index = 0;
      if (m.tensor_names.empty()) {
        mtp_in_index = m.mtp_layers;
      } else {
        for (int k = 0; k < m.mtp_layers; ++k) {
          std::string prefix = "model.layers." + std::to_string(m.layers + k) + ".";
          for (const auto& n : m.tensor_names) {
            if (n.rfind(prefix, 0) == 0) {
              ++mtp_in_index;
              break;
            }
          }
        }
      }
      if (mtp_in_index > 0) {
        ModelConfig mtp = m;
        mtp.layers = m.layers + mtp_in_index;
        mtp.moe_layer.resize(mtp.layers, m.IsMoe());
        mtp.layer_kind.resize(mtp.layers, "full");
        WeightCounter c(mtp, 1, 1, 1, false);
        c.set_gated(gated);
        c.set_linear_mixer_params(mixer);
        for (int i = m.layers; i < mtp.layers; ++i) c.Layer(i);
        extras = c.Take().bytes + mtp_in_index * (2.0 * m.hidden * m.hidden + 2.0 * m.hidden) * m.dtype_bytes;
        w.notes.push_back(std::to_string(mtp_in_index) + " MTP layer(s) in the checkpoint (" + FormatGiB(extras) +
                          ") are not loaded without speculative decoding");
      }
    }
    w.index_total_bytes = *m.index_total_bytes;
    double loaded = *m.index_total_bytes - extras;
    double scale = loaded / (total.bytes > 0 ? total.bytes : 1);
    w.index_scale = scale;
    w.loaded_total_bytes = loaded;
    w.per_rank_bytes = per_rank * scale;
    w.source = "config + index total";
    char buf[200];
    std::snprintf(buf, sizeof(buf), "index total %s; the config's per-tensor estimate %s (%+.1f%%)",
                  FormatGiB(*m.index_total_bytes).c_str(), FormatGiB(total.bytes + extras).c_str(),
                  ((total.bytes + extras) / *m.index_total_bytes - 1) * 100);
    w.notes.push_back(buf);
    if (scale < 0.9 || scale > 1.1) {
      w.notes.push_back("the index and the config disagree by more than 10%: tensors the config does not describe "
                        "(or a quantization it does not state); the index is taken as the truth");
    }
  }
  w.per_rank_bytes += rotary;
  w.loaded_total_bytes += rotary;
  if (sglang) {
    // SGLang's "mem usage" is the drop in cudaMemGetInfo while loading: it also sees the
    // caching allocator's rounding and the kernels loaded lazily on first use (about
    // 0.1 GiB: QwQ-32B 15.54 vs 15.27 GiB of tensors + 0.16 GiB rounding on L4; Qwen3-32B
    // 30.60 vs 30.52 GiB with no rounding). vLLM's "Model loading took" counts torch
    // allocations only.
    constexpr double kSglangLoadOverhead = 0.1 * 1024 * 1024 * 1024;
    w.per_rank_bytes += rounding + kSglangLoadOverhead;
    char buf[160];
    std::snprintf(buf, sizeof(buf), "SGLang measures free memory: + %.0f MiB allocator rounding + 102 MiB lazily loaded kernels",
                  rounding / (1024.0 * 1024.0));
    w.notes.push_back(buf);
  }
  if (m.vision_params > 0) {
    w.notes.push_back("vision/audio tower " + m.vision_note + ", assumed split by TP like the language model");
  }
  return w;
}

KvDims KvDimsOf(const ModelConfig& m, int pp) {
  KvDims d;
  d.layers = static_cast<int>(CeilDiv(m.AttentionLayers(), std::max(pp, 1)));
  if (m.IsMla()) {
    d.kv_lora_rank = m.kv_lora_rank;
    d.qk_rope_head_dim = m.qk_rope_head_dim;
  } else {
    d.kv_heads = m.kv_heads;
    d.head_dim = m.head_dim;
  }
  return d;
}

double VllmActivationPeakBytes(const ModelConfig& m, int tp, int64_t tokens, int64_t seqs) {
  const double T = static_cast<double>(tokens), h = m.hidden, e = m.dtype_bytes;
  tp = std::max(tp, 1);
  // Residual stream, normed input and layer output alive at once.
  double residual = 4 * T * h * e;
  double mlp = m.intermediate > 0 ? 3 * T * m.intermediate / tp * e : 0;  // gate_up output + activation
  double moe = 0;
  if (m.IsMoe()) {
    // fused_moe's caches (chunked at 32768 tokens): (T, k, 2N), (T*k, N), (T, k, h).
    double tc = std::min(T, 32768.0);
    double n = static_cast<double>(m.moe_intermediate) / tp;
    moe = tc * m.experts_per_tok * (3 * n + h) * e;
  }
  double attn_cols = m.IsMla() ? static_cast<double>(m.heads) / tp * (m.qk_nope_head_dim + m.qk_rope_head_dim) * 2 +
                                     m.kv_lora_rank + m.qk_rope_head_dim
                               : (static_cast<double>(m.heads) / tp + 2.0 * KvHeadsPerRank(m.kv_heads, tp)) * m.head_dim +
                                     static_cast<double>(m.heads) / tp * m.head_dim;
  double attn = T * attn_cols * e;
  double forward = residual + std::max({mlp, moe, attn});
  if (m.vision_max_patches > 0 && m.vision_hidden > 0) {
    // The profiling run encodes the largest dummy image: one encoder layer's
    // intermediates over every patch (MLP and attention projections, residuals).
    double p = static_cast<double>(m.vision_max_patches);
    double vision = p * (3.0 * m.vision_intermediate + 6.0 * m.vision_hidden) * e;
    forward = std::max(forward, vision + residual);
  }
  // Dummy sampler run over the full vocabulary for every sequence, with every sampling
  // feature on: 16-bit logits and their fp32 copy (2 + 4), top-k/top-p sort values and
  // int64 indices (4 + 8), probabilities and log-probabilities (4 + 4), masks and
  // temporaries (~10): 36 bytes per element. vllm#13882 (V0, 256 x 152,064) logged an
  // activation peak of 1.42 GiB; this gives 1.30 GiB.
  double sampler = static_cast<double>(seqs) * m.vocab * 36.0 + T * h * e;
  return std::max(forward, sampler);
}

std::string DescribeModel(const ModelConfig& m) {
  std::ostringstream s;
  s << (m.architecture.empty() ? m.model_type : m.architecture) << ": " << m.layers << " layers, hidden " << m.hidden;
  if (m.IsMla()) {
    s << ", MLA " << m.heads << " heads, kv_lora " << m.kv_lora_rank << " + rope " << m.qk_rope_head_dim;
  } else {
    s << ", " << (m.kv_heads == m.heads ? "MHA " : "GQA ") << m.heads << "/" << m.kv_heads << " x " << m.head_dim;
  }
  if (m.IsMoe()) {
    int moe_layers = static_cast<int>(std::count(m.moe_layer.begin(), m.moe_layer.end(), true));
    s << ", MoE " << m.experts << " experts (top " << m.experts_per_tok << ", " << m.moe_intermediate << " wide";
    if (m.shared_experts > 0) s << ", " << m.shared_experts << " shared";
    s << ") in " << moe_layers << " layers";
  }
  if (m.SlidingLayers() > 0) s << ", " << m.SlidingLayers() << " sliding-window layers (" << m.sliding_window << ")";
  if (m.LinearLayers() > 0) s << ", " << m.LinearLayers() << " linear/mamba layers";
  s << ", vocab " << m.vocab << (m.tied_embeddings ? " (tied)" : "");
  s << ", " << (m.quant.method.empty() ? m.torch_dtype : m.quant.scheme);
  if (m.vision_params > 0) s << ", vision tower";
  return s.str();
}

}  // namespace tpt::memory
