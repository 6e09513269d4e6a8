// launch_plan.cc: a launch configuration -> predicted ledger, KV pool and failure, by
// server; what is derived from the model and the version (internal::Run). The
// remedies and the sensitivity ranges are in launch_plan_remedies.cc; MakePlan and
// the JSON and text forms in launch_plan_output.cc.
#include "memory/launch_plan.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "base/strings.h"
#include "memory/launch_plan_internal.h"
#include "memory/vllm_cold_compile.h"
#include "memory/vllm_fi_allreduce.h"
#include "memory/vllm_graph_capture.h"
#include "memory/vllm_nccl_connect.h"
#include "memory/vllm_runner_v2.h"
#include "memory/vllm_sampler_warmup.h"
#include "memory/numeric.h"
#include "memory/sglang_mamba_states.h"
#include "memory/sglang_multimodal.h"
#include "memory/sglang_request_table.h"
#include "memory/unified_memory.h"

namespace tpt::memory {


using internal::Fixed2;
using internal::MakeRemedy;
using internal::WithCommas;

namespace {

using internal::CeilHundredths;
using internal::FloorHundredths;

std::string Fixed3(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.3f", v);
  return b;
}

// More than any card has (a bound for a catalog or flag typo, not a figure).
constexpr double kMaxGpuMemoryBytes = 16384.0 * kGiB;

// KV dtype of "auto": the model's activation dtype (fp32 only when the weights are fp32).
StatusOr<double> KvElementBytes(const PlanInput& in) {
  std::string model = in.weight_dtype == "fp32" || in.weight_dtype == "fp16" ? in.weight_dtype : "bf16";
  return KvDtypeBytes(in.kv_cache_dtype, model);
}

bool IsV1Era(VllmEra e) { return e == VllmEra::kV1StartupCheck || e == VllmEra::kV1GraphsInBudget; }

bool HasDims(const KvDims& d) { return d.layers > 0 && (d.IsMla() || (d.kv_heads > 0 && d.head_dim > 0)); }

// KV bytes per token per rank: --cell-bytes, or the server's formula on the model
// dimensions with the element size of --kv-cache-dtype.
template <typename CellFn>
StatusOr<int64_t> CellBytes(const PlanInput& in, CellFn server_formula) {
  if (in.cell_bytes) return *in.cell_bytes;
  if (!HasDims(in.dims)) {
    return InvalidArgumentError(
        "the KV size per token is unknown: give --layers with --kv-heads and --head-dim (MHA/GQA), or --layers "
        "with --kv-lora-rank and --qk-rope-head-dim (MLA), or --cell-bytes");
  }
  KvDims dims = in.dims;
  auto elem = KvElementBytes(in);
  if (!elem.ok()) return InvalidArgumentError("--kv-cache-dtype: " + elem.status().message());
  dims.dtype_bytes = *elem;
  return server_formula(dims);
}

void AddGraphRemedy(const PlanInput& in, double budget, Plan& p) {
  if (!in.cuda_graph_bytes || !in.cuda_graph_max_bs || *in.cuda_graph_bytes <= budget) return;
  auto bs = LargestGraphBatchSize({{*in.cuda_graph_max_bs, *in.cuda_graph_bytes}}, budget, *in.cuda_graph_max_bs);
  if (!bs.ok()) return;
  p.figures["graph_budget_bytes"] = budget;
  p.figures["largest_fitting_cuda_graph_bs"] = *bs;
  if (*bs > 0) {
    p.remedies.push_back(MakeRemedy("--cuda-graph-max-bs", std::to_string(*bs), "decrease",
                                    "graphs of " + FormatGiB(*in.cuda_graph_bytes) + " at bs " +
                                        std::to_string(*in.cuda_graph_max_bs) + " exceed the " + FormatGiB(budget) +
                                        " left for them; memory scales with the largest batch"));
  }
}

}  // namespace

namespace internal {
SglangDefaultsInput SglangDefaultsOf(const PlanInput& in) {
  SglangDefaultsInput d;
  d.version = in.version;
  d.gpu_capacity_bytes = in.total_bytes;
  d.tp = in.tp;
  d.pp = in.pp;
  d.dp = in.dp;
  d.enable_dp_attention = in.enable_dp_attention;
  d.chunked_prefill_size = in.chunked_prefill_size;
  d.cuda_graph_max_bs = in.cuda_graph_max_bs;
  d.speculative_algorithm = in.speculative_algorithm;
  d.context_length = in.context_length;
  d.max_running_requests = in.max_running_requests;
  if (in.model) {
    d.mla = in.model->IsMla();
    // SGLang's own multimodal test (its default lowered for the model) turns the piecewise graphs off.
    const auto mm = SglangMultimodalFactor(in.version, *in.model, false, 0.88, in.total_bytes, in.sglang_enable_multimodal);
    d.multimodal = mm.factor != 1.0 || !mm.unknown.empty();
  } else if (in.sglang_multimodal_factor) {
    d.multimodal = *in.sglang_multimodal_factor != 1.0;
  }
  return d;
}
}  // namespace internal

namespace {

StatusOr<Plan> PlanSglang(const PlanInput& in, Plan p) {
  auto era = SglangEraForVersion(in.version);
  if (!era.ok()) return InvalidArgumentError("--version: " + era.status().message());
  p.era = SglangEraName(*era);
  int attn_tp = in.enable_dp_attention ? std::max(1, in.tp / in.dp) : in.tp;

  double avail;
  if (in.avail_after_weights_bytes) {
    avail = *in.avail_after_weights_bytes;
  } else if (in.weights_bytes) {
    avail = p.free_at_init_bytes - *in.weights_bytes;
  } else {
    return InvalidArgumentError("the weights are unknown: give --weights-per-rank, --params with --dtype, or "
                                "--avail-after-weights (\"Load weight end. avail mem=\")");
  }
  if (avail > p.free_at_init_bytes) {
    return InvalidArgumentError("--avail-after-weights (" + FormatGiB(avail) + ") is more than the free memory at init (" +
                                FormatGiB(p.free_at_init_bytes) + ")");
  }
  p.weights_bytes = p.free_at_init_bytes - avail;
  const bool weights_oom = avail < 0;
  if (weights_oom) avail = 0;

  auto cell = CellBytes(in, [&](const KvDims& d) { return SglangCellBytes(d, attn_tp, *era); });
  if (!cell.ok()) return cell.status();
  p.cell_bytes = *cell;
  if (*era == SglangEra::kY2026 && (in.speculative_algorithm == "EAGLE" || in.speculative_algorithm == "EAGLE3") &&
      in.dims.layers > 0 && !in.cell_bytes) {
    // sglang-source.md §1.2(e): EAGLE targets price the draft's KV into the target's pool,
    // cell x (1 + draft layers / layers).
    const int draft = in.draft_layers > 0 ? in.draft_layers : 1;
    p.cell_bytes = static_cast<int64_t>(std::llround(p.cell_bytes * (1.0 + static_cast<double>(draft) / in.dims.layers)));
    p.assumptions.push_back("KV cell x (1 + " + std::to_string(draft) + "/" + std::to_string(in.dims.layers) +
                            ") for the " + in.speculative_algorithm + " draft's KV" +
                            (in.draft_layers > 0 ? "" : " (1 draft layer assumed)"));
  }

  p.fraction_flag = "--mem-fraction-static";
  if (in.mem_fraction_static) {
    p.fraction = *in.mem_fraction_static;
    p.fraction_source = "flag";
  } else {
    auto def = SglangDefaultMemFraction(internal::SglangDefaultsOf(in));
    if (!def.ok()) return def.status();
    p.fraction = def->mem_fraction_static;
    p.fraction_source = "default: " + def->rule;
  }
  // A multimodal model's lower fraction (sglang_multimodal.cc): up to 0.4.8 ModelRunner
  // lowers the value in force, given or default, after server_args (the flag the user passes
  // stays p.fraction; the pool is sized at `effective`); from 0.4.9 server_args lowers its
  // own default only, and that lowered default is the value to pass.
  double effective = p.fraction;
  double runner_factor = 1.0;
  SglangMultimodalFraction mm;
  if (in.sglang_enable_multimodal && VersionBefore(in.version, {0, 4, 6})) {
    return InvalidArgumentError("--enable-multimodal came with SGLang 0.4.6 (configs/model_config.py); before it "
                                "every model in its multimodal list is served as one: drop the flag");
  }
  if (in.model) {
    mm = SglangMultimodalFactor(in.version, *in.model, in.mem_fraction_static.has_value(), p.fraction, in.total_bytes,
                                in.sglang_enable_multimodal);
  } else if (in.sglang_multimodal_factor) {
    mm.factor = *in.sglang_multimodal_factor;
  }
  {
    auto v = ParseVersion(in.version);
    const bool in_runner = v.ok() && CompareVersions(*v, {0, 4, 9}) < 0;
    if (in_runner) {
      runner_factor = mm.factor;
      effective = p.fraction * mm.factor;
    } else {
      p.fraction *= mm.factor;
      effective = p.fraction;
    }
    if (mm.factor != 1.0) p.fraction_source += "; x " + Fixed3(mm.factor) + " for a multimodal model";
    if (!mm.why.empty()) p.assumptions.push_back(mm.why);
    if (!mm.unknown.empty()) {
      p.unknowns.push_back(mm.unknown + ": the pool is sized at x" + Fixed3(mm.factor) + ", the range runs x" +
                           Fixed3(mm.unknown_low) + " to x" + Fixed3(mm.unknown_high) + " of the fraction");
    }
  }
  if (!in.mem_fraction_static && !(p.fraction > 0.05)) {
    return InvalidArgumentError("the version's default --mem-fraction-static comes out at " + Fixed2(p.fraction) +
                                " for this GPU and parallelism; give --mem-fraction-static");
  }

  SglangKvInput kv;
  kv.era = *era;
  kv.free_at_init_bytes = p.free_at_init_bytes;
  kv.avail_after_weights_bytes = avail;
  kv.mem_fraction_static = effective;
  kv.cell_bytes = p.cell_bytes;
  kv.page_size = in.page_size;
  kv.max_total_tokens = in.max_total_tokens;
  kv.context_length = in.context_length;
  bool mamba_radix_off = in.disable_radix_cache;
  if (in.model && !in.cell_bytes && in.pp == 1) {
    const ModelConfig& m = *in.model;
    int full = 0, swa = 0;
    if (!in.disable_hybrid_swa_memory && SglangHybridSwa(m, &full, &swa)) {
      kv.full_layers = full;
      kv.swa_layers = swa;
      kv.swa_full_tokens_ratio = in.swa_full_tokens_ratio.value_or(0.8);
      p.assumptions.push_back("SGLang's hybrid sliding-window pool (" + m.architecture + "): " + std::to_string(full) +
                              " full + " + std::to_string(swa) + " sliding layers, swa tokens = " +
                              Fixed2(kv.swa_full_tokens_ratio) +
                              " x full tokens (--swa-full-tokens-ratio); the pool is the full-attention token count");
    } else if (m.SlidingLayers() > 0) {
      p.assumptions.push_back(std::to_string(m.SlidingLayers()) + " sliding-window layers priced as full attention (" +
                              (in.disable_hybrid_swa_memory ? std::string("--disable-hybrid-swa-memory")
                                                            : m.architecture + " has no hybrid SWA pool in SGLang") +
                              ")");
    }
    if (m.LinearLayers() > 0) {
      const bool bf16_state = in.mamba_ssm_dtype == "bfloat16" || in.mamba_ssm_dtype == "bf16";
      kv.mamba_bytes_per_request = MambaStateBytesPerRequest(m, attn_tp, bf16_state ? 2 : 4);
      SglangMambaStatesInput si;
      si.version = in.version;
      si.mamba_kind = m.mamba_kind;
      si.disable_radix_cache = in.disable_radix_cache;
      si.max_running_requests = in.max_running_requests;
      si.max_mamba_cache_size = in.max_mamba_cache_size;
      si.mamba_full_memory_ratio = in.mamba_full_memory_ratio;
      si.dp_attention_size = in.enable_dp_attention ? in.dp : 1;
      const SglangMambaStates states = SglangMambaStateCount(si);
      mamba_radix_off = states.radix_cache_off;
      kv.max_mamba_cache_size = states.fixed;
      kv.mamba_full_memory_ratio = states.ratio;
      if (kv.mamba_bytes_per_request > 0) {
        p.assumptions.push_back(
            "mamba state " + Fixed2(kv.mamba_bytes_per_request / kMiB) + " MiB per request on each rank (" +
            std::to_string(m.LinearLayers()) + " " + m.mamba_kind + " layers, SSM state in " +
            (bf16_state ? "bfloat16" : "float32 (--mamba-ssm-dtype)") + "), taken before the KV pool: " + states.rule +
            "; the KV cell counts the " + std::to_string(m.FullAttentionLayers()) + " full-attention layers");
        if (!states.ignored.empty()) p.assumptions.push_back("ignored by SGLang " + in.version + ": " + states.ignored);
      } else {
        p.assumptions.push_back("the linear/mamba layers' state shape is not known: their per-request state is not "
                                "counted (the pool is optimistic)");
      }
    }
  }
  auto r = SglangKvPool(kv);
  if (!r.ok()) return r.status();
  if (runner_factor != 1.0) {
    // The fractions SglangKvPool solves for are the lowered ones; the flag is that / factor.
    auto flag_value = [&](double f) { return std::min(1.0, CeilHundredths(f / runner_factor - 1e-9)); };
    r->min_viable_mem_fraction_static = flag_value(r->min_viable_mem_fraction_static);
    if (r->mem_fraction_for_context) r->mem_fraction_for_context = flag_value(*r->mem_fraction_for_context);
  }

  // The request table, allocated after the pool is sized and paid from the reserved slice
  // (sglang_request_table.h); the context SGLang runs at sizes it, asked or the model's.
  SglangRequestTable table;
  if (in.context_length && !r->fails) {
    SglangRequestTableInput ti;
    ti.version = in.version;
    ti.context_len = *in.context_length;
    ti.profiled_tokens = r->profiled_tokens;
    ti.capacity_tokens = r->max_total_num_tokens;
    ti.max_running_requests = in.max_running_requests;
    ti.dp_attention_size = in.enable_dp_attention ? in.dp : 1;
    if (kv.mamba_bytes_per_request > 0) ti.mamba_states = r->max_mamba_cache_size;
    ti.radix_cache_off = mamba_radix_off;
    table = SglangRequestTableOf(ti);
    p.assumptions.push_back(table.rule + ", paid from the " + FormatGiB(r->reserved_bytes) + " reserved slice");
  }

  RankMemory m;
  m.total_bytes = in.total_bytes;
  m.free_at_init_bytes = p.free_at_init_bytes;
  m.weights_bytes = p.weights_bytes;
  m.reserved_bytes = r->reserved_bytes;
  m.kv_pool_bytes = r->kv_pool_bytes;
  m.graphs_bytes = in.cuda_graph_bytes.value_or(0);
  m.reserved_use_bytes = table.bytes;
  p.row = BuildLedgerRow(m);
  p.kv_tokens = std::max<int64_t>(r->max_total_num_tokens, 0);
  if (!in.mem_fraction_static && r->max_total_num_tokens > 0 && !in.max_total_tokens) {
    // The pool follows the flag, and a launch that leaves it out runs at the default: said,
    // with what 0.01 of it moves (a launch script or container that sets one changes the pool).
    SglangKvInput less = kv;
    less.mem_fraction_static = effective - 0.01 * runner_factor;
    auto r2 = SglangKvPool(less);
    if (r2.ok() && r2->max_total_num_tokens < r->max_total_num_tokens) {
      p.assumptions.push_back("--mem-fraction-static not in the launch: SGLang " + in.version + "'s default " +
                              Fixed2(p.fraction) + " is taken; each 0.01 less takes " +
                              FormatGiB(r->kv_pool_bytes - r2->kv_pool_bytes) + " (" +
                              WithCommas(r->max_total_num_tokens - r2->max_total_num_tokens) +
                              " tokens) a rank from it: pass the value if the launch script or container sets one");
    }
  }

  p.figures = {{"reserved_bytes", r->reserved_bytes},
               {"rest_bytes", r->rest_bytes},
               {"avail_after_weights_bytes", avail},
               {"profiled_tokens", r->profiled_tokens},
               {"max_total_num_tokens", r->max_total_num_tokens},
               {"min_viable_mem_fraction_static", r->min_viable_mem_fraction_static}};
  if (r->mem_fraction_for_context) p.figures["mem_fraction_for_context"] = *r->mem_fraction_for_context;
  if (mm.factor != 1.0) p.figures["sglang_multimodal_factor"] = mm.factor;
  p.figures["sglang_fraction_in_force"] = effective;  // what the pool is sized at (launch_plan_remedies.cc)
  if (table.bytes > 0) {
    p.figures["request_table_bytes"] = table.bytes;
    p.figures["request_table_rows"] = table.rows;
    p.figures["request_table_columns"] = table.columns;
  }
  if (kv.full_layers > 0) {
    p.figures["full_layer_tokens"] = r->full_tokens;
    p.figures["swa_layer_tokens"] = r->swa_tokens;
  }
  if (in.max_running_requests) {
    const int64_t running =
        SglangRunningRequestCap(*in.max_running_requests, in.enable_dp_attention ? in.dp : 1,
                                kv.mamba_bytes_per_request > 0 ? r->max_mamba_cache_size : 0, mamba_radix_off);
    p.figures["max_running_requests"] = running;
    if (kv.mamba_bytes_per_request <= 0) {
      p.assumptions.push_back("--max-running-requests " + std::to_string(*in.max_running_requests) +
                              ": SGLang runs at most " + std::to_string(running) +
                              " requests at once; its request slots are outside the KV pool, which does not change");
    }
  }
  if (kv.mamba_bytes_per_request > 0) {
    p.figures["max_mamba_cache_size"] = r->max_mamba_cache_size;
    p.figures["mamba_bytes"] = r->mamba_bytes;
    p.figures["mamba_bytes_per_request"] = kv.mamba_bytes_per_request;
  }

  const double min_f = r->min_viable_mem_fraction_static;
  if (weights_oom) {
    p.fits = false;
    p.failure = "weights_oom";
    p.kv_tokens = 0;
    p.error = "the weights (" + FormatGiB(p.weights_bytes) + " per rank) do not fit in the free memory (" +
              FormatGiB(p.free_at_init_bytes) + "): loading fails with a CUDA out-of-memory error";
  } else if (r->fails) {
    p.fits = false;
    p.failure = "kv_pool_no_room";
    p.error = r->error;
    if (min_f < 1.0) {
      p.remedies.push_back(MakeRemedy("--mem-fraction-static", Fixed2(min_f), "increase",
                                      "smallest value that leaves a KV pool: 1 - avail/free_at_init = 1 - " +
                                          FormatGiB(avail) + " / " + FormatGiB(p.free_at_init_bytes)));
    } else {
      p.remedies.push_back(MakeRemedy("--tp", std::to_string(in.tp * 2), "increase",
                                      "the weights leave no room at any --mem-fraction-static (needs >= " +
                                          Fixed2(min_f) + "); shard them over more GPUs or quantize"));
    }
  } else if (table.bytes > r->reserved_bytes) {
    // Allocated at start-up whatever the requests will be: before the one-request check.
    p.fits = false;
    p.failure = "kv_pool_no_room";
    p.error = SglangRequestTableShort(table, r->reserved_bytes, avail, effective);
    p.figures["request_table_short"] = true;  // launch_plan_remedies.cc: the table's remedies
  } else if (!r->holds_one_context) {
    p.fits = false;
    p.failure = "kv_pool_too_small";
    p.error = "the KV pool holds " + WithCommas(p.kv_tokens) + " tokens, less than one request of the context length " +
              WithCommas(*in.context_length);
    if (r->mem_fraction_for_context && *r->mem_fraction_for_context < 1.0) {
      p.remedies.push_back(MakeRemedy("--mem-fraction-static", Fixed2(*r->mem_fraction_for_context), "increase",
                                      "smallest value whose pool holds one " + WithCommas(*in.context_length) +
                                          "-token request"));
    }
    p.remedies.push_back(MakeRemedy("--context-length", std::to_string(p.kv_tokens), "decrease",
                                    "the longest request the predicted pool can hold"));
  } else if (in.cuda_graph_bytes && *in.cuda_graph_bytes > r->reserved_bytes - table.bytes) {
    // SGLang captures graphs from the (1 - f) slice, which also holds activations and, from
    // before the capture, the request table.
    p.fits = false;
    p.failure = "cuda_graph_capture_oom";
    p.error = "CUDA graphs (" + FormatGiB(*in.cuda_graph_bytes) + ") exceed the reserved slice (" +
              FormatGiB(r->reserved_bytes) + ") they are captured from" +
              (table.bytes > 0 ? " less the request table (" + FormatGiB(table.bytes) + ")" : "");
    AddGraphRemedy(in, r->reserved_bytes - table.bytes, p);
    double f_lower =
        FloorHundredths((1.0 - (*in.cuda_graph_bytes + table.bytes) / p.free_at_init_bytes) / runner_factor);
    if (f_lower > min_f) {
      p.remedies.push_back(MakeRemedy("--mem-fraction-static", Fixed2(f_lower), "decrease",
                                      "keeps back enough of the free memory for the graphs"));
    }
  }
  return p;
}

StatusOr<Plan> PlanVllm(const PlanInput& in, Plan p) {
  auto era = VllmEraForVersion(in.version, in.vllm_engine);
  if (!era.ok()) return InvalidArgumentError("--version/--vllm-engine: " + era.status().message());
  p.era = VllmEraName(*era);
  if (in.avail_after_weights_bytes) {
    return InvalidArgumentError("--avail-after-weights is an SGLang figure; for vLLM give --weights-per-rank "
                                "(\"Model loading took X GiB\")");
  }
  if (!in.weights_bytes) {
    return InvalidArgumentError("the weights are unknown: give --weights-per-rank or --params with --dtype");
  }
  p.weights_bytes = *in.weights_bytes;
  auto cell = CellBytes(in, [&](const KvDims& d) { return VllmBytesPerToken(d, in.tp); });
  if (!cell.ok()) return cell.status();
  p.cell_bytes = *cell;
  p.fraction_flag = "--gpu-memory-utilization";
  p.fraction = in.gpu_memory_utilization.value_or(0.9);
  p.fraction_source = in.gpu_memory_utilization ? "flag" : "default: 0.9 (vLLM's default in every version)";

  internal::SetVllmNonTorch(in, *era, p);  // launch_plan_vllm_non_torch.cc
  if (!in.activation_peak_bytes) {
    p.assumptions.push_back("activation peak not given: 0 assumed; pass --activation-peak (vLLM logs \"PyTorch "
                            "activation peak memory takes X\")");
  }
  VllmKvInput kv;
  kv.era = *era;
  kv.total_bytes = in.total_bytes;
  kv.free_at_init_bytes = p.free_at_init_bytes;
  kv.gpu_memory_utilization = p.fraction;
  kv.weights_bytes = p.weights_bytes;
  kv.activation_peak_bytes = in.activation_peak_bytes.value_or(0);
  kv.non_torch_bytes = p.non_torch_bytes;
  kv.cuda_graph_bytes = in.cuda_graph_bytes.value_or(0);
  kv.bytes_per_token = p.cell_bytes;
  kv.block_size = in.block_size;
  kv.pp = in.pp;
  kv.max_model_len = in.context_length;
  auto ver = ParseVersion(in.version);
  // Before vllm PR #2031 ("Fix peak memory profiling", first released in 0.2.5): worker.py's
  // profile_num_available_blocks took peak_memory = torch.cuda.max_memory_allocated() against
  // total_gpu_memory = get_gpu_memory() (the device's total), so non-torch memory (NCCL, the CUDA
  // context) and other tenants were not charged (vllm#2136: 1464 blocks on 0.2.3/0.2.4, 112 on 0.2.5).
  kv.torch_peak_only = *era == VllmEra::kV0PeakWholeGpu && ver.ok() && CompareVersions(*ver, {0, 2, 5}) < 0;
  if (kv.torch_peak_only) {
    p.assumptions.push_back("vLLM before 0.2.5 (before PR #2031): the KV budget is util x the device's total less "
                            "torch's allocated peak (weights + activations); non-torch memory is not charged");
  }
  // One request's worth of blocks times the requests the pool holds, from 0.20.1
  // (vllm_model.cc VllmKvSizeFromConcurrency); the same as blocks x block for one group
  // unless max_model_len ends inside a block.
  kv.kv_size_from_concurrency = IsV1Era(*era) && VllmKvSizeFromConcurrency(in.version);
  if (in.model && !in.cell_bytes && in.pp == 1 && IsV1Era(*era) && ver.ok() && CompareVersions(*ver, {0, 10}) >= 0) {
    internal::SetVllmHybridGroups(in, *in.model, kv, p);  // launch_plan_vllm_hybrid.cc
  }
  if (auto w = VllmSamplerWarmupOf(in)) {
    // The sampler warm-up after the cache, the profile's sampler (vllm_sampler_warmup.h).
    kv.sampler_warmup_requests = w->requests;
    kv.sampler_warmup_bytes = w->need_bytes;
    kv.sampler_warmup_high_bytes = w->high_bytes;
    p.figures["sampler_warmup_bytes"] = kv.sampler_warmup_bytes;
    p.figures["sampler_warmup_requests"] = kv.sampler_warmup_requests;
  }
  auto r = VllmKvPool(kv);
  if (!r.ok()) return r.status();
  if (r->startup_check_fails) {
    // On a card known only by its size the check may pass (launch_plan_vllm_uncertain.cc).
    const double least_free =
        in.total_bytes - InitOverheadBytes("ampere", in.gpu_interconnect, in.tp, in.gpu_pcie_peer_access);
    auto q = internal::VllmStartupCheckOnUnknownFamily(in, kv, *r, least_free, p);
    if (!q.ok()) return q.status();
    if (*q) r = std::move(**q);
  }

  const bool graphs_in_budget = *era == VllmEra::kV1GraphsInBudget;
  RankMemory m;
  m.total_bytes = in.total_bytes;
  m.free_at_init_bytes = p.free_at_init_bytes;
  m.weights_bytes = p.weights_bytes;
  m.other_bytes = p.non_torch_bytes;
  // What stays free once the KV cache is allocated (the activation peak is released):
  // free - requested + activation. Graphs come out of it unless they are in the budget.
  m.reserved_bytes = p.free_at_init_bytes - r->requested_bytes + kv.activation_peak_bytes;
  m.kv_pool_bytes = std::max(r->kv_bytes, 0.0);
  m.graphs_bytes = kv.cuda_graph_bytes;
  m.graphs_inside_reserved = !graphs_in_budget;
  p.row = BuildLedgerRow(m);
  if (r->startup_check_fails) {
    // Nothing is loaded: the shortfall is the free memory the budget asks for.
    p.row.weights_bytes = p.row.kv_pool_bytes = p.row.graphs_bytes = 0;
    p.row.reserved_bytes = 0;
    p.row.left_bytes = p.free_at_init_bytes - r->requested_bytes;
  }
  // A pool shorter than max_model_len exists (vLLM prints it in the error); no pool otherwise.
  p.kv_tokens = r->no_cache_blocks || r->startup_check_fails ? 0 : r->kv_tokens;
  const bool weights_oom = !r->startup_check_fails && p.weights_bytes + p.non_torch_bytes > p.free_at_init_bytes;
  if (r->pool_tokens != r->kv_tokens) p.figures["pool_tokens"] = r->pool_tokens;
  if (ver.ok() && CompareVersions(*ver, {0, 16}) >= 0) internal::SayVllmMambaPrefixCaching(kv, *r, p);
  if (r->group_size > 0) {
    p.figures["max_concurrency"] = r->max_concurrency;
    p.figures["kv_cache_groups"] = r->kv_cache_groups;
    p.figures["kv_group_size"] = r->group_size;
    p.figures["kv_block_size"] = r->hybrid_block_size;
  }
  p.figures.update(nlohmann::json{{"requested_bytes", r->requested_bytes},
               {"non_kv_bytes", r->non_kv_bytes},
               {"graphs_in_budget_bytes", r->graphs_in_budget_bytes},
               {"kv_bytes", r->kv_bytes},
               {"num_blocks", r->num_blocks},
               {"kv_tokens", r->kv_tokens},
               {"estimated_max_model_len", r->estimated_max_model_len},
               {"min_util_one_block", r->min_util_one_block},
               {"activation_peak_bytes", kv.activation_peak_bytes},
               {"cuda_graph_bytes", kv.cuda_graph_bytes},
               {"max_util_startup", r->max_util_startup}});
  if (r->min_util_max_model_len) p.figures["min_util_max_model_len"] = *r->min_util_max_model_len;

  const double lo = r->min_util_one_block, hi = r->max_util_startup;
  auto no_util_fits = [&](const std::string& need) {
    p.remedies.push_back(MakeRemedy("--tensor-parallel-size", std::to_string(in.tp * 2), "increase",
                                    "no --gpu-memory-utilization works: the pool needs >= " + need +
                                        " but only " + Fixed2(hi) + " of the card is free at startup"));
  };
  if (weights_oom) {
    p.fits = false;
    p.failure = "weights_oom";
    p.kv_tokens = 0;
    p.error = "the weights (" + FormatGiB(p.weights_bytes) + " per rank) do not fit in the free memory (" +
              FormatGiB(p.free_at_init_bytes) + "): \"Failed to load model - not enough GPU memory\" (CUDA out of memory)";
  } else if (r->startup_check_fails) {
    p.fits = false;
    p.failure = "startup_free_memory_short";
    if (hi >= lo) {
      p.remedies.push_back(MakeRemedy("--gpu-memory-utilization", Fixed2(hi), "decrease",
                                      "largest value the free memory at startup (" + FormatGiB(p.free_at_init_bytes) +
                                          " of " + FormatGiB(in.total_bytes) + ") allows"));
    } else {
      no_util_fits(Fixed2(lo));
    }
  } else if (r->profile_oom) {
    p.fits = false;
    p.failure = "warmup_oom";
  } else if (r->no_cache_blocks) {
    p.fits = false;
    p.failure = "kv_pool_no_room";
    if (lo <= hi) {
      p.remedies.push_back(MakeRemedy("--gpu-memory-utilization", Fixed2(lo), "increase",
                                      "smallest value that leaves one KV block"));
    } else {
      no_util_fits(Fixed2(lo));
    }
  } else if (r->max_len_too_long) {
    p.fits = false;
    p.failure = "kv_pool_too_small";
    if (r->min_util_max_model_len && *r->min_util_max_model_len <= hi) {
      p.remedies.push_back(MakeRemedy("--gpu-memory-utilization", Fixed2(*r->min_util_max_model_len), "increase",
                                      "smallest value whose pool holds one max_model_len request"));
    }
    p.remedies.push_back(MakeRemedy("--max-model-len", std::to_string(r->estimated_max_model_len), "decrease",
                                    "the longest request the predicted pool can hold"));
  } else if (r->kv_alloc_oom) {
    p.fits = false;
    p.failure = "startup_free_memory_short";
    if (r->max_util_physical >= lo) {
      p.remedies.push_back(MakeRemedy("--gpu-memory-utilization", Fixed2(r->max_util_physical), "decrease",
                                      "largest value whose KV cache fits in the " + FormatGiB(p.free_at_init_bytes) +
                                          " free at init"));
    } else {
      no_util_fits(Fixed2(lo));
    }
  } else if (r->graphs_overflow) {
    // What the KV cache leaves physically free (vllm_model.cc): in the whole-GPU era the
    // budget's own remainder (m.reserved_bytes) is smaller by what was in use before.
    // The remedies are planned again (launch_plan_remedies.cc AddVllmCaptureRemedies).
    p.fits = false;
    p.failure = "cuda_graph_capture_oom";
    const double left_for_graphs = r->left_for_graphs_bytes;
    p.error = "CUDA graphs (" + FormatGiB(kv.cuda_graph_bytes) + ") are captured after the KV cache, outside the "
              "budget, from the " + FormatGiB(left_for_graphs) + " left";
    AddGraphRemedy(in, left_for_graphs, p);
  } else if (r->sampler_warmup_fails) {
    // Remedies (a smaller --max-num-seqs, a lower utilization) are planned again in
    // launch_plan_remedies.cc.
    p.fits = false;
    p.failure = "warmup_oom";
  } else if (r->sampler_warmup_may_fail) {
    SayVllmSamplerWarmupMayFail(kv.sampler_warmup_bytes, kv.sampler_warmup_high_bytes, r->left_for_sampler_bytes,
                                kv.sampler_warmup_requests, p);
  }
  if (kv.sampler_warmup_bytes > 0) p.figures["left_for_sampler_bytes"] = r->left_for_sampler_bytes;
  if (!p.fits && p.error.empty()) p.error = r->error;
  return p;
}

StatusOr<Plan> MakePlanCore(const PlanInput& in) {
  if (in.framework != "sglang" && in.framework != "vllm" && in.framework != "tgi" && in.framework != "trtllm" &&
      in.framework != "lmdeploy") {
    return InvalidArgumentError("--framework '" + in.framework +
                                "' is not supported; use sglang, vllm, tgi, trtllm or lmdeploy");
  }
  if (!(in.total_bytes > 0)) return InvalidArgumentError("the GPU memory is unknown: give --gpu NAME or --gpu-mem SIZE");
  // No inf or NaN reaches a plan: the GPU's memory is a real card's.
  if (!(in.total_bytes <= kMaxGpuMemoryBytes)) {
    return InvalidArgumentError("the GPU memory (" + FormatGiB(in.total_bytes) + ", from --gpu/--gpu-mem) is more than " +
                                FormatGiB(kMaxGpuMemoryBytes) + "; no GPU has that much");
  }
  if (in.tp < 1 || in.pp < 1 || in.dp < 1) return InvalidArgumentError("--tp, --pp and --dp must be >= 1");
  Plan p;
  p.input = in;
  if (in.free_at_init_bytes) {
    p.free_at_init_bytes = *in.free_at_init_bytes;
  } else {
    p.free_at_init_bytes =
        in.total_bytes - InitOverheadBytes(in.gpu_arch, in.gpu_interconnect, in.tp, in.gpu_pcie_peer_access);
    p.assumptions.push_back("free at init " + FormatGiB(p.free_at_init_bytes) + " = total - " +
                            FormatGiB(in.total_bytes - p.free_at_init_bytes) +
                            " (CUDA context, NCCL and custom all-reduce for " +
                            (in.gpu_arch.empty() ? std::string("an unknown GPU family (Hopper figures)") : in.gpu_arch) +
                            (in.gpu_interconnect.empty() ? "" : ", " + in.gpu_interconnect) + ", tp " +
                            std::to_string(in.tp) + "); pass --free-at-init from the log to override");
    internal::TakeHostShare(in, p);  // a Windows/WSL2 host's measured share (launch_plan_host.cc)
  }
  if (p.free_at_init_bytes > in.total_bytes) {
    return InvalidArgumentError("--free-at-init (" + FormatGiB(p.free_at_init_bytes) + ") is more than the GPU memory (" +
                                FormatGiB(in.total_bytes) + ")");
  }
  if (!(p.free_at_init_bytes > 0) && !in.free_at_init_bytes) {
    return InvalidArgumentError("the GPU memory (" + FormatGiB(in.total_bytes) + ", from --gpu/--gpu-mem) is less than " +
                                "the CUDA context, NCCL and all-reduce take at init; give a real GPU's memory");
  }
  if (!(p.free_at_init_bytes > 0)) {
    return InvalidArgumentError("--free-at-init must be > 0 (got " + FormatGiB(p.free_at_init_bytes) + ")");
  }
  if (in.framework == "tgi") return internal::PlanTgi(in, std::move(p));
  if (in.framework == "trtllm") return internal::PlanTrtllm(in, std::move(p));
  if (in.framework == "lmdeploy") return internal::PlanLmdeploy(in, std::move(p));
  return in.framework == "sglang" ? PlanSglang(in, std::move(p)) : PlanVllm(in, std::move(p));
}

}  // namespace

namespace internal {

StatusOr<Plan> Run(const PlanInput& user) {
  std::vector<std::string> assumptions;
  std::optional<WeightEstimate> west;
  auto in = Derive(user, assumptions, west);
  if (!in.ok()) return in.status();
  auto p = MakePlanCore(*in);
  if (!p.ok()) return p.status();
  p->input = user;
  p->assumptions.insert(p->assumptions.begin(), assumptions.begin(), assumptions.end());
  p->weights = west;
  if (in->context_length) p->input.context_length = in->context_length;
  p->input.context_from_model = in->context_from_model;
  p->input.quantize_fp8_at_load = in->quantize_fp8_at_load;  // the launch line's --quantization fp8
  p->input.encoder_modality = in->encoder_modality;
  p->input.encoder_peak_bytes = in->encoder_peak_bytes;
  p->input.activation_floor_bytes = in->activation_floor_bytes;
  if (in->encoder_profile_unmodelled) {
    // vLLM's profiling run encodes dummy multimodal items first (V1 gpu_model_runner.py
    // profile_run: the largest item of the modality with the most tokens, as many as the
    // encoder budget max(max_num_batched_tokens, the item's tokens) holds, each at the
    // processor's largest size unless --limit-mm-per-prompt / --mm-processor-kwargs say
    // otherwise; v0.11.0), and keeps their outputs in the encoder cache: the plan sizes the
    // dummy prompt for the Qwen-VL processors on V0, and V1 0.8-0.21's encoder batch for
    // Qwen2-VL / Qwen2.5-VL / Qwen3-VL / Gemma-3 (vllm_mm_profile.cc); other towers and
    // versions land here.
    p->input.encoder_profile_unmodelled = true;
    p->unknowns.push_back(
        "encoder profiling not modelled for " + (in->model ? in->model->architecture : std::string("this model")) +
        " on vLLM " + in->version + ": the dummy images/videos the profiling run encodes (the processor's largest item, --limit-mm-per-prompt, "
        "--mm-processor-kwargs) and the encoder's activations are a rough estimate; the range below widens the "
        "activation peak to x0.5-x3 (the encoder batch is priced for Qwen2-VL, Qwen2.5-VL, Qwen3-VL and "
        "Gemma-3 on vLLM V1 0.8-0.21); pass --activation-peak from a launch's log (V1: 'torch peak memory "
        "increase', V0: 'activation peak memory takes')");
  }
  if (in->mm_images_worst > 1) {
    // vLLM V0's InternVL dummy (vllm_v0_internvl.h): the images are the flag's, which the
    // launch does not give; the point is the default, the range runs to the worst case.
    p->input.mm_images_worst = in->mm_images_worst;
    p->unknowns.push_back(
        "--limit-mm-per-prompt not given: vLLM " + in->version + " (V0) profiles InternVL with 1 image a prompt by "
        "default (multimodal/registry.py init_mm_limits_per_prompt), each of the config's largest tiling; a launch "
        "that sets it (LLM(limit_mm_per_prompt=...) in a script too) profiles that many images a sequence through "
        "the whole vision tower, up to " + std::to_string(in->mm_images_worst) +
        " that a prompt of the context can carry at one tile each (the range below); "
        "--mm-processor-kwargs max_dynamic_patch changes the tiles and is not read; pass --limit-mm-per-prompt");
  }
  if (in->flashinfer_probs_peak_bytes > 0) {
    // V1 0.8.x: FlashInfer's sampler where FlashInfer older than 0.2.3 is installed
    // (topk_topp_sampler.py 0.8.2-0.8.5; model_config.h kFlashInferProbs).
    p->input.flashinfer_probs_peak_bytes = in->flashinfer_probs_peak_bytes;
    // V1 0.9.0-0.11.0: FlashInfer 0.2.3 or newer, on by default where installed
    // (launch_plan_derive.cc, kFlashInferSampler).
    const bool fi_new = !VersionBefore(in->version, {0, 9});
    p->unknowns.push_back(
        "vLLM " + in->version + "'s profiling samples with FlashInfer where FlashInfer " +
        (fi_new ? "0.2.3 or newer is installed (the vllm/vllm-openai images, pip's vllm[flashinfer]; on by default "
                  "in V1 before 0.11.1)"
                : "older than 0.2.3 is installed (the vllm/vllm-openai images)") +
        " and sorts where it is not (a pip install): the plan prices the sort (" +
        FormatGiB(*in->activation_peak_bytes) + "); with FlashInfer the peak is " +
        FormatGiB(in->flashinfer_probs_peak_bytes) + " and the pool larger (the range below)" +
        VllmFlashInferFallbackNote(*in) + "; pass --activation-peak from a launch's log");
  }
  // The graphs captured after the pool (V0, V1 < 0.21): said, and "may fail" where the
  // capture of NCCL collectives may not fit (launch_plan_vllm_uncertain.cc).
  if (in->framework == "vllm") {
    internal::SayVllmCaptureAfterPool(*in, user,
                                      CustomAllReduceOn(in->gpu_interconnect, in->tp, in->gpu_pcie_peer_access), *p);
    internal::SayVllmNoRoomOutsideTorchAfterPool(*in, *p);
  }
  // Model Runner V2 (vllm_runner_v2.h): the point is the legacy runner's; the range is two-sided.
  if (VllmRunnerV2Default(*in) && in->max_num_seqs && !user.activation_peak_bytes) {
    const double graphs = user.cuda_graph_bytes ? 0.0 : in->cuda_graph_bytes.value_or(0);
    const auto spread = VllmRunnerV2SpreadOf(*in, in->activation_peak_bytes.value_or(0), graphs);
    p->unknowns.push_back(VllmRunnerV2Unknown(*in, spread));
    p->figures["mrv2_smaller_bytes"] = spread.smaller_bytes;  // AddSensitivity's range
    p->figures["mrv2_sampler_bytes"] = spread.larger_bytes - graphs;
  }
  // A first start compiles inside the profile (vllm_cold_compile.h): the point is a warm start's.
  if (VllmProfileCompiles(*in) && !user.activation_peak_bytes && p->kv_tokens > 0) {
    p->unknowns.push_back(VllmColdCompileUnknown(*in));
    p->figures["cold_compile_bytes"] = kVllmColdCompileHighBytes;  // AddSensitivity's range
  }
  // A context nobody asked for: none given, or the model's own carried by a sensitivity variant.
  const bool context_unasked = !user.context_length || user.context_from_model;
  if (in->framework == "sglang" && p->failure == "kv_pool_too_small" && context_unasked && p->kv_tokens > 1) {
    // SGLang does not refuse to start when the pool is shorter than the model's context
    // length (managers/scheduler.py, v0.2 on): max_req_input_len = min(context_len - 1,
    // max_total_num_tokens - 1) and max_running_requests = min(max_total_num_tokens // 2,
    // req_to_token_pool.size); longer requests are refused one by one. With a context
    // length nobody asked for (max_position_embeddings), that is a warning, not a failure.
    p->fits = true;
    p->warnings.push_back("the KV pool holds " + internal::WithCommas(p->kv_tokens) +
                          " tokens, less than the model's context length " +
                          internal::WithCommas(*in->context_length) +
                          ": SGLang starts and caps each request at " + internal::WithCommas(p->kv_tokens - 1) +
                          " input tokens and the running requests at the pool (max_running_requests = "
                          "min(pool / 2, request slots)); pass --context-length " +
                          std::to_string(p->kv_tokens) + " to say so, or raise --mem-fraction-static");
    p->failure.clear();
    p->error.clear();
    p->remedies.clear();
  } else if (p->failure == "kv_pool_too_small" && context_unasked && p->kv_tokens > 1 && in->context_length) {
    // TGI v3, LMDeploy and TensorRT-LLM shorten a context nobody asked for to their pool.
    const std::string w = ShortensContext(in->framework, in->version, p->kv_tokens, *in->context_length);
    if (!w.empty()) {
      p->fits = true;
      p->warnings.push_back(w);
      p->failure.clear();
      p->error.clear();
      p->remedies.clear();
    }
  }
  // TGI's decode CUDA graphs, captured after the cache, once the context is settled above.
  if (in->framework == "tgi") internal::SayTgiCaptureAfterPool(*in, *p);
  if (in->unified_memory) {
    UnifiedMemoryInput ui;
    ui.framework = in->framework;
    ui.version = in->version;
    ui.trtllm_backend = in->trtllm_backend.empty() ? TrtllmDefaultBackend(in->version) : in->trtllm_backend;
    ui.checkpoint_bytes = p->weights_bytes;
    ui.logged_peak = in->peak_from_log;
    if (auto u = UnifiedMemoryHostUse(ui)) p->unknowns.push_back(u->why);
    // What the OS and other programs hold is the device's memory there and nothing sizes it;
    // the free memory measured just before the launch (--free-at-init) does.
    if (!user.free_at_init_bytes) p->point_estimate_reliable = false;
  }
  SayHostReliability(user, in->total_bytes, *p);  // launch_plan_host.cc
  p->usable_tokens = p->kv_tokens;
  if (p->input.context_length && *p->input.context_length > 0) {
    p->max_concurrency = static_cast<double>(p->kv_tokens) / static_cast<double>(*p->input.context_length);
    if (p->figures.contains("kv_cache_groups") && p->figures.contains("max_concurrency") && p->kv_tokens > 0) {
      p->max_concurrency = p->figures["max_concurrency"].get<double>();
      p->usable_tokens = static_cast<int64_t>(p->max_concurrency * static_cast<double>(*p->input.context_length));
    }
  }
  return p;
}

}  // namespace internal

}  // namespace tpt::memory
