// lmdeploy_model.cc: LMDeploy's KV cache at start-up, TurboMind and the PyTorch
// engine, and the cache_max_entry_count that serves after an out-of-memory.
//
// Sources (InternLM/lmdeploy, tags named):
//   TurboMind, src/turbomind/models/llama/BlockManager.cc (v0.6.0): a block count
//     below 1 is a ratio: max_block_count = size_t(free x ratio) / block_size, free =
//     GetSyncFreeMemSize (cudaMemGetInfo, the MIN over ranks, taken after the weights);
//     logs "[BlockManager] block_size = %lu MB" and "max_block_count = %d";
//     LlamaBatch.cc: "No enough blocks for `session_len` (%d), `session_len` truncated
//     to %d." (a warning); the run-time buffers are allocated after the cache, and an
//     out-of-memory there is "CUDA runtime error: out of memory .../allocator.h".
//     docs/en/llm/pipeline.md: v0.2.0 <= lmdeploy <= v0.2.1 take the ratio of the
//     TOTAL memory (default 0.5), later versions of the FREE memory (default 0.8). The
//     total era starts at v0.1.0a0, not v0.2.0 (task launches32): BlockManager.cc
//     GetBlockCount l.84-90 returns `total * ratio / block_size` from cudaMemGetInfo at
//     v0.1.0a0, v0.1.0a1, v0.1.0a2, v0.1.0, v0.2.0 and v0.2.1, the ratio
//     cache_max_entry_count 0.5 (deploy/target_model/base.py v0.1.0:53, v0.2.0:58);
//     v0.2.2 reads the free memory (BlockManager.cc l.101-105). v0.0.x has no block pool:
//     LlamaCacheManager allocates sequences as requests come, cache_max_entry_count = 48
//     of them (base.py v0.0.14:50): refused (LmdeployVersionPlannable).
//   PyTorch engine, lmdeploy/pytorch/engine/model_agent.py _update_cache_config (v0.6.0):
//     runtime = max_prefill_token_num x vocab x 7, halving the prefill until
//     (free - runtime) x cache_max_entry_count holds 16 blocks ("No enough memory.
//     update max_prefill_token_num=...", "No enough gpu memory for runtime." at 0);
//     num_gpu_blocks = int((free - runtime) x ratio / block) and "No enough gpu memory
//     for kv cache." when <= 0. From v0.10.0 runtime = (prefill + 2 x max_batches) x
//     vocab x 2 (executor/base.py); from v0.14.0 the check is num_gpu_blocks <= 2.
//     block_size 64 (PytorchEngineConfig), cache_block_seq_len 64 (TurbomindEngineConfig).
#include <algorithm>
#include <cmath>

#include "memory/memory_model.h"
#include "memory/numeric.h"

