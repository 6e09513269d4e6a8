// launch_plan_vllm_uncertain.cc: the vLLM verdicts that rest on what no input sizes, said
// as such (Plan::outcome_certain): the startup check on a card known only by its size, and
// the CUDA graphs captured after the KV pool (V0, V1 < 0.21), whose NCCL collectives may
// not fit (vllm_graph_capture.h).
#include <optional>
#include <string>
#include <utility>

#include "memory/launch_plan_internal.h"
#include "memory/memory_model.h"
#include "memory/numeric.h"
#include "memory/vllm_graph_capture.h"

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
    const std::string u = VllmV1CaptureUnknown(in.version, *in.max_num_batched_tokens, in.model->layers, in.tp,
                                               custom_all_reduce, left, *in.cuda_graph_bytes);
    if (u.empty()) return;
    p.unknowns.push_back(u);
    p.figures["nccl_graph_room_bytes"] = left;  // AddSensitivity's range
    // The sampler's warm-up runs after the capture (gpu_worker.py compile_or_warm_up_model).
    SayVllmCaptureMayFail(VllmNcclCaptureRisk(left, *in.cuda_graph_bytes, p.figures.value("sampler_warmup_bytes", 0.0)),
                      p);
    return;
  }
  // V0 captures its graphs after the pool too (vllm_graph_capture.h), priced at none.
  const std::string u = VllmV0CaptureUnknown(in.version, in.max_num_seqs.value_or(256), in.model->layers, in.tp,
                                             custom_all_reduce, left);
  if (u.empty()) return;
  p.unknowns.push_back(u);
  p.figures["nccl_graph_room_bytes"] = left;  // AddSensitivity's range
  SayVllmCaptureMayFail(VllmNcclCaptureRisk(left, 0, 0), p);
}

}  // namespace tpt::memory::internal
