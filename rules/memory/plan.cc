// plan.cc: a launch configuration -> predicted ledger, KV pool, failure and remedies.
#include "rules/memory/plan.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "rules/memory/numeric.h"

namespace tpt::memory {
namespace {

using internal::FloorHundredths;

// cuBLAS handle state outside torch's allocator (anchors-allreduce.md §4.1, lazy loading).
constexpr double kCublasBytes = 66.0 * kMiB;

std::string Fixed2(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.2f", v);
  return buf;
}

std::string WithCommas(int64_t v) {
  std::string digits = std::to_string(v < 0 ? -v : v);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out.push_back(',');
    out.push_back(digits[i]);
  }
  return (v < 0 ? "-" : "") + out;
}

Remedy MakeRemedy(std::string flag, std::string value, std::string direction, std::string why) {
  Remedy r;
  r.flag = std::move(flag);
  r.value = std::move(value);
  r.direction = std::move(direction);
  r.why = std::move(why);
  return r;
}

// KV dtype of "auto": the model's activation dtype (fp32 only when the weights are fp32).
StatusOr<double> KvElementBytes(const PlanInput& in) {
  std::string model = in.weight_dtype == "fp32" || in.weight_dtype == "fp16" ? in.weight_dtype : "bf16";
  return KvDtypeBytes(in.kv_cache_dtype, model);
}

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
  if (avail < 0) {
    p.assumptions.push_back("the weights (" + FormatGiB(p.weights_bytes) + " per rank) do not fit in the free memory (" +
                            FormatGiB(p.free_at_init_bytes) + "): loading would fail with a CUDA OOM first");
    avail = 0;
  }

  auto cell = CellBytes(in, [&](const KvDims& d) { return SglangCellBytes(d, attn_tp, *era); });
  if (!cell.ok()) return cell.status();
  p.cell_bytes = *cell;

  p.fraction_flag = "--mem-fraction-static";
  if (in.mem_fraction_static) {
    p.fraction = *in.mem_fraction_static;
    p.fraction_source = "flag";
  } else {
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
    auto def = SglangDefaultMemFraction(d);
    if (!def.ok()) return def.status();
    p.fraction = def->mem_fraction_static;
    p.fraction_source = "default: " + def->rule;
  }

  SglangKvInput kv;
  kv.era = *era;
  kv.free_at_init_bytes = p.free_at_init_bytes;
  kv.avail_after_weights_bytes = avail;
  kv.mem_fraction_static = p.fraction;
  kv.cell_bytes = p.cell_bytes;
  kv.page_size = in.page_size;
  kv.max_total_tokens = in.max_total_tokens;
  kv.context_length = in.context_length;
  auto r = SglangKvPool(kv);
  if (!r.ok()) return r.status();

  RankMemory m;
  m.total_bytes = in.total_bytes;
  m.free_at_init_bytes = p.free_at_init_bytes;
  m.weights_bytes = p.weights_bytes;
  m.reserved_bytes = r->reserved_bytes;
  m.kv_pool_bytes = r->kv_pool_bytes;
  m.graphs_bytes = in.cuda_graph_bytes.value_or(0);
  p.row = BuildLedgerRow(m);
  p.kv_tokens = std::max<int64_t>(r->max_total_num_tokens, 0);

  p.figures = {{"reserved_bytes", r->reserved_bytes},
               {"rest_bytes", r->rest_bytes},
               {"avail_after_weights_bytes", avail},
               {"profiled_tokens", r->profiled_tokens},
               {"max_total_num_tokens", r->max_total_num_tokens},
               {"min_viable_mem_fraction_static", r->min_viable_mem_fraction_static}};
  if (r->mem_fraction_for_context) p.figures["mem_fraction_for_context"] = *r->mem_fraction_for_context;

