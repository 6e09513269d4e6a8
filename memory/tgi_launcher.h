// tgi_launcher.h: what TGI v3's launcher and server decide before the warm-up when the user
// does not: the default --max-batch-prefill-tokens (by card, model FLOPs and VRAM), the
// attention backend (and so the KV block size), and the max_total_tokens the server sets
// after the warm-up. Sources (huggingface/text-generation-inference, tags named) in
// tgi_launcher.cc.
#ifndef TPT_MEMORY_TGI_LAUNCHER_H_
#define TPT_MEMORY_TGI_LAUNCHER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "memory/model_config.h"

namespace tpt::memory {

// The launcher's card: TGI's name for the catalog's card (nvidia-smi's gpu_name, lower case,
// spaces to '-') and its f16 FLOPS in the launcher's table at this version (0: "Unkown compute
// for card", the launcher falls back to its fixed default).
struct TgiCard {
  std::string name;   // e.g. "nvidia-h100-80gb-hbm3"; "" when we do not know nvidia-smi's name
  double f16_flops = 0;
};
TgiCard TgiLauncherCard(std::string_view version, std::string_view catalog_name);

// v3's default --max-batch-prefill-tokens and why (said once in the plan's output).
struct TgiPrefillDefault {
  int64_t tokens = 0;
  std::string why;
};
// `m` may be null (no config.json: the launcher's 4096). `total_bytes` is one card's memory,
// `num_shard` the card count, `fraction` --cuda-memory-fraction.
TgiPrefillDefault TgiV3DefaultPrefill(std::string_view version, const ModelConfig* m, std::string_view catalog_name,
                                      int num_shard, double total_bytes, double fraction);

// The launcher's context before v2.4.1 (get_max_position_embeddings, launcher/src/main.rs
// v2.0.0-v2.4.0): the config's max_position_embeddings (max_seq_len, n_positions) capped at
// 4096, 4096 without one; the default of --max-total-tokens and, less one, of
// --max-input-tokens. 0 outside v2.0.0-v2.4.0 (before: the flags' defaults 2048 and 1024;
// from v2.4.1 the server sets both after the warm-up).
int64_t TgiV2LauncherMaxPosition(std::string_view version, const ModelConfig* m);

// max_input_tokens as the launcher takes it: --max-input-tokens (v2.0.0 on) or its older
// name --max-input-length, refused both at once as the launcher does; else the launcher's
// default (1024 before v2.0, TgiV2LauncherMaxPosition - 1 in v2.0.0-v2.4.0: even beside a
// larger --max-total-tokens) with `why` for `assumed:`; tokens 0 from v2.4.1 without a flag
// (the server's: one below max_total_tokens).
struct TgiMaxInput {
  int64_t tokens = 0;
  std::string why;
};
StatusOr<TgiMaxInput> TgiLauncherMaxInput(std::string_view version, const ModelConfig* m,
                                          std::optional<int64_t> max_input_tokens,
                                          std::optional<int64_t> max_input_length);

// The launcher's attention backend (resolve_attention, launcher/src/main.rs from v2.3.0):
// "flashinfer" (blocks of 1 token), "flashdecoding" (256) or "paged" (16); "paged" before
// v2.3.0. `sm` the card's compute capability x10 (0 unknown).
std::string TgiLauncherAttention(std::string_view version, const ModelConfig* m, int sm);
int TgiBlockSize(std::string_view attention);

// Whether the v3 server chunks prefills for this model: without chunking it sets
// max_total_tokens to the warm-up's tokens when it is not given, not to the pool.
bool TgiV3SupportsChunking(std::string_view version, const ModelConfig* m, std::string_view attention);

}  // namespace tpt::memory

#endif  // TPT_MEMORY_TGI_LAUNCHER_H_
