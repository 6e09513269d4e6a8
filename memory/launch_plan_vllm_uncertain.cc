// launch_plan_vllm_uncertain.cc: the vLLM verdicts that rest on what no input sizes, said
// as such (Plan::outcome_certain): the startup check on a card known only by its size, and
// the CUDA graphs captured after the KV pool (V0, V1 < 0.21), whose NCCL collectives may
// not fit (vllm_graph_capture.h), V0's measured up to its logged high end (vllm_v0_graphs.h),
// and V0 before 0.3.1 at a utilization that leaves nothing
// outside torch's cache after the pool.
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <utility>

#include "memory/launch_plan_internal.h"
#include "memory/memory_model.h"
#include "memory/numeric.h"
#include "memory/vllm_graph_capture.h"
#include "memory/vllm_v0_graphs.h"

namespace tpt::memory::internal {

// A start the plan cannot vouch for: not "fits", and not a confident failure either; the
// capture remedies make it certain (launch_plan_remedies.cc AddVllmCaptureRemedies, TGI's in
// tgi_graph_capture.cc).
void SayCaptureMayFail(double need_low_bytes, double need_high_bytes, const std::string& text, Plan& p) {
  if (!p.fits) return;
  p.fits = false;
  p.outcome_certain = false;
  p.failure = "cuda_graph_capture_oom";
  p.error = text;
  p.figures["capture_need_low_bytes"] = need_low_bytes;
  p.figures["capture_need_high_bytes"] = need_high_bytes;
}

namespace {
void SayVllmCaptureMayFail(const VllmCaptureRisk& risk, Plan& p) {
  if (risk.may_fail) SayCaptureMayFail(risk.need_low_bytes, risk.need_high_bytes, risk.text, p);
}
}  // namespace

StatusOr<std::optional<VllmKvResult>> VllmStartupCheckOnUnknownFamily(const PlanInput& in, const VllmKvInput& kv,
                                                                       const VllmKvResult& r, double least_free_bytes,
                                                                       Plan& p) {
  // The startup check (gpu_worker.py init_device, 0.9.1 on: free memory < util x total is
  // an error) against the free memory of a card given only by its size: the plan's context
  // figure is the largest family's (InitOverheadBytes), an Ampere/Ada PCIe card's is about
  // 0.32 GiB less. Where that decides the check, the plan does not call a failure: it sizes
  // the pool (the budget's; free memory only decides the check) and says so.
  if (!r.startup_check_fails || !in.gpu_arch.empty() || in.free_at_init_bytes) return std::optional<VllmKvResult>();
  VllmKvInput least = kv;
  least.free_at_init_bytes = least_free_bytes;
  if (least.free_at_init_bytes < r.requested_bytes) return std::optional<VllmKvResult>();
  auto q = VllmKvPool(least);
  if (!q.ok()) return q.status();
  p.unknowns.push_back(
      "vLLM " + in.version + "'s startup check needs " + FormatGiB(r.requested_bytes) + " free at init (" +
      PyFloat(p.fraction) + " x " + FormatGiB(in.total_bytes) + "): the CUDA context, NCCL and the custom "
      "all-reduce may take " + FormatGiB(in.total_bytes - r.requested_bytes) + " at most; a card of unknown "
      "family is priced at " + FormatGiB(in.total_bytes - p.free_at_init_bytes) + " (Hopper's figures), an "
      "Ampere/Ada card takes about " + FormatGiB(in.total_bytes - least.free_at_init_bytes) +
      ": the plan sizes the pool and cannot say the check passes; give --gpu NAME or --free-at-init from a log");
  p.outcome_certain = false;
  return std::optional<VllmKvResult>(std::move(*q));
}

void SayVllmCaptureAfterPool(const PlanInput& in, const PlanInput& user, bool custom_all_reduce, Plan& p) {
  if (!in.model || in.enforce_eager || user.cuda_graph_bytes || p.kv_tokens <= 0) return;
  // What the KV cache leaves physically free; the activation peak is released by then.
  const double left = p.free_at_init_bytes - p.weights_bytes - p.non_torch_bytes -
                      static_cast<double>(p.kv_tokens) * static_cast<double>(p.cell_bytes);
  if (IsVllmV1(in)) {
    // V1 before 0.21 captures its graphs after the pool; at TP > 1 without the custom
    // all-reduce they capture NCCL collectives (vllm_graph_capture.h).
    auto era = VllmEraForVersion(in.version, in.vllm_engine);
    const bool outside = era.ok() && (*era == VllmEra::kV1StartupCheck || *era == VllmEra::kV0NonTorchWholeGpu);
    if (!outside || !in.cuda_graph_bytes || !in.max_num_batched_tokens) return;
    std::string u = VllmV1CaptureUnknown(in.version, *in.max_num_batched_tokens, in.model->layers, in.tp,
                                         custom_all_reduce, left, *in.cuda_graph_bytes);
    if (u.empty()) return;
    // The sampler's warm-up comes after the capture, from the same room (vllm_sampler_warmup.h).
    if (const double warm = p.figures.value("sampler_warmup_bytes", 0.0); warm > 0) {
      u += "; the sampler's warm-up after the capture needs " + FormatGiB(warm) + " of that room: a capture that takes "
           "more than " + FormatGiB(std::max(left - warm, 0.0)) + " leaves it too little (\"CUDA out of memory occurred "
           "when warming up sampler\")";
    }
    p.unknowns.push_back(u);
    p.figures["nccl_graph_room_bytes"] = left;  // AddSensitivity's range
    // The sampler's warm-up runs after the capture (gpu_worker.py compile_or_warm_up_model).
    SayVllmCaptureMayFail(VllmNcclCaptureRisk(left, *in.cuda_graph_bytes, p.figures.value("sampler_warmup_bytes", 0.0)),
                      p);
    return;
  }
  // V0 captures a whole-model graph a batch size after the pool (vllm_v0_graphs.h): priced,
  // its logged range said, and at TP > 1 without the custom all-reduce with NCCL collectives.
  const VllmV0Graphs g = VllmV0GraphsFor(*in.model, in.version, in.max_num_seqs.value_or(256), in.pp);
  if (!g.captured) return;
  const std::string u = VllmV0CaptureUnknown(in.version, in.max_num_seqs.value_or(256), in.model->layers, in.tp,
                                             custom_all_reduce, left, g.point_bytes);
  if (!u.empty()) {
    p.unknowns.push_back(u);
    p.figures["nccl_graph_room_bytes"] = left;  // AddSensitivity's range
  } else if (in.tp <= 1) {  // the per graph and layer range, logged at TP 1
    p.figures["v0_graph_low_bytes"] = g.low_bytes;  // AddSensitivity's range
    p.figures["v0_graph_high_bytes"] = g.high_bytes;
  }
  SayVllmCaptureMayFail(VllmV0CaptureRisk(left, g, in.tp, in.tp > 1 && !custom_all_reduce), p);
}

// V0 before 0.3.1 sizes the pool from the free memory right after the profiling run
// (worker.py profile_num_available_blocks at 937e7b7d, vllm-source.md §1.2(a): peak = total -
// free; blocks = (util x total - peak) // block), then empties torch's cache. After the pool
// the card holds (1 - util) x total free, plus the profiling run's activation blocks, which
// the first batches' activations take back into torch's cache. The profiling run passes
// kv_caches [(None, None)] per layer (model_runner.py profile_run), so the decode path's
// kernels (reshape_and_cache, paged attention, copy_blocks) first run after the pool, and
// under CUDA_MODULE_LOADING=LAZY (torch sets it) their modules load then, outside torch's
// allocator, which cannot give its cached blocks to them. So the room outside torch's cache
// that the source guarantees is (1 - util) x total; below what kernels loaded on first use
// take (about 0.1 GiB, measured on SGLang's loads: model_weights.cc) the start is not certain.
// vllm#2348: Llama-2-70B at TP 8 on V100 32GB, util 1.0, "RuntimeError: CUDA error: out of
// memory" (a CUDA runtime error, not the caching allocator's OutOfMemoryError).
void SayVllmNoRoomOutsideTorchAfterPool(const PlanInput& in, Plan& p) {
  constexpr double kLazyKernelBytes = 0.1 * kGiB;
  if (!p.fits || p.kv_tokens <= 0) return;
  auto era = VllmEraForVersion(in.version, in.vllm_engine);
  if (!era.ok() || *era != VllmEra::kV0PeakWholeGpu) return;
  const double room = (1.0 - p.fraction) * in.total_bytes;
  if (room >= kLazyKernelBytes) return;
  p.outcome_certain = false;
  p.figures["room_outside_torch_after_pool_bytes"] = room;
  p.unknowns.push_back("vLLM " + in.version + " sizes the pool from the free memory right after the profiling run "
                       "(peak = total - free): at --gpu-memory-utilization " + PyFloat(p.fraction) + " the room left "
                       "outside torch's cache after it is " + FormatGiB(room) + " a rank, and the decode path's kernels, "
                       "which the profiling run never ran, load on first use outside torch's allocator (about " +
                       FormatGiB(kLazyKernelBytes) + " of kernels loaded lazily): the start is not certain; "
                       "--gpu-memory-utilization " + PyFloat(std::floor((1.0 - kLazyKernelBytes / in.total_bytes) * 100.0) / 100.0) +
                       " leaves room for them");
}

}  // namespace tpt::memory::internal

