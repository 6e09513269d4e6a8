// memory_calls.cc: named adapters from rule inputs to memory/memory_model.h.
#include "rules/memory_calls.h"

#include <cmath>

#include "memory/memory_model.h"
#include "memory/numeric.h"

namespace tpt {

namespace {

using memory::kGiB;

std::optional<double> Num(const ModelValues& in, const char* key) {
  auto it = in.find(key);
  if (it == in.end() || !it->second.is_number() || std::isnan(it->second.number())) return std::nullopt;
  return it->second.number();
}

std::string Str(const ModelValues& in, const char* key) {
  auto it = in.find(key);
  return it == in.end() || it->second.is_null() ? std::string() : it->second.ToString();
}

// SGLang KV pool at startup: sglang-source.md §1.1 via memory::SglangKvPool.
void RunSglangKvPool(const ModelValues& in, ModelValues* out) {
  auto free_init = Num(in, "free_at_init_bytes");
  auto avail = Num(in, "avail_after_weights_bytes");
  auto f = Num(in, "mem_fraction_static");
  if (free_init) (*out)["free_at_init_gib"] = *free_init / kGiB;
  if (avail) (*out)["avail_after_weights_gib"] = *avail / kGiB;
  if (f) (*out)["mem_fraction_static"] = *f;
  if (!free_init || !avail || *free_init <= 0) return;
  (*out)["min_viable_mem_fraction_static"] = memory::SglangMinMemFraction(*free_init, *avail);
  if (!f) return;
  memory::SglangKvInput kv;
  std::string version = Str(in, "version");
  if (!version.empty())
    if (auto era = memory::SglangEraForVersion(version); era.ok()) kv.era = *era;
  kv.free_at_init_bytes = *free_init;
  kv.avail_after_weights_bytes = *avail;
  kv.mem_fraction_static = *f;
  auto cell = Num(in, "cell_bytes");
  kv.cell_bytes = cell && *cell > 0 ? static_cast<int64_t>(*cell) : 1;
  if (auto ctx = Num(in, "context_length"); ctx && cell) kv.context_length = static_cast<int64_t>(*ctx);
  auto r = memory::SglangKvPool(kv);
  if (!r.ok()) return;
  (*out)["reserved_gib"] = r->reserved_bytes / kGiB;
  (*out)["rest_gib"] = r->rest_bytes / kGiB;
  (*out)["shortfall_gib"] = r->rest_bytes < 0 ? -r->rest_bytes / kGiB : 0.0;
  (*out)["kv_pool_fails"] = r->fails;
  (*out)["min_viable_mem_fraction_static"] = r->min_viable_mem_fraction_static;
  if (cell && *cell > 0) {
    (*out)["max_total_num_tokens"] = static_cast<double>(r->max_total_num_tokens);
    if (r->mem_fraction_for_context) (*out)["mem_fraction_for_context"] = *r->mem_fraction_for_context;
  }
  // The value that serves (memory_model.h SglangServingFraction), given the parallel sizes.
  auto tp = Num(in, "tp");
  if (!tp || *tp < 1) return;
  memory::SglangDefaultsInput d;
  d.version = version;
  d.tp = static_cast<int>(*tp);
  if (auto pp = Num(in, "pp"); pp && *pp >= 1) d.pp = static_cast<int>(*pp);
  if (auto c = Num(in, "chunked_prefill_size"); c && *c > 0) d.chunked_prefill_size = static_cast<int>(*c);
  if (auto b = Num(in, "cuda_graph_max_bs"); b && *b > 0) d.cuda_graph_max_bs = static_cast<int>(*b);
  std::string spec = Str(in, "speculative_algorithm");
  if (spec != "None" && spec != "null") d.speculative_algorithm = spec;
  if (auto g = Num(in, "gpu_total_bytes"); g && *g > 0) d.gpu_capacity_bytes = *g;
  int64_t ctx = 0;
  if (auto c = Num(in, "context_length"); c && cell && *cell > 0) ctx = static_cast<int64_t>(*c);
  auto s = memory::SglangServingFraction(*free_init, *avail, d, cell && *cell > 0 ? static_cast<int64_t>(*cell) : 0, ctx);
  if (!s.ok()) return;
  (*out)["serving_mem_fraction_static"] = s->mem_fraction_static;
  (*out)["kv_pool_gib_at_serving"] = s->kv_pool_bytes / kGiB;
  (*out)["kv_gib_per_step"] = s->bytes_per_step / kGiB;
  (*out)["headroom_gib"] = s->headroom_bytes / kGiB;
  (*out)["serving_short_of_headroom"] = s->short_of_headroom;
}

// vLLM KV budget: vllm-source.md §1.2/§1.3 via memory::VllmKvPool.
void RunVllmKv(const ModelValues& in, ModelValues* out) {
  memory::VllmKvInput kv;
  std::string version = Str(in, "version");
  if (!version.empty())
    if (auto era = memory::VllmEraForVersion(version, Str(in, "engine")); era.ok()) kv.era = *era;
  auto total = Num(in, "total_bytes");
  auto util = Num(in, "gpu_memory_utilization");
  if (total) (*out)["total_gib"] = *total / kGiB;
  if (util) (*out)["gpu_memory_utilization"] = *util;
  auto free_init = Num(in, "free_at_init_bytes");
  if (free_init) (*out)["free_at_init_gib"] = *free_init / kGiB;
  if (!total || !util || *total <= 0) return;
  kv.total_bytes = *total;
  kv.gpu_memory_utilization = *util;
  kv.free_at_init_bytes = free_init ? *free_init : *total;
  if (auto w = Num(in, "weights_bytes")) kv.weights_bytes = *w, (*out)["weights_gib"] = *w / kGiB;
  if (auto a = Num(in, "activation_peak_bytes")) kv.activation_peak_bytes = *a;
  if (auto n = Num(in, "non_torch_bytes")) kv.non_torch_bytes = *n;
  if (auto g = Num(in, "cuda_graph_bytes")) kv.cuda_graph_bytes = *g;
  auto bpt = Num(in, "bytes_per_token");
  kv.bytes_per_token = bpt && *bpt > 0 ? static_cast<int64_t>(*bpt) : 1;
  if (auto m = Num(in, "max_model_len"); m && bpt) kv.max_model_len = static_cast<int64_t>(*m);
  auto r = memory::VllmKvPool(kv);
  if (!r.ok()) return;
  (*out)["requested_gib"] = r->requested_bytes / kGiB;
  (*out)["non_kv_gib"] = r->non_kv_bytes / kGiB;
  (*out)["kv_cache_gib"] = r->kv_bytes / kGiB;
  (*out)["min_viable_gpu_memory_utilization"] = r->min_util_one_block;
  (*out)["max_startup_gpu_memory_utilization"] = r->max_util_startup;
  // The most a utilization can reach on this card: what is free when the
  // worker starts (the log's figure, else the total less the CUDA/torch
  // context, memory::DefaultFreeAtInit): a budget above it cannot be had
  // (V1's startup check refuses it; V0 runs out allocating the cache).
  const double free_bound = free_init ? *free_init : memory::DefaultFreeAtInit(*total, 1);
  (*out)["max_reachable_gpu_memory_utilization"] = memory::internal::FloorHundredths(free_bound / *total);
  (*out)["startup_check_fails"] = r->startup_check_fails;
  if (free_init) (*out)["startup_short_gib"] = std::max(0.0, (r->requested_bytes - *free_init) / kGiB);
  if (r->min_util_max_model_len) (*out)["min_gpu_memory_utilization_for_max_model_len"] = *r->min_util_max_model_len;
  if (bpt && *bpt > 0) (*out)["kv_tokens"] = static_cast<double>(r->kv_tokens);
}

// TGI's warm-up prefill: the --max-batch-prefill-tokens that fits the OOM line's free memory
// (memory::TgiPrefillThatFits, tgi_model.cc).
void RunTgiWarmup(const ModelValues& in, ModelValues* out) {
  auto prefill = Num(in, "prefill_tokens");
  auto asked = Num(in, "asked_bytes");
  auto free = Num(in, "free_bytes");
  if (!prefill || !asked || !free || *prefill < 1 || *asked <= *free) return;
  const int64_t fit = memory::TgiPrefillThatFits(static_cast<int64_t>(*prefill), *asked, *free);
  if (fit <= 0) return;
  (*out)["prefill_that_fits"] = static_cast<double>(fit);
  (*out)["warmup_gib_at_fit"] = *asked / kGiB * static_cast<double>(fit) / *prefill;
}

// LMDeploy TurboMind after its cache was sized (lmdeploy_model.cc): the free memory after
// the weights from the logged blocks (blocks x block / ratio, to one block), what the
// ratio left, and the cache_max_entry_count that serves.
void RunLmdeployKv(const ModelValues& in, ModelValues* out) {
  auto blocks = Num(in, "blocks");
  auto block = Num(in, "block_bytes");
  auto f = Num(in, "cache_max_entry_count");
  if (!blocks || !block || !f || *blocks < 1 || *block <= 0 || !(*f > 0 && *f < 1)) return;
  if (memory::LmdeployFractionOfTotal(Str(in, "version"))) return;  // a ratio of the total then
  const double free = *blocks * *block / *f;
  const int tokens = static_cast<int>(Num(in, "block_tokens").value_or(64));
  const int64_t session = static_cast<int64_t>(Num(in, "session_len").value_or(0));
  auto s = memory::LmdeployServingFraction(free, *f, *block, tokens > 0 ? tokens : 64, session);
  if (!s.ok()) return;
  (*out)["free_after_weights_gib"] = free / kGiB;
  (*out)["kv_gib"] = *blocks * *block / kGiB;
  (*out)["left_gib"] = s->left_bytes / kGiB;
  (*out)["serving_cache_max_entry_count"] = s->cache_max_entry_count;
  (*out)["left_at_serving_gib"] = s->left_at_serving_bytes / kGiB;
  (*out)["tokens_at_serving"] = static_cast<double>(s->tokens_at_serving);
  if (session > 0) {
    (*out)["sessions_at_serving"] = static_cast<double>(s->tokens_at_serving) / session;
    if (s->floor < 1) (*out)["floor_cache_max_entry_count"] = s->floor;
  }
  (*out)["gib_per_step"] = s->bytes_per_step / kGiB;
}

// TensorRT-LLM's final KV cache after the estimation pass (trtllm_model.cc): what the
// fraction was of, and the fraction that serves with the free memory at its creation.
void RunTrtllmKv(const ModelValues& in, ModelValues* out) {
  auto kv = Num(in, "kv_cache_bytes");
  auto free = Num(in, "free_at_creation_bytes");
  const double f = Num(in, "free_gpu_memory_fraction").value_or(memory::kTrtllmDefaultFreeGpuMemoryFraction);
  if (!kv || !free || *kv <= 0 || !(f > 0 && f < 1)) return;
  const double available = *kv / f;
  const int64_t bpt = static_cast<int64_t>(Num(in, "kv_bytes_per_token").value_or(0));
  auto s = memory::TrtllmServingFraction(available, f, *free, bpt);
  if (!s.ok()) return;
  (*out)["available_gib"] = available / kGiB;
  (*out)["kv_cache_gib"] = *kv / kGiB;
  (*out)["fraction"] = f;
  (*out)["free_at_creation_gib"] = *free / kGiB;
  (*out)["creation_fails"] = *kv > *free;
  (*out)["headroom_gib"] = s->headroom_bytes / kGiB;
  (*out)["gib_per_step"] = s->bytes_per_step / kGiB;
  if (s->fraction <= 0) return;
  (*out)["serving_fraction"] = s->fraction;
  (*out)["kv_gib_at_serving"] = s->kv_bytes / kGiB;
  if (bpt > 0) (*out)["tokens_at_serving"] = static_cast<double>(s->kv_tokens);
}

const std::vector<ModelSpec>& Registry() {
  static const std::vector<ModelSpec> specs = {
      {"sglang_kv_pool",
       {"version", "free_at_init_bytes", "avail_after_weights_bytes", "mem_fraction_static", "cell_bytes",
        "context_length", "tp", "pp", "chunked_prefill_size", "cuda_graph_max_bs", "speculative_algorithm",
        "gpu_total_bytes"},
       {"free_at_init_gib", "avail_after_weights_gib", "mem_fraction_static", "reserved_gib", "rest_gib",
        "shortfall_gib", "kv_pool_fails", "min_viable_mem_fraction_static", "max_total_num_tokens",
        "mem_fraction_for_context", "serving_mem_fraction_static", "kv_pool_gib_at_serving", "kv_gib_per_step",
        "headroom_gib", "serving_short_of_headroom"},
       RunSglangKvPool},
      {"vllm_kv",
       {"version", "engine", "total_bytes", "free_at_init_bytes", "gpu_memory_utilization", "weights_bytes",
        "activation_peak_bytes", "non_torch_bytes", "cuda_graph_bytes", "bytes_per_token", "max_model_len"},
       {"total_gib", "gpu_memory_utilization", "free_at_init_gib", "weights_gib", "requested_gib", "non_kv_gib",
        "kv_cache_gib", "min_viable_gpu_memory_utilization", "max_startup_gpu_memory_utilization",
        "startup_check_fails", "startup_short_gib", "min_gpu_memory_utilization_for_max_model_len", "kv_tokens",
        "max_reachable_gpu_memory_utilization"},
       RunVllmKv},
      {"tgi_warmup", {"prefill_tokens", "asked_bytes", "free_bytes"}, {"prefill_that_fits", "warmup_gib_at_fit"},
       RunTgiWarmup},
      {"lmdeploy_kv",
       {"version", "blocks", "block_bytes", "cache_max_entry_count", "block_tokens", "session_len"},
       {"free_after_weights_gib", "kv_gib", "left_gib", "serving_cache_max_entry_count", "left_at_serving_gib",
        "tokens_at_serving", "sessions_at_serving", "floor_cache_max_entry_count", "gib_per_step"},
       RunLmdeployKv},
      {"trtllm_kv",
       {"kv_cache_bytes", "free_gpu_memory_fraction", "free_at_creation_bytes", "kv_bytes_per_token"},
       {"available_gib", "kv_cache_gib", "fraction", "free_at_creation_gib", "creation_fails", "headroom_gib",
        "gib_per_step", "serving_fraction", "kv_gib_at_serving", "tokens_at_serving"},
       RunTrtllmKv},
  };
  return specs;
}

}  // namespace

const ModelSpec* FindModel(std::string_view name) {
  for (const auto& s : Registry())
    if (s.name == name) return &s;
  return nullptr;
}

std::string KnownModelNames() {
  std::string out;
  for (const auto& s : Registry()) out += (out.empty() ? "" : ", ") + s.name;
  return out;
}

}  // namespace tpt
