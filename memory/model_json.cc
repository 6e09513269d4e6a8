// model_json.cc: the JSON readers the model's files share (model_config_internal.h): a
// count read strictly, a small JSON file of the model's folder.
#include <cmath>
#include <filesystem>
#include <string>

#include "base/read_file.h"
#include "memory/model_config_internal.h"

namespace tpt::memory::internal {

namespace fs = std::filesystem;
using json = nlohmann::json;

StatusOr<std::optional<int64_t>> Count(const json& j, std::initializer_list<const char*> keys, const std::string& src,
                                       const std::string& where, bool zero_ok) {
  if (!j.is_object()) return std::optional<int64_t>();
  for (const char* k : keys) {
    auto it = j.find(k);
    if (it == j.end() || it->is_null()) continue;
    const std::string name = where + k;
    const std::string must = zero_ok ? "a whole number, 0 or more" : "a whole number above 0";
    // The file the number is in (config.json, or model.safetensors.index.json's metadata).
    const std::string file = fs::path(src).filename().string();
    const std::string fix = "; fix " + (file.empty() ? std::string("config.json") : file);
    if (!it->is_number()) {
      return InvalidArgumentError(src + ": " + name + " is " + it->dump() + " (" + it->type_name() + "): it must be " +
                                  must + fix);
    }
    const double v = it->get<double>();
    if (!std::isfinite(v) || v != std::floor(v) || v < (zero_ok ? 0 : 1) || v > 9.0e15) {
      return InvalidArgumentError(src + ": " + name + " is " + it->dump() + ": it must be " + must + fix);
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

}  // namespace tpt::memory::internal
