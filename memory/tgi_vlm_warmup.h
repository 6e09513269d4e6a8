// tgi_vlm_warmup.h: what a VLM's warm-up holds at TGI's free-memory read beyond the text
// model's layer: the warm-up image through the vision tower, and Gemma-3's dense attention
// masks. Sources in tgi_vlm_warmup.cc.
#ifndef TPT_MEMORY_TGI_VLM_WARMUP_H_
#define TPT_MEMORY_TGI_VLM_WARMUP_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "memory/model_config.h"

namespace tpt::memory {

struct TgiVlmWarmup {
  bool vlm = false;               // the config has a vision_config (TGI's launcher's test)
  double text_extra_bytes = 0;    // held beside the text model's layer peak (Gemma-3's masks)
  double vision_peak_bytes = 0;   // the vision tower's peak on the warm-up image (priced)
  double vision_max_bytes = 0;    // not priced: the most it could hold (the unknown's range)
  double unpriced_bytes = 0;      // named under `unknown`, not in the point: the plan's range runs to it
  int64_t vision_tokens = 0;      // patches the tower runs on
  std::string what;               // the assumption line ("" when nothing is priced)
  std::string unknown;            // "" when priced
};
// `requests` x `tokens` is the warm-up batch (one request in v3 without --max-total-tokens).
TgiVlmWarmup TgiVlmWarmupBytes(std::string_view version, const ModelConfig& m, int tp, int64_t requests, int64_t tokens);

}  // namespace tpt::memory

#endif  // TPT_MEMORY_TGI_VLM_WARMUP_H_
