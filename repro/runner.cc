// runner.cc: the steps of one rank in the server's order, and the verdict.
#include "repro/runner.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <tuple>

#include "memory/memory_model.h"
#include "repro/plan_scale.h"
#include "repro/startup_servers.h"

namespace tpt::repro {
namespace {

double Now() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

// Carries the bookkeeping of one run: step timing, measurements, per-rank rows.
class StepRunner {
 public:
  StepRunner(DeviceBackend& be, RunResult* out) : be_(be), out_(out), t0_(Now()) {}

  // Runs `fn`, then measures. Returns false when the run must stop.
  template <typename Fn>
  bool Step(const char* name, Fn&& fn) {
    if (CancelFlag().load()) {
      Stop(name, CancelReason(), /*tool=*/true);
      return false;
    }
    CurrentStep().store(name);
    StepRecord rec;
    rec.step = name;
    rec.start_s = Now() - t0_;
    Status s = fn(rec);
    rec.seconds = Now() - t0_ - rec.start_s;
    auto mem = be_.GetMemInfo();
    if (mem.ok()) {
      rec.free_bytes = mem->free_bytes;
      rec.delta_bytes = have_last_ ? mem->free_bytes - last_free_ : 0;
      last_free_ = mem->free_bytes;
      have_last_ = true;
    }
    if (!s.ok()) {
      rec.ok = false;
      rec.error = s.ToString();
    }
    out_->steps.push_back(rec);
    if (!s.ok()) {
      // Out of memory is the server's failure being reproduced; anything
      // else (deadline, API error, cancel) is ours.
      const bool oom = s.code() == StatusCode::kUnavailable && s.message().find("out of memory") != std::string::npos;
      if (CancelFlag().load()) {
        const std::string why = CancelReason();
        Stop(name, s.message().find(why) != std::string::npos ? why : why + " (" + s.message() + ")", /*tool=*/true);
      } else {
        Stop(name, oom ? "CUDA out of memory: " + s.message() : s.ToString(), !oom);
      }
      return false;
    }
    return true;
  }

  void Stop(const std::string& step, const std::string& why, bool tool) {
    out_->failed_step = step;
    out_->failure = why;
    out_->tool_error = tool;
  }

  StepRecord& last() { return out_->steps.back(); }
  int64_t last_free() const { return last_free_; }

