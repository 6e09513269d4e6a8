// startup_servers.cc: see startup_servers.h.
#include "repro/startup_servers.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "memory/memory_model.h"
#include "repro/plan_figures.h"

namespace tpt::repro {
namespace {

// What the weights step stands for when the log prints no free memory at init:
// everything the server held at the failing point; only the free memory it
// leaves (the log's) decides the replay.
constexpr int64_t kStandInWeightsBytes = 4 * kGiB;

std::string Fixed(double v, int digits = 2) {
  char b[32];
  std::snprintf(b, sizeof b, "%.*f", digits, v);
  return b;
}

void Default(Plan* p, const char* key, double* field, double value, const std::string& why) {
  if (*field > 0) {
    if (!p->sources.count(key)) p->sources[key] = kFromLog;
    return;
  }
  *field = value;
  p->sources[key] = std::string(kFromDefault) + ": " + why;
}

// The free memory the log gives at the point where the server failed (0: none).
int64_t FreeAtFailure(const Plan& p) {
  if (p.framework == "trtllm") {
    if (p.free_at_creation_bytes > 0) return p.free_at_creation_bytes;
    auto it = p.sources.find("kv_available_bytes");  // what the runtime saw free when it sized the cache
    return it != p.sources.end() && it->second.rfind(kFromLog, 0) == 0 ? p.kv_available_bytes : 0;
  }
  if (p.framework == "lmdeploy" && p.kv_blocks > 0 && p.kv_block_bytes > 0 && p.cache_max_entry_count > 0 &&
      p.cache_max_entry_count < 1) {
    // floor(free x ratio / block) = blocks: the middle of that range.
    return static_cast<int64_t>((p.kv_blocks + 0.5) * double(p.kv_block_bytes) / p.cache_max_entry_count);
  }
  return p.warmup_free_bytes;
}

// The three servers' results share memory::ServerKv: the replay's figures from it.
KvFigures Filled(KvFigures k, const memory::ServerKv& r, double reserved_bytes) {
  k.computed = true;
  k.reserved_bytes = reserved_bytes;
  k.rest_bytes = r.usable_bytes;
  k.tokens = r.kv_tokens;
  k.pool_bytes = r.kv_bytes;
  k.fails = r.fails;
  k.error = r.error;
  return k;
}

}  // namespace

bool IsStartupServer(const std::string& framework) {
  return framework == "tgi" || framework == "lmdeploy" || framework == "trtllm";
}

std::string StartupFormula(const Plan& p) {
  if (p.framework == "tgi") {
    const double w = memory::TgiDefaultWiggleRoom(p.version);
    const bool v3 = !memory::VersionBefore(p.version, {3, 0, 0});
    return "TGI" + (p.version.empty() ? std::string(" (version unknown: newest)") : " " + p.version) +
           ": blocks = " +
           (v3 ? "(free - (1 - " + Fixed(p.cuda_memory_fraction) + " x " + Fixed(w) + ") x total)"
               : "(free - (1 - " + Fixed(p.cuda_memory_fraction) + ") x total) x " + Fixed(w)) +
           " // block + the warm-up's blocks, after the warm-up prefill (flash_causal_lm.py warmup)";
  }
  if (p.framework == "lmdeploy") {
    return "LMDeploy TurboMind: blocks = free after the weights x cache_max_entry_count (" +
           Fixed(p.cache_max_entry_count) + ") // block; its run-time buffers come after (BlockManager.cc)";
  }
  return "TensorRT-LLM: KV = free_gpu_memory_fraction (" + Fixed(p.free_gpu_memory_fraction) +
         ") x available // (tokens_per_block x bytes a token); the cache is created after the estimation pass";
}

void CompleteStartupFigures(Plan* p) {
  const bool warmup_oom = p->root_cause == "warmup_oom";
  if (!IsStartupServer(p->framework) && !warmup_oom) return;
  // Where it failed.
  if (warmup_oom && (p->failed_step.empty() || p->failed_step == kStepWarmup)) {
    const bool turbomind_after_cache = p->framework == "lmdeploy" && (p->oom_source == "turbomind" || p->kv_blocks > 0);
    if (p->framework == "trtllm" || (p->framework == "lmdeploy" && !turbomind_after_cache)) {
      p->failed_step = kStepKvPool;
    } else {
      p->failed_step = kStepWarmup;
    }
  }
  // The server's own defaults for what the log did not print.
  if (p->framework == "tgi") {
    p->custom_allreduce = false;  // TGI's shards all-reduce through NCCL (no IPC buffers)
    Default(p, "cuda_memory_fraction", &p->cuda_memory_fraction, 1.0, "TGI's CUDA_MEMORY_FRACTION 1.0 (utils/dist.py)");
    if (p->block_tokens <= 0) {
      p->block_tokens = 16;
      p->sources["block_tokens"] = std::string(kFromDefault) + ": TGI's BLOCK_SIZE 16 (paged attention; 1 flashinfer, "
                                                              "256 flashdecoding: models/globals.py)";
    }
    if (p->context_length <= 0 && p->max_total_tokens > 0) {
      p->context_length = p->max_total_tokens;  // one request of max_total_tokens must fit
      p->sources["context_length"] = std::string(kFromLog) + ": the router's max_total_tokens";
    }
  } else if (p->framework == "lmdeploy") {
    Default(p, "cache_max_entry_count", &p->cache_max_entry_count, 0.8,
            "LMDeploy's cache_max_entry_count 0.8 (since v0.2.2)");
    if (p->block_tokens <= 0) {
      p->block_tokens = 64;
      p->sources["block_tokens"] = std::string(kFromDefault) + ": cache_block_seq_len / block_size 64 (lmdeploy/messages.py)";
    }
    if (p->kv_block_bytes > 0 && !p->sources.count("kv_bytes_per_token")) {
      p->kv_bytes_per_token = p->kv_block_bytes / p->block_tokens;
      p->kv_bytes_per_token_assumed = false;
      p->sources["kv_bytes_per_token"] = std::string(kFromLog) + ": the BlockManager's block size / " +
                                         std::to_string(p->block_tokens) + " tokens";
    }
  } else if (p->framework == "trtllm") {
    Default(p, "free_gpu_memory_fraction", &p->free_gpu_memory_fraction, memory::kTrtllmDefaultFreeGpuMemoryFraction,
            "TensorRT-LLM's KvCacheConfig.free_gpu_memory_fraction 0.9");
    // v0.8's one-sequence error names what one sequence needs: beam_width (B) *
    // tokensPerBlock (N) * maxBlocksPerSeq (M).
    const std::string& m = p->failure_message;
    auto after = [&m](const char* key) -> int64_t {
      const size_t at = m.find(key);
      return at == std::string::npos ? 0 : std::strtoll(m.c_str() + at + std::strlen(key), nullptr, 10);
    };
    const int64_t beam = after("beam_width ("), tpb = after("tokensPerBlock ("), blocks = after("maxBlocksPerSeq (");
    if (beam > 0 && tpb > 0 && blocks > 0) {
      if (p->block_tokens <= 0) {
        p->block_tokens = static_cast<int>(tpb);
        p->sources["block_tokens"] = std::string(kFromLog) + ": the error line's tokensPerBlock";
      }
      if (p->context_length <= 0) {
        p->context_length = beam * tpb * blocks;
        p->sources["context_length"] = std::string(kFromLog) + ": one sequence, beam_width x tokensPerBlock x "
                                                               "maxBlocksPerSeq of the error line";
      }
    }
    if (p->block_tokens <= 0) {
      p->block_tokens = 32;
      p->sources["block_tokens"] = std::string(kFromDefault) + ": KvCacheConfig.tokens_per_block 32 (llmapi/llm_args.py)";
    }
    if (p->kv_available_bytes <= 0 && p->kv_estimate_bytes > 0) {
      p->kv_available_bytes = static_cast<int64_t>(std::ceil(double(p->kv_estimate_bytes) / p->free_gpu_memory_fraction));
      p->sources["kv_available_bytes"] = std::string(kFromLog) +
                                         ": the KV the log says it sized (the estimate line, or 'Allocate N bytes for "
                                         "k/v cache') / the fraction";
    } else if (p->kv_available_bytes <= 0 && p->failed_step == kStepKvPool && p->free_at_creation_bytes > 0) {
      // No estimate line: what was free at the cache's creation, as if the estimate
      // had seen it; a replay on it cannot show the estimate's error.
      p->kv_available_bytes = p->free_at_creation_bytes;
      p->sources["kv_available_bytes"] = std::string(kFromAssumed) +
                                         ": the log prints no 'Peak memory during memory usage profiling' line; the "
                                         "free memory at the cache's creation";
      p->asked.push_back("kv_available_bytes " + FormatBytes(p->kv_available_bytes) +
                         " (assumed: the estimate line gives it; a plan file's kv_available_bytes sets it)");
    }
  }
  // The warm-up's ask: TGI's (and vLLM's, SGLang's) from the OOM line; TurboMind's
  // buffers after the cache are never printed: the least that fails, asked for.
  if (p->warmup_bytes <= 0 && p->failed_step == kStepWarmup) {
    if (p->framework == "lmdeploy") {
      const int64_t free = FreeAtFailure(*p);
      if (free > 0 && p->kv_blocks > 0) {
        p->warmup_bytes = free - p->kv_blocks * p->kv_block_bytes + kMiB;
        p->sources["warmup_bytes"] = std::string(kFromAssumed) +
                                     ": TurboMind never prints its run-time buffers; the least that fails (what the "
                                     "cache left + 1 MiB)";
        p->asked.push_back("--warmup-bytes " + FormatBytes(p->warmup_bytes) +
                           " (assumed: the least that fails; the buffers TurboMind allocates after its cache)");
      }
    } else if (p->warmup_asked_bytes > 0) {
      p->warmup_bytes = p->warmup_asked_bytes;
      p->sources["warmup_bytes"] = std::string(kFromLog) + ": the OOM line's 'Tried to allocate'" +
                                   (p->prefill_tokens > 0 ? " at " + std::to_string(p->prefill_tokens) + " prefill tokens"
                                                          : std::string());
    }
  }
  // Weights that bring the free memory to the log's figure at the failing point.
  const int64_t at_failure = FreeAtFailure(*p);
  if (at_failure <= 0 || p->weights_bytes > 0 || !p->weights_per_rank.empty()) return;
  if (p->free_at_init_bytes <= 0 && p->free_at_init_per_rank.empty()) {
    p->free_at_init_bytes = std::min(p->card_total_bytes - kContextAndNcclBytes, at_failure + kStandInWeightsBytes);
    p->sources["free_at_init_bytes"] = std::string(kFromAssumed) +
                                       ": not printed; it does not decide: the weights step brings the free memory to "
                                       "the log's figure at the failing point";
  }
  p->weights_bytes = std::max<int64_t>(0, FreeAtInit(*p, 0) - at_failure);
  p->sources["weights_bytes"] =
      std::string(kFromLog) + ": free at init less the free memory " +
      (p->framework == "trtllm"   ? "when the final KV cache was created (the component report)"
       : p->framework == "lmdeploy" ? "after the weights (blocks x block size / cache_max_entry_count)"
                                    : "the OOM line gives (everything held before the warm-up's failing ask)");
  // The card's total does not enter these formulas (TGI's v3 does).
  const bool total_used = p->framework == "tgi" || p->framework == "sglang" || p->framework == "vllm";
  if (!total_used) {
    p->asked.erase(std::remove_if(p->asked.begin(), p->asked.end(),
                                  [](const std::string& a) { return a.rfind("--target-gpu-mem ", 0) == 0; }),
                   p->asked.end());
  }
}

void AssumeWarmupAsk(Plan* p) {
  if (p->failed_step != kStepWarmup || p->warmup_bytes > 0) return;
  // The least that fails on what the weights leave: the dry run has a plan, and the
  // verdict does not count on it (runner.cc).
  p->warmup_bytes = std::max<int64_t>(kMiB, FreeAtInit(*p, 0) - Weights(*p, 0) + kMiB);
  p->sources["warmup_bytes"] = std::string(kFromAssumed) +
                               ": the log prints no out-of-memory line with the warm-up's ask; the least that fails";
  p->asked.push_back("--warmup-bytes " + FormatBytes(p->warmup_bytes) +
                     " (assumed: the least that fails; the OOM line's 'Tried to allocate' gives it)");
}

KvFigures ComputeStartupKv(const Plan& p, double free_now) {
  KvFigures k;
  k.available_bytes = free_now;
  k.formula = StartupFormula(p);
  if (p.framework == "tgi") {
    memory::TgiKvInput in;
    in.version = p.version;
    in.total_bytes = static_cast<double>(p.card_total_bytes);
    in.free_after_warmup_bytes = free_now;
    in.cuda_memory_fraction = p.cuda_memory_fraction;
    in.bytes_per_token = p.kv_bytes_per_token;
    in.block_size = p.block_tokens;
    in.warmup_blocks = memory::TgiWarmupBlocks(p.prefill_tokens, p.max_input_tokens > 0 ? p.max_input_tokens : p.prefill_tokens,
                                               p.max_total_tokens > 0 ? p.max_total_tokens : p.prefill_tokens + 1,
                                               p.block_tokens);
    in.max_total_tokens = p.max_total_tokens;
    auto r = memory::TgiKvBlocks(in);
    if (!r.ok()) return k.error = r.status().ToString(), k;
    // The warm-up's blocks are held already (in the weights step): the pool adds the rest.
    k.held_bytes = static_cast<double>(in.warmup_blocks) * double(p.kv_bytes_per_token) * p.block_tokens;
    return Filled(k, *r, 0);
  }
  if (p.framework == "lmdeploy") {
    memory::LmdeployKvInput in;
    in.version = p.version;
    in.total_bytes = static_cast<double>(p.card_total_bytes);
    in.free_after_weights_bytes = free_now;
    in.cache_max_entry_count = p.cache_max_entry_count;
    in.block_bytes = double(p.kv_block_bytes > 0 ? p.kv_block_bytes : p.kv_bytes_per_token * p.block_tokens);
    in.block_tokens = p.block_tokens;
    in.session_len = p.context_length;
    auto r = memory::LmdeployKvBlocks(in);
    if (!r.ok()) return k.error = r.status().ToString(), k;
    return Filled(k, *r, free_now - r->usable_bytes);
  }
  memory::TrtllmKvInput in;
  // The estimate's available (logged) when there is one, else what is free now.
  in.available_bytes = p.kv_available_bytes > 0 ? double(p.kv_available_bytes) : free_now;
  in.free_gpu_memory_fraction = p.free_gpu_memory_fraction;
  in.bytes_per_token = p.kv_bytes_per_token;
  in.tokens_per_block = p.block_tokens;
  auto r = memory::TrtllmKvBlocks(in);  // the cache's creation is the kv_pool step's allocation
  if (!r.ok()) return k.error = r.status().ToString(), k;
  return Filled(k, *r, in.available_bytes - r->usable_bytes);
}

}  // namespace tpt::repro
