// sglang_mamba_states.cc: SGLang's mamba/linear-attention state count by version.
//
// Read in SGLang's released wheels (python/sglang/srt, pip download sglang==V) 0.5.1.post3,
// 0.5.2, 0.5.3, 0.5.3.post1, 0.5.3.post2, 0.5.3.post3, 0.5.4, 0.5.5, 0.5.6, 0.5.6.post1,
// 0.5.6.post2, 0.5.7, 0.5.8, 0.5.8.post1, 0.5.9, 0.5.12 and 0.5.15 (0.5.1.post3 serves no
// hybrid GDN/Mamba2 model):
//
//   0.5.2-0.5.3.post1: model_runner.py ModelRunner.__init__ ("Hybrid GDN model detected,
//     disable radix cache"; from 0.5.3.post1 "<config> model detected, disable radix cache"
//     for every mamba-ish config) turns the radix cache off and sets max_mamba_cache_size =
//     --max-mamba-cache-size, else --max-running-requests, else 512; for GDN models
//     `// dp_size` with --enable-dp-attention. profile_max_num_token takes
//     max_mamba_cache_size x mamba_cache_per_req from rest_memory. No ratio flag yet.
//   0.5.3.post2-0.5.6.post2: model_runner.py handle_max_mamba_cache: with the radix cache off
//     (the flag; Mamba2 models are still forced off in __init__ up to 0.5.6.post1, GDN models
//     no longer) the same fixed count; with it on, the ratio split
//     `rest x r / (1 + r) // mamba_cache_per_req`, which overwrites a given
//     --max-mamba-cache-size. mamba_full_memory_ratio defaults to 0.2 in 0.5.3.post2, 0.9
//     from 0.5.3.post3 (server_args.py). `// dp_size` for GDN models only.
//   0.5.7-0.5.8.post1: model_runner_kv_cache_mixin.py handle_max_mamba_cache:
//     `if disable_radix_cache or max_mamba_cache_size is not None`: the fixed count (given,
//     else --max-running-requests, else 512) `// dp_size` (dp attention); else the ratio.
//   0.5.9 on (the same in 0.5.12 and 0.5.15): `if max_mamba_cache_size is not None`: it,
//     `// dp_size`; `elif disable_radix_cache and max_running_requests is not None`:
//     max_running_requests `// dp_size`; else the ratio (the radix cache off without
//     --max-running-requests no longer gives 512).
//
// Not modelled here: the speculative-decoding intermediate states (x draft tokens) each
// era adds, and the architectures server_args.py forces to run without the radix cache
// (Kimi-Linear from 0.5.5, BailingMoeV2.5 from 0.5.9): their state shape is not read by
// the plan (ModelConfig::mamba_kind is "gdn" or "mamba2").
#include "memory/sglang_mamba_states.h"

#include <algorithm>
#include <cstdio>
#include <vector>

#include "memory/memory_model.h"

