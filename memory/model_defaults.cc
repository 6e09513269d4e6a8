// model_defaults.cc: transformers' config-class defaults (model_defaults.h), as a table.
#include "memory/model_defaults.h"

#include <array>
#include <cmath>

namespace tpt::memory {
namespace {

struct ClassDefaults {
  std::string_view model_type, class_name, file;
  // num_hidden_layers, hidden_size, intermediate_size, num_attention_heads,
  // num_key_value_heads (0: = heads), head_dim (0: hidden / heads), vocab_size,
  // max_position_embeddings, sliding_window (0: none), sliding_window_pattern (0: none)
  int64_t layers, hidden, intermediate, heads, kv_heads, head_dim, vocab, max_position, sliding_window, pattern;
};

// transformers@008f5c8c, each class's __init__ signature.
constexpr std::array<ClassDefaults, 7> kClasses = {{
    {"gemma3_text", "Gemma3TextConfig", "configuration_gemma3.py", 26, 2304, 9216, 8, 4, 256, 262208, 131072, 4096, 6},
    {"gemma2", "Gemma2Config", "configuration_gemma2.py", 26, 2304, 9216, 8, 4, 256, 256000, 8192, 4096, 0},
    {"gemma", "GemmaConfig", "configuration_gemma.py", 28, 3072, 24576, 16, 16, 256, 256000, 8192, 0, 0},
    {"llama", "LlamaConfig", "configuration_llama.py", 32, 4096, 11008, 32, 0, 0, 32000, 2048, 0, 0},
    {"mistral", "MistralConfig", "configuration_mistral.py", 32, 4096, 14336, 32, 8, 0, 32000, 131072, 4096, 0},
    {"qwen2", "Qwen2Config", "configuration_qwen2.py", 32, 4096, 22016, 32, 32, 0, 151936, 32768, 0, 0},
    {"gpt2", "GPT2Config", "configuration_gpt2.py", 12, 768, 0, 12, 0, 0, 50257, 1024, 0, 0},
}};

}  // namespace

std::optional<int64_t> ArchitectureDefault(std::string_view model_type, std::string_view field, std::string* source) {
  for (const auto& c : kClasses) {
    if (c.model_type != model_type) continue;
    int64_t v = 0;
    if (field == "num_hidden_layers") v = c.layers;
    else if (field == "hidden_size") v = c.hidden;
    else if (field == "intermediate_size") v = c.intermediate;
    else if (field == "num_attention_heads") v = c.heads;
    else if (field == "num_key_value_heads") v = c.kv_heads;
    else if (field == "head_dim") v = c.head_dim;
    else if (field == "vocab_size") v = c.vocab;
    else if (field == "max_position_embeddings") v = c.max_position;
    else if (field == "sliding_window") v = c.sliding_window;
    else if (field == "sliding_window_pattern") v = c.pattern;
    if (v <= 0) return std::nullopt;
    if (source != nullptr) *source = std::string(c.class_name) + " (transformers " + std::string(c.file) + ")";
    return v;
  }
  return std::nullopt;
}

bool IsFalconFamily(std::string_view model_type) {
  // "RefinedWeb" (Falcon-40B/180B) and "RefinedWebModel" (Falcon-7B) are the custom-code
  // configs Falcon shipped with before transformers' "falcon"; TGI v1.0.2 serves all three
  // with flash_rw_modeling.py (models/__init__.py: model_type in ["RefinedWeb",
  // "RefinedWebModel", "falcon"]), whose MLP is dense_h_to_4h: 4 x hidden_size.
  return model_type == "falcon" || model_type == "RefinedWeb" || model_type == "RefinedWebModel";
}

std::optional<int64_t> DefaultMlpWidth(std::string_view model_type, int64_t hidden, double expansion_ratio,
                                       std::string* rule) {
  auto say = [&](const char* s) {
    if (rule != nullptr) *rule = s;
  };
  if (model_type == "gpt2" || model_type == "gptj" || model_type == "codegen" || model_type == "gpt_bigcode") {
    say("n_inner not set: 4 x n_embd (the class's rule for n_inner None)");
    return 4 * hidden;
  }
  if (IsFalconFamily(model_type)) {
    say("ffn_hidden_size not set: 4 x hidden_size (FalconConfig's rule for None)");
    return 4 * hidden;
  }
  if (model_type == "bloom" || model_type == "gpt_neo") {
    say("the MLP is 4 x hidden_size (the architecture has no width field)");
    return 4 * hidden;
  }
  if (model_type == "mpt") {
    const double r = expansion_ratio > 0 ? expansion_ratio : 4.0;
    say("expansion_ratio x d_model (MptConfig: 4 when not set)");
    return static_cast<int64_t>(std::llround(r * static_cast<double>(hidden)));
  }
  return std::nullopt;
}

}  // namespace tpt::memory
