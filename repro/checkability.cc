// checkability.cc: the table of checkability.h.
#include "repro/checkability.h"

namespace tpt::repro {

const std::vector<Checkability>& CheckabilityTable() {
  using K = ReproKind;
  static const std::vector<Checkability> table = {
      {"kv_pool_no_room", K::kMemoryReplay,
       "ballast to the log's free memory at init, weights written, the server's KV formula (memory/) on the measured "
       "numbers; the fix re-run with the remedy's fraction"},
      {"kv_pool_too_small", K::kMemoryReplay,
       "the same replay; reproduced when the pool the formula leaves holds fewer tokens than one request of the "
       "context length"},
      {"startup_free_memory_short", K::kMemoryReplay,
       "the replay's free-at-init step against the server's start-up check (vLLM: util x total)"},
      {"weights_oom", K::kMemoryReplay, "the weights allocated and written on the emulated card's free memory"},
      {"warmup_oom", K::kMemoryReplay,
       "TGI: the warm-up prefill's ask on the OOM line's free memory, then its KV blocks (memory/tgi_model.cc); "
       "LMDeploy TurboMind: its cache (ratio x free after the weights), then its run-time buffers; TensorRT-LLM: the "
       "final KV cache (fraction x the estimate's available) created on the free memory the component report names; "
       "vLLM/SGLang: the OOM line's ask after the weights. Fix: the remedy's value (prefill tokens, ratio, fraction)"},
      {"cuda_graph_capture_oom", K::kMemoryReplay,
       "CUDA graphs of a decode-like step captured after the KV pool, at the log's batch sizes"},
      {"cuda_graph_capture_failure", K::kMemoryReplay,
       "the same graph capture (custom all-reduce with registered graph buffers, NCCL otherwise)"},
      {"runtime_oom", K::kNotCheckable,
       "depends on the requests served after start-up, which a log does not carry; `tptriage plan` sizes the "
       "headroom"},
      {"kv_pool_exhausted", K::kNotCheckable, "the traffic filled the pool; nothing on the box differs"},
      {"custom_allreduce_failure", K::kBoxCheck,
       "peer access matrix, CUDA IPC handle exchange between two processes, a peer copy with a data check on every "
       "GPU pair, the custom all-reduce against an exact reference; fix: custom all-reduce off (or NCCL_P2P_DISABLE=1 "
       "when P2P itself is broken)"},
      {"p2p_topology_problem", K::kBoxCheck, "the same P2P checks: what the driver claims against what the copies do"},
      {"nccl_timeout_hang", K::kBoxCheck,
       "the log's collective at the logged size and rank count under a deadline with the log's NCCL environment: "
       "completes (the hang came from the workload or a rank that stopped) or hangs (the transport)"},
      {"collective_desync", K::kBoxCheck,
       "the same collective under a deadline: a healthy fabric leaves the ranks' different calls (named from the "
       "log) as the cause"},
      {"nccl_network_config", K::kBoxCheck,
       "this box's interfaces through NCCL's own selection rules with the log's NCCL_SOCKET_IFNAME / NCCL_IB_HCA, "
       "then an NCCL bootstrap with them; fix: the interfaces this box has"},
      {"shm_too_small", K::kBoxCheck,
       "the shared-memory segments NCCL's SHM transport creates for the rank count, created in /dev/shm with "
       "posix_fallocate as NCCL does; size needed against size there"},
      {"nvls_fabric_manager", K::kBoxCheck,
       "every GPU's registration with the NVLink fabric, read from NVML (what `nvidia-smi -q` shows under Fabric; "
       "repro never turns NVLS on nor touches the fabric manager); fix: the collective with NCCL_NVLS_ENABLE=0"},
      {"duplicate_gpu", K::kBoxCheck,
       "two ranks of one communicator on one device from the log's CUDA_VISIBLE_DEVICES / local-rank mapping: NCCL's "
       "own refusal; fix: one GPU a rank (needs as many GPUs)"},
      {"nccl_error", K::kBoxCheck,
       "an NCCL communicator and the collective with the log's NCCL environment under a deadline"},
      {"unsupported_gpu_arch", K::kBoxCheck,
       "the GPU's compute capability (this box's, and the log's from the GPU catalogue) against the architectures "
       "the log's kernels or wheel were built for"},
      {"cuda_driver_mismatch", K::kBoxCheck,
       "the driver's CUDA version on this box against what the log's runtime or wheel requires"},
      {"hardware_fault", K::kBoxCheck,
       "NVML, loaded at run time, read only, for the GPU the log names: ECC counts, retired pages and remapped rows "
       "pending, PCIe link generation and width against their maximum"},
      {"illegal_memory_access", K::kNotCheckable,
       "a kernel's bug on the server's own inputs and model, which repro does not have; re-run the server with "
       "CUDA_LAUNCH_BLOCKING=1 or under compute-sanitizer"},
      {"process_crashed", K::kNotCheckable, "the log names no mechanism for a box to check"},
      {"port_in_use", K::kBoxCheck, "binds the log's port on this box, as the server did; fix: a free port"},
      {"config_error", K::kNotCheckable, "the server refused its own flags or model; re-run the server with the fix"},
      {"disk_full", K::kBoxCheck,
       "the filesystem of the path the log's write failed on (statvfs: bytes and inodes free), on the host that logged "
       "it; a quota (EDQUOT) is the user's: `quota -s`"},
      {"host_oom", K::kNotCheckable,
       "the original host's RAM and its other tenants at that time; the kernel log (`dmesg -T | grep -i oom`) "
       "settles it"},
      {"model_files_unavailable", K::kNotCheckable,
       "the model store or hub as the server saw it; not a property of the GPU box"},
      {"other", K::kNotCheckable, "no mechanism named"},
  };
  return table;
}

const Checkability* CheckabilityOf(std::string_view root_cause) {
  for (const auto& c : CheckabilityTable()) {
    if (c.id == root_cause) return &c;
  }
  return nullptr;
}

}  // namespace tpt::repro