  const double min_f = r->min_viable_mem_fraction_static;
  if (r->fails) {
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
  } else if (in.cuda_graph_bytes && *in.cuda_graph_bytes > r->reserved_bytes) {
    // SGLang captures graphs from the (1 - f) slice, which also holds activations.
    p.fits = false;
    p.failure = "cuda_graph_capture_oom";
    p.error = "CUDA graphs (" + FormatGiB(*in.cuda_graph_bytes) + ") exceed the reserved slice (" +
              FormatGiB(r->reserved_bytes) + ") they are captured from";
    AddGraphRemedy(in, r->reserved_bytes, p);
    double f_lower = FloorHundredths(1.0 - *in.cuda_graph_bytes / p.free_at_init_bytes);
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

  if (in.non_torch_bytes) {
    p.non_torch_bytes = *in.non_torch_bytes;
  } else {
    // cuBLAS + custom all-reduce, and the NCCL communicator where the baseline snapshot is
    // taken before distributed init (vllm-source.md §1.3(f): after it from 0.11).
    auto v = ParseVersion(in.version);
    bool nccl_in_increase = in.tp > 1 && v.ok() && CompareVersions(*v, {0, 11}) < 0;
    p.non_torch_bytes = kCublasBytes + (in.tp > 1 ? kCustomAllReduceBytes : 0) + (nccl_in_increase ? kNcclCommBytes : 0);
    p.assumptions.push_back("non-torch memory " + FormatGiB(p.non_torch_bytes) +
                            " (cuBLAS, custom all-reduce" + std::string(nccl_in_increase ? ", NCCL" : "") +
                            "); pass --non-torch from the log to override");
  }
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
  auto r = VllmKvPool(kv);
  if (!r.ok()) return r.status();

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
  p.kv_tokens = r->fails ? 0 : r->kv_tokens;
  p.figures = {{"requested_bytes", r->requested_bytes},
               {"non_kv_bytes", r->non_kv_bytes},
               {"graphs_in_budget_bytes", r->graphs_in_budget_bytes},
               {"kv_bytes", r->kv_bytes},
               {"num_blocks", r->num_blocks},
               {"kv_tokens", r->kv_tokens},
               {"estimated_max_model_len", r->estimated_max_model_len},
               {"min_util_one_block", r->min_util_one_block},
               {"max_util_startup", r->max_util_startup}};
  if (r->min_util_max_model_len) p.figures["min_util_max_model_len"] = *r->min_util_max_model_len;

  const double lo = r->min_util_one_block, hi = r->max_util_startup;
  auto no_util_fits = [&](const std::string& need) {
    p.remedies.push_back(MakeRemedy("--tensor-parallel-size", std::to_string(in.tp * 2), "increase",
                                    "no --gpu-memory-utilization works: the pool needs >= " + need +
                                        " but only " + Fixed2(hi) + " of the card is free at startup"));
  };
  if (r->startup_check_fails) {
    p.fits = false;
    p.failure = "startup_free_memory_short";
    if (hi >= lo) {
      p.remedies.push_back(MakeRemedy("--gpu-memory-utilization", Fixed2(hi), "decrease",
                                      "largest value the free memory at startup (" + FormatGiB(p.free_at_init_bytes) +
                                          " of " + FormatGiB(in.total_bytes) + ") allows"));
    } else {
      no_util_fits(Fixed2(lo));
    }
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
  } else if (r->graphs_overflow) {
    p.fits = false;
    p.failure = "cuda_graph_capture_oom";
    double left_for_graphs = m.reserved_bytes;
    p.error = "CUDA graphs (" + FormatGiB(kv.cuda_graph_bytes) + ") are captured after the KV cache, outside the "
              "budget, from the " + FormatGiB(left_for_graphs) + " left";
    double util = FloorHundredths(p.fraction - (kv.cuda_graph_bytes - left_for_graphs) / in.total_bytes);
    if (util >= lo) {
      p.remedies.push_back(MakeRemedy("--gpu-memory-utilization", Fixed2(util), "decrease",
                                      "leaves room for the graphs outside the budget"));
    }
    AddGraphRemedy(in, left_for_graphs, p);
  }
  if (!p.fits && p.error.empty()) p.error = r->error;
  return p;
}

}  // namespace

