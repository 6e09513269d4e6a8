// launch_plan_remedies.cc: the remedies of a plan (a useful value first, the floor
// second, else the smallest TP, FP8 weights or the longest context that fits), each
// checked by planning again with it, and the ranges that unknown inputs span.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>

#include "memory/launch_plan_internal.h"
#include "memory/numeric.h"
#include "memory/tgi_warmup_held.h"
#include "memory/unified_memory.h"

namespace tpt::memory::internal {
namespace {

constexpr int64_t kUsefulTokensWithoutContext = 8192;

// The pool a useful server needs: `concurrency` requests of the context length.
int64_t UsefulTokens(const PlanInput& in, const Plan& p) {
  int64_t ctx = p.input.context_length.value_or(kUsefulTokensWithoutContext);
  return ctx * std::max(in.concurrency, 1);
}

// Smallest (or, `largest`, the largest) fraction (2 decimals) in [from, to] whose plan
// fits and holds `tokens`.
std::optional<std::pair<double, Plan>> SmallestFraction(const PlanInput& in, double from, double to, int64_t tokens,
                                                         bool largest = false) {
  const int lo = static_cast<int>(std::ceil(from * 100 - 1e-9)), hi = static_cast<int>(std::floor(to * 100 + 1e-9));
  for (int i = lo; i <= hi; ++i) {
    const int k = largest ? hi - (i - lo) : i;
    PlanInput t = in;
    double f = k / 100.0;
    SetFraction(t, f);
    auto p = Run(t);
    if (p.ok() && p->fits && p->usable_tokens >= tokens) return std::make_pair(f, *p);
  }
  return std::nullopt;
}

// The input with another TP: weights re-derived from the model, or scaled when they were given.
PlanInput WithTp(const PlanInput& in, int tp) {
  PlanInput t = in;
  t.tp = tp;
  if (!in.model) {
    double w = in.weights_bytes.value_or(0);
    if (in.avail_after_weights_bytes) {
      w = in.free_at_init_bytes.value_or(in.total_bytes) - *in.avail_after_weights_bytes;
      t.avail_after_weights_bytes.reset();
    }
    t.weights_bytes = w * in.tp / tp;
    if (in.cell_bytes && in.dims.kv_lora_rank == 0) t.cell_bytes = std::max<int64_t>(1, *in.cell_bytes * in.tp / tp);
  }
  return t;
}

std::vector<int> TpCandidates(const PlanInput& in) {
  std::vector<int> out;
  std::vector<int> valid = in.model ? ValidTensorParallelSizes(*in.model, 64) : std::vector<int>{1, 2, 4, 8, 16, 32, 64};
  for (int tp : valid) {
    if (tp > in.tp) out.push_back(tp);
  }
  return out;
}

// SGLang's value that serves, from the one function analyze's Fix uses
// (memory_model.h SglangServingFraction): the largest --mem-fraction-static that keeps
// SGLang's own headroom for activations and CUDA graphs, or the value that holds the
// requests asked when that is larger; re-planned here, and raised to the smallest value
// the plan finds holding them when the cell arithmetic alone does not (hybrid pools,
// page rounding). nullopt when no fraction serves (more TP comes next) or when even the
// floor eats into the headroom and the requests are not held.
std::optional<std::pair<double, Plan>> SglangServingValue(const PlanInput& in, const Plan& p, int64_t useful,
                                                          std::string* why) {
  if (!p.figures.contains("avail_after_weights_bytes")) return std::nullopt;
  const SglangDefaultsInput d = SglangDefaultsOf(in);
  const bool ctx_known = p.input.context_length.has_value();
  const double avail = p.figures["avail_after_weights_bytes"].get<double>();
  auto s = SglangServingFraction(p.free_at_init_bytes, avail, d, p.cell_bytes, ctx_known ? useful : 0);
  if (!s.ok() || s->short_of_headroom) return std::nullopt;
  PlanInput t = in;
  t.mem_fraction_static = s->mem_fraction_static;
  auto q = Run(t);
  if (!q.ok() || !q->fits) return std::nullopt;
  std::pair<double, Plan> at{s->mem_fraction_static, *q};
  std::string held;
  if (ctx_known) {
    if (q->usable_tokens < useful) {
      auto more = SmallestFraction(in, s->mem_fraction_static, 0.99, useful);
      if (!more) return std::nullopt;
      at = *more;
    }
    const int64_t ctx = *p.input.context_length;
    held = ", holds " + std::to_string(at.second.usable_tokens / std::max<int64_t>(ctx, 1)) + " request(s) of " +
           WithCommas(ctx) + " tokens" +
           (in.concurrency > 1 ? " (" + std::to_string(in.concurrency) + " asked)" : std::string());
  }
  char buf[96];
  std::snprintf(buf, sizeof(buf), "%.1f GiB", s->headroom_bytes / kGiB);
  std::string lead = at.first > s->mem_fraction_static + 1e-9
                         ? "the value that holds the requests asked (SGLang's own headroom alone gives " +
                               Fixed2(s->mem_fraction_static) + ")"
                         : s->for_context ? "the value that holds the requests asked, above SGLang's headroom value"
                                          : "the value that serves: the largest that keeps SGLang's own headroom of " +
                                                std::string(buf) + " a rank for activations and CUDA graphs";
  std::snprintf(buf, sizeof(buf), "%.2f GiB", s->bytes_per_step / kGiB);
  *why = lead + "; a pool of " + WithCommas(at.second.kv_tokens) + " tokens" + held + "; each +0.01 adds " + buf +
         " a rank (checked with this plan)";
  return at;
}

}  // namespace

void SetFraction(PlanInput& in, double f) {
  if (in.framework == "sglang") in.mem_fraction_static = f;
  else if (in.framework == "vllm") in.gpu_memory_utilization = f;
  else in.memory_fraction = f;
}

namespace {
void AddFractionTpQuantContextRemedies(const PlanInput& in, Plan& p);

// vLLM V1 profiles a multimodal model on its heaviest dummy item: at the default limits a
// Qwen-VL video of up to 16 frames at 12.8 MP (vllm_mm_profile.cc). Without video
// (--limit-mm-per-prompt video 0) it encodes the image instead; the remedy is that, planned
// again, when it fits and holds what was asked. Video requests are then refused.
std::optional<Remedy> VideoOffRemedy(const PlanInput& in, const Plan& p, int64_t useful) {
  if (in.framework != "vllm" || p.input.encoder_modality != "video" || p.failure == "weights_oom") return std::nullopt;
  PlanInput t = in;
  VllmMmLimits limits = in.mm_limits.value_or(VllmMmLimits::Default());
  // Images keep what was given, else the version's default (vllm_mm_profile.h).
  if (!limits.given) limits.image = VersionBefore(in.version, {0, 9}) ? 1 : 999;
  limits.given = true;
  limits.video = 0;
  limits.image = std::max(limits.image, 1);
  t.mm_limits = limits;
  auto q = Run(t);
  if (!q.ok() || !q->fits || q->usable_tokens < useful) return std::nullopt;
  return MakeRemedy("--limit-mm-per-prompt", VllmMmLimitsFlag(limits, in.version), "set",
                    "the profiling run encodes a dummy video at the processor's largest size (encoder peak " +
                        FormatGiB(p.input.encoder_peak_bytes) + "); without video it encodes an image (" +
                        FormatGiB(q->input.encoder_peak_bytes) + ") and leaves a pool of " +
                        WithCommas(q->kv_tokens) + " tokens (checked with this plan; video requests are refused)");
}
}  // namespace

// vLLM's CUDA graphs, captured after the KV cache from what it leaves (V1 before 0.21, V0),
// did not fit: the largest --gpu-memory-utilization whose smaller pool leaves them room and
// still holds the useful tokens, and --enforce-eager (no graphs), each planned again.
// Fewer capture sizes would also serve, but a measured --cuda-graph-mem is one figure at
// the default sizes and no source sizes a graph (vllm_graph_capture.h): not proposed.
void AddVllmCaptureRemedies(const PlanInput& in, Plan& p) {
  const int64_t useful = UsefulTokens(in, p);
  const std::string useful_what = p.input.context_length
                                      ? std::to_string(std::max(in.concurrency, 1)) + " request(s) of " +
                                            WithCommas(*p.input.context_length) + " tokens"
                                      : WithCommas(useful) + " tokens (no context length given)";
  std::vector<Remedy> out;
  if (auto lower = SmallestFraction(in, 0.01, p.fraction - 0.01, useful, /*largest=*/true)) {
    out.push_back(MakeRemedy("--gpu-memory-utilization", Fixed2(lower->first), "decrease",
                             "a smaller pool leaves the CUDA graphs room outside the budget: a pool of " +
                                 WithCommas(lower->second.kv_tokens) + " tokens, holding " + useful_what +
                                 " (checked with this plan)"));
  }
  PlanInput eager = in;
  eager.enforce_eager = true;
  eager.cuda_graph_bytes.reset();
  if (auto q = Run(eager); q.ok() && q->fits && q->usable_tokens >= useful) {
    out.push_back(MakeRemedy("--enforce-eager", "", "set",
                             "no CUDA graphs are captured (decoding runs eagerly, slower): a pool of " +
                                 WithCommas(q->kv_tokens) + " tokens (checked with this plan)"));
  }
  for (const auto& r : p.remedies) out.push_back(r);  // the core's, e.g. a smaller graph batch
  p.remedies = out;
}

void AddRemedies(const PlanInput& in, Plan& p) {
  if (!p.fits && p.failure == "cuda_graph_capture_oom" && in.framework == "vllm") AddVllmCaptureRemedies(in, p);
  if (p.fits || p.failure == "cuda_graph_capture_oom") return;
  AddFractionTpQuantContextRemedies(in, p);
  if (auto r = VideoOffRemedy(in, p, UsefulTokens(in, p))) {
    p.remedies.insert(p.remedies.begin() + std::min<size_t>(p.remedies.size(), 1), *r);
  }
}

namespace {
// A warm-up after the cache did not fit: the largest halving of `value` (down to `least`) whose
// plan fits and holds `useful` tokens, then the largest smaller fraction that does; each
// re-planned. Empty when neither helps.
std::vector<Remedy> WarmupAfterCacheRemedies(const PlanInput& in, const Plan& p, int64_t useful,
                                             const std::string& useful_what, const std::string& fraction_flag,
                                             const std::string& warmup, const std::string& value_flag, int64_t value,
                                             int64_t least, const std::function<void(PlanInput&, int64_t)>& set,
                                             const std::function<std::string(int64_t)>& why) {
  std::vector<Remedy> out;
  for (int64_t n = value / 2; n >= least; n /= 2) {
    PlanInput t = in;
    set(t, n);
    auto q = Run(t);
    if (!q.ok() || !q->fits || q->usable_tokens < useful) continue;
    out.push_back(MakeRemedy(value_flag, std::to_string(n), "decrease",
                             why(n) + ", with a pool of " + WithCommas(q->kv_tokens) + " tokens (checked with this plan)"));
    break;
  }
  if (auto lower = SmallestFraction(in, 0.01, p.fraction - 0.01, useful, /*largest=*/true)) {
    out.push_back(MakeRemedy(fraction_flag, Fixed2(lower->first), "decrease",
                             "leaves room for " + warmup + " after the cache: a pool of " +
                                 WithCommas(lower->second.kv_tokens) + " tokens, holding " + useful_what +
                                 " (checked with this plan)"));
  }
  return out;
}

void AddFractionTpQuantContextRemedies(const PlanInput& in, Plan& p) {
  if (p.fits || p.failure == "cuda_graph_capture_oom") return;  // graphs: the core's bs/fraction remedies
  const bool sglang = in.framework == "sglang";
  const ServerFlags F = FlagsOf(in.framework);
  const std::string flag = F.fraction;
  const double top = F.max_fraction;
  const int64_t useful = UsefulTokens(in, p);
  std::string useful_what = p.input.context_length
                                ? std::to_string(std::max(in.concurrency, 1)) + " request(s) of " +
                                      WithCommas(*p.input.context_length) + " tokens"
                                : WithCommas(useful) + " tokens (no context length given)";
  std::vector<Remedy> out;
  // TGI before v0.9.4 allocates --max-batch-total-tokens of KV before its warm-up prefill:
  // the largest total (a multiple of 1000) that still holds the prefill budget and one
  // request of max_total_tokens and whose warm-up fits.
  if (p.failure == "warmup_oom" && in.framework == "tgi" && p.figures.contains("max_batch_total_tokens")) {
    const int64_t cur = p.figures["max_batch_total_tokens"].get<int64_t>();
    const int64_t least = std::max<int64_t>(p.figures["warmup_prefill_tokens"].get<int64_t>(),
                                            p.input.context_length.value_or(1));
    auto fits = [&](int64_t t) {
      PlanInput q = in;
      q.max_batch_total_tokens = t;
      auto r = Run(q);
      return r.ok() && r->fits;
    };
    if (least < cur && fits(least)) {
      int64_t lo = least, hi = cur;  // fits(lo), !fits(hi)
      while (hi - lo > 1) {
        const int64_t mid = lo + (hi - lo) / 2;
        (fits(mid) ? lo : hi) = mid;
      }
      const int64_t t = std::max(least, lo / 1000 * 1000);
      out.push_back(MakeRemedy("--max-batch-total-tokens", std::to_string(t), "decrease",
                               "TGI before v0.9.4 allocates the KV cache of --max-batch-total-tokens before its "
                               "warm-up prefill: " + WithCommas(t) + " tokens leave room for the prefill of " +
                                   WithCommas(p.figures["warmup_prefill_tokens"].get<int64_t>()) +
                                   " tokens (checked with this plan)"));
    }
  }
  // The warm-up forward (TGI's prefill, TensorRT-LLM's estimation pass) did not fit: its
  // token budget is what grows its activations; the largest multiple of 1024 below it
  // whose plan fits and holds the requests (TGI before v3 keeps it >= max_input_tokens).
  if (p.failure == "warmup_oom" && p.figures.contains("warmup_prefill_tokens") &&
      (in.framework == "tgi" || in.framework == "trtllm")) {
    const int64_t cur = p.figures["warmup_prefill_tokens"].get<int64_t>();
    const bool tgi2 = in.framework == "tgi" && VersionBefore(in.version, {3, 0, 0});
    const int64_t least = !tgi2                                ? 1024
                          : p.figures.contains("max_input_tokens") ? p.figures["max_input_tokens"].get<int64_t>()
                          : p.input.context_length                 ? *p.input.context_length - 1
                                                                   : 1024;
    bool found = false;
    for (int64_t b = (cur - 1) / 1024 * 1024; b >= std::max<int64_t>(least, 1024); b -= 1024) {
      PlanInput t = in;
      t.max_num_batched_tokens = b;
      auto q = Run(t);
      if (!q.ok() || !q->fits || q->usable_tokens < useful) continue;
      out.push_back(MakeRemedy(in.framework == "tgi" ? "--max-batch-prefill-tokens" : "--max_num_tokens",
                               std::to_string(b), "decrease",
                               "the warm-up's activations and blocks grow with its tokens: " + std::to_string(b) +
                                   " fit and leave a pool of " + WithCommas(q->kv_tokens) + " tokens, holding " +
                                   useful_what + " (checked with this plan)"));
      found = true;
      break;
    }
    // TGI before v3 keeps the budget >= max_input_tokens (launcher/src/main.rs): when the
    // input the user asked for is what holds the budget up, the longest input (a multiple of
    // 1024) whose warm-up of input + 50 tokens fits.
    const bool input_given = in.tgi_max_input_tokens || in.tgi_max_input_length;
    if (tgi2 && !found && input_given && p.figures.contains("max_input_tokens")) {
      const std::string flag = in.tgi_max_input_length ? "--max-input-length" : "--max-input-tokens";
      for (int64_t x = (least - 1) / 1024 * 1024; x >= 1024; x -= 1024) {
        PlanInput t = in;
        (in.tgi_max_input_length ? t.tgi_max_input_length : t.tgi_max_input_tokens) = x;
        if (in.max_num_batched_tokens) t.max_num_batched_tokens = x + 50;
        auto q = Run(t);
        if (!q.ok() || !q->fits || q->usable_tokens < useful) continue;
        out.push_back(MakeRemedy(flag, std::to_string(x), "decrease",
                                 "with --max-batch-prefill-tokens " + std::to_string(x + 50) +
                                     " (TGI's launcher refuses a budget below the input): that warm-up fits and leaves "
                                     "a pool of " + WithCommas(q->kv_tokens) + " tokens, holding " + useful_what +
                                     " (checked with this plan)"));
        break;
      }
    }
  }
  // A warm-up after the cache that did not fit: TurboMind's start-up GEMM tuning pass
  // (turbomind_tuning.cc; its forward runs max_prefill_token_num + max_batch_size tokens) or
  // vLLM's sampler warm-up (the largest power-of-two --max-num-seqs below the one in use).
  if (p.failure == "warmup_oom" && in.framework == "lmdeploy" && p.figures.contains("turbomind_tuning_bytes")) {
    out = WarmupAfterCacheRemedies(
        in, p, useful, useful_what, flag, "the tuning pass", "--max-prefill-token-num",
        in.max_num_batched_tokens.value_or(8192), 256, [](PlanInput& t, int64_t n) { t.max_num_batched_tokens = n; },
        [](int64_t) { return std::string("the tuning pass's forward shrinks with it and fits in what the KV cache leaves"); });
    if (!out.empty()) {
      p.remedies = out;
      return;
    }
  } else if (p.failure == "warmup_oom" && in.framework == "vllm" && p.figures.contains("sampler_warmup_bytes")) {
    // The requests the warm-up ran (the version's and card's default when not given).
    const int64_t seqs = in.max_num_seqs.value_or(0) > 0 ? *in.max_num_seqs
                         : p.figures.contains("sampler_warmup_requests")
                             ? p.figures["sampler_warmup_requests"].get<int64_t>()
                             : 1024;
    out = WarmupAfterCacheRemedies(
        in, p, useful, useful_what, flag, "the sampler warm-up", "--max-num-seqs", seqs, 1,
        [](PlanInput& t, int64_t n) { t.max_num_seqs = n; },
        [](int64_t n) { return "the sampler warm-up of " + std::to_string(n) + " requests fits in what the KV cache leaves"; });
    if (!out.empty()) {
      p.remedies = out;
      return;
    }
  }
  // A fraction only helps when the weights load.
  if (p.failure != "weights_oom" && p.failure != "warmup_oom") {
    // Too little KV: the smallest fraction that is enough (the rest stays for activations
    // and graphs). Too much asked of the card (startup check): the largest that passes.
    const bool down = p.failure == "startup_free_memory_short";
    std::string useful_why;
    auto useful_f = sglang ? SglangServingValue(in, p, useful, &useful_why)
                           : SmallestFraction(in, 0.01, down ? p.fraction : top, useful, down);
    // The floor: the server starts. SGLang starts with a pool shorter than the context
    // (long requests are refused); vLLM refuses to start (max_model_len check).
    PlanInput starts = in;
    if (in.framework == "sglang") starts.context_length = 1;
    auto floor_f = SmallestFraction(starts, 0.01, down ? p.fraction : top, 1, down);
    if (useful_f) {
      out.push_back(MakeRemedy(flag, Fixed2(useful_f->first), useful_f->first > p.fraction ? "increase" : "decrease",
                               useful_why.empty() ? "holds " + useful_what + ": a pool of " +
                                                        WithCommas(useful_f->second.kv_tokens) +
                                                        " tokens (checked with this plan)"
                                                  : useful_why));
    }
    if (useful_f && floor_f && !down && floor_f->first < useful_f->first) {
      out.push_back(MakeRemedy(flag, Fixed2(floor_f->first), floor_f->first > p.fraction ? "increase" : "decrease",
                               "the floor: the server starts, with a pool of only " +
                                   WithCommas(floor_f->second.kv_tokens) + " tokens"));
    }
    if (useful_f && p.failure == "kv_pool_too_small" && p.input.context_length) {
      const bool sg = in.framework == "sglang";
      // vLLM's hybrid groups hold a longer request than the logged token count (the
      // sliding layers keep only the window): its own estimate.
      const int64_t longest = !sg && p.figures.contains("kv_cache_groups") && p.figures.contains("estimated_max_model_len")
                                  ? p.figures["estimated_max_model_len"].get<int64_t>()
                                  : p.kv_tokens;
      out.push_back(MakeRemedy(F.context, std::to_string(longest), "decrease",
                               "or keep " + flag + " " + Fixed2(p.fraction) +
                                   ": the longest request the predicted pool holds"));
    }
    // A KV cache in FP8 halves the bytes a token takes (SGLang and vLLM
    // --kv-cache-dtype fp8_e4m3): the same fraction holds twice the tokens.
    if (p.failure == "kv_pool_too_small" && !F.kv8_flag.empty() &&
        (in.kv_cache_dtype == "auto" || in.kv_cache_dtype == "bf16" || in.kv_cache_dtype == "fp16")) {
      PlanInput t = in;
      t.kv_cache_dtype = in.framework == "lmdeploy" ? "int8" : "fp8_e4m3";
      if (in.cell_bytes) t.cell_bytes = std::max<int64_t>(1, *in.cell_bytes / 2);
      // A TensorRT engine's KV dtype is fixed when its checkpoint is made (quantize.py).
      const bool engine = p.figures.contains("runtime_buffers_bytes");
      if (auto q = Run(t); q.ok() && q->fits && q->usable_tokens >= useful) {
        out.push_back(MakeRemedy(engine ? "--kv_cache_dtype" : F.kv8_flag, engine ? "fp8" : F.kv8_value, "set",
                                 "holds " + useful_what + " at " + flag + " " + Fixed2(p.fraction) + ": a pool of " +
                                     WithCommas(q->kv_tokens) + " tokens in an 8-bit KV cache (checked with this plan; "
                                     "a small accuracy cost" +
                                     (engine ? "; quantize.py's flag: convert the checkpoint and trtllm-build again"
                                      : in.framework == "trtllm" ? "; the file holds `kv_cache_config: {dtype: fp8}`"
                                                                 : "") +
                                     ")"));
      }
    }
    if (useful_f) {
      p.remedies = out;
      return;
    }
  }
  // No fraction gives a useful pool: the smallest TP that does, at the fraction in use
  // when one does (the remedy is then the one change), else with the fraction it needs.
  bool tp_found = false;
  for (int pass = 0; pass < 2 && !tp_found; ++pass) {
    for (int tp : TpCandidates(in)) {
      PlanInput t = WithTp(in, tp);
      std::optional<std::pair<double, Plan>> at;
      if (pass == 0) {
        auto direct = Run(t);
        if (direct.ok() && direct->fits && direct->usable_tokens >= useful) at = std::make_pair(direct->fraction, *direct);
      } else {
        at = SmallestFraction(t, 0.01, top, useful);
      }
      if (!at) continue;
      std::string why = "smallest TP whose plan fits and holds " + useful_what + ": " +
                        FormatGiB(at->second.weights_bytes) + " weights per rank, " +
                        WithCommas(at->second.kv_tokens) + " KV tokens " +
                        (pass == 0 ? "at " : "with ") + flag + " " + Fixed2(at->first) +
                        (pass == 0 ? "" : " (set both)");
      if (tp > 8) why += " (more than 8 GPUs: multi-node)";
      out.push_back(MakeRemedy(F.tp, std::to_string(tp), "increase", why));
      tp_found = true;
      break;
    }
  }
  // Quantisation: FP8 weights at the same TP.
  if (in.model && in.model->quant.method.empty() && !F.fp8_weights_flag.empty()) {
    PlanInput t = in;
    ModelConfig q = *in.model;
    q.quant.method = "fp8";
    q.quant.scheme = "fp8 (suggested)";
    q.quant.linear_bytes = 1.0 + 4.0 / (128.0 * 128.0);
    q.index_total_bytes.reset();
    t.model = q;
    std::optional<std::pair<double, Plan>> at;
    bool same = false;
    if (auto direct = Run(t); direct.ok() && direct->fits && direct->usable_tokens >= useful) {
      at = std::make_pair(direct->fraction, *direct);
      same = true;
    } else {
      at = SmallestFraction(t, 0.01, top, useful);
    }
    if (at) {
      out.push_back(MakeRemedy(F.fp8_weights_flag, "fp8", "set",
                               "an FP8 checkpoint (or on-the-fly fp8) at tp " + std::to_string(in.tp) + ": " +
                                   FormatGiB(at->second.weights_bytes) + " weights per rank, " +
                                   WithCommas(at->second.kv_tokens) + " KV tokens " + (same ? "at " : "with ") + flag +
                                   " " + Fixed2(at->first) + (same ? "" : " (set both)")));
    }
  }
  // Context: the longest request a safe fraction holds (the user's, or the version's
  // default for SGLang / 0.90 for vLLM, whichever is larger), then the floor.
  // The probes below plan with a context of one token (does it start at all); TGI's
  // launcher refuses an input not below the total, so its probes ask for the shortest pair
  // (2 total, 1 input) unless the user gave an input.
  const bool tgi_input = in.framework == "tgi" && !in.tgi_max_input_tokens && !in.tgi_max_input_length;
  auto shortest = [&](PlanInput& t) {
    t.context_length = 1;
    if (!tgi_input) return;
    t.context_length = 2;
    (VersionBefore(in.version, {2, 0, 0}) ? t.tgi_max_input_length : t.tgi_max_input_tokens) = 1;
  };
  if (p.failure != "weights_oom" && p.failure != "warmup_oom" && p.input.context_length) {
    PlanInput starts = in;
    shortest(starts);
    auto floor_f = SmallestFraction(starts, 0.01, top, 1);
    double cap = std::max(p.fraction, 0.90);
    if (sglang) {
      SglangDefaultsInput d;
      d.version = in.version;
      d.gpu_capacity_bytes = in.total_bytes;
      d.tp = in.tp;
      d.pp = in.pp;
      if (auto def = SglangDefaultMemFraction(d); def.ok()) cap = std::max(p.fraction, def->mem_fraction_static);
    }
    if (floor_f && floor_f->first <= cap + 1e-9) {
      int64_t best = 0;
      double best_f = floor_f->first;
      for (int k = static_cast<int>(floor_f->first * 100 + 0.5); k <= static_cast<int>(cap * 100 + 1e-6); ++k) {
        PlanInput t = in;
        shortest(t);
        SetFraction(t, k / 100.0);
        auto r = Run(t);
        if (r.ok() && r->fits && r->kv_tokens > best) {
          best = r->kv_tokens;
          best_f = k / 100.0;
        }
      }
      // TGI: a total at or below the launcher's default input needs an input below it.
      auto input_too = [&](int64_t ctx) {
        if (!tgi_input || !p.figures.contains("max_input_tokens") ||
            ctx > p.figures["max_input_tokens"].get<int64_t>()) {
          return std::string();
        }
        return std::string(" (with ") + (VersionBefore(in.version, {2, 0, 0}) ? "--max-input-length " : "--max-input-tokens ") +
               std::to_string(std::max<int64_t>(ctx - 1, 1)) + ": TGI's launcher refuses its default input of " +
               std::to_string(p.figures["max_input_tokens"].get<int64_t>()) + " beside a shorter total)";
      };
      if (best > 0 && in.concurrency_required && in.concurrency > 1) {
        // The concurrency asked: each of the requests gets a share of the pool.
        out.push_back(MakeRemedy(F.context, std::to_string(best / in.concurrency), "decrease",
                                 "the longest request of which the pool holds " + std::to_string(in.concurrency) +
                                     " at once (at " + flag + " " + Fixed2(best_f) + ")" +
                                     input_too(best / in.concurrency)));
      } else if (best > 0) {
        out.push_back(MakeRemedy(F.context, std::to_string(best), "decrease",
                                 "the longest request the pool can hold (at " + flag + " " + Fixed2(best_f) + ")" +
                                     input_too(best)));
      }
    }
    if (floor_f) {
      out.push_back(MakeRemedy(flag, Fixed2(floor_f->first), floor_f->first > p.fraction ? "increase" : "decrease",
                               "the floor: the server starts, with a pool of only " +
                                   WithCommas(floor_f->second.kv_tokens) + " tokens"));
    }
  }
  if (p.failure != "weights_oom" && !p.input.context_length && sglang) {
    // SGLang without a context length: the floor still starts a server (as a side note).
    PlanInput starts = in;
    starts.context_length = 1;
    if (auto floor_f = SmallestFraction(starts, 0.01, 0.99, 1)) {
      out.push_back(MakeRemedy(flag, Fixed2(floor_f->first), floor_f->first > p.fraction ? "increase" : "decrease",
                               "the floor: the server starts, with a pool of only " +
                                   WithCommas(floor_f->second.kv_tokens) +
                                   " tokens, inside SGLang's own headroom for activations and CUDA graphs"));
    }
  }
  if (out.empty()) {
    out.push_back(MakeRemedy(F.tp, "", "increase",
                             "nothing tried fits (TP up to 64" + std::string(in.model ? ", fp8" : "") +
                                 "): the model needs more GPUs or smaller weights"));
  }
  p.remedies = out;
}
}  // namespace

void AddSensitivity(const PlanInput& in, Plan& p) {
  auto vary = [&](const std::string& what, PlanInput lo, PlanInput hi) {
    auto a = Run(lo), b = Run(hi);
    if (!a.ok() || !b.ok()) return;
    Sensitivity s;
    s.assumption = what;
    s.kv_tokens_low = std::min(a->kv_tokens, b->kv_tokens);
    s.kv_tokens_high = std::max(a->kv_tokens, b->kv_tokens);
    s.fits_low = a->kv_tokens <= b->kv_tokens ? a->fits : b->fits;
    s.fits_high = a->kv_tokens <= b->kv_tokens ? b->fits : a->fits;
    if (s.kv_tokens_low != p.kv_tokens || s.kv_tokens_high != p.kv_tokens || s.fits_low != p.fits ||
        s.fits_high != p.fits) {
      p.sensitivity.push_back(s);
    }
  };
  const bool sglang = in.framework == "sglang";
  const double w = p.weights_bytes;
  // The weights' line below: +/-1% where the index's total is known, else +/-3% (config estimate).
  const bool weights_estimated = in.model && !in.weights_bytes && !in.avail_after_weights_bytes;
  const double weights_spread = p.weights && p.weights->index_total_bytes ? 0.01 : 0.03;
  if (weights_estimated) {
    const double spread = weights_spread;
    PlanInput lo = in, hi = in;
    lo.weights_bytes = w * (1 + spread);
    hi.weights_bytes = w * (1 - spread);
    // The variants keep the model: what the plan derives from it besides the weights
    // (TGI's defaults before the warm-up, tgi_launcher.cc; SGLang's mamba state and
    // hybrid sliding-window pool; vLLM's hybrid KV cache groups) is the point's too, so
    // only the weights move (a variant without the model priced a hybrid model's pool as
    // all full attention, and its range missed its own point). The cell and the
    // activation peak below are given, so it sizes nothing else.
    for (PlanInput* t : {&lo, &hi}) {
      KvDims d = KvDimsOf(*in.model, in.pp);
      if (t->dims.layers == 0) t->dims = d;
      t->context_length = p.input.context_length;
      // Still the model's context (TGI v3 then warms up on the prefill, not on requests of it).
      t->context_from_model = p.input.context_from_model;
      // TGI, TensorRT-LLM and LMDeploy price the KV cell the plan did (TensorRT-LLM's
      // checkpoint KV dtype needs the model, which these variants drop).
      if (in.framework == "tgi" || in.framework == "trtllm" || in.framework == "lmdeploy") t->cell_bytes = p.cell_bytes;
      if (!sglang && !t->activation_peak_bytes && p.figures.contains("activation_peak_bytes")) {
        t->activation_peak_bytes = p.figures["activation_peak_bytes"].get<double>();
      }
      if (p.figures.contains("turbomind_held_bytes")) {
        t->turbomind_held_bytes = p.figures["turbomind_held_bytes"].get<double>();
      }
      if (p.figures.contains("sglang_multimodal_factor")) {
        t->sglang_multimodal_factor = p.figures["sglang_multimodal_factor"].get<double>();
      }
      if (!t->runtime_buffers_bytes && p.figures.contains("runtime_buffers_bytes")) {
        t->runtime_buffers_bytes = p.figures["runtime_buffers_bytes"].get<double>();
      }
    }
    char buf[96];
    std::snprintf(buf, sizeof(buf), "weights per rank +/-%.0f%% (%s)", spread * 100,
                  p.weights && p.weights->index_total_bytes ? "index total known" : "config estimate");
    vary(buf, lo, hi);
  }
  if (!in.free_at_init_bytes) {
    PlanInput lo = in, hi = in;
    lo.free_at_init_bytes = p.free_at_init_bytes - 0.5 * kGiB;
    hi.free_at_init_bytes = std::min(in.total_bytes, p.free_at_init_bytes + 0.25 * kGiB);
    vary("free memory at init -0.5/+0.25 GiB (context, NCCL by GPU and driver)", lo, hi);
  }
  if (in.framework == "tgi" && !in.activation_peak_bytes && p.figures.contains("tgi_least_held_bytes")) {
    // TGI's warm-up at its free-memory read (tgi_warmup_held.cc): the point holds both phases
    // and what no source sizes at this version; the most the read can see is both phases and
    // the most measured on any launch (1.9 GiB), the least the larger phase alone (the caching
    // allocator reuses or gives back the other's blocks) with nothing unexplained.
    PlanInput lo = in, hi = in;
    const double more = p.figures.contains("tgi_more_held_bytes") ? p.figures["tgi_more_held_bytes"].get<double>() : 0;
    if (more > 0) lo.activation_peak_bytes = p.figures["activation_peak_bytes"].get<double>() + more;
    hi.activation_peak_bytes = p.figures["tgi_least_held_bytes"].get<double>();
    vary(more > 0 ? "TGI's warm-up at its free-memory read: from both phases and the most held beyond them on any "
                    "logged launch (" + FormatGiB(TgiUnexplainedHeldBytes("")) + ") to the larger phase alone"
                  : "TGI's warm-up at its free-memory read: from the point's (both phases and the unexplained bytes) "
                    "to the larger phase alone",
         lo, hi);
  } else if (!sglang && !in.activation_peak_bytes) {
    double a = p.figures.contains("activation_peak_bytes") ? p.figures["activation_peak_bytes"].get<double>() : 0;
    PlanInput lo = in, hi = in;
    // A multimodal encoder's profiling the plan does not size (unknown:) can take more
    // than twice the estimate; its range is wider.
    const bool encoder = p.input.encoder_profile_unmodelled;
    const bool tgi = in.framework == "tgi";  // without a model: its warm-up at the read (unknown:)
    // A TensorRT engine's activations were sized by TensorRT at build time (the engine path
    // measures no estimation pass): x0.5-x1.5, no PyTorch extras.
    const bool trtllm = in.framework == "trtllm" && !p.figures.contains("runtime_buffers_bytes");
    const double up = encoder ? 3.0 : tgi ? 2.0 : 1.5;
    // TensorRT-LLM's estimation pass measures everything held at its end (_util.py
    // estimate_max_tokens: peak = torch peak + non-torch extra_cost), beyond the forward the
    // estimate prices: up to 2 GiB more (unknown: in PlanTrtllm).
    lo.activation_peak_bytes = std::max(a * up, 0.5 * kGiB) + (trtllm ? 2.0 * kGiB : 0.0);
    lo.encoder_profile_unmodelled = hi.encoder_profile_unmodelled = false;
    hi.activation_peak_bytes = a * 0.5;
    vary(encoder  ? "activation peak x0.5-x3 (profiling run estimate; encoder profiling not modelled)"
         : tgi    ? "activation peak x0.5-x2 (TGI's warm-up as its free-memory read sees it)"
         : trtllm ? "estimation-pass peak x0.5 to x1.5 + 2 GiB (its CUDA graphs, sampler and non-torch memory)"
         : p.figures.contains("runtime_buffers_bytes") ? "activations x0.5-x1.5 (the engine's execution context, sized at build)"
                  : "activation peak x0.5-x1.5 (profiling run estimate)",
         lo, hi);
  }
  if (p.input.mm_images_worst > 1 && !in.activation_peak_bytes) {
    // vLLM V0's InternVL profiling without --limit-mm-per-prompt (unknown: in Run): from the
    // default's one image a prompt to the most a prompt of the context can carry.
    PlanInput lo = in;
    lo.mm_limits = VllmMmLimits{static_cast<int>(p.input.mm_images_worst), 1, true};
    const std::string what = "--limit-mm-per-prompt images 1 (the default) to " +
                             std::to_string(p.input.mm_images_worst) + " (the most a prompt of the context carries)";
    vary(what, lo, in);
    // A start that a launch setting the flag would not have: not vouched for (unknown: above).
    if (p.fits && !p.sensitivity.empty() && p.sensitivity.back().assumption == what && !p.sensitivity.back().fits_low) {
      p.outcome_certain = false;
    }
  }
  if (p.figures.contains("nccl_graph_room_bytes") && !in.cuda_graph_bytes) {
    // vLLM V1 before 0.21 at TP > 1 without the custom all-reduce: its graphs, captured
    // after the KV cache outside the budget, hold NCCL all-reduces whose memory nothing in
    // vLLM's source sizes (unknown: in Run, vllm_graph_capture.h). The pool is the same
    // either way; what the capture needs runs from the plan's estimate to more than the
    // room the pool leaves, and the outcome with it.
    // The high end is the estimate taken as measured (no "may fail" on it, vllm_graph_capture.h).
    PlanInput lo = in, hi = in;
    lo.cuda_graph_bytes = std::max(p.figures["nccl_graph_room_bytes"].get<double>(), 0.0) + 1024.0 * 1024.0;
    hi.cuda_graph_bytes = p.figures.value("cuda_graph_bytes", 0.0);
    vary("CUDA graphs with NCCL all-reduces, captured after the KV cache: the estimate to more than the room the "
         "pool leaves (not sized by vLLM's source)",
         lo, hi);
  }
  if (p.figures.contains("mrv2_smaller_bytes") && p.figures.contains("activation_peak_bytes")) {
    // vLLM's Model Runner V2, the default runner here (unknown: in Run, vllm_runner_v2.h):
    // its profile up to twice the legacy estimate, which its source does not explain, so
    // at its low end together with the weights at the top of their line (the two logged
    // launches with that peak were over on both: a stated bound, not a fit); or no graphs
    // in its budget and a sampler without top-k/top-p.
    const double a = p.figures["activation_peak_bytes"].get<double>();
    PlanInput lo = in, hi = in;
    lo.activation_peak_bytes =
        a + p.figures["mrv2_smaller_bytes"].get<double>() + (weights_estimated ? weights_spread * w : 0.0);
    hi.activation_peak_bytes = std::max(a - p.figures["mrv2_sampler_bytes"].get<double>(), 0.0);
    if (!in.cuda_graph_bytes) hi.cuda_graph_bytes = 0.0;
    vary(weights_estimated ? "Model Runner V2 (the default runner): its profile up to twice the legacy estimate (not "
                             "explained by its source) with the weights' line at its top, or no CUDA graphs in its "
                             "budget and a sampler without top-k/top-p"
                           : "Model Runner V2 (the default runner): its profile up to twice the legacy estimate (not "
                             "explained by its source), or no CUDA graphs in its budget and a sampler without "
                             "top-k/top-p",
         lo, hi);
  }
  if (p.figures.contains("cold_compile_bytes") && p.figures.contains("activation_peak_bytes")) {
    // vLLM V1's first start compiles inside its memory profile (unknown: in Run,
    // vllm_cold_compile.h): a warm start's point down to the most a cold compile was logged to
    // charge; a start the low end does not have is not vouched for.
    PlanInput lo = in;
    lo.activation_peak_bytes = p.figures["activation_peak_bytes"].get<double>() + p.figures["cold_compile_bytes"].get<double>();
    vary("compile cache: warm (the point) to a first start's cold compile inside the profile", lo, in);
    if (p.fits && !p.sensitivity.empty() && p.sensitivity.back().assumption.starts_with("compile cache") &&
        !p.sensitivity.back().fits_low) p.outcome_certain = false;
  }
  if (p.input.flashinfer_probs_peak_bytes > 0 && !in.activation_peak_bytes) {
    // vLLM V1 0.8.x with an older FlashInfer installed samples without the sort (unknown:
    // in Run; model_config.h kFlashInferProbs).
    PlanInput hi = in;
    hi.activation_peak_bytes = p.input.flashinfer_probs_peak_bytes;
    const size_t before = p.sensitivity.size();
    vary("sampler: FlashInfer's (installed, older than 0.2.3) instead of the sort", in, hi);
    // Which sampler profiles is the install's (the images carry FlashInfer, pip does not),
    // which no input says: where it decides the outcome, the plan cannot call a failure
    // ("may fail"; an unfitted A100-40G launch from a vllm/vllm-openai image started with
    // the pool FlashInfer's sampler leaves).
    if (p.sensitivity.size() > before && p.sensitivity.back().fits_low != p.sensitivity.back().fits_high) {
      p.outcome_certain = false;
    }
  }
  if (p.figures.contains("sampling_workspace_bytes") && !in.runtime_buffers_bytes) {
    // A TensorRT engine's decoder: top-P's workspace from none (deferred) to all of it
    // (unknown: in PlanTrtllmEngine).
    const double buffers = p.figures["runtime_buffers_bytes"].get<double>();
    PlanInput lo = in, hi = in;
    lo.runtime_buffers_bytes = buffers + p.figures["sampling_workspace_rest_bytes"].get<double>();
    hi.runtime_buffers_bytes = buffers - p.figures["sampling_workspace_bytes"].get<double>();
    vary("the engine decoder's top-P workspace, none to all of it", lo, hi);
  }
  if (in.framework == "lmdeploy" && in.lmdeploy_backend != "pytorch") {
    // TurboMind reads the free memory when its engine is created, after the weights and
    // whatever else it holds by then (unknown: in PlanLmdeploy).
    // Beyond what turbomind_startup.cc sizes: up to 2 GiB, and the weights' pool keeping
    // every layer's unfused gate/up (its reuse across layers is the driver's).
    const double reuse = p.figures.contains("turbomind_held_upper_bytes")
                             ? p.figures["turbomind_held_upper_bytes"].get<double>() -
                                   p.figures["turbomind_held_bytes"].get<double>()
                             : 0.0;
    PlanInput lo = in;
    lo.free_at_init_bytes = p.free_at_init_bytes - 2.0 * kGiB - reuse;
    vary(reuse > 0 ? "TurboMind's allocations before its free-memory read, up to 2 GiB beyond those sized, and its "
                     "weight pool reusing no freed gate/up"
                   : "TurboMind's allocations before its free-memory read, up to 2 GiB beyond those sized",
         lo, in);
  }
  if (in.unified_memory) {
    // The host's use on a GB10 or a Jetson (unknown: in Run, unified_memory.cc): TensorRT-LLM's
    // point takes the checkpoint's page cache, its range runs to none; vLLM before 0.11.1, TGI
    // and LMDeploy keep it out of the point and the range takes it.
    UnifiedMemoryInput ui;
    ui.framework = in.framework;
    ui.version = in.version;
    ui.trtllm_backend = in.trtllm_backend.empty() ? TrtllmDefaultBackend(in.version) : in.trtllm_backend;
    ui.checkpoint_bytes = p.weights_bytes;
    ui.logged_peak = in.peak_from_log;
    if (auto u = UnifiedMemoryHostUse(ui); u && u->range_bytes > 0) {
      PlanInput lo = in, hi = in;
      if (in.framework == "trtllm") {
        hi.unified_memory = false;
      } else if (in.framework == "vllm") {
        lo.non_torch_bytes = p.non_torch_bytes + u->range_bytes;
      } else if (in.framework == "sglang") {
        // Read after the weights: the free memory after them loses the cache in full
        // (unified_memory.cc), the reserve taken from the free memory at init does not.
        lo.avail_after_weights_bytes = p.free_at_init_bytes - p.weights_bytes - u->range_bytes;
      } else {
        lo.free_at_init_bytes = p.free_at_init_bytes - u->range_bytes;
      }
      vary("unified memory: the checkpoint's page cache (" + FormatGiB(u->range_bytes) + ") counted as used, all of "
           "it to none",
           lo, hi);
    }
  }
  if (in.unified_memory && sglang && !in.free_at_init_bytes && !in.avail_after_weights_bytes &&
      p.figures.contains("sglang_fraction_in_force")) {
    // What other programs and the OS hold on a unified-memory device (unknown: in Run): SGLang
    // reads it in both of its free-memory figures (model_runner.py profile_max_num_token: rest
    // = free after the weights - free at init x (1 - fraction)), so H held takes fraction x H
    // from the pool, and nothing bounds H before the launch: the range runs down to the H that
    // leaves no pool ("Not enough memory"). The Jetson AGX Orin launch beside Ollama (the
    // launches13 set) lost about 39 GiB of its 61 that way.
    const double f = p.figures["sglang_fraction_in_force"].get<double>();
    const double held = f > 0 ? p.free_at_init_bytes - w / f : 0.0;
    if (held > 0 && p.cell_bytes > 0) {
      PlanInput lo = in;
      lo.free_at_init_bytes = p.free_at_init_bytes - held;
      char per[64];
      std::snprintf(per, sizeof(per), "%.2f GiB (%s tokens)", f,
                    WithCommas(static_cast<int64_t>(f * kGiB / static_cast<double>(p.cell_bytes))).c_str());
      vary("other programs and the OS on this unified-memory device, not sized before the launch: each GiB they "
           "hold takes " + std::string(per) + " from the pool, none is left at " + FormatGiB(held),
           lo, in);
    }
  }
  if (auto u = HostUnsizedMemory(in.host, in.total_bytes); u && !in.free_at_init_bytes) {
    // What a Windows/WSL2 host's OS and desktop hold (unknown: in Run, host_platform.cc).
    // The point took u->point_bytes (Run); the range runs from none (the Linux arithmetic) to
    // u->high_bytes.
    PlanInput lo = in, hi = in;
    lo.free_at_init_bytes = p.free_at_init_bytes + u->point_bytes - u->high_bytes;
    hi.free_at_init_bytes = p.free_at_init_bytes + u->point_bytes;
    vary("host " + HostPlatformName(in.host) + ": its OS, desktop and other programs' memory, none to 15% of the "
         "card (the point takes " + FormatGiB(u->point_bytes) + ")",
         lo, hi);
  }
  if (in.version_assumed) {
    std::vector<std::string> others = sglang                        ? std::vector<std::string>{"0.4.6", "0.5.3", "0.5.9"}
                                      : in.framework == "vllm"      ? std::vector<std::string>{"0.10.1", "0.11.0", "0.21.0"}
                                      : in.framework == "tgi"       ? std::vector<std::string>{"2.0.4", "3.0.0", "3.3.6"}
                                      : in.framework == "lmdeploy"  ? std::vector<std::string>{"0.6.0", "0.10.0", "0.14.0"}
                                                                    : std::vector<std::string>{"1.0.0"};
    int64_t lo_t = p.kv_tokens, hi_t = p.kv_tokens;
    bool lo_fit = p.fits, hi_fit = p.fits;
    for (const auto& v : others) {
      PlanInput t = in;
      t.version = v;
      t.version_assumed = false;
      auto r = Run(t);
      if (!r.ok()) continue;
      if (r->kv_tokens < lo_t) { lo_t = r->kv_tokens; lo_fit = r->fits; }
      if (r->kv_tokens > hi_t) { hi_t = r->kv_tokens; hi_fit = r->fits; }
    }
    p.sensitivity.push_back({"server version unknown (" + others.front() + " - " + others.back() + ")", lo_t, hi_t,
                             lo_fit, hi_fit});
  }
}

}  // namespace tpt::memory::internal
