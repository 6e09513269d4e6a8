// vllm_model.cc: vLLM's KV budget by era (V0 determine_num_available_blocks, V1
// determine_available_memory), the startup free-memory check, the block/token
// count, the max-model-len check and the minimum viable gpu_memory_utilization.
// Every formula cites docs/knowledge/vllm-source.md.
#include <cmath>
#include <algorithm>
#include <cstdio>
#include <functional>
#include <string>

#include "memory/memory_model.h"
#include "memory/numeric.h"

namespace tpt::memory {
namespace {

using internal::CeilHundredths;
using internal::FloorHundredths;
using internal::PyFloat;

// vLLM's GiB(b) = round(b / GiB_bytes, 2), printed with Python's str(): "4.0", "21.63".
std::string PyRound2(double bytes) {
  double v = std::round(bytes / kGiB * 100.0) / 100.0;
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.2f", v);
  std::string s(buf);
  if (s.size() > 1 && s.back() == '0') s.pop_back();  // "4.00" -> "4.0", "4.50" -> "4.5"
  return s;
}
int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

bool IsV1(VllmEra e) { return e == VllmEra::kV1StartupCheck || e == VllmEra::kV1GraphsInBudget; }

}  // namespace

const char* VllmEraName(VllmEra era) {
  switch (era) {
    case VllmEra::kV0PeakWholeGpu: return "V0 < 0.3.1 (peak = total - free)";
    case VllmEra::kV0InstancePeak: return "V0 0.3.1-0.6.3 (peak = init_free - free)";
    case VllmEra::kV0NonTorchWholeGpu: return "V0 0.6.4-0.6.5 / V1 < 0.9.1 (torch peak + whole-GPU non-torch)";
    case VllmEra::kV0Profiling: return "V0 >= 0.6.6 (memory_profiling)";
    case VllmEra::kV1StartupCheck: return "V1 0.9.1-0.20 (startup check, graphs outside budget)";
    case VllmEra::kV1GraphsInBudget: return "V1 >= 0.21 (CUDA graphs inside budget)";
  }
  return "?";
}

StatusOr<VllmEra> VllmEraForVersion(std::string_view version, std::string_view engine) {
  auto v = ParseVersion(version);
  if (!v.ok()) return v.status();
  std::string eng(engine);
  if (!eng.empty() && eng != "v0" && eng != "v1") {
    return InvalidArgumentError("vLLM engine '" + eng + "' is not known; use v0 or v1");
  }
  // §0: V1 default from 0.8.0; V0 removed 2025-09-20 (0.11.0).
  bool v1 = eng.empty() ? CompareVersions(*v, {0, 8}) >= 0 : eng == "v1";
  if (!v1 && CompareVersions(*v, {0, 11}) >= 0) {
    return InvalidArgumentError("vLLM " + std::string(version) + " has no V0 engine (removed in 0.11.0); use v1");
  }
  if (v1 && CompareVersions(*v, {0, 6, 4}) < 0) {
    return InvalidArgumentError("vLLM " + std::string(version) + " has no V1 engine (it landed after 0.6.3); use v0");
  }
  if (v1) {
    // §1.3(e) Oct 2024 - Jun 2025: V0 (c) arithmetic; (f) 0.9.1 startup check; (g) 0.21.0
    // VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS default on.
    if (CompareVersions(*v, {0, 9, 1}) < 0) return VllmEra::kV0NonTorchWholeGpu;
    if (CompareVersions(*v, {0, 21}) < 0) return VllmEra::kV1StartupCheck;
    return VllmEra::kV1GraphsInBudget;
  }
  // §1.2: (a) before #2863 (2024-02-13, 0.3.1); (b) to #9352 (2024-10-17, 0.6.4);
  // (c) to #10511 (2024-12-16; 0.6.6 is our reading of the first release with it); (d) after.
  if (CompareVersions(*v, {0, 3, 1}) < 0) return VllmEra::kV0PeakWholeGpu;
  if (CompareVersions(*v, {0, 6, 4}) < 0) return VllmEra::kV0InstancePeak;
  if (CompareVersions(*v, {0, 6, 6}) < 0) return VllmEra::kV0NonTorchWholeGpu;
  return VllmEra::kV0Profiling;
}

StatusOr<int64_t> VllmBytesPerToken(const KvDims& d, int tp) {
  if (d.layers <= 0) return InvalidArgumentError("KV dims: layers must be > 0 (got " + std::to_string(d.layers) + ")");
  if (tp <= 0) return InvalidArgumentError("KV dims: tensor parallel size must be > 0");
  if (!(d.dtype_bytes > 0)) return InvalidArgumentError("KV dims: dtype bytes must be > 0");
  int64_t elems;
  if (d.IsMla()) {
    // MLAAttentionSpec: num_kv_heads == 1, head_size = kv_lora_rank + qk_rope_head_dim, no V.
    elems = (static_cast<int64_t>(d.kv_lora_rank) + d.qk_rope_head_dim) * d.layers;
  } else {
    if (d.kv_heads <= 0 || d.head_dim <= 0) {
      return InvalidArgumentError("KV dims: kv_heads and head_dim must be > 0 for MHA/GQA (or give kv_lora_rank for MLA)");
    }
    // AttentionSpec: 2 x num_kv_heads x head_size, num_kv_heads = max(1, total // tp).
    elems = static_cast<int64_t>(d.layers) * 2 * KvHeadsPerRank(d.kv_heads, tp) * d.head_dim;
  }
  if (d.dtype_bytes < 1.0) return elems / 2 + elems / 16;  // NVFP4: fp4 data + 1-byte scale per 16
  return static_cast<int64_t>(std::llround(elems * d.dtype_bytes));
}

StatusOr<VllmKvResult> VllmKvPool(const VllmKvInput& in) {
  if (!(in.total_bytes > 0)) return InvalidArgumentError("vLLM: total GPU memory must be > 0");
  if (!(in.gpu_memory_utilization > 0 && in.gpu_memory_utilization <= 1)) {
    return InvalidArgumentError("vLLM: gpu_memory_utilization must be in (0, 1] (got " +
                                PyFloat(in.gpu_memory_utilization) + ")");
  }
  if (in.bytes_per_token <= 0) return InvalidArgumentError("vLLM: KV bytes per token must be > 0");
  if (in.block_size <= 0) return InvalidArgumentError("vLLM: block size must be > 0");
  if (in.pp <= 0) return InvalidArgumentError("vLLM: pipeline parallel size must be > 0");
  if (in.weights_bytes < 0 || in.activation_peak_bytes < 0 || in.cuda_graph_bytes < 0 || in.free_at_init_bytes < 0) {
    return InvalidArgumentError("vLLM: weights, activation peak, CUDA graph and free memory must be >= 0");
  }
  if (in.free_at_init_bytes > in.total_bytes) {
    return InvalidArgumentError("vLLM: free memory at init (" + FormatGiB(in.free_at_init_bytes) +
                                ") is larger than the total (" + FormatGiB(in.total_bytes) + ")");
  }

  VllmKvResult r;
  const double util = in.gpu_memory_utilization;
  const double block_bytes = static_cast<double>(in.bytes_per_token) * in.block_size;
  // §1.3(g): requested_memory = math.ceil(total x util) in 2026; a float product before.
  r.requested_bytes = in.total_bytes * util;
  if (in.era == VllmEra::kV1GraphsInBudget) r.requested_bytes = std::ceil(r.requested_bytes);

  const double own = in.weights_bytes + in.activation_peak_bytes + in.non_torch_bytes;
  // Memory in use before this instance loads anything (other tenants + its own context).
  const double used_before = in.free_at_init_bytes > 0 ? in.total_bytes - in.free_at_init_bytes : 0;
  switch (in.era) {
    case VllmEra::kV0PeakWholeGpu:      // §1.2(a): peak = total - free after profile
    case VllmEra::kV0NonTorchWholeGpu:  // §1.2(c)/§1.3(e): non-torch = whole-GPU used - torch
      r.non_kv_bytes = own + used_before;
      break;
    case VllmEra::kV0InstancePeak:      // §1.2(b): init_free - free
    case VllmEra::kV0Profiling:         // §1.2(d): increases since the baseline snapshot
    case VllmEra::kV1StartupCheck:      // §1.3(f)
    case VllmEra::kV1GraphsInBudget:    // §1.3(g)
      r.non_kv_bytes = own;
      break;
  }
  if (in.torch_peak_only) r.non_kv_bytes = in.weights_bytes + in.activation_peak_bytes;
  if (in.era == VllmEra::kV1GraphsInBudget) r.graphs_in_budget_bytes = in.cuda_graph_bytes;
  r.kv_bytes = r.requested_bytes - r.non_kv_bytes - r.graphs_in_budget_bytes;
  r.num_blocks = r.kv_bytes > 0 ? static_cast<int64_t>(std::floor(r.kv_bytes / block_bytes)) : 0;
  r.kv_tokens = r.pool_tokens = r.num_blocks * in.block_size;

  // Max model length the pool can hold: V0 block_size x (blocks // pp) (§1.6); V1
  // cdiv(len, block) x block_bytes <= available.
  r.estimated_max_model_len =
      IsV1(in.era) ? r.num_blocks * in.block_size : static_cast<int64_t>(in.block_size) * (r.num_blocks / in.pp);
  // KV bytes one max_model_len request needs (V1: sum of the layers' max_memory_usage_bytes).
  std::function<double(int64_t)> needed_for = [&](int64_t len) {
    return static_cast<double>(CeilDiv(len, in.block_size)) * block_bytes;
  };
  double one_block_bytes = block_bytes;

  const bool hybrid = IsV1(in.era) && (in.sliding_layers > 0 || in.mamba_layers > 0);
  if (hybrid) {
    // v1/core/kv_cache_utils.py (hybrid allocator, 0.10+): one page size for every layer;
    // layers of one kind are split into groups of group_size (the fewest layers of any
    // kind, or the most when they are within 1.25x); num_blocks = available // page //
    // group_size and the logged "GPU KV cache size" is num_blocks // groups x block.
    const int attn = in.full_layers + in.sliding_layers;
    if (attn <= 0) return InvalidArgumentError("vLLM hybrid: no attention layers");
    const double per_layer = static_cast<double>(in.bytes_per_token) / attn;
    int bs = in.block_size;
    if (in.mamba_layers > 0 && in.mamba_bytes_per_request > 0) {
      // HybridAttentionMambaModelConfig: the attention block grows (in steps of the
      // kernel's 16 tokens) until its page holds one layer's mamba state.
      const double mamba_page = in.mamba_bytes_per_request / in.mamba_layers;
      bs = std::max<int>(bs, static_cast<int>(16 * std::ceil(mamba_page / (16 * per_layer))));
    }
    const double page = per_layer * bs;
    int counts[3] = {in.full_layers, in.sliding_layers, in.mamba_layers};
    int lo = 0, hi = 0;
    for (int c : counts) {
      if (c <= 0) continue;
      lo = lo == 0 ? c : std::min(lo, c);
      hi = std::max(hi, c);
    }
    int gs = hi < lo * 1.25 ? hi : lo;
    int groups = 0;
    for (int c : counts) groups += c > 0 ? static_cast<int>(CeilDiv(c, gs)) : 0;
    r.kv_cache_groups = groups;
    r.group_size = gs;
    r.hybrid_block_size = bs;
    r.num_blocks = r.kv_bytes > 0 ? static_cast<int64_t>(std::floor(r.kv_bytes / (page * gs))) : 0;
    r.kv_tokens = r.pool_tokens = r.num_blocks / groups * bs;
    one_block_bytes = page * gs * groups;
    // Per layer: full cdiv(len, bs) pages; sliding (cdiv(min(window - 1 +
    // max_num_batched_tokens, len), bs) + 1) pages (SlidingWindowSpec); mamba one page.
    needed_for = [=](int64_t len) {
      const int64_t win = std::min<int64_t>(std::max(in.sliding_window, 1) - 1 + in.max_num_batched_tokens, len);
      return page * (static_cast<double>(in.full_layers) * CeilDiv(len, bs) +
                     static_cast<double>(in.sliding_layers) * (CeilDiv(win, bs) + 1) + in.mamba_layers);
    };
    if (in.max_model_len && *in.max_model_len > 0) {
      const int64_t len = *in.max_model_len;
      const int64_t win = std::min<int64_t>(std::max(in.sliding_window, 1) - 1 + in.max_num_batched_tokens, len);
      const double per_request = static_cast<double>(CeilDiv(in.full_layers, gs) * CeilDiv(len, bs)) +
                                 static_cast<double>(CeilDiv(in.sliding_layers, gs) * (CeilDiv(win, bs) + 1)) +
                                 static_cast<double>(CeilDiv(in.mamba_layers, gs));
      r.max_concurrency = static_cast<double>(r.num_blocks) / per_request;
    }
    if (in.full_layers > 0) {
      const double fixed_part = needed_for(1) - page * in.full_layers;
      const double per_full_block = page * in.full_layers;
      r.estimated_max_model_len =
          r.kv_bytes > fixed_part ? static_cast<int64_t>(std::floor((r.kv_bytes - fixed_part) / per_full_block)) * bs : 0;
    } else {
      r.estimated_max_model_len = r.num_blocks > 0 ? in.max_model_len.value_or(r.kv_tokens) : 0;
    }
  }

  if (!hybrid && in.max_model_len && *in.max_model_len > 0) {
    r.max_concurrency = static_cast<double>(r.num_blocks) / CeilDiv(*in.max_model_len, in.block_size);
  }
  // From 0.20.1 the logged size is the concurrency in tokens (_report_kv_cache_config:
  // num_tokens = int(max_concurrency * max_model_len), vllm#41069): for hybrid groups far
  // above num_blocks // groups x block (a sliding or mamba group needs only its window or
  // state per request); for one group the same up to the last block's rounding.
  if (in.kv_size_from_concurrency && in.max_model_len && *in.max_model_len > 0) {
    r.kv_tokens = static_cast<int64_t>(std::floor(r.max_concurrency * static_cast<double>(*in.max_model_len)));
  }

  // Remedies. One block: util x total >= non_kv + graphs + block.
  const double fixed = r.non_kv_bytes + (in.era == VllmEra::kV1GraphsInBudget ? in.cuda_graph_bytes : 0);
  r.min_util_one_block = CeilHundredths((fixed + one_block_bytes) / in.total_bytes);
  if (in.max_model_len && *in.max_model_len > 0) {
    const double need = IsV1(in.era) ? needed_for(*in.max_model_len)
                                     : static_cast<double>(CeilDiv(*in.max_model_len, in.block_size) * in.pp) * block_bytes;
    r.min_util_max_model_len = CeilHundredths((fixed + need) / in.total_bytes);
  }
  r.max_util_startup = in.free_at_init_bytes > 0 ? FloorHundredths(in.free_at_init_bytes / in.total_bytes) : 1.0;

  // Errors in the order the server meets them.
  const bool has_startup_check = in.era == VllmEra::kV1StartupCheck || in.era == VllmEra::kV1GraphsInBudget;
  if (has_startup_check && in.free_at_init_bytes > 0 && in.free_at_init_bytes < r.requested_bytes) {
    r.startup_check_fails = true;
    r.fails = true;
    r.error = "Free memory on device (" + PyRound2(in.free_at_init_bytes) + "/" + PyRound2(in.total_bytes) +
              " GiB) on startup is less than desired GPU memory utilization (" + PyFloat(util) + ", " +
              PyRound2(r.requested_bytes) +
              " GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.";
  }
  // The profiling run needs its peak physically free beside the weights before the budget is
  // read (every era: worker.py / gpu_worker.py profile_run): with less (another process on
  // the card) it is a CUDA out of memory there, before any pool is sized.
  const double phys_need = in.weights_bytes + in.non_torch_bytes + in.activation_peak_bytes;
  if (!r.fails && in.free_at_init_bytes > 0 && phys_need > in.free_at_init_bytes) {
    r.profile_oom = true;
    r.fails = true;
    r.error = "CUDA out of memory in the memory profiling run: the weights, non-torch memory and the profiling "
              "peak need " + FormatGiB(phys_need) + " a rank, " + FormatGiB(in.free_at_init_bytes) + " is free";
  }
  if (r.kv_bytes <= 0 || r.num_blocks <= 0) {
    r.no_cache_blocks = true;
    if (!r.fails) {
      r.fails = true;
      r.error = "No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when "
                "initializing the engine.";
    }
  }
  if (in.max_model_len && *in.max_model_len > 0 && !r.no_cache_blocks) {
    char buf[512];
    if (IsV1(in.era)) {
      double needed = needed_for(*in.max_model_len);
      if (needed > r.kv_bytes) {
        r.max_len_too_long = true;
        std::snprintf(buf, sizeof(buf),
                      "To serve at least one request with the models's max seq len (%lld), (%.2f GiB KV cache is "
                      "needed, which is larger than the available KV cache memory (%.2f GiB). Based on the "
                      "available memory, the estimated maximum model length is %lld. Try increasing "
                      "`gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.",
                      static_cast<long long>(*in.max_model_len), needed / kGiB, r.kv_bytes / kGiB,
                      static_cast<long long>(r.estimated_max_model_len));
      }
    } else if (r.estimated_max_model_len < *in.max_model_len) {
      r.max_len_too_long = true;
      std::snprintf(buf, sizeof(buf),
                    "The model's max seq len (%lld) is larger than the maximum number of tokens that can be stored "
                    "in KV cache (%lld). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when "
                    "initializing the engine.",
                    static_cast<long long>(*in.max_model_len), static_cast<long long>(r.estimated_max_model_len));
    }
    if (r.max_len_too_long && !r.fails) {
      r.fails = true;
      r.error = buf;
    }
  }
  // The KV cache is allocated after the sizing checks (V0 initialize_cache -> CacheEngine,
  // V1 initialize_kv_cache): where the budget counts this instance alone it can ask for more
  // than is physically free (another process holds the rest; a utilization near 1 on a card
  // whose context and communicators take more than 1 - util), and torch's allocation runs out
  // of memory. The whole-GPU eras charge what was in use to the budget, and the startup check
  // (V1 0.9.1 on) refuses such a budget first.
  if (in.free_at_init_bytes > 0 && r.kv_bytes > 0) {
    const double fixed_phys = in.weights_bytes + in.non_torch_bytes;
    r.max_util_physical =
        std::min(1.0, FloorHundredths((in.free_at_init_bytes - fixed_phys + r.non_kv_bytes + r.graphs_in_budget_bytes) /
                                      in.total_bytes));
    if (!r.fails && fixed_phys + r.kv_bytes > in.free_at_init_bytes) {
      r.kv_alloc_oom = true;
      r.fails = true;
      r.error = "CUDA out of memory allocating the KV cache (" + FormatGiB(r.kv_bytes) + " a rank): the weights and "
                "non-torch memory leave " + FormatGiB(in.free_at_init_bytes - fixed_phys) + " of the " +
                FormatGiB(in.free_at_init_bytes) + " free at init; the budget (" + PyFloat(util) +
                " x total) asks more than the GPU has free";
    }
  }
  // CUDA graphs outside the budget (V0, V1 < 0.21) are captured after the KV cache is
  // allocated, from what is left: free_at_init - weights - non-torch - KV (the activation
  // peak is released by then). vllm-source.md §1.3 "Implication".
  if (in.era != VllmEra::kV1GraphsInBudget && in.cuda_graph_bytes > 0 && in.free_at_init_bytes > 0) {
    double left = in.free_at_init_bytes - in.weights_bytes - in.non_torch_bytes - std::max(r.kv_bytes, 0.0);
    r.left_for_graphs_bytes = left;
    if (in.cuda_graph_bytes > left) r.graphs_overflow = true;
  }
  // The sampler warm-up comes last, from what the weights, non-torch memory, the KV cache
  // and the graphs (inside the budget or not, both are allocated by then) leave; the
  // profiling run's peak is released.
  if (in.sampler_warmup_bytes > 0 && in.free_at_init_bytes > 0 && !r.fails) {
    r.left_for_sampler_bytes = in.free_at_init_bytes - in.weights_bytes - in.non_torch_bytes - std::max(r.kv_bytes, 0.0) -
                               in.cuda_graph_bytes;
    if (!r.graphs_overflow && in.sampler_warmup_bytes > r.left_for_sampler_bytes) {
      r.sampler_warmup_fails = true;
      r.fails = true;
      r.error = "CUDA out of memory occurred when warming up sampler with " +
                std::to_string(in.sampler_warmup_requests) +
                " dummy requests. Please try lowering `max_num_seqs` or `gpu_memory_utilization` when initializing "
                "the engine.";
    } else if (!r.graphs_overflow && in.sampler_warmup_high_bytes > r.left_for_sampler_bytes) {
      r.sampler_warmup_may_fail = true;  // the launch is not vouched for (launch_plan.cc)
    }
  }
  return r;
}

bool VllmKvSizeFromConcurrency(std::string_view version) {
  // vllm#41069 (e68fa1b9, main 2026-04-28): a v0.20.0 launch still logs 36 blocks x 2096
  // (75,456 tokens, 3.87x of 65,536) for Qwen3.6-35B-A3B, a v0.20.2 one 286,007 tokens =
  // 1.12x of 256,000 for Gemma-4; 0.20.1 is taken as the first with it (inferred).
  auto v = ParseVersion(version);
  return v.ok() && CompareVersions(*v, {0, 20, 1}) >= 0;
}

int64_t VllmSlidingReserveTokens(std::string_view version, int64_t max_num_batched_tokens) {
  // SlidingWindowSpec.max_admission_blocks_per_request(max_in_flight_tokens, max_model_len)
  // with VllmConfig.max_in_flight_tokens = max_concurrent_batches x max_num_batched_tokens
  // (vllm#47728, merged 2026-07; 0.26.0 taken as the first release with it, inferred: the
  // MedGemma-27B launch on 0.26.0 logs 188,347 tokens = 17,307 blocks / 6,022 a request at
  // 65,536, i.e. cdiv(1023 + 4096, 16) + 1 blocks a sliding group, 4,096 = 2 x 2,048).
  // Before: window - 1 + max_num_batched_tokens (kv_cache_interface.py at 4ff865c3, 2026-05).
  auto v = ParseVersion(version);
  const bool in_flight = v.ok() && CompareVersions(*v, {0, 26}) >= 0;
  return in_flight ? 2 * max_num_batched_tokens : max_num_batched_tokens;
}

}  // namespace tpt::memory
