// kv_inputs.cc: RunFacts -> memory-model inputs -> KvArithmetic (see kv_inputs.h).
#include "rules/diff/kv_inputs.h"

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>

#include "memory/memory_model.h"

namespace tpt::diff {

std::string FormatBytes(double bytes) {
  char buf[48];
  double a = std::fabs(bytes);
  if (a >= memory::kGiB) {
    std::snprintf(buf, sizeof(buf), "%.2f GiB", bytes / memory::kGiB);
  } else {
    std::snprintf(buf, sizeof(buf), "%.1f MiB", bytes / memory::kMiB);
  }
  return buf;
}

namespace {

using json = nlohmann::json;
namespace mem = tpt::memory;

// vLLM's EngineArgs default; "non-default args" leaves it out when unchanged
// (vllm-source.md §2.3).
constexpr double kVllmDefaultUtilization = 0.9;

std::optional<double> MinOf(const std::map<int, RankMemory>& ranks, std::optional<double> RankMemory::*field) {
  std::optional<double> best;
  for (const auto& [rank, m] : ranks) {
    if (m.*field && (!best || *(m.*field) < *best)) best = m.*field;
  }
  return best;
}

std::optional<double> MaxOf(const std::map<int, RankMemory>& ranks, std::optional<double> RankMemory::*field) {
  std::optional<double> best;
  for (const auto& [rank, m] : ranks) {
    if (m.*field && (!best || *(m.*field) > *best)) best = m.*field;
  }
  return best;
}

std::optional<double> ProfileNumber(const RunFacts& f, const char* name) {
  auto it = f.profile.find(name);
  if (it == f.profile.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

// Runs of one model on one kind of GPU with the same split: numbers that do not
// depend on the difference (cell size, card total) may be borrowed.
bool SameShape(const RunFacts& a, const RunFacts& b) {
  for (const char* key : {"model", "tp", "pp", "gpu", "flag.kv_cache_dtype", "flag.quantization"}) {
    auto x = a.config.find(key), y = b.config.find(key);
    bool hx = x != a.config.end(), hy = y != b.config.end();
    if (hx && hy && x->second != y->second) return false;
  }
  return a.framework == b.framework;
}

// Bytes per token per rank from a logged pool: K+V bytes / tokens.
int64_t CellFromPool(const RunFacts& f) {
  auto tokens = ProfileNumber(f, "kv_tokens");
  if (!tokens || *tokens <= 0) return 0;
  for (const auto& [rank, m] : f.ranks) {
    if (m.kv_pool && *m.kv_pool > 0) return std::llround(*m.kv_pool / *tokens);
  }
  return 0;
}

std::string Printf(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string Printf(const char* fmt, ...) {
  char buf[256];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof(buf), fmt, ap);
  va_end(ap);
  return buf;
}

}  // namespace

KvInputs GatherKvInputs(const RunFacts& run, const RunFacts* other) {
  KvInputs in;
  in.framework = run.framework;
  in.version = run.version;
  in.ranks = run.ranks;
  const bool borrow = other && SameShape(run, *other);
  if (in.version.empty() && other && other->framework == run.framework && !other->version.empty()) {
    in.version = other->version;
    in.notes.push_back("version not printed: " + other->version + " of the other run assumed");
  }
  in.mem_fraction_static = run.Number("flag.mem_fraction_static");
  if (!in.mem_fraction_static && run.failure) {
    if (auto it = run.failure->fields.find("current_fraction"); it != run.failure->fields.end() && it->is_number()) {
      in.mem_fraction_static = it->get<double>();
    }
  }
  in.gpu_memory_utilization = run.Number("flag.gpu_memory_utilization");
  if (!in.gpu_memory_utilization && other && other->framework == run.framework &&
      other->Number("flag.gpu_memory_utilization")) {
    // Not printed (vLLM's "non-default args" leaves it out at its default, or
    // the line was not read): the other run's value, said in the note.
    in.gpu_memory_utilization = other->Number("flag.gpu_memory_utilization");
    in.notes.push_back("gpu_memory_utilization not printed: the other run's " +
                       std::to_string(*in.gpu_memory_utilization).substr(0, 4) + " assumed");
  }
  in.total_bytes = run.Number("gpu_total_bytes");
  if (!in.total_bytes && borrow && other->Number("gpu_total_bytes")) {
    in.total_bytes = other->Number("gpu_total_bytes");
    in.notes.push_back("GPU total not printed: the other run's " + FormatBytes(*in.total_bytes) + " (same GPU)");
  }
  for (const char* key : {"flag.max_model_len", "flag.max_seq_len", "flag.context_length"}) {
    if (auto v = run.Number(key); v && !in.max_model_len) in.max_model_len = static_cast<int64_t>(*v);
  }
  if (!in.max_model_len && run.failure) {
    if (auto it = run.failure->fields.find("max_seq_len"); it != run.failure->fields.end() && it->is_number()) {
      in.max_model_len = it->get<int64_t>();
    }
  }
  in.cell_bytes = CellFromPool(run);
  if (in.cell_bytes == 0 && borrow) {
    in.cell_bytes = CellFromPool(*other);
    if (in.cell_bytes > 0) in.notes.push_back("KV bytes per token from the other run's pool (same model and TP)");
  }

  if (run.framework == "trtllm") {
    in.trtllm_kv_bytes = ProfileNumber(run, "kv_estimate_bytes").value_or(0);
    in.trtllm_free_at_creation_bytes = ProfileNumber(run, "free_before_create_bytes").value_or(0);
    in.free_gpu_memory_fraction = ProfileNumber(run, "free_gpu_memory_fraction");
    if (!in.free_gpu_memory_fraction) in.free_gpu_memory_fraction = run.Number("flag.free_gpu_memory_fraction");
    if (in.cell_bytes == 0) in.cell_bytes = static_cast<int64_t>(ProfileNumber(run, "kv_bytes_per_token").value_or(0));
  }
  if (run.framework == "lmdeploy") {
    in.lmdeploy_blocks = ProfileNumber(run, "kv_blocks").value_or(0);
    in.lmdeploy_block_bytes = ProfileNumber(run, "kv_block_bytes").value_or(0);
    in.cache_max_entry_count = run.Number("flag.cache_max_entry_count");
  }
  if (run.framework == "vllm") {
    // Activation peak and non-torch memory: printed by V0 and by the V1
    // kv-cache-memory hint; else borrowed; else inferred from the logged KV bytes.
    auto act = ProfileNumber(run, "activation_peak_bytes");
    auto non_torch = ProfileNumber(run, "non_torch_bytes");
    // What vLLM >= 0.21 charges is its estimate; older versions print only the actual pool.
    auto graphs = ProfileNumber(run, "cuda_graph_estimated_bytes");
    if (!graphs) graphs = ProfileNumber(run, "cuda_graph_bytes");
    if (!graphs) graphs = MaxOf(run.ranks, &RankMemory::graphs_usage);
    if (borrow && !act && !non_torch) {
      act = ProfileNumber(*other, "activation_peak_bytes");
      non_torch = ProfileNumber(*other, "non_torch_bytes");
      if (act || non_torch) in.notes.push_back("activation peak and non-torch memory from the other run (same model and TP)");
    }
    if (borrow && !graphs) {
      graphs = ProfileNumber(*other, "cuda_graph_estimated_bytes");
      if (!graphs) graphs = ProfileNumber(*other, "cuda_graph_bytes");
      if (graphs) in.notes.push_back("CUDA graph memory from the other run");
    }
    in.activation_peak_bytes = act.value_or(0);
    in.non_torch_bytes = non_torch.value_or(0);
    in.cuda_graph_bytes = graphs.value_or(0);
    bool all_ranks_lack_weights = !MaxOf(in.ranks, &RankMemory::weights_usage);
    if (all_ranks_lack_weights && borrow) {
      for (auto& [rank, m] : in.ranks) {
        auto it = other->ranks.find(rank);
        if (it != other->ranks.end()) m.weights_usage = it->second.weights_usage;
      }
      if (MaxOf(in.ranks, &RankMemory::weights_usage)) in.notes.push_back("weights from the other run");
    }
    if (!act && !non_torch) {
      auto logged_kv = ProfileNumber(run, "kv_cache_bytes");
      if (logged_kv) {
        KvInputs probe = in;
        probe.notes.clear();
        KvArithmetic k = EvaluateKv(probe);
        if (k.computed && k.results.contains("kv_bytes")) {
          double lump = k.results["kv_bytes"].get<double>() - *logged_kv;
          if (lump > 0) {
            in.activation_peak_bytes = lump;
            in.notes.push_back("activation peak + non-torch memory not printed: " + FormatBytes(lump) +
                               " inferred from the logged KV cache memory " + FormatBytes(*logged_kv));
          }
        }
      }
    }
  }
  return in;
}

KvArithmetic EvaluateKv(const KvInputs& in) {
  KvArithmetic k;
  k.framework = in.framework;
  k.version = in.version;
  auto note = [&](const std::string& s) {
    if (!k.note.empty()) k.note += "; ";
    k.note += s;
  };
  for (const auto& n : in.notes) note(n);

  if (in.framework == "sglang") {
    auto era = mem::SglangEraForVersion(in.version);
    if (!era.ok()) {
      note("no SGLang version in the log; the rest formula is the same in every era, v0.5 assumed");
      era = mem::SglangEra::kV05;
    }
    k.era = mem::SglangEraName(*era);
    // pre_model_load_memory: free after distributed init, min over ranks (sglang-source.md §1.1).
    auto free_init = MinOf(in.ranks, &RankMemory::free_after_dist_init);
    if (!free_init) free_init = MinOf(in.ranks, &RankMemory::free_at_init);
    auto avail = MinOf(in.ranks, &RankMemory::free_after_weights);
    k.formula = "rest = avail_after_weights - free_at_init x (1 - mem_fraction_static)  (min over ranks; SGLang " +
                k.era + ")";
    if (!free_init || !avail || !in.mem_fraction_static) {
      note(std::string("cannot compute: the log does not print ") +
           (!free_init ? "free memory at init" : !avail ? "free memory after weights" : "mem_fraction_static"));
      return k;
    }
    mem::SglangKvInput si;
    si.era = *era;
    si.free_at_init_bytes = *free_init;
    si.avail_after_weights_bytes = std::max(0.0, *avail);
    si.mem_fraction_static = *in.mem_fraction_static;
    // Tokens need the cell size; rest does not. Without one, tokens are not reported.
    si.cell_bytes = in.cell_bytes > 0 ? in.cell_bytes : 1;
    auto r = mem::SglangKvPool(si);
    if (!r.ok()) {
      note("memory model: " + r.status().message());
      return k;
    }
    k.computed = true;
    k.inputs = {{"free_at_init_bytes", *free_init},
                {"avail_after_weights_bytes", *avail},
                {"mem_fraction_static", *in.mem_fraction_static}};
    if (in.cell_bytes > 0) k.inputs["bytes_per_token"] = in.cell_bytes;
    k.results = {{"reserved_bytes", r->reserved_bytes},
                 {"rest_bytes", r->rest_bytes},
                 {"min_viable_mem_fraction_static", r->min_viable_mem_fraction_static}};
    if (in.cell_bytes > 0) {
      k.results["profiled_tokens"] = r->profiled_tokens;
      k.results["max_total_num_tokens"] = r->max_total_num_tokens;
    }
    k.budget_bytes = r->rest_bytes;
    k.fails = r->fails;
    k.shortfall_bytes = r->fails ? std::max(0.0, -r->rest_bytes) : 0;
    k.arithmetic = Printf("rest = %.2f - %.2f x (1 - %g) = %+.2f GiB", *avail / mem::kGiB, *free_init / mem::kGiB,
                          *in.mem_fraction_static, r->rest_bytes / mem::kGiB);
    return k;
  }

  if (in.framework == "vllm") {
    auto era = mem::VllmEraForVersion(in.version);
    if (!era.ok()) {
      note("cannot compute: " + era.status().message());
      return k;
    }
    k.era = mem::VllmEraName(*era);
    k.formula = "kv = total x gpu_memory_utilization - (weights + activation peak + non-torch)" +
                std::string(*era == mem::VllmEra::kV1GraphsInBudget ? " - CUDA graphs" : "") + "  (vLLM " + k.era +
                ")";
    double util = in.gpu_memory_utilization.value_or(kVllmDefaultUtilization);
    if (!in.gpu_memory_utilization) note("gpu_memory_utilization not printed: vLLM's default 0.9");
    auto weights = MaxOf(in.ranks, &RankMemory::weights_usage);
    if (!in.total_bytes || !weights) {
      note(std::string("cannot compute: the log does not print ") + (!in.total_bytes ? "the GPU total" : "weights"));
      return k;
    }
    mem::VllmKvInput vi;
    vi.era = *era;
    vi.total_bytes = *in.total_bytes;
    vi.free_at_init_bytes = std::min(MinOf(in.ranks, &RankMemory::free_at_init).value_or(0), *in.total_bytes);
    vi.gpu_memory_utilization = util;
    vi.weights_bytes = *weights;
    vi.activation_peak_bytes = in.activation_peak_bytes;
    vi.non_torch_bytes = in.non_torch_bytes;
    vi.cuda_graph_bytes = in.cuda_graph_bytes;
    vi.bytes_per_token = in.cell_bytes > 0 ? in.cell_bytes : 1;
    if (in.cell_bytes > 0) vi.max_model_len = in.max_model_len;
    auto r = mem::VllmKvPool(vi);
    if (!r.ok()) {
      note("memory model: " + r.status().message());
      return k;
    }
    k.computed = true;
    k.inputs = {{"total_bytes", vi.total_bytes},
                {"gpu_memory_utilization", util},
                {"weights_bytes", vi.weights_bytes},
                {"activation_peak_bytes", vi.activation_peak_bytes},
                {"non_torch_bytes", vi.non_torch_bytes},
                {"cuda_graph_bytes", vi.cuda_graph_bytes}};
    if (vi.free_at_init_bytes > 0) k.inputs["free_at_init_bytes"] = vi.free_at_init_bytes;
    if (in.cell_bytes > 0) k.inputs["bytes_per_token"] = in.cell_bytes;
    if (vi.max_model_len) k.inputs["max_model_len"] = *vi.max_model_len;
    k.results = {{"requested_bytes", r->requested_bytes},
                 {"non_kv_bytes", r->non_kv_bytes},
                 {"graphs_in_budget_bytes", r->graphs_in_budget_bytes},
                 {"kv_bytes", r->kv_bytes}};
    if (in.cell_bytes > 0) k.results["kv_tokens"] = r->kv_tokens;
    if (!r->error.empty()) k.results["error"] = r->error;
    k.budget_bytes = r->kv_bytes;
    k.fails = r->fails;
    k.arithmetic = Printf("kv = %.2f x %g - (%.2f + %.2f + %.2f)", vi.total_bytes / mem::kGiB, util,
                          vi.weights_bytes / mem::kGiB, vi.activation_peak_bytes / mem::kGiB,
                          vi.non_torch_bytes / mem::kGiB);
    if (r->graphs_in_budget_bytes > 0) k.arithmetic += Printf(" - %.2f", r->graphs_in_budget_bytes / mem::kGiB);
    k.arithmetic += Printf(" = %.2f GiB", r->kv_bytes / mem::kGiB);
    if (vi.max_model_len) {
      // The budget that matters is what one max-length request leaves.
      double needed = static_cast<double>(*vi.max_model_len) * static_cast<double>(vi.bytes_per_token);
      k.results["needed_bytes"] = needed;
      k.budget_bytes = r->kv_bytes - needed;
      k.arithmetic += Printf("; one %lld-token request needs %.2f GiB", static_cast<long long>(*vi.max_model_len),
                             needed / mem::kGiB);
    }
    if (r->startup_check_fails) {
      k.shortfall_bytes = r->requested_bytes - vi.free_at_init_bytes;
      k.budget_bytes = vi.free_at_init_bytes - r->requested_bytes;
      k.formula = "startup check: free_at_init >= total x gpu_memory_utilization  (vLLM " + k.era + ")";
      k.arithmetic = Printf("free %.2f GiB < %.2f x %g = %.2f GiB", vi.free_at_init_bytes / mem::kGiB,
                            vi.total_bytes / mem::kGiB, util, r->requested_bytes / mem::kGiB);
    } else if (r->no_cache_blocks) {
      k.shortfall_bytes = std::max(0.0, -r->kv_bytes) + static_cast<double>(vi.bytes_per_token) * 16;
    } else if (r->max_len_too_long) {
      k.shortfall_bytes = -k.budget_bytes;
    }
    return k;
  }
  if (in.framework == "trtllm") {
    // The final KV cache against the free memory at its creation (memory/trtllm_model.cc).
    k.formula = "kv = free_gpu_memory_fraction x available (the estimation pass), created on the free memory left "
                "(TensorRT-LLM)";
    const double f = in.free_gpu_memory_fraction.value_or(mem::kTrtllmDefaultFreeGpuMemoryFraction);
    if (!in.free_gpu_memory_fraction) note("free_gpu_memory_fraction not printed: TensorRT-LLM's default 0.9");
    if (in.trtllm_kv_bytes <= 0) {
      note("cannot compute: the log prints no KV estimate ('Peak memory during memory usage profiling' line)");
      return k;
    }
    mem::TrtllmKvInput ti;
    ti.available_bytes = std::ceil(in.trtllm_kv_bytes / f);
    ti.free_gpu_memory_fraction = f;
    ti.bytes_per_token = in.cell_bytes > 0 ? in.cell_bytes : 1;
    ti.tokens_per_block = 1;
    ti.free_at_creation_bytes = in.trtllm_free_at_creation_bytes;
    auto r = mem::TrtllmKvBlocks(ti);
    if (!r.ok()) {
      note("memory model: " + r.status().message());
      return k;
    }
    k.computed = true;
    k.inputs = {{"available_bytes", ti.available_bytes}, {"free_gpu_memory_fraction", f}};
    if (ti.free_at_creation_bytes > 0) k.inputs["free_at_creation_bytes"] = ti.free_at_creation_bytes;
    k.results = {{"kv_bytes", r->usable_bytes}};
    if (in.cell_bytes > 0) k.results["kv_tokens"] = r->kv_tokens;
    k.arithmetic = Printf("kv = %g x %.2f = %.2f GiB", f, ti.available_bytes / mem::kGiB, r->usable_bytes / mem::kGiB);
    if (ti.free_at_creation_bytes > 0) {
      k.budget_bytes = ti.free_at_creation_bytes - r->usable_bytes;
      k.arithmetic += Printf(", %.2f GiB free at its creation", ti.free_at_creation_bytes / mem::kGiB);
    } else {
      k.budget_bytes = r->usable_bytes;
    }
    k.fails = r->creation_fails;
    k.shortfall_bytes = r->creation_fails ? r->usable_bytes - ti.free_at_creation_bytes : 0;
    return k;
  }
  if (in.framework == "lmdeploy") {
    // TurboMind's cache, a ratio of the free memory after the weights; its run-time buffers
    // get what is left (memory/lmdeploy_model.cc).
    k.formula = "kv = cache_max_entry_count x free after the weights; the run-time buffers get the rest (TurboMind)";
    const double f = in.cache_max_entry_count.value_or(0.8);
    if (!in.cache_max_entry_count) note("cache_max_entry_count not printed: LMDeploy's default 0.8");
    if (in.lmdeploy_blocks <= 0 || in.lmdeploy_block_bytes <= 0 || !(f > 0 && f < 1) ||
        mem::LmdeployFractionOfTotal(in.version)) {
      note("cannot compute: the log prints no BlockManager block size and count (or the ratio is of the total)");
      return k;
    }
    mem::LmdeployKvInput li;
    li.version = in.version;
    li.free_after_weights_bytes = (in.lmdeploy_blocks + 0.5) * in.lmdeploy_block_bytes / f;
    li.cache_max_entry_count = f;
    li.block_bytes = in.lmdeploy_block_bytes;
    auto r = mem::LmdeployKvBlocks(li);
    if (!r.ok()) {
      note("memory model: " + r.status().message());
      return k;
    }
    k.computed = true;
    k.inputs = {{"free_after_weights_bytes", li.free_after_weights_bytes}, {"cache_max_entry_count", f},
                {"block_bytes", li.block_bytes}};
    k.results = {{"kv_bytes", r->kv_bytes}, {"num_blocks", r->num_blocks}, {"left_bytes", r->left_after_cache_bytes}};
    k.arithmetic = Printf("kv = %g x %.2f = %.2f GiB (%lld blocks), %.2f GiB left for the run-time buffers", f,
                          li.free_after_weights_bytes / mem::kGiB, r->kv_bytes / mem::kGiB,
                          static_cast<long long>(r->num_blocks), r->left_after_cache_bytes / mem::kGiB);
    k.budget_bytes = r->left_after_cache_bytes;
    note("the cache fits by construction; TurboMind never prints its run-time buffers, so whether they fit in what "
         "is left is not known from the arithmetic");
    return k;
  }
  note(in.framework.empty() ? "no server framework recognised in the log"
                            : "no KV-pool model for " + in.framework);
  return k;
}

void RevertMemory(KvInputs& in, const std::string& quantity, int rank, const RunFacts& good, const RunFacts& bad) {
  for (auto& [r, m] : in.ranks) {
    if (rank >= 0 && r != rank) continue;
    auto g = good.ranks.find(r);
    auto b = bad.ranks.find(r);
    if (g == good.ranks.end() || b == bad.ranks.end()) continue;
    const RankMemory& gm = g->second;
    const RankMemory& bm = b->second;
    auto shift = [&](std::optional<double>& slot, double by) {
      if (slot) *slot += by;
    };
    if (quantity == "free_at_init" || quantity == "free_after_dist_init") {
      auto field = quantity == "free_at_init" ? &RankMemory::free_at_init : &RankMemory::free_after_dist_init;
      if (!(gm.*field) || !(bm.*field)) continue;
      double more = *(gm.*field) - *(bm.*field);  // free memory the bad run lacked from the start
      shift(m.free_at_init, more);
      shift(m.free_after_dist_init, more);
      shift(m.free_after_weights, more);
    } else if (quantity == "dist_init") {
      if (!gm.dist_init_usage || !bm.dist_init_usage) continue;
      double extra = *bm.dist_init_usage - *gm.dist_init_usage;
      shift(m.free_after_dist_init, extra);
      shift(m.free_after_weights, extra);
      if (in.framework == "vllm" && r == in.ranks.begin()->first) in.non_torch_bytes -= extra;
    } else if (quantity == "weights" || quantity == "free_after_weights") {
      double extra = 0;
      if (quantity == "weights") {
        if (!gm.weights_usage || !bm.weights_usage) continue;
        extra = *bm.weights_usage - *gm.weights_usage;
      } else {
        if (!gm.free_after_weights || !bm.free_after_weights) continue;
        extra = *gm.free_after_weights - *bm.free_after_weights;
      }
      shift(m.free_after_weights, extra);
      if (m.weights_usage) *m.weights_usage -= extra;
    }
  }
}

void ReleaseAtDistInit(KvInputs& in, double bytes) {
  for (auto& [r, m] : in.ranks) {
    if (m.free_after_dist_init) *m.free_after_dist_init += bytes;
    if (m.free_after_weights) *m.free_after_weights += bytes;
  }
  if (in.framework == "vllm") in.non_torch_bytes = std::max(0.0, in.non_torch_bytes - bytes);
}

}  // namespace tpt::diff
