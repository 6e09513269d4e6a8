// model_defaults.h: what a transformers config class gives a field that config.json
// leaves out, for the fields the planner needs (layers, widths, heads, head_dim,
// vocabulary, context, sliding window) and the MLP width rules of the families that
// spell it otherwise. Every value is the class's __init__ default in transformers
// (huggingface/transformers@008f5c8c, src/transformers/models/<family>/configuration_*.py);
// a family not listed has no documented default here, and the reader says "missing".
//
//   std::string why;
//   auto kv = ArchitectureDefault("gemma3_text", "num_key_value_heads", &why);  // 4
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tpt::memory {

// The default of `field` (the canonical config.json name: num_hidden_layers, hidden_size,
// intermediate_size, num_attention_heads, num_key_value_heads, head_dim, vocab_size,
// max_position_embeddings, sliding_window, sliding_window_pattern) for `model_type`
// (the language model's: "gemma3_text", "llama", ...). `source` gets "Gemma3TextConfig
// (configuration_gemma3.py)". nullopt when the class is not known or has no default.
std::optional<int64_t> ArchitectureDefault(std::string_view model_type, std::string_view field, std::string* source);

// The MLP width of families whose config has no intermediate_size of its own: GPT-2,
// GPT-J, CodeGen, StarCoder (n_inner: None means 4 x n_embd), Falcon
// (ffn_hidden_size: None means 4 x hidden), BLOOM and GPT-Neo (4 x hidden), MPT
// (expansion_ratio x d_model, 4 by default). nullopt for any other family. `rule`
// gets the sentence said in the plan.
// Falcon under any of its model_type spellings: "falcon", "RefinedWeb", "RefinedWebModel".
bool IsFalconFamily(std::string_view model_type);

std::optional<int64_t> DefaultMlpWidth(std::string_view model_type, int64_t hidden, double expansion_ratio,
                                       std::string* rule);

}  // namespace tpt::memory
