// launch_plan_context.cc: the context length vLLM and SGLang serve when the user passes none.
// Neither takes max_position_embeddings as it stands: each reads its own list of length keys
// and scales by the config's rope_scaling, and the two disagree (a linear x4 deepseek-coder
// config of 16,384 positions runs at 65,536 on vLLM 0.4.3: holdout40 M1, issue #31).
//
// vLLM, _get_and_verify_max_len (vllm/config.py 0.4.3-0.10.0, vllm/config/model.py from
// 0.11.0; read in the 0.4.3, 0.5.0, 0.5.3, 0.6.0, 0.6.3, 0.6.6.post1, 0.7.3, 0.10.0 and
// 0.11.0 wheels and the 0.5.5, 0.8.3-0.8.5, 0.9.2, 0.18.0, 0.22.0 and 0.25.0-0.28.0 sources):
//  - the smallest of max_position_embeddings, n_positions, max_seq_len, seq_length,
//    model_max_length, max_sequence_length, max_seq_length, seq_len (max_target_positions
//    from 0.8: Whisper); 2048 with none of them. From 0.8.3 (0.7.3 has not) a
//    model_max_length in config.json replaces the minimum ("For Command-R / Cohere").
//    From 0.9.2 (0.8.5 has not) tokenizer_config.json's model_max_length caps it: not read
//    here (the plan reads config.json), said in the line.
//  - rope_scaling multiplies it by "factor", with yarn starting from its
//    original_max_position_embeddings instead. Not for: "su" (0.4.3-0.5.0, which read
//    rope_scaling["type"] only); su, longrope, extended (0.5.3, "type"); su, longrope, llama3
//    (0.5.5 on, "type" else "rope_type"). mrope takes factor 1 (0.6.3; patch_rope_scaling
//    rewrites it to "default" from 0.6.6). A missing factor is 1 (0.6.6 on; earlier an
//    assert). Gemma-3 (model_type containing "gemma3") is left unscaled from 0.8.3 ("Gemma3's
//    max_model_len (128K) is already scaled by RoPE scaling"); no earlier release serves it.
//  - from 0.18.0 (0.11.0 has not; 0.12-0.17 not read, taken as 0.11), longrope's default is
//    the top-level original_max_position_embeddings when the config has one ("For LongRoPE,
//    default to original_max_position_embeddings").
//
// SGLang, get_context_length (sglang/srt/hf_transformers_utils.py 0.1.14-0.5.2,
// sglang/srt/utils/hf_transformers_utils.py 0.5.4-0.5.9; read in the 0.1.14, 0.2.0, 0.2.7,
// 0.2.15, 0.3.0, 0.3.6, 0.4.0, 0.4.3, 0.4.6, 0.4.9, 0.5.2, 0.5.4, 0.5.9 and 0.5.13.post1
// wheels and sources; utils/hf_transformers/common.py in 0.5.13.post1), on the text config (ModelConfig: get_context_length(self.hf_text_config)):
//  - the first present of max_sequence_length, seq_length, max_seq_len, model_max_length,
//    max_position_embeddings (0.3.6 on; up to 0.3.0 max_position_embeddings came third,
//    before max_seq_len and model_max_length); 2048 with none.
//  - times rope_scaling's "factor" (1 when absent), except when rope_scaling carries
//    original_max_position_embeddings (yarn: the length stays as it is, 0.2.7 on) or its
//    rope_type is llama3 (0.2.0 on). No model_type is excepted: Gemma-3's linear x8 gives
//    8 x max_position_embeddings (sglang#20387 proposed excepting it; closed, and 0.5.13.post1's
//    sglang/srt/utils/hf_transformers/common.py is unchanged). 0.1.14's unconditional factor
//    and 0.2.0's missing yarn case are earlier than any launch the plan reads: taken as 0.2.7.
//  - from 0.5.10 (its wheel pins transformers 5.3.0; 0.5.11-0.5.12 5.6.0, 0.5.13.post1
//    5.8.1) config.rope_scaling is rope_parameters (configuration_utils.py, 5.8.1):
//    standardize_rope_params gives yarn, longrope and llama3 blocks an
//    original_max_position_embeddings (so none is scaled), and Gemma3TextConfig nests them
//    per layer type ({"full_attention": ..., "sliding_attention": ...}), whose top level has
//    no "factor": Gemma-3 is served at max_position_embeddings there (read in 5.8.1, taken
//    for 5.3-5.6).
#include <algorithm>
#include <cmath>
#include <sstream>

#include "memory/launch_plan_internal.h"

