// launch_plan_remedies.cc: the remedies of a plan (a useful value first, the floor
// second, else the smallest TP, FP8 weights or the longest context that fits), each
// checked by planning again with it, and the ranges that unknown inputs span.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>

#include "memory/launch_plan_internal.h"
#include "memory/numeric.h"
#include "memory/sglang_request_table.h"
#include "memory/tgi_graph_capture.h"

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
  if (!IsVllmV1(in) && !in.cuda_graph_bytes) {
    // V0 captures a graph a batch size up to max_num_seqs padded (vllm_v0_graphs.h), as
    // capture_model's message advises: the largest halving whose graphs fit.
    for (int64_t n = in.max_num_seqs.value_or(256) / 2; n >= 1; n /= 2) {
      PlanInput t = in;
      t.max_num_seqs = n;
      auto q = Run(t);
      if (!q.ok() || !q->fits || q->usable_tokens < useful) continue;
      out.push_back(MakeRemedy("--max-num-seqs", std::to_string(n), "decrease",
                               "V0 captures one graph a batch size up to max_num_seqs: fewer graphs fit after the "
                               "cache, with a pool of " + WithCommas(q->kv_tokens) + " tokens (checked with this plan)"));
      break;
    }
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

// TGI's capture that may not fit (tgi_graph_capture.h): the most sizes, smallest first (the
// batches decoding meets most), whose plan starts with certainty, then none; each planned again.
void AddTgiCaptureRemedies(const PlanInput& in, Plan& p) {
  if (!in.model) return;
  const TgiCudaGraphs g = TgiCudaGraphSizes(in.version, in.tgi_cuda_graphs, in.model->quant.method);
  std::vector<int> s = g.sizes;
  std::sort(s.begin(), s.end());
  // The most sizes (smallest first: the batches decoding meets most) whose plan starts.
  for (size_t n = s.size(); n-- > 1;) {
    PlanInput t = in;
    t.tgi_cuda_graphs = std::vector<int>(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(n));
    auto q = Run(t);
    if (!q.ok() || !q->fits || !q->outcome_certain) continue;
    p.remedies.push_back(MakeRemedy("--cuda-graphs", TgiCudaGraphsFlag(*t.tgi_cuda_graphs), "decrease",
                                    "captures " + std::to_string(n) + " graphs, whose collectives fit the room at the "
                                    "most measured: a pool of " + WithCommas(q->kv_tokens) +
                                    " tokens (checked with this plan)"));
    break;
  }
  PlanInput none = in;
  none.tgi_cuda_graphs = std::vector<int>{0};
  if (auto q = Run(none); q.ok() && q->fits) {
    p.remedies.push_back(MakeRemedy("--cuda-graphs", "0", "set",
                                    "no CUDA graphs (decoding runs eagerly, slower): a pool of " +
                                        WithCommas(q->kv_tokens) + " tokens (checked with this plan)"));
  }
}

namespace {
// The request table's share of a plan's reserved slice that still leaves SGLang's own
// headroom for activations and CUDA graphs (SglangServingFraction's reserve) or the graphs
// given, whichever is more; `serves` false: the slice has no such room, and only the start
// is asked of the table.
double SglangTableBudget(const PlanInput& in, const Plan& q, bool* serves) {
  double headroom = 0;
  if (q.figures.contains("avail_after_weights_bytes")) {
    auto s = SglangServingFraction(q.free_at_init_bytes, q.figures["avail_after_weights_bytes"].get<double>(),
                                   SglangDefaultsOf(in), q.cell_bytes, 0);
    if (s.ok()) headroom = s->headroom_bytes;
  }
  const double keep = std::max(headroom, q.row.graphs_bytes);
  *serves = q.row.reserved_bytes - keep > 0;
  return q.row.reserved_bytes - (*serves ? keep : q.row.graphs_bytes);
}

// SGLang's request table outgrew the slice its fraction keeps back (sglang_request_table.h):
// the longest --context-length (a multiple of 1024: the table's columns; the pool then holds a
// request of it), the most --max-running-requests (its rows) and the largest lower
// --mem-fraction-static (a larger slice) whose table fits beside SGLang's own headroom, each
// planned again. More TP or FP8 weights leave the table and the slice as they are.
void AddSglangRequestTableRemedies(const PlanInput& in, Plan& p) {
  // What a re-planned launch gives, or "" when it does not start, or when `serve` asks for
  // SGLang's own headroom beside the table and the slice does not leave it.
  auto checked = [&](const PlanInput& t, bool serve) -> std::string {
    auto q = Run(t);
    if (!q.ok() || !q->fits || !q->figures.contains("request_table_bytes")) return "";
    bool serves = false;
    const double budget = SglangTableBudget(t, *q, &serves);
    const double table = q->figures["request_table_bytes"].get<double>();
    if (table > budget || (serve && !serves)) return "";
    return "the request table is then " + WithCommas(q->figures["request_table_rows"].get<int64_t>()) + " x " +
           WithCommas(q->figures["request_table_columns"].get<int64_t>()) + " int32 = " + FormatGiB(table) +
           " of the " + FormatGiB(q->row.reserved_bytes) + " slice, leaving " +
           FormatGiB(q->row.reserved_bytes - table) +
           (serves ? " for activations and CUDA graphs (SGLang's own headroom)"
                   : " (less than SGLang's own headroom for activations and CUDA graphs: the server only starts)") +
           "; a pool of " + WithCommas(q->kv_tokens) + " tokens (checked with this plan)";
  };
  // The slice at this fraction leaves SGLang's headroom: the table's own remedies serve.
  // Where it does not, a lower fraction is what serves, and they only start the server.
  bool serves = false;
  const double budget = SglangTableBudget(in, p, &serves);
  std::vector<Remedy> table_remedies;
  const int64_t ctx = p.input.context_length.value_or(0);
  auto with_context = [&](int64_t c) {
    PlanInput t = in;
    t.context_length = c;
    t.context_from_model = false;  // asked: the pool must hold a request of it
    return checked(t, false);
  };
  // The table grows with the context and the pool must hold one request of it: the longest
  // multiple of 1024 that passes, by bisection.
  if (ctx > 1024 && !with_context(1024).empty()) {
    int64_t lo = 1, hi = (ctx - 1) / 1024 + 1;  // in units of 1024: lo passes
    while (hi - lo > 1) {
      const int64_t mid = lo + (hi - lo) / 2;
      (with_context(mid * 1024).empty() ? hi : lo) = mid;
    }
    table_remedies.push_back(MakeRemedy("--context-length", std::to_string(lo * 1024), "decrease",
                                        "the table's columns are the context length (" + WithCommas(ctx) +
                                            " now): " + with_context(lo * 1024)));
  }
  SglangRequestTableInput ti;
  ti.version = in.version;
  ti.context_len = ctx;
  ti.profiled_tokens = p.figures.value("profiled_tokens", int64_t{0});
  ti.capacity_tokens = p.figures.value("max_total_num_tokens", int64_t{0});
  ti.dp_attention_size = in.enable_dp_attention ? in.dp : 1;
  if (auto n = SglangLargestRunningRequests(ti, budget)) {
    for (int64_t k = *n; k >= std::max<int64_t>(1, *n - 8); --k) {  // the re-plan may move the slice a little
      PlanInput t = in;
      t.max_running_requests = k;
      const std::string why = checked(t, false);
      if (why.empty()) continue;
      table_remedies.push_back(MakeRemedy("--max-running-requests", std::to_string(k), "decrease",
                                          "the table's rows are the request slots (" +
                                              WithCommas(p.figures["request_table_rows"].get<int64_t>()) +
                                              " now): " + why));
      break;
    }
  }
  // The largest lower fraction whose slice holds the table beside SGLang's headroom, else
  // (a side note) the largest that starts.
  std::optional<Remedy> fraction;
  for (bool serve : {true, false}) {
    for (int k = static_cast<int>(std::floor(p.fraction * 100 + 1e-9)) - 1; k >= 1 && !fraction; --k) {
      PlanInput t = in;
      SetFraction(t, k / 100.0);
      const std::string why = checked(t, serve);
      if (!why.empty()) {
        fraction = MakeRemedy("--mem-fraction-static", Fixed2(k / 100.0), "decrease",
                              "a larger slice kept back, a smaller KV pool: " + why);
      }
    }
    if (fraction && serve && !serves) {
      p.remedies = {*fraction};
      p.remedies.insert(p.remedies.end(), table_remedies.begin(), table_remedies.end());
      return;
    }
    if (fraction) break;
  }
  p.remedies = table_remedies;
  if (fraction) p.remedies.push_back(*fraction);
}
}  // namespace

void AddRemedies(const PlanInput& in, Plan& p) {
  if (!p.fits && p.figures.contains("request_table_short")) return AddSglangRequestTableRemedies(in, p);
  if (!p.fits && p.failure == "cuda_graph_capture_oom" && in.framework == "vllm") AddVllmCaptureRemedies(in, p);
  if (!p.fits && p.failure == "cuda_graph_capture_oom" && in.framework == "tgi") AddTgiCaptureRemedies(in, p);
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

}  // namespace tpt::memory::internal
