// model_config.cc: config.json -> ModelConfig (the fields the planner needs, read
// strictly), and the TP checks. The model's files (folders, Hugging Face caches, the
// safetensors index) are in model_files.cc, quantization configs in model_quant.cc, the
// vision/audio towers in model_vision.cc; weights per rank, KV dims and the activation
// peak in model_weights.cc.
#include "memory/model_config.h"
#include "memory/model_config_internal.h"
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

using json = nlohmann::json;
using internal::Bool;
using internal::Count;
using internal::Num;
using internal::ParseQuant;
using internal::ReadVisionTowers;
using internal::Str;

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

// Grok-1/2 with a top-level rope_type (xai-org/grok-2: "original", original_max_position_
// embeddings 8192, scaling_factor 16): SGLang's grok.py (0.5.1-0.5.x, get_rope_scaling)
// builds a ScalingRotaryEmbedding in every Grok1Attention instead of taking get_rope's shared
// cache; its cos/sin cache holds original_max_position_embeddings x scaling_factor positions
// x the rotary dim (head_dim, half with rope_rotate_half_dims). Without both numbers the
// server cannot build it; nothing is counted then.
void GrokLayerRope(const json& t, ModelConfig* m) {
  if (Str(t, "rope_type").empty()) return;
  auto original = Num<double>(t, {"original_max_position_embeddings"});
  auto factor = Num<double>(t, {"scaling_factor"});
  if (!original || !factor || *original <= 0 || *factor <= 0) {
    m->notes.push_back("rope_type '" + Str(t, "rope_type") +
                       "' without original_max_position_embeddings and scaling_factor: SGLang's per-layer rotary "
                       "caches (grok.py ScalingRotaryEmbedding) not counted");
    return;
  }
  m->layer_rope_positions = static_cast<int64_t>(std::min(*original * *factor, 16777216.0));
  m->layer_rope_dim = Bool(t, "rope_rotate_half_dims").value_or(false) ? m->head_dim / 2 : m->head_dim;
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
  TPT_COUNT(m.kv_heads, "num_key_value_heads", false, "num_key_value_heads", "num_kv_heads", "multi_query_group_num", "n_kv_heads",
            "n_head_kv");
  TPT_COUNT(m.max_position, "max_position_embeddings", false, "max_position_embeddings", "n_positions", "seq_length", "max_seq_len");
  int64_t head_dim = 0;
  TPT_COUNT(head_dim, "head_dim", false, "head_dim", "kv_channels");
#undef TPT_COUNT
  // Sizes beyond any model are the file's error, not a plan: a fuzzed config of 131,072
  // layers took 20-40 s a plan (memory/fuzz/regressions); the largest models have a few
  // hundred layers, hidden sizes in the tens of thousands and vocabularies below a million.
  {
    const struct {
      const char* field;
      int64_t value, limit;
    } caps[] = {{"num_hidden_layers", m.layers, 1024},        {"hidden_size", m.hidden, int64_t{1} << 17},
                {"num_attention_heads", m.heads, 4096},        {"vocab_size", m.vocab, int64_t{1} << 23},
                {"intermediate_size", m.intermediate, int64_t{1} << 20}, {"num_key_value_heads", m.kv_heads, 4096},
                {"head_dim", head_dim, 8192},                  {"max_position_embeddings", m.max_position, int64_t{1} << 28}};
    for (const auto& c : caps) {
      if (c.value > c.limit) {
        return InvalidArgumentError(src + ": " + where + c.field + " is " + std::to_string(c.value) +
                                    ", beyond any model (at most " + std::to_string(c.limit) + " here); fix config.json");
      }
    }
  }
  if (!missing.empty()) {
    std::string list;
    for (const auto& s : missing) list += (list.empty() ? "" : ", ") + s;
    return InvalidArgumentError(src + ": missing " + list + " (model_type '" + arch_type +
                                "'; is this a model's config.json? for multimodal models the language model's "
                                "numbers are read from text_config/llm_config)");
  }
  auto flag = [&](const char* k) {
    auto it = t.find(k);
    return it != t.end() && it->is_boolean() && it->get<bool>();
  };
  if (m.kv_heads <= 0 && IsFalconFamily(arch_type) && flag("multi_query") && !flag("new_decoder_architecture")) {
    // Falcon-7B's multi-query attention: one KV head (TGI v1.0.2 flash_rw_modeling.py
    // RWConfig: n_head_kv = 1 if multi_query else n_head, when neither num_kv_heads nor
    // n_head_kv is given; transformers' FalconAttention keeps one KV head likewise).
    m.kv_heads = 1;
    m.notes.push_back(where + "multi_query: one KV head (Falcon's multi-query attention)");
  }
  if (m.kv_heads <= 0) {
    m.kv_heads = m.heads;
    m.notes.push_back(where + "num_key_value_heads not in config.json: " + std::to_string(m.heads) +
                      " (= num_attention_heads, multi-head attention: the transformers default)");
  }
  if (m.heads % m.kv_heads != 0) {
    // Each KV head serves num_attention_heads / num_key_value_heads query heads: transformers'
    // num_key_value_groups; vLLM's Attention layer asserts num_heads % num_kv_heads == 0
    // (vllm/attention/layer.py, read at 0.11). More KV heads than heads, or a count that
    // does not divide them, is no model the servers load.
    return InvalidArgumentError(src + ": " + where + "num_key_value_heads is " + std::to_string(m.kv_heads) +
                                ": num_attention_heads (" + std::to_string(m.heads) +
                                ") must be a multiple of it (each KV head serves a whole group of query heads); "
                                "fix the config.json");
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
    } else if (Bool(t, "residual_moe").value_or(false) && m.intermediate > 0) {
      // Grok-1/2 (residual_moe): every layer runs a dense MLP of intermediate_size beside its
      // experts of moe_intermediate_size and averages the two (SGLang srt/models/grok.py
      // Grok1DecoderLayer: self.mlp = Grok1MLP(intermediate_size=config.intermediate_size,
      // quant_config), moe_with_rmoe): priced as one shared expert of that width, sharded
      // and quantized as the experts' MLP is (Grok-2: 51.5B of its 270B parameters).
      m.shared_experts = 1;
      m.shared_intermediate = m.intermediate;
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
  if (auto rs = t.find("rope_scaling"); rs != t.end() && rs->is_object()) {
    std::string kind = Str(*rs, "rope_type");
    if (kind.empty()) kind = Str(*rs, "type");
    auto factor = Num<double>(*rs, {"factor"});
    if (kind == "linear" && factor && *factor >= 1 && *factor <= 1024) m.rope_linear_factor = *factor;
  }
  // What vLLM and SGLang derive the default context length from (launch_plan_context.cc):
  // rope_scaling, or transformers 5's flat rope_parameters, of the text config. Lengths
  // beyond 2^40 are a fuzzed file's, clamped so that they convert.
  auto length = [](const json& c, const char* k) {
    return static_cast<int64_t>(std::clamp(Num<double>(c, {k}).value_or(0), 0.0, 1099511627776.0));
  };
  for (const char* k : {"rope_scaling", "rope_parameters"}) {
    auto rs = t.find(k);
    if (rs == t.end() || !rs->is_object() || !m.rope_type.empty()) continue;
    m.rope_type = Str(*rs, "rope_type");
    if (m.rope_type.empty()) m.rope_type = Str(*rs, "type");
    m.rope_factor = std::clamp(Num<double>(*rs, {"factor"}).value_or(0), 0.0, 1e6);
    m.rope_original_max = length(*rs, "original_max_position_embeddings");
  }
  m.original_max_position = length(t, "original_max_position_embeddings");
  for (const char* k : {"max_position_embeddings", "n_positions", "max_seq_len", "seq_length", "model_max_length",
                        "max_sequence_length", "max_seq_length", "seq_len"}) {
    if (const int64_t v = length(t, k); v > 0) m.length_keys.emplace_back(k, v);
  }
  if (m.architecture == "Grok1ForCausalLM") GrokLayerRope(t, &m);
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
      m.mamba_ssm_dtype = Str(t, "mamba_ssm_dtype");
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
  TPT_RETURN_IF_ERROR(ReadVisionTowers(j, t, src, m));
  // M-RoPE: the language model's rope_scaling (transformers <= 4.x) or rope_parameters
  // (5.x) with an mrope_section, in text_config or at the top level; vLLM builds
  // MRotaryEmbedding for it (get_rope: "mrope_section" in the rope parameters).
  for (const json* c : {&t, &j}) {
    for (const char* k : {"rope_scaling", "rope_parameters"}) {
      auto it = c->find(k);
      if (it != c->end() && it->is_object() && it->contains("mrope_section")) m.mrope = true;
    }
  }
  if (!m.mrope) {
    static const char* kMropeArchs[] = {"Qwen2VLForConditionalGeneration", "Qwen2_5_VLForConditionalGeneration",
                                        "Qwen3VLForConditionalGeneration", "Qwen3VLMoeForConditionalGeneration"};
    for (const char* a : kMropeArchs) {
      if (m.architecture == a) {
        m.mrope = true;
        m.notes.push_back(where + "rope_scaling.mrope_section not in config.json: M-RoPE taken for " + m.architecture +
                          " (the published checkpoints carry it; the servers position its images and videos in 3-D)");
      }
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
  // What TGI's launcher sees (RawConfig: max_position_embeddings | max_seq_len | n_positions,
  // hidden_size | n_embd, head_dim or hidden / heads when it divides, num_key_value_heads |
  // num_attention_heads, num_experts_per_tok, n_shared_experts, num_local_experts).
  ModelConfig::TopLevel& top = m.top;
  top.max_position = Num<int64_t>(j, {"max_position_embeddings", "max_seq_len", "n_positions"}).value_or(0);
  top.hidden = Num<int64_t>(j, {"hidden_size", "n_embd"}).value_or(0);
  top.intermediate = Num<int64_t>(j, {"intermediate_size"}).value_or(0);
  top.heads = Num<int64_t>(j, {"num_attention_heads"}).value_or(0);
  top.kv_heads = Num<int64_t>(j, {"num_key_value_heads"}).value_or(top.heads);
  top.layers = Num<int64_t>(j, {"num_hidden_layers"}).value_or(0);
  top.head_dim = Num<int64_t>(j, {"head_dim"}).value_or(0);
  if (top.head_dim == 0 && top.heads > 0 && top.hidden % top.heads == 0) top.head_dim = top.hidden / top.heads;
  top.vocab = Num<int64_t>(j, {"vocab_size"}).value_or(0);
  top.experts_per_tok = Num<int>(j, {"num_experts_per_tok"}).value_or(1);
  top.shared_experts = Num<int>(j, {"n_shared_experts"}).value_or(0);
  top.local_experts = Num<int>(j, {"num_local_experts"}).value_or(1);
  auto tq = j.find("quantization_config");
  top.quantized = tq != j.end() && tq->is_object() && tq->contains("quant_method");
  auto tv = j.find("vision_config");
  top.vision_config = tv != j.end() && !tv->is_null();
  if (top.vision_config && tv->is_object()) m.vision_heads = Num<int>(*tv, {"num_attention_heads", "num_heads"}).value_or(0);
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