namespace tpt::memory {
bool LmdeployFractionOfTotal(std::string_view version) {
  auto v = ParseVersion(version);
  return v.ok() && CompareVersions(*v, {0, 1, 0}) >= 0 && CompareVersions(*v, {0, 2, 2}) < 0;
}

Status LmdeployVersionPlannable(std::string_view version) {
  if (!VersionBefore(version, {0, 1, 0})) return OkStatus();
  return InvalidArgumentError(
      "LMDeploy " + std::string(version) +
      ": before v0.1.0 TurboMind has no start-up KV pool: LlamaCacheManager allocates whole sequences of "
      "session_len as requests arrive, up to cache_max_entry_count (48, a count; LlamaCacheManager.cc, "
      "deploy/target_model/base.py v0.0.14), so there is nothing to plan at start; plan v0.1.0 or later");
}

StatusOr<LmdeployKv> LmdeployKvBlocks(const LmdeployKvInput& in) {
  if (!(in.free_after_weights_bytes >= 0)) return InvalidArgumentError("LMDeploy KV: free memory after the weights must be >= 0");
  if (!(in.cache_max_entry_count > 0)) return InvalidArgumentError("LMDeploy KV: cache_max_entry_count must be > 0");
  if (!(in.block_bytes > 0) || in.block_tokens < 1) return InvalidArgumentError("LMDeploy KV: the block size must be > 0");
  LmdeployKv r;
  const double f = in.cache_max_entry_count;
  if (in.engine == LmdeployEngine::kTurbomind) TPT_RETURN_IF_ERROR(LmdeployVersionPlannable(in.version));
  if (in.engine == LmdeployEngine::kTurbomind) {
    if (f >= 1) {
      r.num_blocks = static_cast<int64_t>(f);
    } else {
      const bool of_total = LmdeployFractionOfTotal(in.version);
      if (of_total && !(in.total_bytes > 0)) {
        return InvalidArgumentError("LMDeploy KV: v0.1.0-0.2.1 take the ratio of the card's total, which is unknown");
      }
      r.usable_bytes = std::floor((of_total ? in.total_bytes : in.free_after_weights_bytes) * f);
      r.num_blocks = static_cast<int64_t>(r.usable_bytes / in.block_bytes);
    }
  } else {
    // The run-time reserve, halving the prefill budget until 16 blocks fit.
    const bool new_reserve = !VersionBefore(in.version, {0, 10, 0});
    int64_t prefill = in.max_prefill_token_num;
    double runtime = 0;
    const double vocab = static_cast<double>(std::max<int64_t>(0, in.vocab_size));
    while (prefill > 0) {
      runtime = new_reserve ? (prefill + 2.0 * in.max_batches) * vocab * 2 : prefill * vocab * 7;
      if (static_cast<int64_t>((in.free_after_weights_bytes - runtime) * f) / static_cast<int64_t>(in.block_bytes) >= 16) break;
      prefill /= 2;
    }
    r.runtime_reserve_bytes = runtime;
    r.max_prefill_token_num = prefill;
    if (prefill <= 0) {
      r.fails = true;
      r.error = "No enough gpu memory for runtime.";
      return r;
    }
    r.usable_bytes = std::max(0.0, (in.free_after_weights_bytes - runtime) * f);
    r.num_blocks = std::max<int64_t>(0, static_cast<int64_t>(r.usable_bytes / in.block_bytes));
    const int64_t least = VersionBefore(in.version, {0, 14, 0}) ? 0 : 2;
    if (r.num_blocks <= least) {
      r.fails = true;
      r.error = "No enough gpu memory for kv cache.";
    }
  }
  r.kv_tokens = r.num_blocks * in.block_tokens;
  r.kv_bytes = static_cast<double>(r.num_blocks) * in.block_bytes;
  // v0.1.0a0-v0.1.x: the converter writes cache_chunk_size 1 (deploy/target_model/base.py
  // v0.1.0a0:55, v0.1.0:55; -1, all at once, from v0.2.0:60), so BlockManager's constructor
  // allocates one block ("pre-allocate first chunk") and Allocate mallocs the rest a block at
  // a time as sequences need them, throwing "out of memory" when one does not fit
  // (BlockManager.cc v0.1.0 l.14-46, 55-80, 110-116): the logged max_block_count is a cap.
  const bool grows = in.engine == LmdeployEngine::kTurbomind && !VersionBefore(in.version, {0, 1, 0}) &&
                     VersionBefore(in.version, {0, 2, 0});
  r.pool_is_cap = grows;
  r.left_after_cache_bytes = in.free_after_weights_bytes - (grows ? std::min(r.kv_bytes, in.block_bytes) : r.kv_bytes);
  if (grows && r.kv_bytes > in.free_after_weights_bytes) {
    const int64_t fit = static_cast<int64_t>(std::max(0.0, in.free_after_weights_bytes) / in.block_bytes);
    r.note = "TurboMind " + in.version + " caps its pool at " + std::to_string(r.num_blocks) + " blocks (" +
             std::to_string(r.kv_tokens) + " tokens) but allocates them a block at a time as requests come " +
             "(cache_chunk_size 1 before v0.2.0): the free memory after the weights holds " + std::to_string(fit) +
             " (" + std::to_string(fit * in.block_tokens) + " tokens); a request past them fails with \"out of memory\"";
  }
  if (!r.fails && in.engine == LmdeployEngine::kTurbomind && r.left_after_cache_bytes < 0) {
    // A ratio of the card's TOTAL (v0.1.0-0.2.1) or a block count can ask for more than the
    // weights leave; the BlockManager allocates its first chunk in its constructor (all of it
    // with cache_chunk_size -1, v0.2.0 deploy/target_model/base.py), inside the engine's
    // creation, and TurboMind's allocator throws.
    r.fails = true;
    r.error = "CUDA runtime error: out of memory (TurboMind allocating the KV cache: more than the free memory after "
              "the weights)";
  }
  if (!r.fails && in.runtime_bytes > 0 && in.runtime_bytes > r.left_after_cache_bytes) {
    r.fails = true;
    r.runtime_oom = true;
    r.error = in.engine == LmdeployEngine::kTurbomind
                  ? "CUDA runtime error: out of memory (TurboMind's allocator, allocating its run-time buffers after the cache)"
                  : "CUDA out of memory after the KV cache was allocated";
  }
  return r;
}

StatusOr<LmdeployServing> LmdeployServingFraction(double free_after_weights_bytes, double cache_max_entry_count,
                                                  double block_bytes, int block_tokens, int64_t session_len) {
  if (!(free_after_weights_bytes > 0) || !(cache_max_entry_count > 0 && cache_max_entry_count < 1) ||
      !(block_bytes > 0) || block_tokens < 1) {
    return InvalidArgumentError("LMDeploy serving value: needs the free memory after the weights, a fraction in (0, 1) "
                                "and the block size");
  }
  LmdeployServing s;
  s.free_after_weights_bytes = free_after_weights_bytes;
  s.left_bytes = free_after_weights_bytes * (1 - cache_max_entry_count);
  s.bytes_per_step = free_after_weights_bytes * 0.01;
  if (session_len > 0) {
    const double blocks = std::ceil(static_cast<double>(session_len) / block_tokens);
    s.floor = internal::CeilHundredths(blocks * block_bytes / free_after_weights_bytes);
  }
  double v = internal::FloorHundredths(1 - 2 * (1 - cache_max_entry_count));
  if (v <= 0) v = std::max(0.01, internal::FloorHundredths(cache_max_entry_count / 2));
  s.cache_max_entry_count = s.floor < 1 ? std::max(v, s.floor) : v;  // floor >= 1: no fraction holds a session
  s.left_at_serving_bytes = free_after_weights_bytes * (1 - s.cache_max_entry_count);
  s.tokens_at_serving =
      static_cast<int64_t>(std::floor(free_after_weights_bytes * s.cache_max_entry_count / block_bytes)) * block_tokens;
  return s;
}

}  // namespace tpt::memory