StatusOr<Plan> MakePlan(const PlanInput& in) {
  if (in.framework != "sglang" && in.framework != "vllm") {
    return InvalidArgumentError("--framework '" + in.framework + "' is not supported; use sglang or vllm");
  }
  if (!(in.total_bytes > 0)) return InvalidArgumentError("the GPU memory is unknown: give --gpu NAME or --gpu-mem SIZE");
  if (in.tp < 1 || in.pp < 1 || in.dp < 1) return InvalidArgumentError("--tp, --pp and --dp must be >= 1");
  Plan p;
  p.input = in;
  if (in.free_at_init_bytes) {
    p.free_at_init_bytes = *in.free_at_init_bytes;
  } else {
    p.free_at_init_bytes = DefaultFreeAtInit(in.total_bytes, in.tp);
    p.assumptions.push_back("free at init " + FormatGiB(p.free_at_init_bytes) +
                            " = total - CUDA context 0.61 GiB" + std::string(in.tp > 1 ? " - NCCL 0.54 GiB" : "") +
                            std::string(in.tp == 2 || in.tp == 4 || in.tp == 6 || in.tp == 8
                                            ? " - custom all-reduce 24 MiB" : "") +
                            " (measured on H200); pass --free-at-init from the log to override");
  }
  if (p.free_at_init_bytes > in.total_bytes) {
    return InvalidArgumentError("--free-at-init (" + FormatGiB(p.free_at_init_bytes) + ") is more than the GPU memory (" +
                                FormatGiB(in.total_bytes) + ")");
  }
  if (!(p.free_at_init_bytes > 0)) {
    return InvalidArgumentError("--free-at-init must be > 0 (got " + FormatGiB(p.free_at_init_bytes) + ")");
  }
  return in.framework == "sglang" ? PlanSglang(in, std::move(p)) : PlanVllm(in, std::move(p));
}

nlohmann::json PlanToJson(const Plan& p) {
  nlohmann::json j;
  j["schema_version"] = kPlanSchemaVersion;
  j["framework"] = p.input.framework;
  j["version"] = p.input.version;
  j["era"] = p.era;
  j["gpu"] = {{"name", p.input.gpu_name}, {"total_bytes", p.input.total_bytes}};
  j["tp"] = p.input.tp;
  j["pp"] = p.input.pp;
  j["cell_bytes"] = p.cell_bytes;
  std::string fraction_key = p.fraction_flag.substr(2);  // snake_case like every key (issue 16)
  std::replace(fraction_key.begin(), fraction_key.end(), '-', '_');
  j[fraction_key] = p.fraction;
  j["fraction_source"] = p.fraction_source;
  j["non_torch_bytes"] = p.non_torch_bytes;
  j["ledger"] = nlohmann::json::array({p.row});
  j["kv_tokens"] = p.kv_tokens;
  j["fits"] = p.fits;
  j["failure"] = p.failure;
  j["error"] = p.error;
  j["figures"] = p.figures;
  j["remedy"] = p.remedies;
  j["assumptions"] = p.assumptions;
  WholeBytes(&j);
  return j;
}

std::string PlanToText(const Plan& p) {
  std::string out;
  auto line = [&out](const std::string& s) { out += s + "\n"; };
  auto gib = [](double b) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%9.2f", b / kGiB);
    return std::string(buf);
  };
  std::string gpu = p.input.gpu_name.empty() ? FormatGiB(p.input.total_bytes) + " GPU"
                                             : p.input.gpu_name + " (" + FormatGiB(p.input.total_bytes) + ")";
  line("plan: " + p.input.framework + " " + p.input.version + " [" + p.era + "], tp " + std::to_string(p.input.tp) +
       " x " + gpu);
  line(p.fraction_flag + " " + Fixed2(p.fraction) + " (" + p.fraction_source + ")");
  line("");
  line("per rank                    GiB");
  line("  total              " + gib(p.row.total_bytes));
  line("  free at init       " + gib(p.row.free_at_init_bytes));
  line("  weights            " + gib(p.row.weights_bytes));
  if (p.non_torch_bytes > 0) line("  non-torch          " + gib(p.non_torch_bytes));
  line("  reserved           " + gib(p.row.reserved_bytes));
  line("  KV pool            " + gib(p.row.kv_pool_bytes) + "   " + WithCommas(p.kv_tokens) + " tokens x " +
       WithCommas(p.cell_bytes) + " B");
  if (p.row.graphs_bytes > 0) line("  CUDA graphs        " + gib(p.row.graphs_bytes));
  line("  left               " + gib(p.row.left_bytes) + (p.row.left_bytes < 0 ? "   (shortfall)" : ""));
  line("");
  if (p.fits) {
    line("fits: " + WithCommas(p.kv_tokens) + " KV tokens per rank");
  } else {
    line("predicted failure: " + p.failure);
    if (!p.error.empty()) line("  " + p.error);
  }
  for (const auto& r : p.remedies) line("remedy: " + r.flag + " " + r.value + " (" + r.direction + "): " + r.why);
  for (const auto& a : p.assumptions) line("assumed: " + a);
  return out;
}

}  // namespace tpt::memory
