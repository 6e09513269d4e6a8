// sglang_mamba_states.h: how many mamba/linear-attention request states SGLang keeps for a
// hybrid (GDN / Mamba2) model, by version, from --max-mamba-cache-size,
// --max-running-requests, --disable-radix-cache and --mamba-full-memory-ratio: either a
// fixed count (taken from the pool's rest before the KV tokens) or the ratio split of the
// rest (mamba : KV memory = ratio). Sources (sgl-project/sglang, the released wheels
// named) in sglang_mamba_states.cc.
#ifndef TPT_MEMORY_SGLANG_MAMBA_STATES_H_
#define TPT_MEMORY_SGLANG_MAMBA_STATES_H_

#include <cstdint>
#include <optional>
#include <string>

namespace tpt::memory {

struct SglangMambaStatesInput {
  std::string version;
  std::string mamba_kind;                          // "gdn" | "mamba2" (ModelConfig::mamba_kind)
  bool disable_radix_cache = false;                // --disable-radix-cache
  std::optional<int64_t> max_running_requests;     // --max-running-requests
  std::optional<int64_t> max_mamba_cache_size;     // --max-mamba-cache-size
  std::optional<double> mamba_full_memory_ratio;   // --mamba-full-memory-ratio
  int dp_attention_size = 1;                       // --dp with --enable-dp-attention, else 1
};

struct SglangMambaStates {
  std::optional<int64_t> fixed;  // this many states; unset: the ratio split of the rest
  double ratio = 0.9;            // mamba : KV memory when `fixed` is unset
  bool radix_cache_off = false;  // as the version runs it (the flag, or forced for the model)
  std::string rule;              // where the count comes from, for `assumed:`
  std::string ignored;           // a flag the version does not act on here ("" when none)
};

SglangMambaStates SglangMambaStateCount(const SglangMambaStatesInput& in);

// SGLang's cap on running requests from --max-running-requests: the flag // the
// DP-attention size, and for a hybrid (mamba_states > 0) at most its states // 1 with the
// radix cache off, // 3 with it on.
int64_t SglangRunningRequestCap(int64_t max_running_requests, int dp_attention_size, int64_t mamba_states,
                                bool radix_cache_off);

}  // namespace tpt::memory

#endif  // TPT_MEMORY_SGLANG_MAMBA_STATES_H_
