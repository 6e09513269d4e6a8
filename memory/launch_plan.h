// launch_plan.h: `tptriage plan` as a library: a launch configuration in, the predicted
// per-rank ledger, KV pool and failure (with remedies) out. cli/cmd_plan.cc only
// parses flags into a PlanInput; repro/ and tests call MakePlan directly.
//
//   tpt::memory::PlanInput in;
//   in.framework = "sglang";
//   in.version = "0.4.3.post4";
//   in.total_bytes = 95 * kGiB;
//   in.free_at_init_bytes = 94 * kGiB;
//   in.avail_after_weights_bytes = 21.7 * kGiB;
//   in.cell_bytes = 65536;
//   in.mem_fraction_static = 0.5;
//   auto plan = tpt::memory::MakePlan(in);   // plan->fits == false, failure "kv_pool_no_room"
//   std::cout << tpt::memory::PlanToText(*plan);
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "memory/host_platform.h"
#include "memory/ledger.h"
#include "memory/memory_model.h"
#include "memory/model_config.h"
#include "memory/remedy.h"
#include "memory/vllm_mm_profile.h"

namespace tpt::memory {

inline constexpr int kPlanSchemaVersion = 1;

struct PlanInput {
  std::string framework;            // "sglang" | "vllm" | "tgi" | "trtllm" | "lmdeploy"
  std::string version;              // server version, decides the era
  std::string vllm_engine;          // "", "v0", "v1"
  // vLLM's entry point (--vllm-entrypoint): "" or "serve" (vllm serve), "llm" (the offline
  // LLM(...) class): V1's default max_num_batched_tokens and the launch line (vllm_entrypoint.h).
  std::string vllm_entrypoint;
  std::string gpu_name;             // catalog name ("" when only the size is known)
  double total_bytes = 0;           // card total (cudaMemGetInfo)
  // The catalog's lower total for this card on some hosts (GpuInfo::memory_bytes_low) and
  // when; 0 when --gpu-mem gave the total or the card has one: the range runs down to it.
  double total_bytes_low = 0;
  std::string total_low_when;
  std::optional<double> free_at_init_bytes;         // default DefaultFreeAtInit(total, tp)
  std::optional<double> avail_after_weights_bytes;  // SGLang: measured after weights
  int tp = 1, pp = 1, dp = 1;
  bool enable_dp_attention = false;
  std::optional<double> weights_bytes;  // per rank
  std::string weight_dtype = "bf16";
  bool weight_dtype_given = false;      // --dtype was given: with --model it is used, or said when it conflicts
  bool quantize_fp8_at_load = false;    // --dtype fp8 of a 16-bit checkpoint: the servers' --quantization fp8
  std::string quantization_method;      // --quantization other than fp8: a quantized checkpoint's kernel
  KvDims dims;                          // dtype_bytes is filled from kv_cache_dtype
  std::optional<int64_t> cell_bytes;    // overrides dims
  std::string kv_cache_dtype = "auto";
  std::optional<double> mem_fraction_static;     // SGLang
  std::optional<double> gpu_memory_utilization;  // vLLM
  // TGI --cuda-memory-fraction, TensorRT-LLM --kv_cache_free_gpu_memory_fraction, LMDeploy
  // --cache-max-entry-count: the memory knob of the other servers.
  std::optional<double> memory_fraction;
  std::string lmdeploy_backend;                  // turbomind (default) | pytorch
  // TensorRT-LLM: "tensorrt" (a trtllm-build engine, the C++ executor) | "pytorch";
  // "" = the version's default (TrtllmDefaultBackend: the engine before 1.0).
  std::string trtllm_backend;
  // TensorRT engine: its runtime and decoder buffers as a log gives them ("[MemUsageChange]
  // Allocated X GPU memory for runtime buffers" + "... for decoder"), instead of the estimate.
  std::optional<double> runtime_buffers_bytes;
  // TensorRT engine: how it is built (trtllm_engine_build.cc): "serve" (trtllm-serve or the LLM
  // API from the checkpoint, on these GPUs before it serves), "trtllm-build" (trtllm-build on this
  // host), "elsewhere" (an engine built before, on other cards); "" = serve, said.
  std::string trtllm_engine_build;
  // The build's device memory beyond the engine's weights (closed TensorRT): the ranges' knob.
  std::optional<double> engine_build_extra_bytes;
  // trtllm-build --context_fmha (unset: not said, on by default) and --max_input_len: with it off the
  // attention plugin's build scratch grows with max_input_len squared (trtllm_engine_build.cc).
  std::optional<bool> trtllm_context_fmha;
  std::optional<int64_t> trtllm_max_input_len;
  // TGI --max-batch-total-tokens: before v0.9.4 the warm-up allocates this many tokens of KV
  // and prefills beside them; from v0.9.4 flash models infer it (the asked value is ignored).
  std::optional<int64_t> max_batch_total_tokens;
  // TGI --enable-prefill-logprobs (v3.0.0+; before v3 prefill log-probabilities are always on).
  bool tgi_prefill_logprobs = false;
  // TGI --max-input-tokens and its older name --max-input-length (the launcher refuses both).
  std::optional<int64_t> tgi_max_input_tokens, tgi_max_input_length;
  // TGI --cuda-graphs (v2.0.0+): the decode batch sizes captured after the KV cache; {0}: none
  // (tgi_graph_capture.h; unset: the launcher's default).
  std::optional<std::vector<int>> tgi_cuda_graphs;
  std::optional<int64_t> context_length;         // SGLang context / vLLM max_model_len
  std::optional<int> cuda_graph_max_bs;
  std::optional<double> cuda_graph_bytes;        // measured graph memory at cuda_graph_max_bs
  std::optional<int> chunked_prefill_size;
  std::string speculative_algorithm;
  int page_size = 1;                              // SGLang
  int block_size = 16;                            // vLLM
  std::optional<int64_t> max_total_tokens;        // SGLang --max-total-tokens
  std::optional<double> activation_peak_bytes;    // vLLM
  // vLLM --vllm-flashinfer: whether FlashInfer is installed (the vllm/vllm-openai images ship it,
  // a pip install without the extra does not); decides V1's sampler in the profiling run.
  std::optional<bool> vllm_flashinfer;
  std::optional<double> non_torch_bytes;          // vLLM
  // From the model's files (--model): weights, KV dims and activations are derived
  // when not given; the context length defaults to max_position_embeddings.
  std::optional<ModelConfig> model;
  int ep = 1;                                     // expert-parallel size (vLLM: tp x dp with EP on)
  std::optional<int64_t> max_num_batched_tokens;  // vLLM profiling run size
  std::optional<int64_t> max_num_seqs;            // vLLM sampler rows in profiling
  std::optional<VllmMmLimits> mm_limits;         // vLLM --limit-mm-per-prompt (1 image, 1 video)
  int concurrency = 1;                            // full-length requests a useful pool must hold
  bool concurrency_required = false;              // --concurrency given: a pool that holds fewer fails the plan
  std::string model_path;                         // --model as given, for the launch command line
  bool version_assumed = false;                   // the user gave no version; `version` is our default
  std::string gpu_arch, gpu_interconnect;         // from the catalog ("" when only the size is known)
  int gpu_sm = 0;                                 // compute capability x10, from the catalog (0: unknown)
  bool unified_memory = false;                    // the catalog's: a GB10 or Jetson (unified_memory.h)
  bool gpu_pcie_peer_access = true;               // the catalog's: false on GeForce cards (CustomAllReduceOn)
  // --activation-peak came from a log (the CLI's flag), so on a unified-memory device it holds
  // the host's use as TensorRT-LLM measured it; carried into the sensitivity variants.
  bool peak_from_log = false;
  std::optional<double> draft_weights_bytes;      // speculative draft model, per rank
  int draft_layers = 0;                           // its layers (0: 1 assumed for EAGLE heads)
  // SGLang hybrid pools (with --model): the sliding-window pool of the architectures that
  // have one, and the mamba/linear-attention state pool.
  std::optional<double> swa_full_tokens_ratio;    // --swa-full-tokens-ratio (0.8)
  bool disable_hybrid_swa_memory = false;         // --disable-hybrid-swa-memory
  bool sglang_enable_multimodal = false;          // SGLang --enable-multimodal (0.4.6 on)
  bool enforce_eager = false;                     // vLLM --enforce-eager: no CUDA graphs
  std::string vllm_performance_mode;              // vLLM 0.17+ --performance-mode ("" = balanced)
  std::optional<int64_t> max_mamba_cache_size;    // --max-mamba-cache-size
  // SGLang --max-running-requests and --disable-radix-cache: a hybrid model's state count
  // by version (sglang_mamba_states.h) and the running-request cap; a plain model's pool
  // does not change with them.
  std::optional<int64_t> max_running_requests;
  bool disable_radix_cache = false;
  std::optional<double> mamba_full_memory_ratio;  // --mamba-full-memory-ratio (0.9)
  std::string mamba_ssm_dtype;                    // --mamba-ssm-dtype (float32 | bfloat16)
  // Set by the derivation, not by users: vLLM profiles this multimodal model's encoder on
  // dummy items the plan does not size (every tower but the Qwen-VL processors on V0), so
  // the activation peak is a rough estimate; the plan says so under `unknown:`.
  bool encoder_profile_unmodelled = false;
  // Set by the derivation: the modality vLLM V1's profiling run encodes ("image", "video";
  // "" when not modelled or none), and its encoder peak in bytes (vllm_mm_profile.h).
  std::string encoder_modality;
  double encoder_peak_bytes = 0;
  // Set by the derivation: vLLM V0 profiles InternVL with --limit-mm-per-prompt's images
  // (vllm_v0_internvl.h); without the flag the point takes the default (1) and this is the
  // most images a prompt of the context can carry, the range's worst case. 0 otherwise.
  int64_t mm_images_worst = 0;
  // Set by the derivation: a floor under the profiling run's activation peak that the range
  // never goes below (vLLM V0's mllama tower, vllm_v0_mllama.h). 0 otherwise.
  double activation_floor_bytes = 0;
  // Set by the derivation: vLLM V1 0.8.x's profiling peak had FlashInfer (older than 0.2.3)
  // been installed (its images) and sampled instead of the sort the plan prices (a pip
  // install); the pool's range and `unknown:` say so. 0 when it does not apply.
  double flashinfer_probs_peak_bytes = 0;
  // Set by the derivation: context_length came from the model's max_position_embeddings,
  // not from the user (TGI v3 then warms up without a max_total_tokens).
  bool context_from_model = false;
  // The operating system the launch runs on (--host): Windows and WSL2 hold memory the plan
  // cannot size (host_platform.h); the point estimate is then said not to be reliable.
  HostPlatform host = HostPlatform::kLinux;
  // Set by the sensitivity variants that drop the model, not by users: what TurboMind holds
  // before its free-memory read as the plan sized it (turbomind_startup.h).
  std::optional<double> turbomind_held_bytes;
  // Set by the same variants: SGLang's factor on --mem-fraction-static for this multimodal
  // model as the plan found it (sglang_multimodal.h).
  std::optional<double> sglang_multimodal_factor;
};

// How much one assumption moves the predicted pool: the KV tokens at its low and high end.
struct Sensitivity {
  std::string assumption;
  int64_t kv_tokens_low = 0, kv_tokens_high = 0;
  bool fits_low = true, fits_high = true;
};

struct Plan {
  PlanInput input;
  std::string era;
  double free_at_init_bytes = 0, weights_bytes = 0, non_torch_bytes = 0;
  int64_t cell_bytes = 0;           // KV bytes per token per rank
  std::string fraction_flag;        // "--mem-fraction-static" | "--gpu-memory-utilization"
  double fraction = 0;
  std::string fraction_source;      // "flag" or the default rule that produced it
  LedgerRow row;                    // every rank is alike in a plan: rank -1
  int64_t kv_tokens = 0;            // predicted pool size (0 on failure)
  bool fits = true;
  std::string failure;              // taxonomy id: kv_pool_no_room, kv_pool_too_small,
                                    // startup_free_memory_short, cuda_graph_capture_oom
  std::string error;                // the text the server would raise/log
  nlohmann::json figures = nlohmann::json::object();  // era-specific numbers (bytes)
  std::vector<Remedy> remedies;
  std::vector<std::string> assumptions;  // defaults the prediction rests on
  std::vector<Sensitivity> sensitivity;  // range of the KV pool over the uncertain inputs
  std::optional<WeightEstimate> weights; // when derived from --model
  std::string model_summary;             // DescribeModel, when --model was given
  double max_concurrency = 0;            // vLLM-style: KV tokens / context length (0 when unknown)
  // Tokens of full-length requests the pool holds: kv_tokens, except for vLLM's hybrid
  // groups where sliding-window layers keep only the window (max_concurrency x context).
  int64_t usable_tokens = 0;
  // The server's command line for this configuration, ready to copy (fits only):
  // `python -m sglang.launch_server ...` / `vllm serve ...`.
  std::string launch_command;
  // What does not stop the server but limits it (SGLang's pool shorter than the
  // context it was not asked to hold: it starts, and caps requests at the pool).
  std::vector<std::string> warnings;
  // What the plan does not model for this configuration, with how far it may be off
  // (text `unknown:` lines, JSON "unknowns"): said, never left silent.
  std::vector<std::string> unknowns;
  // False when an input the plan cannot size moves the pool by more than its ranges say
  // (a Windows or WSL2 host without a measured --free-at-init): text and JSON say so.
  bool point_estimate_reliable = true;
  // False when the verdict rests on what no input sizes, and text and JSON say so: a
  // CUDA-graph capture of NCCL collectives whose room lies between the priced and the
  // measured high end (`fits` false with the failure it may meet: "may fail"), or vLLM's
  // startup check on a card known only by its size (`fits` true: "fits, not certain").
  bool outcome_certain = true;
};

// The launch command of a configuration that fits; every value the plan used
// that the server would not pick itself is spelled out.
std::string LaunchCommand(const Plan& p);

// Errors name the flag to fix (e.g. "--layers/--kv-heads/--head-dim or --cell-bytes").
StatusOr<Plan> MakePlan(const PlanInput& in);
// Context/NCCL/custom all-reduce taken at init on an otherwise empty card, by GPU family,
// interconnect and TP (sglang-source.md §3, anchors-allreduce.md §4.1; L4 and A100 from the
// corpus's "Init torch distributed ends. mem usage=" and "Load weight begin. avail mem=").
double InitOverheadBytes(std::string_view arch, std::string_view interconnect, int tp, bool pcie_peer_access = true);
// One NCCL communicator's device memory on this card and link; whether vLLM/SGLang's
// custom all-reduce is on at this TP size (off on more than two PCIe GPUs, and on PCIe
// cards without CUDA peer access: GpuInfo::pcie_peer_access).
double NcclCommBytes(std::string_view arch, std::string_view interconnect);
bool CustomAllReduceOn(std::string_view interconnect, int tp, bool pcie_peer_access = true);
nlohmann::json PlanToJson(const Plan& plan);
std::string PlanToText(const Plan& plan);

}  // namespace tpt::memory
