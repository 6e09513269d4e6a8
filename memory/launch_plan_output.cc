// launch_plan_output.cc: MakePlan (launch_plan.h): the plan of launch_plan.cc's
// internal::Run, then the remedies and sensitivity ranges of
// launch_plan_remedies.cc; and the plan's JSON and text forms. The files call
// one way: this one -> remedies -> the plan core.
#include <algorithm>
#include <cstdio>

#include "memory/launch_command.h"
#include "memory/launch_plan.h"
#include "memory/launch_plan_internal.h"
#include "memory/tgi_graph_capture.h"
#include "memory/vllm_entrypoint.h"

namespace tpt::memory {

using internal::Fixed2;
using internal::WithCommas;

namespace {
// What the launch line of an input says about its server, parallelism and KV cache.
LaunchSpec ServerSpecOf(const PlanInput& in) {
  LaunchSpec s;
  s.framework = in.framework;
  s.model = in.model_path;
  s.tp = in.tp;
  s.pp = in.pp;
  s.dp = in.dp;
  s.kv_cache_dtype = in.kv_cache_dtype;
  s.quantize_fp8 = in.quantize_fp8_at_load;
  s.vllm_llm_class = in.framework == "vllm" && in.vllm_entrypoint == "llm";
  s.backend = in.framework == "trtllm"
                  ? (in.trtllm_backend.empty() ? TrtllmDefaultBackend(in.version) : in.trtllm_backend)
                  : in.lmdeploy_backend;
  s.tgi_input_length = in.framework == "tgi" && VersionBefore(in.version, {2, 0, 0});
  if (in.framework == "sglang" || in.framework == "vllm") s.quantization = in.quantization_method;
  s.enforce_eager = in.framework == "vllm" && in.enforce_eager;
  if (in.framework == "trtllm" && s.backend == "tensorrt") {
    s.trtllm_engine_build = in.trtllm_engine_build;
    s.explicit_tensorrt_backend = TrtllmDefaultBackend(in.version) != "tensorrt";
  }
  return s;
}

// The launch line of a plan: every value the plan used that the server would not pick
// itself, and (TGI, TensorRT-LLM, LMDeploy) the defaults it leaves in place.
StatusOr<LaunchLine> LaunchLineOf(const Plan& p) {
  const PlanInput& in = p.input;
  const bool sglang = in.framework == "sglang";
  LaunchSpec s = ServerSpecOf(in);
  s.fraction = p.fraction;
  // A context the pool does not hold (the server's warning) is not the server's to be told;
  // nor, for TGI v3, the model's own context: told, it replaces the max_total_tokens the
  // server would set from the pool or the warm-up (flash_causal_lm.py warmup, v3.0.1-v3.3.6).
  const bool tgi_v3_own = in.framework == "tgi" && in.context_from_model && !VersionBefore(in.version, {3, 0, 0});
  if (p.warnings.empty() && !tgi_v3_own) s.context_length = in.context_length;
  if (sglang) {
    if (in.cuda_graph_max_bs) s.max_batch_size = *in.cuda_graph_max_bs;
    if (in.chunked_prefill_size) s.max_batch_tokens = *in.chunked_prefill_size;
    s.enable_dp_attention = in.enable_dp_attention;
    s.enable_multimodal = in.sglang_enable_multimodal;
    s.speculative_algorithm = in.speculative_algorithm;
    s.max_running_requests = in.max_running_requests;
    s.max_mamba_cache_size = in.max_mamba_cache_size;
    s.disable_radix_cache = in.disable_radix_cache;
  } else if (in.max_num_batched_tokens) {
    s.max_batch_tokens = *in.max_num_batched_tokens;
  }
  if (in.framework == "vllm" && in.mm_limits) {
    s.mm_limits = VllmMmLimitsFlag(*in.mm_limits, in.version);
    s.mm_limits_images = static_cast<int>(in.mm_limits->image);
    s.mm_limits_videos = static_cast<int>(in.mm_limits->video);
  }
  if (in.framework == "vllm") s.performance_mode = in.vllm_performance_mode;
  if (!sglang && in.max_num_seqs) s.max_batch_size = static_cast<int>(*in.max_num_seqs);
  if (p.figures.contains("max_batch_total_tokens")) s.max_batch_total_tokens = p.figures["max_batch_total_tokens"].get<int64_t>();
  s.tgi_prefill_logprobs = in.framework == "tgi" && in.tgi_prefill_logprobs;
  if (in.framework == "tgi" && in.tgi_cuda_graphs) s.tgi_cuda_graphs = TgiCudaGraphsFlag(*in.tgi_cuda_graphs);
  if (in.framework == "tgi" && p.figures.contains("max_input_tokens")) {
    s.max_input_tokens = p.figures["max_input_tokens"].get<int64_t>();
  }
  return RenderLaunch(s);
}
}  // namespace

StatusOr<Plan> MakePlan(const PlanInput& in) {
  if (in.tp > 1024 || in.pp > 256 || in.dp > 4096 || in.ep > 4096) {
    return InvalidArgumentError("--tp " + std::to_string(in.tp) + " / --pp " + std::to_string(in.pp) + " / --dp " +
                                std::to_string(in.dp) + " is beyond any deployment (tp <= 1024, pp <= 256)");
  }
  if (in.concurrency < 1) return InvalidArgumentError("--concurrency must be >= 1");
  {
    // What the server's own launcher cannot take (a KV dtype it lacks, parallelism it has
    // not) is a usage error before any arithmetic, whether the plan fits or not.
    if (auto l = RenderLaunch(ServerSpecOf(in)); !l.ok()) return InvalidArgumentError(l.status().message());
  }
  auto p = internal::Run(in);
  if (!p.ok()) return p.status();
  if (in.version_assumed) {
    p->assumptions.insert(p->assumptions.begin(),
                          "server version not given: " + in.version + " assumed (newest formulas); pass --server-version");
  }
  if (in.model) p->model_summary = DescribeModel(*in.model);
  // --concurrency is a requirement: a pool that holds fewer full-length requests
  // than asked fails the plan, and the remedies aim at it.
  if (in.concurrency_required && p->fits && p->input.context_length && *p->input.context_length > 0 &&
      p->max_concurrency + 1e-9 < in.concurrency) {
    char buf[256];
    std::snprintf(buf, sizeof buf, "the KV pool holds %.2f requests of %s tokens; --concurrency asks %d",
                  p->max_concurrency, internal::WithCommas(*p->input.context_length).c_str(), in.concurrency);
    p->fits = false;
    p->failure = "kv_pool_too_small";
    p->error = buf;
    // SGLang serves anyway, capping the running requests at the pool: the rest queue.
    if (in.framework == "sglang") p->error += " (SGLang starts, but caps running requests at the pool: the rest wait)";
  }
  internal::AddRemedies(in, *p);
  if (in.framework == "vllm" && in.vllm_entrypoint == "llm") SpellRemediesForLlmClass(p->remedies);
  if (p->fits) {
    if (auto l = LaunchLineOf(*p); l.ok()) {
      p->launch_command = l->command;
      for (const auto& d : l->defaults) {
        // Said once: a default the plan itself assumed (and said) is not repeated.
        const std::string flag = d.substr(0, d.find(':'));
        bool said = false;
        for (const auto& a : p->assumptions) said = said || a.rfind(flag + " ", 0) == 0;
        if (!said) p->assumptions.push_back("launch leaves to the server: " + d);
      }
    }
  }
  internal::AddSensitivity(in, *p);
  internal::SayCoTenantMargin(in, *p);
  internal::SayModifiedCardUnvouched(in, *p);
  return p;
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
  std::string fraction_key = p.fraction_flag.substr(2);  // snake_case like every key
  std::replace(fraction_key.begin(), fraction_key.end(), '-', '_');
  j[fraction_key] = p.fraction;
  j["fraction_source"] = p.fraction_source;
  j["non_torch_bytes"] = p.non_torch_bytes;
  j["ledger"] = nlohmann::json::array({p.row});
  j["kv_tokens"] = p.kv_tokens;
  j["fits"] = p.fits;
  j["launch_command"] = p.launch_command.empty() ? nlohmann::json(nullptr) : nlohmann::json(p.launch_command);
  j["failure"] = p.failure;
  j["error"] = p.error;
  j["figures"] = p.figures;
  j["remedy"] = p.remedies;
  j["assumptions"] = p.assumptions;
  j["warnings"] = p.warnings;
  j["unknowns"] = p.unknowns;
  j["host"] = HostPlatformName(p.input.host);
  j["point_estimate_reliable"] = p.point_estimate_reliable;
  j["outcome_certain"] = p.outcome_certain;
  j["context_length"] = p.input.context_length ? nlohmann::json(*p.input.context_length) : nlohmann::json();
  j["max_concurrency"] = p.max_concurrency;
  j["sensitivity"] = nlohmann::json::array();
  for (const auto& s : p.sensitivity) {
    j["sensitivity"].push_back({{"assumption", s.assumption},
                                {"kv_tokens_low", s.kv_tokens_low},
                                {"kv_tokens_high", s.kv_tokens_high},
                                {"fits_low", s.fits_low},
                                {"fits_high", s.fits_high}});
  }
  if (!p.model_summary.empty()) j["model"] = p.model_summary;
  if (p.weights) {
    j["weights"] = {{"per_rank_bytes", p.weights->per_rank_bytes},
                    {"loaded_total_bytes", p.weights->loaded_total_bytes},
                    {"config_total_bytes", p.weights->config_total_bytes},
                    {"source", p.weights->source},
                    {"notes", p.weights->notes}};
    if (p.weights->index_total_bytes) j["weights"]["index_total_bytes"] = *p.weights->index_total_bytes;
  }
  WholeBytes(&j);
  return j;
}

std::string LaunchCommand(const Plan& p) {
  auto l = LaunchLineOf(p);
  return l.ok() ? l->command : "";
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
  if (!p.model_summary.empty()) line("model: " + p.model_summary);
  line(p.fraction_flag + " " + Fixed2(p.fraction) + " (" + p.fraction_source + ")");
  line("");
  line("per rank                    GiB");
  line("  total              " + gib(p.row.total_bytes));
  line("  free at init       " + gib(p.row.free_at_init_bytes));
  line("  weights            " + gib(p.row.weights_bytes));
  if (p.non_torch_bytes > 0) line("  non-torch          " + gib(p.non_torch_bytes));
  line("  reserved           " + gib(p.row.reserved_bytes));
  if (p.figures.contains("request_table_bytes")) {  // SGLang's, paid from reserved (sglang_request_table.h)
    line("  request table      " + gib(p.figures["request_table_bytes"].get<double>()) + "   " +
         WithCommas(p.figures["request_table_rows"].get<int64_t>()) + " x " +
         WithCommas(p.figures["request_table_columns"].get<int64_t>()) + " int32, inside reserved");
  }
  // The pool's bytes as tokens of the cell; vLLM from 0.20.1 logs its concurrency in
  // tokens instead (kv_tokens), which for hybrid KV groups is far more (vllm_model.cc).
  const int64_t pool_tokens =
      p.figures.contains("pool_tokens") ? p.figures["pool_tokens"].get<int64_t>() : p.kv_tokens;
  // LMDeploy TurboMind v0.1.x: the pool is a cap its BlockManager allocates a block at a time as
  // requests come (lmdeploy_model.cc), so a cap past the free memory is no start-up shortfall.
  const bool cap = p.figures.contains("kv_pool_is_cap") && p.figures["kv_pool_is_cap"].get<bool>();
  line(std::string(cap ? "  KV pool (cap)      " : "  KV pool            ") + gib(p.row.kv_pool_bytes) + "   " +
       WithCommas(pool_tokens) + " tokens x " + WithCommas(p.cell_bytes) + " B");
  if (p.row.graphs_bytes > 0) line("  CUDA graphs        " + gib(p.row.graphs_bytes));
  if (cap && p.row.left_bytes < 0) {
    line("  left               " + gib(p.row.left_bytes) + "   (under the pool's cap: allocated as requests come, "
         "not at start)");
  } else {
    line("  left               " + gib(p.row.left_bytes) + (p.row.left_bytes < 0 ? "   (shortfall)" : ""));
  }
  line("");
  if (p.fits) {
    std::string conc;
    if (p.max_concurrency > 0) {
      char buf[96];
      std::snprintf(buf, sizeof(buf), "; maximum concurrency for %s tokens per request: %.2fx",
                    WithCommas(*p.input.context_length).c_str(), p.max_concurrency);
      conc = buf;
    }
    const std::string& fw = p.input.framework;
    const std::string pool = fw == "sglang"     ? "SGLang's max_total_num_tokens"
                             : fw == "vllm"     ? "vLLM's GPU KV cache size"
                             : fw == "tgi"      ? "TGI's max_batch_total_tokens"
                             : fw == "trtllm"   ? "TensorRT-LLM's max tokens in the paged KV cache"
                                                : "LMDeploy's max_block_count x block tokens";
    line(std::string(p.outcome_certain ? "fits: " : "fits, not certain (unknown: below): ") + "a KV pool of " +
         WithCommas(p.kv_tokens) + " tokens (" + pool + ")" + conc);
    for (const auto& w : p.warnings) line("warning: " + w);
    if (!p.launch_command.empty()) line("launch: " + p.launch_command);
  } else {
    line((p.outcome_certain ? "predicted failure: " : "may fail: ") + p.failure);
    if (!p.error.empty()) line("  " + p.error);
  }
  if (!p.point_estimate_reliable && p.input.unified_memory && p.input.host == HostPlatform::kLinux) {
    line("not reliable: the KV figure above assumes nothing else holds this unified-memory device's memory (the "
         "OS, other programs); pass --free-at-init with the free memory measured just before the launch (unknown: "
         "below)");
  } else if (!p.point_estimate_reliable) {
    line("not reliable: the KV figure above assumes a Linux host; on this " + HostPlatformName(p.input.host) +
         " host the OS holds memory no input sizes (unknown: below)");
  }
  for (const auto& r : p.remedies) line("remedy: " + RemedySetting(r) + ": " + r.why);
  for (const auto& u : p.unknowns) line("unknown: " + u);
  for (const auto& a : p.assumptions) line("assumed: " + a);
  if (p.weights) {
    for (const auto& n : p.weights->notes) line("weights: " + n);
  }
  if (!p.sensitivity.empty()) {
    int64_t lo = p.kv_tokens, hi = p.kv_tokens;
    for (const auto& s : p.sensitivity) {
      line("range: " + s.assumption + ": " + WithCommas(s.kv_tokens_low) + " - " + WithCommas(s.kv_tokens_high) +
           " KV tokens" + (s.fits_low != s.fits_high || s.fits_low != p.fits ? " (the outcome changes)" : ""));
      lo = std::min(lo, s.kv_tokens_low);
      hi = std::max(hi, s.kv_tokens_high);
    }
    line("range: all together about " + WithCommas(lo) + " - " + WithCommas(hi) + " KV tokens");
  }
  return out;
}

}  // namespace tpt::memory
