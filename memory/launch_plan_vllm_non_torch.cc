// launch_plan_vllm_non_torch.cc: the non-torch memory a vLLM plan prices inside the budget's
// profiling window (cuBLAS, the custom all-reduce, the NCCL communicators created there with
// their connected buffers, FlashInfer's all-reduce workspace, Model Runner V2's sampling state),
// by version and era, said under `assumed:`; a measured --non-torch replaces it.
#include <string>

#include "memory/launch_plan_internal.h"
#include "memory/numeric.h"
#include "memory/vllm_fi_allreduce.h"
#include "memory/vllm_nccl_connect.h"
#include "memory/vllm_runner_v2.h"

namespace tpt::memory::internal {

// cuBLAS handle state outside torch's allocator (anchors-allreduce.md §4.1, lazy loading).
constexpr double kCublasBytes = 66.0 * kMiB;

void SetVllmNonTorch(const PlanInput& in, VllmEra era, Plan& p) {
  if (in.non_torch_bytes) {
    p.non_torch_bytes = *in.non_torch_bytes;
  } else {
    // cuBLAS + custom all-reduce, and the NCCL communicator where the baseline snapshot is
    // taken before distributed init (vllm-source.md §1.3(f): after it from 0.11; 0.10.1.1's
    // gpu_worker.py takes MemorySnapshot() before init_worker_distributed_environment,
    // 0.11.0's after). Each communicator is sized for the card and link (NcclCommBytes:
    // 558 MiB on NVLink Hopper, 0.13 GiB on PCIe), and the custom all-reduce is off on
    // more than two PCIe GPUs (CustomAllReduceOn). A vLLM 0.10.2 TP 8 launch on PCIe L40S
    // logs 0.21 GiB of non-torch memory, where two NVLink-sized communicators were 1.18.
    auto v = ParseVersion(in.version);
    // Before 0.3.1 and in 0.6.4-0.6.5 / V1 before 0.9.1 the budget counts the whole GPU's
    // non-torch memory once (worker/worker.py, v1/worker/gpu_worker.py 0.8.5
    // determine_available_memory: total - free - torch's allocated), which the plan splits
    // into what was in use at init and this increase (vllm_model.cc): the default free at
    // init already holds PyNccl's communicator and the custom all-reduce
    // (InitOverheadBytes), so the increase leaves them out; a measured --free-at-init is
    // read before the launch and does not hold them.
    const bool whole_gpu = era == VllmEra::kV0PeakWholeGpu || era == VllmEra::kV0NonTorchWholeGpu;
    const bool init_holds_comm = whole_gpu && !in.free_at_init_bytes;
    bool nccl_in_increase = in.tp > 1 && v.ok() && CompareVersions(*v, {0, 11}) < 0 && !init_holds_comm;
    // V1 all-gathers the profiling run's logits through torch.distributed on the TP
    // device group (platforms/interface.py use_all_gather; base_device_communicator.py
    // all_gather -> dist.all_gather_into_tensor(group=self.device_group)); vLLM never
    // gives init_process_group a device_id, so torch creates that group's NCCL
    // communicator there, inside the profiling window, beside PyNccl's (0.9.2 and
    // 0.11.0 read). One communicator's measured size (anchors-allreduce.md §4.1).
    const bool v1 = in.vllm_engine == "v1" || (in.vllm_engine.empty() && (!v.ok() || CompareVersions(*v, {0, 8}) >= 0));
    // V0 gathers them to the driver through the same group (logits_processor.py
    // tensor_model_parallel_gather -> torch.distributed.gather(group=device group): 0.4.3
    // communication_op.py L154-157, 0.7.0 parallel_state.py GroupCoordinator.gather L441-444),
    // and from vllm#4591 (2024-05-09, 0.4.3) to vllm#10121 (2024-11-26, 0.6.5) its PyNccl
    // communicator is off outside graph capture ("by default it is disabled, e.g. in profiling
    // models and prefill phase", pynccl.py 0.4.3 L104-107, 0.5.1 L99, 0.6.0 L99), so the
    // profile's all-reduces go to torch.distributed.all_reduce on that group too: the same
    // communicator, inside the window in every era (V0 before 0.6.6 measures from
    // init_gpu_memory, read before distributed init: worker.py 0.4.3 L109-116, 0.5.1 L121).
    bool gather_comm = in.tp > 1;
    // 0.4.3-0.5.0 also warm the default (world) group up with an all-reduce at distributed
    // init (parallel_state.py 0.4.3 L118-122 "A small all_reduce for warmup", from vllm#4591,
    // removed by vllm#5293, 2024-06-12): a third communicator, after init_gpu_memory.
    const bool world_warmup = in.tp > 1 && !v1 && v.ok() && CompareVersions(*v, {0, 4, 3}) >= 0 &&
                              CompareVersions(*v, {0, 5, 0, 1}) < 0 && !init_holds_comm;
    const bool car = CustomAllReduceOn(in.gpu_interconnect, in.tp, in.gpu_pcie_peer_access) && !init_holds_comm;
    const double comm = NcclCommBytes(in.gpu_arch, in.gpu_interconnect);
    // Each communicator's ring and tree buffers where NCCL connects at creation (before 0.10.2),
    // its ring's from 0.10.2, connected at its first collective: PyNccl's at its warm-up
    // all-reduce, so with it; torch's at the profile's logits all-gather, in the window
    // (vllm_nccl_connect.h), and MRV2's per-request state from 0.27 (vllm_runner_v2.h).
    const double conn = VllmNcclConnectBytes({in.version, in.tp, in.gpu_name});
    const bool runtime_conn = v.ok() && CompareVersions(*v, {0, 10, 2}) >= 0;
    const double mrv2 = VllmRunnerV2PersistentBytes(in);
    // V1 data parallelism: the DP group of dp ranks gets its own device communicator
    // (cuda_communicator.py CudaCommunicator: a PyNccl communicator for every group but the EP
    // group's, "ep does not use pynccl"; the custom all-reduce for the TP group only, "only tp
    // uses custom allreduce"; read in the 0.9 and 0.10 copies), created at distributed init
    // and so in the profiling window before 0.11 as the TP group's is. On an MoE model the
    // naive all2all manager's dispatch broadcasts every rank's tokens on the DP group's torch
    // device group (vllm_fused_moe.h VllmDpMoeTokens), whose NCCL communicator torch creates
    // there, in the profiling run.
    const bool dp_pynccl = v1 && in.dp > 1 && v.ok() && CompareVersions(*v, {0, 11}) < 0 && !init_holds_comm;
    const bool dp_torch_comm = v1 && in.dp > 1 && in.model && in.model->IsMoe();
    const double dp_conn = in.dp > 1 ? VllmNcclConnectBytes({in.version, in.dp, in.gpu_name}) : 0;
    const double dp_comm = (dp_pynccl ? comm + dp_conn : 0) + (dp_torch_comm ? comm + dp_conn : 0);
    p.non_torch_bytes = kCublasBytes + (car ? kCustomAllReduceBytes : 0) + (nccl_in_increase ? comm + conn : 0) +
                        (gather_comm ? comm + conn : 0) + (world_warmup ? comm + conn : 0) + dp_comm + mrv2;
    // 0.16 on: FlashInfer's all-reduce fusion workspace at TP > 1 (vllm_fi_allreduce.h).
    VllmFiArWorkspace fi_ar;
    if (in.model && v1) {
      VllmFiArWorkspaceInput w;
      w.version = in.version;
      w.tp = in.tp;
      w.pp = in.pp;
      w.dp = in.dp;
      w.gpu_sm = in.gpu_sm;
      w.gpu_name = in.gpu_name;
      w.gpu_interconnect = in.gpu_interconnect;
      w.hidden = in.model->hidden;
      w.dtype_bytes = in.model->dtype_bytes;
      w.max_num_batched_tokens = in.max_num_batched_tokens.value_or(8192);
      w.enforce_eager = in.enforce_eager;
      fi_ar = VllmFlashInferAllReduceWorkspace(w);
      p.non_torch_bytes += fi_ar.bytes;
      if (fi_ar.created) p.figures["fi_allreduce_workspace_bytes"] = fi_ar.bytes;
    }
    p.assumptions.push_back("non-torch memory " + FormatGiB(p.non_torch_bytes) + " (cuBLAS" +
                            std::string(car ? ", custom all-reduce" : "") +
                            std::string(nccl_in_increase ? ", PyNccl's communicator" : "") +
                            std::string(gather_comm ? (v1 ? ", the NCCL communicator torch creates for V1's logits all-gather "
                                                            "in the profiling run"
                                                          : ", the NCCL communicator torch creates for the TP group in the "
                                                            "profiling run (the logits' gather; before 0.6.5 its all-reduces "
                                                            "too, PyNccl being off outside graph capture)")
                                                    : "") +
                            std::string(world_warmup ? ", the world group's, made by distributed init's warm-up all-reduce"
                                                     : "") +
                            (dp_comm > 0 ? ", the DP group's " + std::string(dp_pynccl ? "PyNccl communicator" : "") +
                                               (dp_pynccl && dp_torch_comm ? " and " : "") +
                                               (dp_torch_comm ? "torch communicator of the MoE dispatch's broadcasts" : "") +
                                               " over " + std::to_string(in.dp) + " ranks " + FormatGiB(dp_comm)
                                         : std::string()) +
                            std::string(in.tp > 1 || dp_comm > 0 ? ", " + FormatGiB(comm) + " a communicator on this link" : "") +
                            (conn > 0 ? " + " + FormatGiB(conn) +
                                            (runtime_conn ? " of NCCL ring buffers connected at its first collective (NCCL's "
                                                            "runtime connect, cuMem on from 0.10.2; "
                                                          : " of NCCL ring and tree buffers connected at its creation (") +
                                            std::to_string(VllmNcclChannels(in.gpu_name)) + " channels" +
                                            (in.gpu_arch == "ampere" ? " on an NVSwitch board" : "") + ")"
                                      : std::string()) +
                            (mrv2 > 0 ? ", " + FormatGiB(mrv2) + " of Model Runner V2's sampling state (max_num_seqs x vocab)"
                                      : std::string()) +
                            std::string(in.tp > 2 && !CustomAllReduceOn(in.gpu_interconnect, in.tp)
                                            ? "; no custom all-reduce on more than two PCIe GPUs"
                                            : "") +
                            std::string(in.tp == 2 &&
                                                !CustomAllReduceOn(in.gpu_interconnect, in.tp, in.gpu_pcie_peer_access)
                                            ? "; no custom all-reduce: this card has no CUDA peer access over PCIe "
                                              "(vLLM's P2P check fails; an NVLink bridge, where the card takes one, "
                                              "would give it)"
                                            : "") +
                            std::string(init_holds_comm && in.tp > 1
                                            ? "; PyNccl's communicator and the custom all-reduce are in the free "
                                              "memory at init, which this version's budget counts with it"
                                            : "") +
                            (fi_ar.created ? "; " + fi_ar.arithmetic : std::string()) +
                            "); pass --non-torch from the log to override");
    if (fi_ar.created && fi_ar.bytes > fi_ar.bytes_min) {
      p.unknowns.push_back("vLLM " + in.version + "'s FlashInfer all-reduce workspace is rounded to the driver's "
                           "recommended multicast granularity, which no source gives: priced at " +
                           FormatGiB(kVllmMulticastGranularityBytes) + " a buffer (" + FormatGiB(fi_ar.bytes) +
                           " a rank), " + FormatGiB(fi_ar.bytes_min) + " at the 2 MiB minimum: the KV pool can be up "
                           "to " + FormatGiB(fi_ar.bytes - fi_ar.bytes_min) + " a rank larger; pass --non-torch "
                           "from the log ('non-torch forward increase memory')");
    }
  }
}

}  // namespace tpt::memory::internal
