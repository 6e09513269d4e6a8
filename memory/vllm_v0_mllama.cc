// vLLM V0's mllama profiling floor (vllm_v0_mllama.h cites the wheels read).
#include "memory/vllm_v0_mllama.h"

#include <algorithm>

#include "memory/memory_model.h"

namespace tpt::memory {

VllmV0MllamaFloor VllmV0Mllama(const ModelConfig& m, std::string_view version, int64_t max_num_seqs,
                               int64_t images_per_prompt) {
  VllmV0MllamaFloor f;
  const auto& v = m.mllama_vit;
  if (v.tiles <= 0 || v.tile_rows <= 0 || v.width <= 0) return f;
  // mllama came with 0.6.2; V0's encoder-decoder runner was read at 0.6.3 and 0.8.3 and
  // taken to hold until V0 left (0.10).
  if (version.empty() || VersionBefore(version, {0, 6, 2}) || !VersionBefore(version, {0, 10})) return f;
  f.modelled = true;
  f.images = std::max<int64_t>(max_num_seqs, 1) * std::max<int64_t>(images_per_prompt, 1);
  const double n = static_cast<double>(v.tiles) * v.tile_rows;  // rows an image takes
  const double bytes = m.dtype_bytes;
  const double mask = static_cast<double>(f.images) * n * n * bytes;
  const double state = static_cast<double>(f.images) * n * v.width * bytes;
  const double kept = 2.0 * v.kept_layers * state;  // the tuple and its torch.stack
  f.floor = mask + kept + state;
  f.arithmetic = "V0 profiles mllama's tower over " + std::to_string(f.images) + " dummy image(s) x " +
                 std::to_string(v.tiles) + " tiles x " + std::to_string(v.tile_rows) +
                 " rows at once: attention mask " + FormatGiB(mask) + " + " + std::to_string(v.kept_layers) +
                 " kept hidden states and their stacked copy " + FormatGiB(kept) + " + the running state " +
                 FormatGiB(state) + " = " + FormatGiB(f.floor) + " at the least";
  return f;
}

}  // namespace tpt::memory
