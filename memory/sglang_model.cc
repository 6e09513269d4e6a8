// sglang_model.cc: SGLang's KV pool sizing (profile_max_num_token) by era, the
// "Not enough memory" failure, the minimum viable --mem-fraction-static and the value
// that serves (the default fraction: sglang_default_fraction.cc). Every formula cites
// docs/knowledge/sglang-source.md.
#include <cmath>
#include <cstdio>
#include <string>

#include "memory/memory_model.h"
#include "memory/numeric.h"
#include "memory/sglang_default_fraction.h"

namespace tpt::memory {
namespace {

using internal::CeilHundredths;
using internal::PyFloat;

// Python's a // b for integers (floor toward -inf).
int64_t FloorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

}  // namespace

const char* SglangEraName(SglangEra era) {
  switch (era) {
    case SglangEra::kV01: return "v0.1 (early 2024)";
    case SglangEra::kV0117: return "v0.1.17 (June 2024)";
    case SglangEra::kV02: return "v0.2-v0.4 (Aug 2024 - mid 2025)";
    case SglangEra::kV05: return "v0.5 (late 2025)";
    case SglangEra::kY2026: return "2026 (>= v0.5.7)";
  }
  return "?";
}

StatusOr<SglangEra> SglangEraForVersion(std::string_view version) {
  auto v = ParseVersion(version);
  if (!v.ok()) return v.status();
  // Release boundaries from sglang-source.md §1.2: (a) <= v0.1.16 (router/model_runner.py),
  // (b) v0.1.17/0.1.18 controller/model_runner.py, (c) v0.2 .. v0.4.x, (d) v0.5.x late 2025,
  // (e) 2026. The 2026 boundary (v0.5.7, Jan 2026) is inferred from dated corpus versions.
  if (CompareVersions(*v, {0, 1, 17}) < 0) return SglangEra::kV01;
  if (CompareVersions(*v, {0, 2}) < 0) return SglangEra::kV0117;
  if (CompareVersions(*v, {0, 5}) < 0) return SglangEra::kV02;
  if (CompareVersions(*v, {0, 5, 7}) < 0) return SglangEra::kV05;
  return SglangEra::kY2026;
}

StatusOr<int64_t> SglangCellBytes(const KvDims& d, int attn_tp, SglangEra era) {
  if (d.layers <= 0) return InvalidArgumentError("KV dims: layers must be > 0 (got " + std::to_string(d.layers) + ")");
  if (attn_tp <= 0) return InvalidArgumentError("KV dims: tensor parallel size must be > 0");
  if (!(d.dtype_bytes > 0)) return InvalidArgumentError("KV dims: dtype bytes must be > 0");
  bool fp16_only = era == SglangEra::kV01 || era == SglangEra::kV0117;  // "* 2 * 2": fp16 hard-coded
  double elem = fp16_only ? 2.0 : d.dtype_bytes;
  bool fp4 = elem < 1.0 && (era == SglangEra::kV05 || era == SglangEra::kY2026);
  if (elem < 1.0 && !fp4) {
    return InvalidArgumentError(std::string("KV dims: an fp4 KV cache does not exist in SGLang ") + SglangEraName(era));
  }
  if (d.IsMla()) {
    // §1.2(c)/(d): (kv_lora_rank + qk_rope_head_dim) x layers x elem, every rank holds
    // every token. FP4: cell//2 + ((kv_lora_rank + rope)//16) x layers x kv_size(1 byte).
    if (fp16_only) {
      return InvalidArgumentError(std::string("KV dims: MLA pools do not exist in SGLang ") + SglangEraName(era) +
                                  "; pass --kv-heads/--head-dim or a version >= 0.2");
    }
    int64_t width = static_cast<int64_t>(d.kv_lora_rank) + d.qk_rope_head_dim;
    if (fp4) return width * d.layers / 2 + (width / 16) * d.layers;
    return static_cast<int64_t>(std::llround(width * d.layers * elem));
  }
  if (d.kv_heads <= 0 || d.head_dim <= 0) {
    return InvalidArgumentError("KV dims: kv_heads and head_dim must be > 0 for MHA/GQA (or give kv_lora_rank for MLA)");
  }
  int64_t heads;
  if (era == SglangEra::kV01) {
    // §1.2(a): head_num = num_key_value_heads // tp, no replication.
    heads = d.kv_heads / attn_tp;
    if (heads == 0) {
      return InvalidArgumentError("KV dims: SGLang v0.1 divides " + std::to_string(d.kv_heads) + " KV heads by tp " +
                                  std::to_string(attn_tp) + " to 0 (cell size 0: the server crashes dividing by it)");
    }
  } else {
    heads = KvHeadsPerRank(d.kv_heads, attn_tp);  // §1.2(b): get_num_kv_heads replicates
  }
  int64_t v_dim = (era == SglangEra::kV05 || era == SglangEra::kY2026) && d.v_head_dim > 0 ? d.v_head_dim : d.head_dim;
  int64_t elems = heads * (d.head_dim + v_dim) * d.layers;  // K and V
  if (fp4) {
    // §1.2(d): (cell_size // 2) + (n*k*num_layers*2*kv_size)//16 with the packed x2 dtype (1 byte).
    return elems / 2 + elems / 16;
  }
  return static_cast<int64_t>(std::llround(elems * elem));
}

double SglangMinMemFraction(double free_at_init, double avail, int64_t cell_bytes, int64_t tokens) {
  if (!(free_at_init > 0)) return 1.0;
  double need = tokens > 0 ? static_cast<double>(tokens) * static_cast<double>(cell_bytes) : 0.0;
  // rest = avail - free x (1 - f) >= need  <=>  f >= 1 - (avail - need) / free.
  double f = CeilHundredths(1.0 - (avail - need) / free_at_init);
  if (f < 0.01) f = 0.01;
  // The pool needs rest > 0 (tokens = 0) or rest >= need: step past an exact boundary.
  double rest = avail - free_at_init * (1.0 - f);
  if (tokens > 0 ? rest < need : rest <= 0) f += 0.01;
  return std::round(f * 100.0) / 100.0;
}

StatusOr<SglangKvResult> SglangKvPool(const SglangKvInput& in) {
  if (!(in.free_at_init_bytes > 0)) {
    return InvalidArgumentError("SGLang: free memory at init must be > 0 (\"Load weight begin. avail mem=\")");
  }
  if (in.avail_after_weights_bytes < 0) {
    return InvalidArgumentError("SGLang: available memory after weights must be >= 0");
  }
  if (!(in.mem_fraction_static > 0 && in.mem_fraction_static <= 1)) {
    return InvalidArgumentError("SGLang: mem_fraction_static must be in (0, 1] (got " +
                                PyFloat(in.mem_fraction_static) + ")");
  }
  if (in.cell_bytes <= 0) return InvalidArgumentError("SGLang: KV cell bytes per token must be > 0");
  if (in.page_size <= 0) return InvalidArgumentError("SGLang: page size must be > 0");

  const double f = in.mem_fraction_static;
  SglangKvResult r;
  // §1.1: rest_memory = available - total_gpu_memory x (1 - mem_fraction_static).
  r.reserved_bytes = in.free_at_init_bytes * (1.0 - f);
  r.rest_bytes = in.avail_after_weights_bytes - r.reserved_bytes;
  // Mamba/linear-attention hybrids: handle_max_mamba_cache (model_runner_kv_cache_mixin.py
  // @ 226149ac, v0.5.x) takes the request states from rest before the KV tokens: with
  // --max-mamba-cache-size N (or --disable-radix-cache) N states, otherwise
  // mamba : KV = mamba_full_memory_ratio (0.9), i.e. int(rest x r / (1 + r) // per_req)
  // states. The KV cell then counts the full-attention layers only.
  double kv_rest = r.rest_bytes;
  double avail_for_kv = in.avail_after_weights_bytes;  // what the remedies solve on
  double eff_cell = static_cast<double>(in.cell_bytes);  // rest bytes per pool token
  if (in.mamba_bytes_per_request > 0) {
    const double ratio = in.mamba_full_memory_ratio;
    if (!(ratio > 0)) return InvalidArgumentError("SGLang: mamba_full_memory_ratio must be > 0");
    int64_t size = 0;
    if (in.max_mamba_cache_size) {
      size = *in.max_mamba_cache_size;
      avail_for_kv -= static_cast<double>(size) * in.mamba_bytes_per_request;
    } else {
      size = r.rest_bytes > 0 ? static_cast<int64_t>(std::floor(r.rest_bytes * ratio / (1 + ratio) /
                                                                in.mamba_bytes_per_request))
                              : 0;
      eff_cell *= 1 + ratio;
    }
    r.max_mamba_cache_size = size;
    r.mamba_bytes = static_cast<double>(size) * in.mamba_bytes_per_request;
    kv_rest -= r.mamba_bytes;
  }
  const int swa_all = in.full_layers + in.swa_layers;
  const bool hybrid_swa = in.full_layers > 0 && in.swa_layers > 0;
  if (hybrid_swa) {
    if (!(in.swa_full_tokens_ratio > 0 && in.swa_full_tokens_ratio <= 1)) {
      return InvalidArgumentError("SGLang: swa_full_tokens_ratio must be in (0, 1]");
    }
    eff_cell = eff_cell * (in.full_layers + in.swa_full_tokens_ratio * in.swa_layers) / swa_all;
  }
  switch (in.era) {
    case SglangEra::kV01:
    case SglangEra::kV0117:
    case SglangEra::kV02:
      // int(rest_memory [x 2^30] // cell_size): float floor division.
      r.profiled_tokens = static_cast<int64_t>(std::floor(kv_rest / static_cast<double>(in.cell_bytes)));
      break;
    case SglangEra::kV05:
    case SglangEra::kY2026:
      // int(rest_memory x 2^30) // cell_size: truncate to int bytes, then floor-divide.
      r.profiled_tokens = FloorDiv(static_cast<int64_t>(std::trunc(kv_rest)), in.cell_bytes);
      break;
  }
  int64_t tokens = r.profiled_tokens;
  if (in.max_total_tokens && in.era != SglangEra::kV01) tokens = std::min(tokens, *in.max_total_tokens);
  if ((in.era == SglangEra::kV05 || in.era == SglangEra::kY2026) && tokens > 0) {
    tokens = tokens / in.page_size * in.page_size;  // §1.2(d) init_memory
  }
  if (hybrid_swa && tokens > 0) {
    // set_num_tokens_hybrid_swa (same file): total = tokens x num_hidden_layers;
    // full = int(total / (ratio x swa_layers + full_layers)), swa = int(full x ratio),
    // both page-rounded; max_total_num_tokens = full. (The 2026 per-kind cell of #18039
    // solves the same equations when both kinds have the same heads.)
    const double total = static_cast<double>(tokens) * swa_all;
    int64_t full = static_cast<int64_t>(total / (in.swa_full_tokens_ratio * in.swa_layers + in.full_layers));
    int64_t swa = static_cast<int64_t>(static_cast<double>(full) * in.swa_full_tokens_ratio);
    r.full_tokens = full / in.page_size * in.page_size;
    r.swa_tokens = swa / in.page_size * in.page_size;
    tokens = r.full_tokens;
  }
  r.max_total_num_tokens = tokens;

  r.min_viable_mem_fraction_static = SglangMinMemFraction(in.free_at_init_bytes, avail_for_kv);
  if (in.context_length && *in.context_length > 0) {
    r.mem_fraction_for_context = SglangMinMemFraction(in.free_at_init_bytes, avail_for_kv,
                                                      static_cast<int64_t>(std::ceil(eff_cell)), *in.context_length);
  }

  if (in.era == SglangEra::kY2026 && kv_rest <= 0) {
    // §1.2(e) _profile_available_bytes: the ValueError pre-check.
    double minimum = 1.0 - in.avail_after_weights_bytes / in.free_at_init_bytes;
    double suggested = std::ceil(minimum * 1000.0) / 1000.0;
    char buf[512];
    std::snprintf(buf, sizeof(buf),
                  "Loaded weights leave no GPU memory for the KV cache under --mem-fraction-static=%s. "
                  "Raise --mem-fraction-static above %.3f (minimum viable = 1 - available/pre = %.4f). "
                  "If using speculative decoding, draft weights are now counted.",
                  PyFloat(f).c_str(), suggested, minimum);
    r.fails = true;
    r.error = buf;
  } else if (tokens <= 0) {
    r.fails = true;
    switch (in.era) {
      case SglangEra::kV01:
        r.error = "Not enought memory. Please try to increase --mem-fraction-static.";
        break;
      case SglangEra::kV0117:
      case SglangEra::kV02:
        r.error = "Not enough memory. Please try to increase --mem-fraction-static.";
        break;
      case SglangEra::kV05:
        r.error = "Not enough memory. Please try to increase --mem-fraction-static. Current value: "
                  "self.server_args.mem_fraction_static=" + PyFloat(f);
        break;
      case SglangEra::kY2026:
        r.error = "Not enough memory. Please try to increase --mem-fraction-static. Current value: "
                  "mem_fraction_static=" + PyFloat(f);
        break;
    }
  }
  if (r.fails) {
    r.max_total_num_tokens = std::min<int64_t>(r.max_total_num_tokens, 0);
    r.kv_pool_bytes = 0;
  } else {
    r.kv_pool_bytes = static_cast<double>(r.max_total_num_tokens) * static_cast<double>(in.cell_bytes);
    if (hybrid_swa) {
      const double per_layer = static_cast<double>(in.cell_bytes) / swa_all;
      r.kv_pool_bytes = per_layer * (static_cast<double>(r.full_tokens) * in.full_layers +
                                     static_cast<double>(r.swa_tokens) * in.swa_layers);
    }
  }
  r.holds_one_context = !in.context_length || r.max_total_num_tokens >= *in.context_length;
  return r;
}

StatusOr<SglangServing> SglangServingFraction(double free_at_init, double avail, const SglangDefaultsInput& in,
                                              int64_t cell_bytes, int64_t context_length) {
  if (!(free_at_init > 0)) return InvalidArgumentError("SGLang: free memory at init must be > 0");
  if (in.tp <= 0 || in.pp <= 0 || in.dp <= 0) return InvalidArgumentError("SGLang: tp, pp and dp must be > 0");
  double gpu_mb = (in.gpu_capacity_bytes > 0 ? in.gpu_capacity_bytes : free_at_init) / kMiB;
  auto [cps, bs] = internal::SglangCapacityDefaults(in.version, gpu_mb, in.tp);
  if (in.chunked_prefill_size && *in.chunked_prefill_size > 0) cps = *in.chunked_prefill_size;
  if (in.cuda_graph_max_bs && *in.cuda_graph_max_bs > 0) bs = *in.cuda_graph_max_bs;
  SglangServing out;
  // SGLang's own headroom: the 0.5.3-0.5.9 reserve (a draft +2 GiB, STANDALONE +6).
  double reserve = internal::SglangReserveMb(in, cps, bs, gpu_mb, 0);
  if (in.speculative_algorithm == "STANDALONE") {
    reserve += 6 * 1024;
  } else if (!in.speculative_algorithm.empty() && in.speculative_algorithm != "NGRAM") {
    reserve += 2 * 1024;
  }
  out.headroom_bytes = reserve * kMiB;
  out.bytes_per_step = free_at_init * 0.01;
  out.floor = SglangMinMemFraction(free_at_init, avail);
  // The largest f whose reserved slice (1 - f) x free still holds the headroom.
  double f = std::floor((1.0 - out.headroom_bytes / free_at_init) * 100.0 + 1e-9) / 100.0;
  if (cell_bytes > 0 && context_length > 0) {
    double ctx = SglangMinMemFraction(free_at_init, avail, cell_bytes, context_length);
    if (ctx > f && ctx <= 0.99) {
      f = ctx;
      out.for_context = true;
    }
  }
  if (f < out.floor) {
    out.short_of_headroom = true;
    f = out.floor;
  }
  f = std::min(f, 0.99);
  out.mem_fraction_static = std::round(f * 100.0) / 100.0;
  out.kv_pool_bytes = avail - free_at_init * (1.0 - out.mem_fraction_static);
  return out;
}

}  // namespace tpt::memory
