// model_config_internal.h (internal to memory/): what model_config.cc, model_quant.cc,
// model_files.cc and model_vision.cc share: JSON field readers (model_json.cc), the
// quantization parser and the towers' reader.
#pragma once

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "memory/model_config.h"

namespace tpt::memory::internal {

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

inline std::string Str(const json& j, const char* key) {
  if (!j.is_object()) return "";
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

inline std::optional<bool> Bool(const json& j, const char* key) {
  if (!j.is_object()) return std::nullopt;
  auto it = j.find(key);
  if (it != j.end() && it->is_boolean()) return it->get<bool>();
  return std::nullopt;
}

// A count the planner needs: absent or null -> nullopt; a whole number (above 0, or 0 too
// when `zero_ok`) -> its value; anything else (a string, a fraction, a negative or zero
// count) is an error naming the field (`where` + key) and the file, never "missing".
StatusOr<std::optional<int64_t>> Count(const json& j, std::initializer_list<const char*> keys, const std::string& src,
                                       const std::string& where, bool zero_ok = false);

// A JSON file of the model's folder (64 MiB at most); errors name the file.
StatusOr<json> ReadJsonFile(const std::filesystem::path& p);

// quantization_config (or hf_quant_config.json's "quantization", quantize_config.json)
// -> m.quant: bytes per element of a quantized linear, the scheme, skipped modules, the
// KV dtype asked; q.unsupported names what cannot be priced (model_quant.cc).
void ParseQuant(const json& qc, ModelConfig& m);

// The vision/audio towers of config.json (j, its text part t) -> m.vision_*, m.vit_*,
// m.mm_* (model_vision.cc).
Status ReadVisionTowers(const json& j, const json& t, const std::string& src, ModelConfig& m);
// Qwen3-VL's preprocessor_config.json / video_preprocessor_config.json in the model's
// folder, when present: their max pixels replace the defaults; errors name the file.
Status ReadVisionProcessorFiles(const std::filesystem::path& dir, ModelConfig& m);

}  // namespace tpt::memory::internal