 private:
  DeviceBackend& be_;
  RunResult* out_;
  double t0_;
  int64_t last_free_ = 0;
  bool have_last_ = false;
};

// Per-rank rows: real ranks from an all-gather, the others from the plan.
Status FillRanks(DeviceBackend& be, const RankLayout& layout, int64_t measured,
                 const std::function<int64_t(int)>& emulated, const std::function<std::optional<int64_t>(int)>& logged,
                 StepRecord* rec) {
  std::vector<int64_t> real = {measured};
  if (!layout.colocated && layout.real_ranks > 1) {
    auto g = be.AllGather(measured);
    if (!g.ok()) return g.status();
    real = *g;
  }
  for (int r = 0; r < layout.world; ++r) {
    RankFigure f;
    f.rank = r;
    if (layout.colocated) {
      f.measured = (r == layout.rank);
      f.free_bytes = f.measured ? measured : emulated(r);
    } else {
      f.measured = true;
      f.free_bytes = r < static_cast<int>(real.size()) ? real[r] : 0;
    }
    f.logged_free_bytes = logged(r);
    rec->ranks.push_back(f);
  }
  return OkStatus();
}

std::optional<int64_t> LoggedAfter(const Plan& p, const char* step) {
  auto it = p.logged_free_after.find(step);
  if (it == p.logged_free_after.end()) return std::nullopt;
  return it->second;
}

std::string FixLabel(const Plan& p) {
  std::string s = "fix:";
  for (const auto& [k, v] : p.fix) {
    char b[64];
    std::snprintf(b, sizeof b, " %s=%g", k.c_str(), v);
    s += b;
  }
  return s;
}

}  // namespace

KvFigures ComputeKv(const Plan& plan, double free_at_init_min, double available_min, double weights_bytes) {
  KvFigures k;
  k.free_at_init_bytes = free_at_init_min;
  k.available_bytes = available_min;
  if (IsStartupServer(plan.framework)) {
    KvFigures s = ComputeStartupKv(plan, available_min);
    s.free_at_init_bytes = free_at_init_min;
    return s;
  }
  if (plan.framework == "vllm") {
    memory::VllmKvInput in;
    auto era = memory::VllmEraForVersion(plan.version.empty() ? "0.11.0" : plan.version);
    in.era = era.ok() ? *era : memory::VllmEra::kV1StartupCheck;
    in.total_bytes = static_cast<double>(plan.card_total_bytes);
    in.free_at_init_bytes = free_at_init_min;
    in.gpu_memory_utilization = plan.gpu_memory_utilization;
    in.weights_bytes = weights_bytes;
    in.bytes_per_token = plan.kv_bytes_per_token;
    in.pp = plan.pp;
    auto r = memory::VllmKvPool(in);
    k.formula = std::string("vllm ") + memory::VllmEraName(in.era) + ": kv = total x gpu_memory_utilization - non-KV";
    if (!r.ok()) {
      k.error = r.status().ToString();
      return k;
    }
    k.computed = true;
    k.reserved_bytes = r->non_kv_bytes;
    k.rest_bytes = r->kv_bytes;
    k.tokens = r->kv_tokens;
    k.pool_bytes = static_cast<double>(r->kv_tokens) * static_cast<double>(plan.kv_bytes_per_token);
    k.fails = r->fails;
    k.error = r->error;
    k.min_viable = r->min_util_one_block;
    return k;
  }
  memory::SglangKvInput in;
  auto era = memory::SglangEraForVersion(plan.version);
  in.era = era.ok() ? *era : memory::SglangEra::kV05;
  in.free_at_init_bytes = free_at_init_min;
  in.avail_after_weights_bytes = available_min;
  in.mem_fraction_static = plan.mem_fraction_static;
  in.cell_bytes = plan.kv_bytes_per_token;
  if (plan.max_total_tokens > 0) in.max_total_tokens = plan.max_total_tokens;
  k.formula = std::string("sglang ") + memory::SglangEraName(in.era) +
              (era.ok() ? "" : " (version unknown: assumed)") + ": rest = available - free_at_init x (1 - mem_fraction_static)";
  auto r = memory::SglangKvPool(in);
  if (!r.ok()) {
    k.error = r.status().ToString();
    return k;
  }
  k.computed = true;
  k.reserved_bytes = r->reserved_bytes;
  k.rest_bytes = r->rest_bytes;
  k.tokens = r->max_total_num_tokens;
  k.pool_bytes = r->kv_pool_bytes;
  k.fails = r->fails;
  k.error = r->error;
  k.min_viable = r->min_viable_mem_fraction_static;
  return k;
}

RunResult RunPlan(const Plan& plan, DeviceBackend& be, const RankLayout& layout, const ReproOptions& opt, bool first) {
  RunResult out;
  out.plan = plan;
  out.label = "as logged";
  const double t0 = Now();
  StepRunner run(be, &out);
  const int me = layout.rank;
  auto finish = [&] {
    out.seconds = Now() - t0;
    return out;
  };

  if (first) {
    if (!run.Step(kStepContext, [&](StepRecord& rec) {
          TPT_RETURN_IF_ERROR(be.InitContext(layout));
          auto m = be.GetMemInfo();
          if (!m.ok()) return m.status();
          const int64_t used = m->total_bytes - m->free_bytes;
          if (used > opt.foreign_memory_limit && !opt.force) {
            return UnavailableError("the GPU already has " + FormatBytes(used) + " in use right after our context (limit " +
                                    FormatBytes(opt.foreign_memory_limit) +
                                    "): another process holds GPU memory; free it, or pass --force to run anyway");
          }
          rec.note = "device total " + FormatBytes(m->total_bytes) + "; in use after context " + FormatBytes(used);
          return OkStatus();
        })) {
      out.tool_error = true;  // refusing or failing to start is never the server's failure
      return finish();
    }
    if (!run.Step(kStepComm, [&](StepRecord& rec) {
          rec.note = layout.colocated ? "NCCL communicator of 1 rank (co-located mode: NCCL refuses two ranks on one GPU)"
                                      : "NCCL communicator of " + std::to_string(layout.real_ranks) + " ranks";
          return be.InitComm();
        })) {
      out.tool_error = true;
      return finish();
    }
  }
  const bool use_car = plan.custom_allreduce && plan.tp > 1;
  if (use_car && !run.Step(kStepCustomAr, [&](StepRecord& rec) {
        rec.note = layout.colocated ? "buffers of all " + std::to_string(plan.tp) +
                                          " ranks on this GPU (peers' share comes out of the ballast)"
                                    : "own buffers + peers' mapped through CUDA IPC";
        return be.InitCustomAllreduce(plan.tp, plan.custom_allreduce_max_bytes);
      })) {
    out.tool_error = true;  // the log got past this point; a failure here is ours
    return finish();
  }
  // Ballast: make this rank see the original card's free memory at init.
  const int64_t target_free = FreeAtInit(plan, me);
  if (!run.Step(kStepBallast, [&](StepRecord& rec) {
        auto m = be.GetMemInfo();
        if (!m.ok()) return m.status();
        auto mn = be.AllReduceMin(m->free_bytes);  // every rank reads it: a scaled replay needs one factor
        if (!mn.ok()) return mn.status();
        out.free_before_ballast = std::min(*mn, m->free_bytes);
        int64_t ballast = m->free_bytes - target_free;
        if (ballast < 0 && ballast >= -opt.ballast_tolerance) ballast = 0;  // already there (2 MiB granularity)
        if (ballast < 0) {
          const double s = FitScale(out.free_before_ballast, plan);
          char hint[160] = "";
          if (s >= kMinScale) std::snprintf(hint, sizeof hint, "; --scale-to-fit replays the log's figures at %.2fx", s);
          return UnavailableError("this GPU has " + FormatBytes(m->free_bytes) + " free but the original card had " +
                                  FormatBytes(target_free) + " at init: cannot emulate it (needs a larger GPU" + hint + ")");
        }
        rec.note = "ballast " + FormatBytes(ballast) + " so free = the log's free at init (" + FormatBytes(target_free) + ")";
        Status s = be.Allocate("ballast", ballast, /*touch=*/false);
        if (!s.ok()) return s;
        auto after = be.GetMemInfo();
        if (!after.ok()) return after.status();
        if (std::llabs(after->free_bytes - target_free) > opt.ballast_tolerance) {
          return InternalError("ballast missed: free is " + FormatBytes(after->free_bytes) + ", wanted " +
                               FormatBytes(target_free) + " within " + FormatBytes(opt.ballast_tolerance));
        }
        return OkStatus();
      })) {
    out.tool_error = true;  // emulation impossible: not the server's failure
    return finish();
  }
  // free_at_init: what get_available_gpu_memory(distributed=True) returns.
  int64_t free_init_min = 0;
  if (!run.Step(kStepFreeAtInit, [&](StepRecord& rec) {
        auto m = be.GetMemInfo();
        if (!m.ok()) return m.status();
        TPT_RETURN_IF_ERROR(FillRanks(
            be, layout, m->free_bytes, [&](int r) { return FreeAtInit(plan, r); },
            [&](int r) -> std::optional<int64_t> {
              if (!plan.free_at_init_per_rank.empty() || plan.free_at_init_bytes > 0) return FreeAtInit(plan, r);
              return std::nullopt;
            },
            &rec));
        auto mn = be.AllReduceMin(m->free_bytes);
        if (!mn.ok()) return mn.status();
        free_init_min = *mn;
        for (const auto& f : rec.ranks) free_init_min = std::min(free_init_min, f.free_bytes);
        rec.note = "min over ranks " + FormatBytes(free_init_min) + " (all_reduce MIN over the real ranks" +
                   (layout.colocated ? ", then with the emulated ranks' logged figures)" : ")");
        return OkStatus();
      })) {
    out.tool_error = true;
    return finish();
  }
  // Weights: allocated and written, like a checkpoint load.
  const int64_t weights = Weights(plan, me);
  int64_t avail_min = 0;
  if (!run.Step(kStepWeights, [&](StepRecord& rec) {
        rec.note = "weights " + FormatBytes(weights) + " allocated and written";
        TPT_RETURN_IF_ERROR(be.Allocate("weights", weights, /*touch=*/true));
        auto m = be.GetMemInfo();
        if (!m.ok()) return m.status();
        TPT_RETURN_IF_ERROR(FillRanks(
            be, layout, m->free_bytes, [&](int r) { return FreeAtInit(plan, r) - Weights(plan, r); },
            [&](int) { return LoggedAfter(plan, kStepWeights); }, &rec));
        auto mn = be.AllReduceMin(m->free_bytes);
        if (!mn.ok()) return mn.status();
        avail_min = *mn;
        for (const auto& f : rec.ranks) avail_min = std::min(avail_min, f.free_bytes);
        return OkStatus();
      })) {
    return finish();
  }
  // The warm-up forward before the KV formula (TGI's prefill of max_batch_prefill_tokens,
  // vLLM's profile run, SGLang's warm-up): its ask, held while the server measures.
  auto warmup = [&](const char* what) {
    return run.Step(kStepWarmup, [&](StepRecord& rec) {
      rec.note = std::string(what) + " " + FormatBytes(plan.warmup_bytes) + " allocated and written" +
                 (plan.prefill_tokens > 0 ? " (" + std::to_string(plan.prefill_tokens) + " prefill tokens)" : "");
      TPT_RETURN_IF_ERROR(be.Allocate("warmup", plan.warmup_bytes, /*touch=*/true));
      auto m = be.GetMemInfo();
      if (!m.ok()) return m.status();
      auto mn = be.AllReduceMin(m->free_bytes);
      if (!mn.ok()) return mn.status();
      avail_min = std::min(avail_min, *mn);
      return FillRanks(
          be, layout, m->free_bytes,
          [&](int r) { return FreeAtInit(plan, r) - Weights(plan, r) - plan.warmup_bytes; },
          [&](int) { return LoggedAfter(plan, kStepWarmup); }, &rec);
    });
  };
  const bool warmup_first = plan.warmup_bytes > 0 && plan.framework != "lmdeploy" &&
                            (plan.failed_step == kStepWarmup || plan.framework == "tgi");
  if (warmup_first && !warmup("the warm-up forward's ask")) return finish();
  if (!HasKvFormula(plan.framework) || (warmup_first && !IsStartupServer(plan.framework))) {
    out.steps.back().note += "; " + plan.framework + (warmup_first ? "'s warm-up is the step the log names" : "'s KV formula is not in memory/") +
                             ": the replay ends here";
    return finish();
  }
  // The server's formula on the measured numbers.
  bool formula_failed = false;
  if (!run.Step(kStepKvFormula, [&](StepRecord& rec) {
        out.kv = ComputeKv(plan, static_cast<double>(free_init_min), static_cast<double>(avail_min),
                           static_cast<double>(weights));
        if (!out.kv.computed) return InvalidArgumentError("memory model: " + out.kv.error);
        char b[256];
        std::snprintf(b, sizeof b, "rest %s -> %lld tokens x %lld B = %s", FormatBytes(int64_t(out.kv.rest_bytes)).c_str(),
                      static_cast<long long>(out.kv.tokens), static_cast<long long>(plan.kv_bytes_per_token),
                      FormatBytes(int64_t(out.kv.pool_bytes)).c_str());
        rec.note = b;
        formula_failed = out.kv.fails;
        return OkStatus();
      })) {
    out.tool_error = true;
    return finish();
  }
  // kv_pool_too_small: a positive pool that cannot hold one request of the context length.
  if (!formula_failed && plan.root_cause == "kv_pool_too_small" && plan.context_length > 0 &&
      out.kv.tokens < plan.context_length) {
    formula_failed = true;
    out.kv.fails = true;
    out.kv.error = "the KV pool holds " + std::to_string(out.kv.tokens) + " tokens, fewer than one request of the "
                   "context length " + std::to_string(plan.context_length);
  }
  if (formula_failed) {
    run.last().ok = false;
    run.last().error = out.kv.error;
    run.Stop(kStepKvFormula, out.kv.error, /*tool=*/false);
    return finish();
  }
  if (!run.Step(kStepKvPool, [&](StepRecord& rec) {
        // TGI drops its warm-up batch and the warm-up's cache, empties torch's
        // cache, then allocates the whole KV cache, the warm-up's blocks in it
        // (server/text_generation_server/models/flash_causal_lm.py warmup and
        // cache_manager.py set_cache_manager, v2.0.4): the warm-up's memory is
        // the driver's again before that one allocation. Its free memory was
        // measured with the warm-up still held (the formula above).
        const bool tgi_refill = plan.framework == "tgi" && plan.warmup_bytes > 0;
        if (tgi_refill) be.Free("warmup");
        rec.note = "KV pool " + FormatBytes(int64_t(out.kv.pool_bytes)) + " allocated and zeroed" +
                   (tgi_refill ? " after the warm-up's " + FormatBytes(plan.warmup_bytes) + " was freed (as TGI empties its cache)"
                    : out.kv.held_bytes > 0 ? " (" + FormatBytes(int64_t(out.kv.held_bytes)) + " of it held since the warm-up)"
                                            : std::string());
        const double held = tgi_refill ? 0 : out.kv.held_bytes;
        TPT_RETURN_IF_ERROR(be.Allocate("kv_pool", static_cast<int64_t>(out.kv.pool_bytes - held), /*touch=*/true));
        auto m = be.GetMemInfo();
        if (!m.ok()) return m.status();
        return FillRanks(
            be, layout, m->free_bytes,
            [&](int r) { return FreeAtInit(plan, r) - Weights(plan, r) - static_cast<int64_t>(out.kv.pool_bytes); },
            [&](int) { return LoggedAfter(plan, kStepKvPool); }, &rec);
      })) {
    return finish();
  }
  // TurboMind's run-time buffers, allocated after its cache.
  if (plan.framework == "lmdeploy" && plan.warmup_bytes > 0 && !warmup("TurboMind's run-time buffers")) return finish();
  if (!plan.cuda_graph_bs.empty()) {
    run.Step(kStepGraphs, [&](StepRecord& rec) {
      GraphSpec g;
      g.batch_sizes = plan.cuda_graph_bs;
      g.layers = plan.num_layers;
      g.hidden = plan.hidden_size;
      g.custom_allreduce = use_car;
      g.custom_allreduce_max_bytes = plan.custom_allreduce_max_bytes;
      g.deadline_s = opt.step_deadline_s;
      auto r = be.CaptureDecodeGraphs(g);
      if (!r.ok()) return r.status();
      out.graphs = *r;
      rec.note = std::to_string(r->graphs) + " graphs, " + std::to_string(r->allreduces_per_step) +
                 " all-reduces per step (" + std::to_string(r->custom_ar_calls) + " custom, " +
                 std::to_string(r->nccl_calls) + " NCCL)" + (r->note.empty() ? "" : "; " + r->note);
      auto m = be.GetMemInfo();
      if (!m.ok()) return m.status();
      return FillRanks(
          be, layout, m->free_bytes,
          [&](int r) { return FreeAtInit(plan, r) - Weights(plan, r) - static_cast<int64_t>(out.kv.pool_bytes); },
          [&](int) { return LoggedAfter(plan, kStepGraphs); }, &rec);
    });
  }
  return finish();
}

Verdict Judge(const Plan& plan, const RunResult& orig, const RunResult* fix) {
  Verdict v;
  if (orig.tool_error) {
    v.outcome = "inconclusive";
    v.reason = "the run stopped at " + orig.failed_step + " for a reason that is not the server's: " + orig.failure;
  } else if (plan.failed_step.empty()) {
    v.outcome = "inconclusive";
    v.reason = "the diagnosis (" + (plan.root_cause.empty() ? std::string("none") : plan.root_cause) +
               ") names no start-up step repro can replay" +
               (orig.failed_step.empty() ? "; the replay passed every step" : "; the replay failed at " + orig.failed_step);
  } else if (orig.failed_step == plan.failed_step) {
    v.outcome = "reproduced";
    v.reason = "failed at " + orig.failed_step + " like the server: " + orig.failure;
  } else if (orig.failed_step.empty()) {
    v.outcome = "not reproduced";
    v.reason = "every step passed; the server failed at " + plan.failed_step;
  } else {
    v.outcome = "not reproduced";
    v.reason = "failed at " + orig.failed_step + " (" + orig.failure + "); the server failed at " + plan.failed_step;
  }
  if (fix == nullptr) {
    v.fix_outcome = "not checked";
    v.fix_reason = plan.fix.empty()     ? "the diagnosis carries no remedy to check"
                   : CancelFlag().load() ? CancelReason() + " before the fix check"
                                         : "fix check disabled (--no-fix)";
  } else if (fix->tool_error) {
    v.fix_outcome = "inconclusive";
    v.fix_reason = "stopped at " + fix->failed_step + ": " + fix->failure;
  } else if (fix->failed_step.empty() && fix->kv.computed && plan.context_length > 0 &&
             fix->kv.tokens < plan.context_length) {
    // A positive pool is not a working server: it must hold one request of the context
    // length (the founding case's floor 0.77 leaves 81 MiB, about 1,300 tokens).
    v.fix_outcome = "fails";
    v.fix_reason = fix->label + ": every step passed but the KV pool " + FormatBytes(int64_t(fix->kv.pool_bytes)) +
                   " (" + std::to_string(fix->kv.tokens) + " tokens) is shorter than one request of the context length " +
                   std::to_string(plan.context_length) + ": the server starts and cannot serve it";
  } else if (fix->failed_step.empty()) {
    v.fix_outcome = "passes";
    v.fix_reason = fix->label + ": every step passed" +
                   (fix->kv.computed ? ", KV pool " + FormatBytes(int64_t(fix->kv.pool_bytes)) + " (" +
                                           std::to_string(fix->kv.tokens) + " tokens)"
                                     : "");
    if (fix->kv.computed && plan.context_length > 0) {
      char buf[96];
      std::snprintf(buf, sizeof(buf), ", %.2fx the context length %lld", double(fix->kv.tokens) / plan.context_length,
                    static_cast<long long>(plan.context_length));
      v.fix_reason += buf;
    } else if (fix->kv.computed) {
      v.fix_reason += " (no context length known: whether that is useful is not checked)";
    }
  } else {
    v.fix_outcome = "fails";
    v.fix_reason = fix->label + ": failed at " + fix->failed_step + ": " + fix->failure;
  }
  return v;
}

ReproReport Reproduce(const Plan& plan, DeviceBackend& be, const RankLayout& layout, const ReproOptions& opt) {
  ReproReport rep;
  const double t0 = Now();
  rep.backend = be.Name();
  rep.layout = layout;
  rep.original = RunPlan(plan, be, layout, opt, /*first=*/true);
  rep.banner = be.Banner();
  be.Release();
  // A GPU smaller than the log's card: the same figures times one factor (plan_scale.h).
  Plan scaled;
  const Plan* run_plan = &plan;
  if (opt.scale_to_fit && rep.original.tool_error && rep.original.failed_step == kStepBallast &&
      !CancelFlag().load() && !be.Stuck()) {
    const double s = FitScale(rep.original.free_before_ballast, plan);
    if (s >= kMinScale && s < 1) {
      scaled = ScalePlan(plan, s);
      run_plan = &scaled;
      rep.scale = s;
      rep.original = RunPlan(scaled, be, layout, opt, /*first=*/false);
      be.Release();
    }
  }
  const bool can_fix = !rep.original.tool_error || rep.original.failed_step != kStepContext;
  if (opt.check_fix && !plan.fix.empty() && can_fix && !CancelFlag().load() && !be.Stuck()) {
    Plan fixed = WithFix(*run_plan);
    RunResult r = RunPlan(fixed, be, layout, opt, /*first=*/rep.original.steps.size() < 2);
    r.label = FixLabel(plan);
    rep.fix = std::move(r);
    be.Release();
  }
  rep.verdict = Judge(*run_plan, rep.original, rep.fix ? &*rep.fix : nullptr);
  if (rep.scale < 1) ScaledVerdict(*run_plan, rep);
  if (!rep.fix && opt.check_fix && !plan.fix.empty() && !CancelFlag().load()) {
    rep.verdict.fix_reason = "not run: the run as logged was stopped at " + rep.original.failed_step +
                             (rep.original.failed_step == kStepContext ? " (no GPU to run it on)" : "");
  }
  // The figure the failing step turns on was assumed: the replay shows nothing.
  for (const auto& [step, key, what, flag] :
       {std::tuple{kStepWeights, "weights_bytes", "the weights were", "--weights"},
        std::tuple{kStepWarmup, "warmup_bytes", "what the warm-up allocates was", "--warmup-bytes"}}) {
    if (rep.verdict.outcome != "reproduced" || plan.failed_step != step) continue;
    auto it = plan.sources.find(key);
    if (it != plan.sources.end() && it->second.rfind(kFromAssumed, 0) == 0) {
      rep.verdict.outcome = "inconclusive";
      rep.verdict.reason = std::string(what) + " assumed (" + it->second + "), and this failure turns on it: pass " + flag;
    }
  }
  // A figure no input gave decides the replay as much as a logged one: a
  // replay that does not fail is inconclusive until the flags give them.
  if (!plan.asked.empty() && rep.verdict.outcome == "not reproduced") {
    rep.verdict.outcome = "inconclusive";
    rep.verdict.reason += "; but these figures were assumed, pass them: ";
    for (size_t i = 0; i < plan.asked.size(); ++i) rep.verdict.reason += (i ? "; " : "") + plan.asked[i];
  } else if (!plan.asked.empty() && rep.verdict.outcome == "reproduced") {
    rep.verdict.reason += " (with " + std::to_string(plan.asked.size()) + " figure(s) assumed: see the plan)";
  }
  rep.time_to_verdict_s = Now() - t0;
  if (layout.colocated && layout.world > 1) {
    rep.notes.push_back("co-located mode: " + std::to_string(layout.world) + " ranks on one GPU; rank " +
                        std::to_string(layout.rank) + "'s memory timeline is measured, the other ranks' figures are "
                        "emulated from the plan (marked 'emul')");
    rep.notes.push_back("its NCCL communicator has 1 rank (NCCL 2.28 refuses two ranks of one communicator on one GPU); "
                        "a " + std::to_string(layout.world) + "-rank communicator's buffers are not measured");
    if (plan.custom_allreduce) {
      rep.notes.push_back("custom all-reduce: all " + std::to_string(layout.world) +
                          " ranks' buffers and kernels run on this GPU (real barriers and registered graph buffers; "
                          "latencies are not NVLink figures)");
    }
  }
  if (layout.shared_gpu) {
    rep.notes.push_back("one process per rank, but the ranks' processes share GPUs (TPT_REPRO_SAME_GPU=1, fewer GPUs "
                        "than ranks): each rank's free memory is its equal share of the GPU less what it allocated, "
                        "not a device reading; NCCL runs over sockets; custom all-reduce kernels time-slice, so "
                        "their timings mean nothing. A functional check of the per-process path");
  }
  rep.notes.push_back("the original card is emulated by a ballast: free memory matches the log's free at init; the "
                      "formulas use the card's total (" + FormatBytes(plan.card_total_bytes) + "), not this GPU's");
  return rep;
}

int ExitCodeOf(const Verdict& v) {
  if (v.outcome == "inconclusive") return kExitInconclusive;
  if (v.outcome == "not reproduced") return kExitNotReproduced;
  if (v.fix_outcome == "fails" || v.fix_outcome == "inconclusive") return kExitFixFails;
  return kExitReproduced;
}

}  // namespace tpt::repro