namespace tpt::memory {
namespace {

bool Before(const std::vector<int>& v, std::vector<int> bound) {
  bound.resize(4, 0);
  return CompareVersions(v, bound) < 0;
}

std::string Num(int64_t n) { return std::to_string(n); }

}  // namespace

SglangMambaStates SglangMambaStateCount(const SglangMambaStatesInput& in) {
  const std::vector<int> v = VersionWithPost(in.version);
  const bool gdn = in.mamba_kind == "gdn";
  const int dp = in.dp_attention_size > 1 ? in.dp_attention_size : 1;
  SglangMambaStates s;
  s.ratio = in.mamba_full_memory_ratio.value_or(Before(v, {0, 5, 3, 3}) ? 0.2 : 0.9);
  char ratio[96];
  std::snprintf(ratio, sizeof ratio, "mamba : KV memory = %.2f (--mamba-full-memory-ratio%s)", s.ratio,
                in.mamba_full_memory_ratio ? "" : "'s default");
  s.rule = ratio;

  // The fixed count of the eras before 0.5.9: given, else --max-running-requests, else 512.
  auto fixed_count = [&](bool divide) {
    int64_t n = in.max_mamba_cache_size ? *in.max_mamba_cache_size : in.max_running_requests.value_or(512);
    std::string from = in.max_mamba_cache_size ? "--max-mamba-cache-size"
                       : in.max_running_requests ? "--max-running-requests"
                                                 : "SGLang's 512 when neither --max-mamba-cache-size nor "
                                                   "--max-running-requests is given";
    if (divide && dp > 1) {
      n /= dp;
      from += " // dp " + Num(dp) + " (DP attention)";
    }
    s.fixed = n;
    return from;
  };

  if (Before(v, {0, 5, 3, 2})) {
    s.radix_cache_off = true;
    const std::string from = fixed_count(gdn);
    s.rule = Num(*s.fixed) + " states (" + from + "; SGLang " + in.version +
             " turns the radix cache off for hybrid models and has no ratio rule)";
    if (in.mamba_full_memory_ratio) s.ignored = "--mamba-full-memory-ratio (not in SGLang before 0.5.3.post2)";
    return s;
  }
  if (Before(v, {0, 5, 7})) {
    const bool forced = in.mamba_kind == "mamba2" && Before(v, {0, 5, 6, 2});
    s.radix_cache_off = in.disable_radix_cache || forced;
    if (s.radix_cache_off) {
      const std::string from = fixed_count(gdn);
      s.rule = Num(*s.fixed) + " states (" + from + ", the radix cache off" +
               (forced && !in.disable_radix_cache ? ": SGLang " + in.version + " turns it off for Mamba2 models"
                                                  : std::string(" (--disable-radix-cache)")) +
               ")";
      return s;
    }
    if (in.max_mamba_cache_size) {
      s.ignored = "--max-mamba-cache-size (SGLang " + in.version +
                  " sizes the states by the ratio while the radix cache is on; pass --disable-radix-cache to fix "
                  "the count)";
    }
    return s;
  }
  s.radix_cache_off = in.disable_radix_cache;
  if (Before(v, {0, 5, 9})) {
    if (in.disable_radix_cache || in.max_mamba_cache_size) {
      const std::string from = fixed_count(true);
      s.rule = Num(*s.fixed) + " states (" + from +
               (in.disable_radix_cache ? ", the radix cache off (--disable-radix-cache)" : "") + ")";
      return s;
    }
    return s;
  }
  if (in.max_mamba_cache_size || (in.disable_radix_cache && in.max_running_requests)) {
    const std::string from = fixed_count(true);
    s.rule = Num(*s.fixed) + " states (" + from +
             (in.max_mamba_cache_size ? "" : ", the radix cache off (--disable-radix-cache)") + ")";
    return s;
  }
  if (in.disable_radix_cache) {
    s.rule += "; the radix cache off without --max-running-requests keeps the ratio from SGLang 0.5.9";
  }
  return s;
}

// managers/tp_worker.py (0.5.4): min(max_running_requests // (dp_size with DP attention),
// req_to_token_pool.size); the pool's size is capped at max_mamba_cache_size // ratio,
// ratio 1 with the radix cache off, MAMBA_CACHE_SIZE_MAX_RUNNING_REQUESTS_RATIO = 3 on
// (init_memory_pool, 0.5.4-0.5.9; _resolve_max_num_reqs, 0.5.12 and 0.5.15). The request
// slots (req_to_token, int32 x context a request) come out of the reserved part, not the
// KV pool: a plain model's pool does not change.
int64_t SglangRunningRequestCap(int64_t max_running_requests, int dp_attention_size, int64_t mamba_states,
                                bool radix_cache_off) {
  int64_t running = max_running_requests / std::max(1, dp_attention_size);
  if (mamba_states > 0) running = std::min<int64_t>(running, mamba_states / (radix_cache_off ? 1 : 3));
  return running;
}

}  // namespace tpt::memory
