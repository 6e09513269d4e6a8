// launch_plan_internal.h (internal to memory/): what launch_plan.cc and
// launch_plan_remedies.cc share. MakePlan (launch_plan.h) is Run, then the
// remedies and the sensitivity ranges.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "memory/launch_plan.h"
#include "memory/server_flags.h"

namespace tpt::memory::internal {

// vLLM's engine: --vllm-engine, else V1 from 0.8.0 and V0 before (launch_plan_derive.cc).
bool IsVllmV1(const PlanInput& in);

std::string Fixed2(double v);      // "0.78"
std::string WithCommas(int64_t v);  // "1,310"
Remedy MakeRemedy(std::string flag, std::string value, std::string direction, std::string why);

// The context length vLLM or SGLang serves when none is passed, from the model's config.json
// as each server's source at the version derives it (launch_plan_context.cc): tokens 0 for
// the other servers and where nothing is derived; `why` is the plan's assumption line.
struct ServerContext {
  int64_t tokens = 0;
  std::string why;
};
ServerContext ServerDefaultContext(const ModelConfig& m, const std::string& framework, const std::string& version);

// What SGLang's defaults and its value that serves read from a plan's input.
SglangDefaultsInput SglangDefaultsOf(const PlanInput& in);

// What the model's files and the server's defaults give (launch_plan_derive.cc): the
// input with the derived values filled, each recorded in `assumptions`; the weight
// estimate when it came from the model.
StatusOr<PlanInput> Derive(const PlanInput& user, std::vector<std::string>& assumptions,
                           std::optional<WeightEstimate>& west);

// The plan of one input without remedies: derive what the user did not give
// (model, version defaults), then the server's formulas.
StatusOr<Plan> Run(const PlanInput& user);

// What vLLM's profiling run (and, from 0.8, its sampler warm-up) computes after the forward
// pass at this version and engine, on this card: VllmLogitsProfileFor, with FlashInfer's
// sampler (the default from 0.22) only where vLLM would take it (not on ROCm, below
// compute capability 7.5 or on a card of 16 SMs or fewer).
VllmLogitsProfile VllmSamplerProfile(const PlanInput& in, bool v1);
// Whether vLLM's FlashInfer top-k/top-p sampler can run on this card and install
// (launch_plan_derive.cc: flashinfer_sampler_supported; --vllm-flashinfer absent says no).
bool FlashInferSamplerRuns(const PlanInput& in);

// TGI, TensorRT-LLM and LMDeploy (launch_plan_servers.cc): the plan core of each, on the
// derived input; and the warning when the server shortens a context nobody asked for
// ("" when it fails instead).
StatusOr<Plan> PlanTgi(const PlanInput& in, Plan p);
StatusOr<Plan> PlanTrtllm(const PlanInput& in, Plan p);
StatusOr<Plan> PlanLmdeploy(const PlanInput& in, Plan p);
std::string ShortensContext(const std::string& framework, const std::string& version, int64_t pool, int64_t context);

// TurboMind around its cache (launch_plan_turbomind.cc): what it holds before its free-memory
// read and what its start-up tuning pass keeps after the cache, bytes a rank (0 when not
// sized, said under `assumed:`).
double TurbomindHeldForPlan(const PlanInput& in, Plan& p);
double TurbomindAfterCacheForPlan(const PlanInput& in, Plan& p);

// A Windows/WSL2 host (launch_plan_host.cc): its measured share off the free memory at init,
// and the answer's word on the point (not reliable, or --free-at-init taken as measured).
void TakeHostShare(const PlanInput& in, Plan& p);
void SayHostReliability(const PlanInput& user, double total_bytes, Plan& p);
// How much of each GPU another process may hold before the start the plan calls fails (said
// under `assumed:`, figure co_tenant_margin_bytes; launch_plan_co_tenant.cc); nothing when
// --free-at-init was measured.
void SayCoTenantMargin(const PlanInput& in, Plan& p);
// V1 before 0.9.1: a co-tenant the utilization leaves room for is charged to the budget;
// where one could empty the pool the start is not vouched for (launch_plan_co_tenant.cc).
void SayCoTenantChargedInsideTheRoomLeft(const PlanInput& in, double margin_bytes, Plan& p);
// A GeForce card with more memory than it was sold with (--gpu-mem over the catalog's total):
// a start that needs the added memory is not vouched for (launch_plan_card_mod.cc).
void SayModifiedCardUnvouched(const PlanInput& in, Plan& p);

// Each server's own flags for what the remedies change: memory/server_flags.h.
using ::tpt::memory::FlagsOf;
using ::tpt::memory::ServerFlags;
void SetFraction(PlanInput& in, double f);

// vLLM's hybrid KV cache groups (launch_plan_vllm_hybrid.cc): the layers of each kind and
// what they hold per request at this version, said under `assumed:` (nothing for a model
// of full attention only); after the pool, what --enable-prefix-caching would give a mamba
// hybrid (vLLM 0.16 on), under `unknown:`.
void SetVllmHybridGroups(const PlanInput& in, const ModelConfig& m, VllmKvInput& kv, Plan& p);
void SayVllmMambaPrefixCaching(const VllmKvInput& kv, const VllmKvResult& r, Plan& p);
// launch_plan_vllm_uncertain.cc: verdicts that rest on what no input sizes (outcome_certain).
// The startup check on a card known only by its size: the pool planned past a check the
// card's family may pass (`least_free_bytes`: the free memory at init with the smallest
// family's context, InitOverheadBytes), or nullopt where it fails whatever the family.
StatusOr<std::optional<VllmKvResult>> VllmStartupCheckOnUnknownFamily(const PlanInput& in, const VllmKvInput& kv,
                                                                       const VllmKvResult& r, double least_free_bytes,
                                                                       Plan& p);
// The graphs captured after the pool (V0, V1 < 0.21): the `unknown:` line where they capture
// NCCL collectives, and "may fail" where the room holds the priced end but not the high end.
void SayVllmCaptureAfterPool(const PlanInput& in, const PlanInput& user, bool custom_all_reduce, Plan& p);
// vLLM V0 before 0.3.1 at a utilization that leaves less than the kernels loaded on first use
// outside torch's cache after the pool: the start is not vouched for (launch_plan_vllm_uncertain.cc).
void SayVllmNoRoomOutsideTorchAfterPool(const PlanInput& in, Plan& p);
// TGI's decode CUDA graphs after the KV cache (tgi_graph_capture.cc), from the room PlanTgi
// records (figures tgi_graph_*): a capture whose NCCL collectives may not fit is "may fail".
void SayTgiCaptureAfterPool(const PlanInput& in, Plan& p);
// A capture that may not fit: "may fail" (fits false, not certain, cuda_graph_capture_oom) with
// what it needs (launch_plan_vllm_uncertain.cc); nothing when the plan does not fit already.
void SayCaptureMayFail(double need_low_bytes, double need_high_bytes, const std::string& text, Plan& p);
void AddTgiCaptureRemedies(const PlanInput& in, Plan& p);

// vLLM's non-torch memory inside the profiling window (launch_plan_vllm_non_torch.cc): the
// measured --non-torch, or what the version creates there, said under `assumed:`.
void SetVllmNonTorch(const PlanInput& in, VllmEra era, Plan& p);

// Remedies, each checked by running the plan again with it.
void AddRemedies(const PlanInput& in, Plan& p);
// How far each assumed input moves the KV pool (`range:` lines).
void AddSensitivity(const PlanInput& in, Plan& p);

}  // namespace tpt::memory::internal