namespace tpt::memory::internal {
namespace {

std::string Ver(const std::string& version) {
  return version.empty() ? "(no version given: the newest read)" : version;
}

std::string Num(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

const int64_t* Key(const ModelConfig& m, const std::string& k) {
  for (const auto& [name, value] : m.length_keys) {
    if (name == k) return &value;
  }
  return nullptr;
}

// The text config's length as a server reads it: the smallest (vLLM) or the first present
// (SGLang) of `keys`. Empty name when none is present.
std::pair<std::string, int64_t> BaseLength(const ModelConfig& m, const std::vector<std::string>& keys, bool smallest) {
  std::pair<std::string, int64_t> best{"", 0};
  for (const auto& k : keys) {
    const int64_t* v = Key(m, k);
    if (!v || *v <= 0) continue;
    if (!smallest) return {k, *v};
    if (best.first.empty() || *v < best.second) best = {k, *v};
  }
  return best;
}

ServerContext Vllm(const ModelConfig& m, const std::string& version) {
  const bool v053 = !VersionBefore(version, {0, 5, 1});
  const bool v055 = !VersionBefore(version, {0, 5, 4});
  const bool v083 = !VersionBefore(version, {0, 8, 0});
  const bool v018 = !VersionBefore(version, {0, 18});
  std::vector<std::string> keys = {"max_position_embeddings", "n_positions", "max_seq_len", "seq_length",
                                   "model_max_length", "max_sequence_length", "max_seq_length", "seq_len"};
  auto [key, base] = BaseLength(m, keys, true);
  if (const int64_t* cmd = Key(m, "model_max_length"); v083 && cmd && *cmd > 0) {
    key = "model_max_length";
    base = *cmd;
  }
  std::string from = key.empty() ? "2048 (vLLM's default without a length key in config.json)" : key + " " + std::to_string(base);
  if (key.empty()) base = 2048;
  const std::string how = "as vLLM " + Ver(version) + " derives it (_get_and_verify_max_len)";
  ServerContext c{base, ""};
  const std::string& type = m.rope_type;
  const bool gemma3 = v083 && (m.model_type.find("gemma3") != std::string::npos);
  bool excluded = false;
  if (!type.empty()) {
    if (!v053) excluded = type == "su";
    else if (!v055) excluded = type == "su" || type == "longrope" || type == "extended" || type == "llama3";
    else excluded = type == "su" || type == "longrope" || type == "llama3";
  }
  if (!type.empty() && !excluded && !gemma3) {
    const double factor = type == "mrope" || m.rope_factor <= 0 ? 1.0 : m.rope_factor;
    double len = static_cast<double>(base);
    if (type == "yarn" && m.rope_original_max > 0) {
      len = static_cast<double>(m.rope_original_max);
      from = "rope_scaling.original_max_position_embeddings " + std::to_string(m.rope_original_max);
    }
    if (factor != 1.0) {
      c.tokens = static_cast<int64_t>(std::min(len * factor, 1e12));
      c.why = "context length " + std::to_string(c.tokens) + " = " + from + " x rope_scaling factor " + Num(factor) +
              " (" + type + "), " + how;
      return c;
    }
    c.tokens = static_cast<int64_t>(len);
  }
  if (v018 && type == "longrope" && m.original_max_position > 0) {
    c.tokens = m.original_max_position;
    c.why = "context length " + std::to_string(c.tokens) + " = original_max_position_embeddings (longrope: vLLM " +
            Ver(version) + "'s default, _get_and_verify_max_len)";
    return c;
  }
  c.why = "context length " + std::to_string(c.tokens) + " = " + from;
  if (gemma3 && !type.empty()) c.why += " (Gemma-3's rope_scaling is not applied)";
  else if (!type.empty() && excluded) c.why += " (" + type + " rope_scaling is not applied)";
  c.why += ", " + how;
  if (VersionBefore(version, {0, 9})) return c;
  c.why += "; a smaller model_max_length in tokenizer_config.json (not read here) would cap it";
  return c;
}

ServerContext Sglang(const ModelConfig& m, const std::string& version) {
  const bool v036 = !VersionBefore(version, {0, 3, 1});
  std::vector<std::string> keys =
      v036 ? std::vector<std::string>{"max_sequence_length", "seq_length", "max_seq_len", "model_max_length",
                                      "max_position_embeddings"}
           : std::vector<std::string>{"max_sequence_length", "seq_length", "max_position_embeddings", "max_seq_len",
                                      "model_max_length"};
  auto [key, base] = BaseLength(m, keys, false);
  const std::string how = "as SGLang " + Ver(version) + " derives it (get_context_length)";
  if (key.empty()) return {2048, "context length 2048 (SGLang's default without a length key in config.json), " + how};
  double factor = m.rope_factor > 0 ? m.rope_factor : 1.0;
  std::string unscaled;
  if (m.rope_type.empty()) factor = 1;
  if (factor != 1 && m.rope_original_max > 0) {
    factor = 1;
    unscaled = " (rope_scaling with original_max_position_embeddings is not applied)";
  }
  if (factor != 1 && m.rope_type == "llama3") {
    factor = 1;
    unscaled = " (llama3 rope_scaling is not applied)";
  }
  // From 0.5.10 SGLang pins transformers 5, whose rope_scaling is rope_parameters: yarn,
  // longrope and llama3 blocks get original_max_position_embeddings (standardize_rope_params),
  // and Gemma-3's is nested per layer type, where .get("factor", 1) finds none.
  const bool tf5 = !VersionBefore(version, {0, 5, 10});
  if (tf5 && factor != 1 && (m.rope_type == "yarn" || m.rope_type == "longrope")) {
    factor = 1;
    unscaled = " (transformers 5 gives " + m.rope_type + " an original_max_position_embeddings: not applied)";
  }
  if (tf5 && factor != 1 && m.model_type.find("gemma3") != std::string::npos) {
    factor = 1;
    unscaled = " (transformers 5 nests Gemma-3's rope_parameters per layer type: not applied)";
  }
  ServerContext c;
  c.tokens = static_cast<int64_t>(std::min(static_cast<double>(base) * factor, 1e12));
  c.why = "context length " + std::to_string(c.tokens) + " = " + key + " " + std::to_string(base) +
          (factor != 1 ? " x rope_scaling factor " + Num(factor) + " (" + m.rope_type + ")" : unscaled) + ", " + how;
  return c;
}

}  // namespace

ServerContext ServerDefaultContext(const ModelConfig& m, const std::string& framework, const std::string& version) {
  if (framework == "vllm") return Vllm(m, version);
  if (framework == "sglang") return Sglang(m, version);
  return {};
}

}  // namespace tpt::memory::internal
