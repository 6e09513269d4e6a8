// cmd_plan.cc: `tptriage plan`: predict the per-rank memory ledger and KV pool of a
// launch before running it (memory/launch_plan.h does the work).
//
//   tptriage plan --framework sglang --version 0.4.3.post4 --gpu L4 --tp 4   (one command)
//       --weights-per-rank 15.54GiB --layers 64 --kv-heads 8 --head-dim 128
//       --mem-fraction-static 0.85 --format json
//
// Exit 0 when it fits, 1 when it predicts a failure, 2 on a usage error.
#include <charconv>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

#include <boost/program_options.hpp>

#include "cli/args.h"
#include "base/units.h"
#include "cli/commands.h"
#include "memory/memory_model.h"
#include "memory/launch_plan.h"
#include "memory/vllm_entrypoint.h"
#include "memory/vllm_performance_mode.h"
#include "memory/server_flags.h"

namespace tpt::cli {
namespace {

namespace po = boost::program_options;
namespace mem = tpt::memory;

// Flags as typed on the command line (stage one); ValidatePlanFlags makes a PlanInput.
struct PlanFlags {
  std::string framework, version, vllm_engine, vllm_entrypoint, vllm_flashinfer, gpu, gpu_catalog, gpu_mem, free_at_init, avail_after_weights;
  std::string host = "linux";
  int tp = 1, pp = 1, dp = 1;
  bool enable_dp_attention = false;
  std::string weights_per_rank, params, dtype = "bf16";
  std::string quantization;  // SGLang/vLLM --quantization as the launch line spells it
  int layers = 0, kv_heads = 0, head_dim = 0, v_head_dim = 0, kv_lora_rank = 0, qk_rope_head_dim = 0;
  int64_t cell_bytes = 0;
  std::string kv_cache_dtype = "auto";
  double mem_fraction_static = -1, gpu_memory_utilization = -1;
  int64_t context_length = 0, max_model_len = 0, max_total_tokens = 0;
  int cuda_graph_max_bs = 0, chunked_prefill_size = 0, page_size = 1, block_size = 16;
  std::string cuda_graph_mem, activation_peak, non_torch, speculative_algorithm;
  std::string format = "text";
  std::string server_version, model, draft_model;
  int tp2 = 0, pp2 = 0, dp2 = 0, ep = 1, concurrency = 1;
  bool enable_expert_parallel = false;
  int64_t max_num_batched_tokens = 0, max_num_seqs = 0;
  std::string limit_mm_per_prompt;
  double swa_full_tokens_ratio = 0.8, mamba_full_memory_ratio = 0.9;
  bool disable_hybrid_swa_memory = false;
  bool enable_multimodal = false;
  bool enforce_eager = false;
  bool enable_prefill_logprobs = false;
  int64_t max_mamba_cache_size = 0;
  std::string mamba_ssm_dtype;
  int64_t max_running_requests = 0;
  bool disable_radix_cache = false;
  // TGI, TensorRT-LLM, LMDeploy: their memory knob and their names of shared settings.
  std::string server;
  double cuda_memory_fraction = -1, kv_cache_free_gpu_memory_fraction = -1, cache_max_entry_count = -1;
  std::string backend, runtime_buffers, engine_build, context_fmha;
  std::string performance_mode;
  std::string cuda_graphs;
  int64_t max_batch_total_tokens = 0;
  int64_t max_input_tokens = 0, max_input_length = 0;
  int64_t session_len = 0, max_seq_len = 0, max_batch_prefill_tokens = 0, max_num_tokens = 0,
          max_prefill_token_num = 0, max_batch_size = 0, max_input_len = 0;
  int num_shard = 0;
};

po::options_description Options(PlanFlags& f) {
  po::options_description d("tptriage plan: predict the memory ledger and KV pool of a launch\n\nOptions");
  d.add_options()
      ("help,h", "show this help")
      ("framework", po::value(&f.framework), "sglang | vllm | tgi | trtllm | lmdeploy (required; or --server)")
      ("server", po::value(&f.server), "same as --framework")
      ("server-version", po::value(&f.server_version),
       "server version, e.g. 0.4.3.post4 or 0.10.1 (decides the formula era; without it the newest is assumed "
       "and the answer says how much the version moves it)")
      ("version", po::value(&f.version), "old name of --server-version")
      ("model", po::value(&f.model),
       "local model directory or its config.json (no download): layers, heads, MoE, MLA, quantization; "
       "model.safetensors.index.json's total size when present")
      ("speculative-draft-model-path", po::value(&f.draft_model), "draft model directory (its weights are added)")
      ("vllm-engine", po::value(&f.vllm_engine), "v0 | v1 (default: v1 from vLLM 0.8.0)")
      ("vllm-entrypoint", po::value(&f.vllm_entrypoint),
       "serve (default: vllm serve) | llm (the offline Python LLM(...) class): V1's default max_num_batched_tokens "
       "by it (engine/arg_utils.py: the LLM class profiles 8192 where serve takes 2048, 16384 where it takes 8192); "
       "with llm the launch line and the remedies are the class's keywords (gpu_memory_utilization=...)")
      ("vllm-flashinfer", po::value(&f.vllm_flashinfer),
       "installed | absent: whether FlashInfer is installed (the vllm/vllm-openai images ship it; pip's vllm "
       "without the flashinfer extra does not); V1 0.8.0-0.11.0 sample with it where it is, which moves the "
       "profiling peak (default: unknown, the plan prices the sort and ranges FlashInfer)")
      ("gpu", po::value(&f.gpu), "GPU name from the catalog: H100, H200, H20, A100-40G, L4, L40S, RTX 4090, ...")
      ("gpu-catalog", po::value(&f.gpu_catalog), "more GPUs (or corrected figures) in gpu_catalog.json's shape, merged over the built-in catalog; default $TPTRIAGE_GPU_CATALOG or ~/.config/tptriage/gpus.json when present")
      ("gpu-mem", po::value(&f.gpu_mem),
       "GPU memory total as CUDA reports it (torch's total_memory, not nvidia-smi's MiB, which is a few hundred MiB "
       "more on Linux), e.g. 96GiB (a size needs a unit): instead of --gpu, or beside it for the total this host "
       "reports (GeForce cards report all their memory on Windows and WSL2, a few hundred MiB less on Linux)")
      ("host", po::value(&f.host),
       "linux (default) | windows | wsl: the OS the server runs on; on Windows (WDDM) and WSL2 the OS and desktop "
       "hold memory no input sizes, so the range widens and the KV figure is said not to be reliable; a GeForce "
       "card's total there is the whole card where the catalog cites it")
      ("free-at-init", po::value(&f.free_at_init),
       "free memory per rank after distributed init (SGLang \"Load weight begin. avail mem=\"); default: total - "
       "context - NCCL - custom all-reduce")
      ("avail-after-weights", po::value(&f.avail_after_weights),
       "SGLang: free memory after the weights (\"Load weight end. avail mem=\"), instead of --weights-per-rank")
      ("tp", po::value(&f.tp), "tensor parallel size (default 1); also --tp-size, --tensor-parallel-size")
      ("tp-size", po::value(&f.tp2), "SGLang's name of --tp")
      ("tensor-parallel-size", po::value(&f.tp2), "vLLM's name of --tp")
      ("pp", po::value(&f.pp), "pipeline parallel size (default 1)")
      ("pipeline-parallel-size", po::value(&f.pp2), "vLLM's name of --pp")
      ("pp-size", po::value(&f.pp2), "SGLang's name of --pp")
      ("dp", po::value(&f.dp), "data parallel size (default 1)")
      ("dp-size", po::value(&f.dp2), "SGLang's name of --dp")
      ("data-parallel-size", po::value(&f.dp2), "vLLM's name of --dp")
      ("ep", po::value(&f.ep), "expert parallel size (SGLang --ep-size; experts split over it)")
      ("ep-size", po::value(&f.ep), "SGLang's name of --ep")
      ("enable-expert-parallel", po::bool_switch(&f.enable_expert_parallel), "vLLM: experts over tp x dp ranks")
      ("max-num-batched-tokens", po::value(&f.max_num_batched_tokens),
       "vLLM: tokens of the profiling run (default by version and GPU)")
      ("max-num-seqs", po::value(&f.max_num_seqs), "vLLM: sequences of the profiling sampler run (default by version)")
      ("performance-mode", po::value(&f.performance_mode),
       "vLLM 0.17+: balanced (default) | interactivity | throughput (doubles the default batched tokens and sequences)")
      ("limit-mm-per-prompt", po::value(&f.limit_mm_per_prompt),
       "vLLM: multimodal items a prompt may hold, image=10,video=10 or JSON (1 each); decides the encoder's dummy items")
      ("concurrency", po::value(&f.concurrency),
       "full-length requests a useful KV pool must hold (default 1); remedies aim at it")
      ("enable-dp-attention", po::bool_switch(&f.enable_dp_attention), "SGLang DP attention (attention TP = tp/dp)")
      ("weights-per-rank", po::value(&f.weights_per_rank), "weights on one rank, e.g. 9.3GiB")
      ("params", po::value(&f.params), "parameter count instead of --weights-per-rank, e.g. 70B")
      ("dtype", po::value(&f.dtype),
       "weight dtype for --params: bf16 | fp16 | fp32 | fp8 | int8 | fp4 | int4 | awq | gptq; with --model: the "
       "16-bit load dtype, fp32, or fp8 (= --quantization fp8)")
      ("quantization", po::value(&f.quantization),
       "SGLang/vLLM --quantization as launched: fp8 quantizes a 16-bit checkpoint's linears at load (as --dtype fp8); "
       "another method names the kernel of a checkpoint quantized for it")
      ("layers", po::value(&f.layers), "attention layers (on this pipeline stage)")
      ("kv-heads", po::value(&f.kv_heads), "total key/value heads of the model (MHA/GQA)")
      ("head-dim", po::value(&f.head_dim), "head dimension (MHA/GQA)")
      ("v-head-dim", po::value(&f.v_head_dim), "value head dimension when it differs (SGLang >= 0.5)")
      ("kv-lora-rank", po::value(&f.kv_lora_rank), "MLA latent rank (DeepSeek: 512)")
      ("qk-rope-head-dim", po::value(&f.qk_rope_head_dim), "MLA rope dimension (DeepSeek: 64)")
      ("cell-bytes", po::value(&f.cell_bytes), "KV bytes per token per rank, instead of the model dimensions")
      ("kv-cache-dtype", po::value(&f.kv_cache_dtype), "auto | bf16 | fp16 | fp8 | fp8_e4m3 | fp8_e5m2 | fp4")
      ("mem-fraction-static", po::value(&f.mem_fraction_static), "SGLang fraction (default: the version's rule)")
      ("gpu-memory-utilization", po::value(&f.gpu_memory_utilization), "vLLM fraction (default 0.9)")
      ("context-length", po::value(&f.context_length), "longest request (SGLang --context-length, vLLM max_model_len)")
      ("max-model-len", po::value(&f.max_model_len), "same as --context-length")
      ("max-total-tokens", po::value(&f.max_total_tokens), "SGLang --max-total-tokens cap")
      ("cuda-graph-max-bs", po::value(&f.cuda_graph_max_bs), "largest CUDA-graph batch size")
      ("cuda-graph-mem", po::value(&f.cuda_graph_mem), "measured CUDA-graph memory at --cuda-graph-max-bs, e.g. 1.9GiB")
      ("enforce-eager", po::bool_switch(&f.enforce_eager), "vLLM: no CUDA graphs (none are captured or priced)")
      ("chunked-prefill-size", po::value(&f.chunked_prefill_size), "SGLang chunked prefill size (default rule input)")
      ("speculative-algorithm", po::value(&f.speculative_algorithm), "SGLang: EAGLE | EAGLE3 | STANDALONE | NGRAM")
      ("page-size", po::value(&f.page_size), "SGLang page size (default 1)")
      ("block-size", po::value(&f.block_size), "vLLM block size (default 16)")
      ("activation-peak", po::value(&f.activation_peak), "vLLM profiled activation peak, e.g. 1.5GiB")
      ("non-torch", po::value(&f.non_torch), "vLLM non-torch memory (NCCL, cuBLAS, custom AR), e.g. 0.6GiB")
      ("swa-full-tokens-ratio", po::value(&f.swa_full_tokens_ratio),
       "SGLang hybrid sliding-window pool: swa tokens / full tokens (default 0.8)")
      ("enable-multimodal", po::bool_switch(&f.enable_multimodal),
       "SGLang (0.4.6 on): serve Gemma-3 / Llama-4 as multimodal (text-only by default); before 0.4.9 its "
       "--mem-fraction-static is then lowered")
      ("disable-hybrid-swa-memory", po::bool_switch(&f.disable_hybrid_swa_memory),
       "SGLang: no separate sliding-window pool (every layer priced as full attention)")
      ("max-mamba-cache-size", po::value(&f.max_mamba_cache_size),
       "SGLang mamba/linear-attention hybrids: request states kept (default: mamba : KV memory by ratio)")
      ("mamba-full-memory-ratio", po::value(&f.mamba_full_memory_ratio),
       "SGLang: mamba state memory / full KV memory (default 0.9)")
      ("mamba-ssm-dtype", po::value(&f.mamba_ssm_dtype), "SGLang: float32 (default) | bfloat16 SSM state")
      ("max-running-requests", po::value(&f.max_running_requests),
       "SGLang: running-request cap; for a mamba/linear-attention hybrid the request states it keeps, by version "
       "(with --disable-radix-cache from 0.5.9); a plain model's KV pool does not change")
      ("disable-radix-cache", po::bool_switch(&f.disable_radix_cache),
       "SGLang: no prefix cache; for a mamba/linear-attention hybrid the states are --max-running-requests "
       "(512 without it before 0.5.9) instead of the ratio split")
      ("cuda-memory-fraction", po::value(&f.cuda_memory_fraction), "TGI: CUDA_MEMORY_FRACTION (default 1.0)")
      ("kv-cache-free-gpu-memory-fraction", po::value(&f.kv_cache_free_gpu_memory_fraction),
       "TensorRT-LLM: free_gpu_memory_fraction of the KV cache (default 0.9)")
      ("kv_cache_free_gpu_memory_fraction", po::value(&f.kv_cache_free_gpu_memory_fraction), "trtllm-serve's spelling")
      ("cache-max-entry-count", po::value(&f.cache_max_entry_count),
       "LMDeploy: KV cache ratio of the free memory after the weights (default 0.8; in v0.1.0-0.2.1 of the "
       "card's total, default 0.5; before v0.1.0 a count of sequences, not planned)")
      ("backend", po::value(&f.backend),
       "LMDeploy: turbomind (default) | pytorch; TensorRT-LLM: tensorrt (a trtllm-build engine; the default before "
       "1.0) | pytorch (the default from 1.0)")
      ("runtime-buffers", po::value(&f.runtime_buffers),
       "TensorRT engine: its runtime + decoder buffers from a log ('[MemUsageChange] Allocated X GPU memory for "
       "runtime buffers' + '... for decoder'), e.g. 4.9GiB")
      ("engine-build", po::value(&f.engine_build),
       "TensorRT engine: serve (trtllm-serve builds it from the checkpoint on these GPUs; the default) | "
       "trtllm-build (trtllm-build on this host, from a converted checkpoint) | elsewhere (built before on other "
       "cards); the launch line is that path's")
      ("context_fmha", po::value(&f.context_fmha), "trtllm-build: enable (default) | disable (unfused, L^2 scratch)")
      ("max_input_len", po::value(&f.max_input_len), "trtllm-build: longest input (with --context_fmha disable)")
      ("max-batch-total-tokens", po::value(&f.max_batch_total_tokens),
       "TGI: before v0.9.4 the KV cache's tokens (default 16000), allocated before the warm-up prefill; from "
       "v0.9.4 ignored for flash models (inferred), still checked against --max-total-tokens")
      ("max-input-tokens", po::value(&f.max_input_tokens),
       "TGI: longest prompt (v2.0 on; the launcher's default before v2.4.1: min(max_position_embeddings, 4096) - 1, "
       "1024 before v2.0); checked as the launcher does against --max-total-tokens and --max-batch-prefill-tokens")
      ("max-input-length", po::value(&f.max_input_length), "TGI: the older name of --max-input-tokens")
      ("cuda-graphs", po::value(&f.cuda_graphs),
       "TGI v2.0+: decode batch sizes captured as CUDA graphs after the KV cache (default 1,2,4,8,16,32; 0: none)")
      ("enable-prefill-logprobs", po::bool_switch(&f.enable_prefill_logprobs),
       "TGI v3: prefill log-probabilities on (off by default from v3.0; always on before): the warm-up's lm_head "
       "then runs over every prefill token")
      ("num-shard", po::value(&f.num_shard), "TGI's name of --tp")
      ("tp_size", po::value(&f.num_shard), "trtllm-serve's name of --tp")
      ("session-len", po::value(&f.session_len), "LMDeploy's name of --context-length")
      ("max_seq_len", po::value(&f.max_seq_len), "trtllm-serve's name of --context-length")
      ("max-batch-prefill-tokens", po::value(&f.max_batch_prefill_tokens), "TGI: tokens of the warm-up prefill")
      ("max_num_tokens", po::value(&f.max_num_tokens), "TensorRT-LLM: tokens of one forward (default 8192)")
      ("max-prefill-token-num", po::value(&f.max_prefill_token_num), "LMDeploy: tokens of one prefill (default 8192)")
      ("max-batch-size", po::value(&f.max_batch_size), "TGI/TensorRT-LLM/LMDeploy: running requests")
      ("format", po::value(&f.format), "text | json (default text)");
  return d;
}

// A memory size needs a unit (a bare "94" is more likely GiB than bytes): base/units.h.
StatusOr<double> Size(const std::string& flag, const std::string& text) {
  auto b = ParseSize(text, BareNumber::kNeedsUnit);
  if (!b.ok()) return InvalidArgumentError("--" + flag + ": " + b.status().message());
  return *b;
}

Status Positive(const char* flag, int64_t v, int64_t min = 1) {
  if (v < min) return InvalidArgumentError("--" + std::string(flag) + " must be >= " + std::to_string(min) +
                                           " (got " + std::to_string(v) + ")");
  return OkStatus();
}

Status Fraction(const char* flag, double v) {
  if (!(v > 0 && v <= 1)) {
    std::ostringstream s;
    s << "--" << flag << " must be in (0, 1] (got " << v << ")";
    return InvalidArgumentError(s.str());
  }
  return OkStatus();
}

StatusOr<mem::PlanInput> ValidatePlanFlags(const PlanFlags& given, const po::variables_map& vm) {
  PlanFlags f = given;
  if (f.framework.empty()) f.framework = f.server;
  if (f.framework == "tensorrt-llm" || f.framework == "trt-llm") f.framework = "trtllm";
  mem::PlanInput in;
  if (!f.server.empty() && !f.framework.empty() && f.server != f.framework) {
    return InvalidArgumentError("--server and --framework differ; give one");
  }
  std::string fw = f.framework.empty() ? f.server : f.framework;
  if (fw == "tensorrt-llm" || fw == "trt-llm") fw = "trtllm";
  if (fw.empty()) return InvalidArgumentError("--framework is required (sglang, vllm, tgi, trtllm or lmdeploy)");
  if (fw != "sglang" && fw != "vllm" && fw != "tgi" && fw != "trtllm" && fw != "lmdeploy") {
    return InvalidArgumentError("--framework '" + fw + "' is not supported; use sglang, vllm, tgi, trtllm or lmdeploy");
  }
  const bool other = fw == "tgi" || fw == "trtllm" || fw == "lmdeploy";
  in.framework = fw;
  if (!f.version.empty() && !f.server_version.empty() && f.version != f.server_version) {
    return InvalidArgumentError("--server-version and --version differ; give one (--version is the old name)");
  }
  std::string version = f.server_version.empty() ? f.version : f.server_version;
  if (version.empty()) {
    // The newest version each server's formulas know.
    version = f.framework == "sglang" ? "0.5.9"
              : f.framework == "vllm" ? "0.21.0"
              : f.framework == "tgi"  ? "3.3.6"
              : f.framework == "lmdeploy" ? "0.14.0"
                                          : "1.0.0";
    in.version_assumed = true;
  }
  if (auto v = mem::ParseVersion(version); !v.ok()) {
    return InvalidArgumentError(std::string(f.server_version.empty() ? "--version" : "--server-version") + ": " +
                                v.status().message());
  }
  in.version = version;
  in.vllm_engine = f.vllm_engine;
  if (!f.vllm_engine.empty() && f.framework != "vllm") return InvalidArgumentError("--vllm-engine applies to vllm only");
  if (vm.count("vllm-entrypoint")) {
    TPT_RETURN_IF_ERROR(mem::VllmEntrypointOk(f.vllm_entrypoint, f.framework));
    in.vllm_entrypoint = f.vllm_entrypoint;
  }
  if (vm.count("vllm-flashinfer")) {
    if (f.framework != "vllm") return InvalidArgumentError("--vllm-flashinfer applies to vllm only");
    if (f.vllm_flashinfer != "installed" && f.vllm_flashinfer != "absent")
      return InvalidArgumentError("--vllm-flashinfer: expected installed or absent, not '" + f.vllm_flashinfer + "'");
    in.vllm_flashinfer = f.vllm_flashinfer == "installed";
  }

  // --gpu-mem: the total this host reports, alone or beside --gpu (whose other traits stay:
  // GeForce cards report their whole memory on Windows and WSL2, a few hundred MiB less on
  // Linux, and the catalog holds Linux's figure).
  std::optional<double> gpu_mem;
  if (vm.count("gpu-mem")) {
    auto b = Size("gpu-mem", f.gpu_mem);
    if (!b.ok()) return b.status();
    // A real card's memory: no inf reaches the plan, nor a total below what the CUDA context takes.
    if (!(*b >= 1024.0 * 1024 * 1024) || !(*b <= 16384.0 * 1024 * 1024 * 1024)) {
      return InvalidArgumentError("--gpu-mem " + f.gpu_mem + ": expected a GPU's memory from 1GiB to 16TiB");
    }
    gpu_mem = *b;
  }
  {
    auto host = mem::ParseHostPlatform(f.host);
    if (!host.ok()) return host.status();
    in.host = *host;
  }
  if (vm.count("gpu")) {
    auto g = mem::FindGpu(f.gpu);
    if (!g.ok()) return InvalidArgumentError("--gpu: " + g.status().message());
    in.gpu_name = g->name;
    in.total_bytes = gpu_mem.value_or(g->memory_bytes);
    // Windows and WSL2 (WDDM) report the whole card where Linux keeps part of it out of the
    // total: the catalog's cited WDDM total there (gpu_catalog.json wddm_mib).
    const bool wddm = in.host != mem::HostPlatform::kLinux && !gpu_mem;
    if (wddm && g->wddm_mib > 0) in.total_bytes = static_cast<double>(g->wddm_mib) * 1024 * 1024;
    if (!gpu_mem && !wddm && g->memory_bytes_low > 0) {
      in.total_bytes_low = g->memory_bytes_low;
      in.total_low_when = g->memory_low_when;
    }
    in.gpu_arch = g->arch;
    in.gpu_interconnect = g->interconnect;
    in.gpu_sm = g->sm;
    in.unified_memory = g->unified_memory;
    in.gpu_pcie_peer_access = g->pcie_peer_access;
    if (auto alt = mem::GpuAmbiguity(f.gpu); !alt.empty()) in.gpu_name += " [assumed: " + alt + "]";
    if (auto ff = mem::GpuFormFactorOpen(f.gpu); !ff.empty()) in.gpu_name += " [assumed: " + ff + "]";
    if (gpu_mem) in.gpu_name += " [total " + f.gpu_mem + " from --gpu-mem]";
    if (wddm && g->wddm_mib > 0) {
      in.gpu_name += " [total " + std::to_string(g->wddm_mib) + " MiB: " + mem::HostPlatformName(in.host) +
                     " reports the whole card]";
    } else if (wddm && !g->pcie_peer_access) {
      in.gpu_name += " [assumed: the native Linux total; " + mem::HostPlatformName(in.host) +
                     " reports a GeForce card whole: pass --gpu-mem with the total this host reports]";
    }
  } else if (gpu_mem) {
    in.total_bytes = *gpu_mem;
  } else {
    return InvalidArgumentError("the GPU is unknown: give --gpu NAME (e.g. H100) or --gpu-mem SIZE (e.g. 80GiB)");
  }
  // --gpu-mem that is exactly a card's nvidia-smi total (the catalog's, cited) on Linux: that
  // card's CUDA total, which the servers size from (said in RunPlan).
  if (gpu_mem && in.host == mem::HostPlatform::kLinux) {
    const mem::GpuInfo* smi = mem::GpuByNvidiaSmiTotal(*gpu_mem);
    if (smi != nullptr && (!vm.count("gpu") || in.gpu_name.rfind(smi->name, 0) == 0)) {
      in.total_bytes = smi->memory_bytes;
      const std::string said = " [total " + f.gpu_mem + " from --gpu-mem]";
      if (auto at = in.gpu_name.find(said); at != std::string::npos) {
        in.gpu_name.replace(at, said.size(), " [--gpu-mem " + f.gpu_mem + " is nvidia-smi's: CUDA's total taken]");
      }
    }
  }
  if (vm.count("free-at-init")) {
    auto b = Size("free-at-init", f.free_at_init);
    if (!b.ok()) return b.status();
    in.free_at_init_bytes = *b;
  }
  if (vm.count("avail-after-weights")) {
    auto b = Size("avail-after-weights", f.avail_after_weights);
    if (!b.ok()) return b.status();
    in.avail_after_weights_bytes = *b;
  }
  if (vm.count("num-shard") && fw != "tgi" && vm.count("tp_size") == 0) {
    return InvalidArgumentError("--num-shard is TGI's; use --tp");
  }
  if (vm.count("num-shard") && vm.count("tp_size")) return InvalidArgumentError("give --num-shard or --tp_size, not both");
  int tp = f.tp, pp = f.pp, dp = f.dp;
  if (f.num_shard != 0) {
    if (vm.count("tp") && f.tp != f.num_shard) return InvalidArgumentError("--tp and --num-shard/--tp_size differ; give one");
    tp = f.num_shard;
  }
  for (auto [name, alias, value, target] :
       {std::tuple{"tp", "tp-size/--tensor-parallel-size", f.tp2, &tp}, {"pp", "pp-size/--pipeline-parallel-size", f.pp2, &pp},
        {"dp", "dp-size/--data-parallel-size", f.dp2, &dp}}) {
    if (value == 0) continue;
    if (vm.count(name) && *target != value) {
      return InvalidArgumentError("--" + std::string(name) + " and --" + alias + " differ; give one");
    }
    *target = value;
  }
  for (auto [n, v] : {std::pair<const char*, int64_t>{"tp", tp}, {"pp", pp}, {"dp", dp}, {"ep", f.ep},
                      {"concurrency", f.concurrency}, {"max_input_len", vm.count("max_input_len") ? f.max_input_len : 1}}) {
    TPT_RETURN_IF_ERROR(Positive(n, v));
  }
  if (tp > 1024) return InvalidArgumentError("--tp " + std::to_string(tp) + " is beyond any deployment (at most 1024)");
  if (pp > 256) return InvalidArgumentError("--pp " + std::to_string(pp) + " is beyond any deployment (at most 256)");
  if (dp > 4096 || f.ep > 4096) return InvalidArgumentError("--dp/--ep beyond any deployment (at most 4096)");
  in.tp = tp;
  in.pp = pp;
  in.dp = dp;
  in.ep = f.enable_expert_parallel ? tp * dp : f.ep;
  in.concurrency = f.concurrency;
  in.concurrency_required = vm.count("concurrency") > 0;
  in.model_path = f.model;
  if (vm.count("max-num-batched-tokens")) {
    TPT_RETURN_IF_ERROR(Positive("max-num-batched-tokens", f.max_num_batched_tokens));
    in.max_num_batched_tokens = f.max_num_batched_tokens;
  }
  if (vm.count("max-num-seqs")) {
    TPT_RETURN_IF_ERROR(Positive("max-num-seqs", f.max_num_seqs));
    in.max_num_seqs = f.max_num_seqs;
  }
  if (vm.count("limit-mm-per-prompt")) {
    auto limits = mem::ParseVllmMmLimits(f.limit_mm_per_prompt);
    if (!limits.ok()) return limits.status();
    in.mm_limits = *limits;
  }
  if (!f.model.empty()) {
    auto m = mem::LoadModel(f.model);
    if (!m.ok()) return m.status();
    in.model = *m;
    // The launch line names the folder the server loads: the one holding the config.json
    // read (a Hugging Face cache's snapshot; the folder when --model named a file in it).
    const std::string folder = std::filesystem::path(m->source).parent_path().string();
    if (!folder.empty()) in.model_path = folder;
  }
  if (!f.draft_model.empty()) {
    auto d = mem::LoadModel(f.draft_model);
    if (!d.ok()) return InvalidArgumentError("--speculative-draft-model-path: " + d.status().message());
    mem::Sharding s;
    s.framework = f.framework;
    s.tp = tp;
    auto w = mem::WeightsPerRank(*d, s);
    if (!w.ok()) return w.status();
    in.draft_weights_bytes = w->per_rank_bytes;
    in.draft_layers = d->layers;
  }
  in.enable_dp_attention = f.enable_dp_attention;

  auto dt = mem::WeightDtypeBytes(f.dtype);
  if (!dt.ok()) return InvalidArgumentError("--dtype: " + dt.status().message());
  in.weight_dtype = f.dtype;
  in.weight_dtype_given = vm.count("dtype") > 0;
  if (vm.count("quantization")) {
    // The servers' spelling of online FP8 (SGLang and vLLM Fp8Config with a 16-bit checkpoint:
    // is_checkpoint_fp8_serialized false, the linears quantized after loading); --dtype there is
    // the activation dtype, so a 16-bit --dtype stays compatible with it.
    std::string q = f.quantization;
    for (auto& c : q) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (q == "fp8") {
      const std::string d = f.dtype;
      const bool sixteen = d == "bf16" || d == "bfloat16" || d == "fp16" || d == "float16" || d == "half";
      if (in.weight_dtype_given && !sixteen && d != "fp8") {
        return InvalidArgumentError("--quantization fp8 with --dtype " + f.dtype +
                                    ": give one weight format (--quantization fp8 quantizes 16-bit weights to FP8)");
      }
      in.weight_dtype = "fp8";
      in.weight_dtype_given = true;
    } else {
      in.quantization_method = q;
    }
  }
  if (vm.count("weights-per-rank") && vm.count("params")) {
    return InvalidArgumentError("give --weights-per-rank or --params, not both");
  }
  if (vm.count("weights-per-rank")) {
    auto b = Size("weights-per-rank", f.weights_per_rank);
    if (!b.ok()) return b.status();
    in.weights_bytes = *b;
  } else if (vm.count("params")) {
    auto n = mem::ParseParamCount(f.params);
    if (!n.ok()) return InvalidArgumentError("--params: " + n.status().message());
    in.weights_bytes = mem::WeightsPerRankBytes(*n, *dt, tp * pp);
  }

  for (auto [flag, v] : {std::pair{"layers", f.layers}, {"kv-heads", f.kv_heads}, {"head-dim", f.head_dim},
                         {"v-head-dim", f.v_head_dim}, {"kv-lora-rank", f.kv_lora_rank},
                         {"qk-rope-head-dim", f.qk_rope_head_dim}}) {
    if (vm.count(flag)) TPT_RETURN_IF_ERROR(Positive(flag, v));
  }
  if (vm.count("kv-lora-rank") && (vm.count("kv-heads") || vm.count("head-dim"))) {
    return InvalidArgumentError("give MHA/GQA dimensions (--kv-heads, --head-dim) or MLA ones (--kv-lora-rank, "
                                "--qk-rope-head-dim), not both");
  }
  in.dims.layers = f.layers;
  in.dims.kv_heads = f.kv_heads;
  in.dims.head_dim = f.head_dim;
  in.dims.v_head_dim = f.v_head_dim;
  in.dims.kv_lora_rank = f.kv_lora_rank;
  in.dims.qk_rope_head_dim = f.qk_rope_head_dim;
  if (vm.count("cell-bytes")) {
    TPT_RETURN_IF_ERROR(Positive("cell-bytes", f.cell_bytes));
    in.cell_bytes = f.cell_bytes;
  }
  if (auto kv = mem::KvDtypeBytes(f.kv_cache_dtype); !kv.ok()) {
    return InvalidArgumentError("--kv-cache-dtype: " + kv.status().message());
  }
  in.kv_cache_dtype = f.kv_cache_dtype;

  if (vm.count("mem-fraction-static")) {
    if (f.framework != "sglang") return InvalidArgumentError("--mem-fraction-static is SGLang's; vLLM uses --gpu-memory-utilization");
    TPT_RETURN_IF_ERROR(Fraction("mem-fraction-static", f.mem_fraction_static));
    in.mem_fraction_static = f.mem_fraction_static;
  }
  if (vm.count("gpu-memory-utilization")) {
    if (f.framework != "vllm") return InvalidArgumentError("--gpu-memory-utilization is vLLM's; SGLang uses --mem-fraction-static");
    TPT_RETURN_IF_ERROR(Fraction("gpu-memory-utilization", f.gpu_memory_utilization));
    in.gpu_memory_utilization = f.gpu_memory_utilization;
  }
  if (vm.count("context-length") && vm.count("max-model-len") && f.context_length != f.max_model_len) {
    return InvalidArgumentError("--context-length and --max-model-len differ; give one");
  }
  if (vm.count("context-length") || vm.count("max-model-len")) {
    int64_t len = vm.count("context-length") ? f.context_length : f.max_model_len;
    TPT_RETURN_IF_ERROR(Positive(vm.count("context-length") ? "context-length" : "max-model-len", len));
    in.context_length = len;
  }
  // The other servers' names of the context: TGI --max-total-tokens, LMDeploy
  // --session-len, trtllm-serve --max_seq_len.
  for (auto [flag, v, server] : {std::tuple{"session-len", f.session_len, "lmdeploy"},
                                 {"max_seq_len", f.max_seq_len, "trtllm"},
                                 {"max-total-tokens", f.max_total_tokens, "tgi"}}) {
    if (!vm.count(flag) || (std::string(flag) == "max-total-tokens" && fw != "tgi")) continue;
    if (fw != server) return InvalidArgumentError("--" + std::string(flag) + " is " + server + "'s; use --context-length");
    TPT_RETURN_IF_ERROR(Positive(flag, v));
    if (in.context_length && *in.context_length != v) {
      return InvalidArgumentError("--" + std::string(flag) + " and --context-length differ; give one");
    }
    in.context_length = v;
  }
  if (vm.count("max-total-tokens") && fw != "tgi") {
    if (fw != "sglang") return InvalidArgumentError("--max-total-tokens is SGLang's cap (or TGI's context length)");
    TPT_RETURN_IF_ERROR(Positive("max-total-tokens", f.max_total_tokens));
    in.max_total_tokens = f.max_total_tokens;
  }
  for (auto [flag, v, server] : {std::tuple{"cuda-memory-fraction", f.cuda_memory_fraction, "tgi"},
                                 {"kv-cache-free-gpu-memory-fraction", f.kv_cache_free_gpu_memory_fraction, "trtllm"},
                                 {"kv_cache_free_gpu_memory_fraction", f.kv_cache_free_gpu_memory_fraction, "trtllm"},
                                 {"cache-max-entry-count", f.cache_max_entry_count, "lmdeploy"}}) {
    if (!vm.count(flag)) continue;
    if (fw != server) return InvalidArgumentError("--" + std::string(flag) + " is " + server + "'s");
    TPT_RETURN_IF_ERROR(Fraction(flag, v));
    if (fw != "tgi" && !(v < 1)) {
      return InvalidArgumentError("--" + std::string(flag) + " must be below 1 (got " + std::to_string(v) + ")");
    }
    in.memory_fraction = v;
  }
  for (auto [flag, v, server] : {std::tuple{"max-batch-prefill-tokens", f.max_batch_prefill_tokens, "tgi"},
                                 {"max_num_tokens", f.max_num_tokens, "trtllm"},
                                 {"max-prefill-token-num", f.max_prefill_token_num, "lmdeploy"}}) {
    if (!vm.count(flag)) continue;
    if (fw != server) return InvalidArgumentError("--" + std::string(flag) + " is " + server + "'s");
    TPT_RETURN_IF_ERROR(Positive(flag, v));
    in.max_num_batched_tokens = v;
  }
  if (vm.count("max-batch-size")) {
    if (!other) return InvalidArgumentError("--max-batch-size is TGI's, TensorRT-LLM's or LMDeploy's");
    TPT_RETURN_IF_ERROR(Positive("max-batch-size", f.max_batch_size));
    in.max_num_seqs = f.max_batch_size;
  }
  if (vm.count("backend")) {
    if (fw == "trtllm") {
      if (f.backend != "tensorrt" && f.backend != "pytorch") {
        return InvalidArgumentError("--backend '" + f.backend +
                                    "' is not TensorRT-LLM's; use tensorrt (a trtllm-build engine) or pytorch");
      }
      in.trtllm_backend = f.backend;
    } else {
      if (fw != "lmdeploy") {
        return InvalidArgumentError("--backend is LMDeploy's (turbomind or pytorch) or TensorRT-LLM's (tensorrt or "
                                    "pytorch)");
      }
      if (f.backend != "turbomind" && f.backend != "pytorch") {
        return InvalidArgumentError("--backend '" + f.backend + "' is not LMDeploy's; use turbomind or pytorch");
      }
      in.lmdeploy_backend = f.backend;
    }
  }
  if (vm.count("runtime-buffers")) {
    if (fw != "trtllm") return InvalidArgumentError("--runtime-buffers is a TensorRT-LLM engine's figure");
    auto b = Size("runtime-buffers", f.runtime_buffers);
    if (!b.ok()) return b.status();
    in.runtime_buffers_bytes = *b;
  }
  if (vm.count("engine-build")) {
    if (fw != "trtllm") return InvalidArgumentError("--engine-build is TensorRT-LLM's (a TensorRT engine's build)");
    if (f.engine_build != "serve" && f.engine_build != "trtllm-build" && f.engine_build != "elsewhere") {
      return InvalidArgumentError("--engine-build '" + f.engine_build + "': use serve, trtllm-build or elsewhere");
    }
    in.trtllm_engine_build = f.engine_build;
  }
  if (vm.count("context_fmha") || vm.count("max_input_len")) {
    if (fw != "trtllm") return InvalidArgumentError("--context_fmha and --max_input_len are trtllm-build's");
    if (vm.count("context_fmha")) in.trtllm_context_fmha = f.context_fmha == "enable";
    if (vm.count("context_fmha") && f.context_fmha != "enable" && f.context_fmha != "disable") return InvalidArgumentError("--context_fmha: enable or disable");
    if (vm.count("max_input_len")) in.trtllm_max_input_len = f.max_input_len;
  }
  if (vm.count("max-batch-total-tokens")) {
    if (fw != "tgi") return InvalidArgumentError("--max-batch-total-tokens is TGI's");
    TPT_RETURN_IF_ERROR(Positive("max-batch-total-tokens", f.max_batch_total_tokens));
    in.max_batch_total_tokens = f.max_batch_total_tokens;
  }
  for (auto [flag, v, field] : {std::tuple{"max-input-tokens", f.max_input_tokens, &in.tgi_max_input_tokens},
                                {"max-input-length", f.max_input_length, &in.tgi_max_input_length}}) {
    if (!vm.count(flag)) continue;
    if (fw != "tgi") return InvalidArgumentError("--" + std::string(flag) + " is TGI's; use --context-length");
    TPT_RETURN_IF_ERROR(Positive(flag, v));
    *field = v;
  }
  if (vm.count("cuda-graphs")) {
    if (fw != "tgi") return InvalidArgumentError("--cuda-graphs is TGI's (vLLM: --enforce-eager)");
    std::vector<int> sizes;
    std::stringstream ss(f.cuda_graphs);
    for (std::string item; std::getline(ss, item, ',');) {
      int v = -1;
      auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
      if (ec != std::errc() || end != item.data() + item.size() || v < 0) {
        return InvalidArgumentError("--cuda-graphs takes batch sizes separated by commas, e.g. 1,2,4,8 (0: none); got '" +
                                    f.cuda_graphs + "'");
      }
      sizes.push_back(v);
    }
    if (sizes.empty()) return InvalidArgumentError("--cuda-graphs takes batch sizes, e.g. 1,2,4,8 (0: none)");
    in.tgi_cuda_graphs = sizes;
  }
  if (f.enable_prefill_logprobs) {
    if (fw != "tgi") return InvalidArgumentError("--enable-prefill-logprobs is TGI's");
    in.tgi_prefill_logprobs = true;
  }
  if (vm.count("cuda-graph-max-bs")) {
    TPT_RETURN_IF_ERROR(Positive("cuda-graph-max-bs", f.cuda_graph_max_bs));
    in.cuda_graph_max_bs = f.cuda_graph_max_bs;
  }
  in.enforce_eager = f.enforce_eager;
  if (vm.count("performance-mode")) {
    TPT_RETURN_IF_ERROR(mem::VllmPerformanceModeOk(f.performance_mode, f.framework, in.version));
    in.vllm_performance_mode = f.performance_mode;
  }
  if (f.enforce_eager && f.framework != "vllm") {
    return InvalidArgumentError("--enforce-eager is vLLM's; SGLang uses --disable-cuda-graph (graphs come out of its "
                                "reserved slice, not the pool)");
  }
  if (vm.count("cuda-graph-mem")) {
    auto b = Size("cuda-graph-mem", f.cuda_graph_mem);
    if (!b.ok()) return b.status();
    in.cuda_graph_bytes = *b;
  }
  if (vm.count("chunked-prefill-size")) {
    TPT_RETURN_IF_ERROR(Positive("chunked-prefill-size", f.chunked_prefill_size));
    in.chunked_prefill_size = f.chunked_prefill_size;
  }
  in.speculative_algorithm = f.speculative_algorithm;
  TPT_RETURN_IF_ERROR(Positive("page-size", f.page_size));
  TPT_RETURN_IF_ERROR(Positive("block-size", f.block_size));
  in.page_size = f.page_size;
  in.block_size = f.block_size;
  if (vm.count("activation-peak")) {
    auto b = Size("activation-peak", f.activation_peak);
    if (!b.ok()) return b.status();
    in.activation_peak_bytes = *b;
    in.peak_from_log = true;
  }
  if (vm.count("non-torch")) {
    auto b = Size("non-torch", f.non_torch);
    if (!b.ok()) return b.status();
    in.non_torch_bytes = *b;
  }
  if (vm.count("swa-full-tokens-ratio")) {
    TPT_RETURN_IF_ERROR(Fraction("swa-full-tokens-ratio", f.swa_full_tokens_ratio));
    in.swa_full_tokens_ratio = f.swa_full_tokens_ratio;
  }
  in.disable_hybrid_swa_memory = f.disable_hybrid_swa_memory;
  if (f.enable_multimodal && f.framework != "sglang") {
    return InvalidArgumentError("--enable-multimodal is SGLang's (vLLM and TGI serve a multimodal model as such)");
  }
  in.sglang_enable_multimodal = f.enable_multimodal;
  if (vm.count("max-mamba-cache-size")) {
    TPT_RETURN_IF_ERROR(Positive("max-mamba-cache-size", f.max_mamba_cache_size));
    in.max_mamba_cache_size = f.max_mamba_cache_size;
  }
  if (vm.count("mamba-full-memory-ratio")) {
    if (!(f.mamba_full_memory_ratio > 0 && f.mamba_full_memory_ratio < 100)) {
      return InvalidArgumentError("--mamba-full-memory-ratio must be > 0 (got " + std::to_string(f.mamba_full_memory_ratio) + ")");
    }
    in.mamba_full_memory_ratio = f.mamba_full_memory_ratio;
  }
  if (!f.mamba_ssm_dtype.empty() && f.mamba_ssm_dtype != "float32" && f.mamba_ssm_dtype != "bfloat16") {
    return InvalidArgumentError("--mamba-ssm-dtype '" + f.mamba_ssm_dtype + "' is not known; use float32 or bfloat16");
  }
  in.mamba_ssm_dtype = f.mamba_ssm_dtype;
  if (vm.count("max-running-requests")) {
    if (fw != "sglang") {
      return InvalidArgumentError("--max-running-requests is SGLang's; " +
                                  std::string(fw == "vllm" ? "vLLM's is --max-num-seqs" : "use --max-batch-size"));
    }
    TPT_RETURN_IF_ERROR(Positive("max-running-requests", f.max_running_requests));
    in.max_running_requests = f.max_running_requests;
  }
  if (f.disable_radix_cache && fw != "sglang") {
    return InvalidArgumentError("--disable-radix-cache is SGLang's (vLLM's prefix cache is "
                                "--enable-prefix-caching / --no-enable-prefix-caching)");
  }
  in.disable_radix_cache = f.disable_radix_cache;
  if (f.format != "text" && f.format != "json") {
    return InvalidArgumentError("--format '" + f.format + "' is not known; use text or json");
  }
  return in;
}

int UsageError(const std::string& message) { return tpt::cli::UsageError("plan", message); }

// A launch line pasted whole: the server's own flags that do not change its memory
// (memory/server_flags.h NoMemoryEffectFlag) are taken out before parsing and said
// in the plan; a --host whose value is an address (0.0.0.0, ::, localhost, a dotted
// name) is the server's bind address. Anything else unknown is still refused by name.
Args DropServerOnlyFlags(const Args& args, std::vector<std::string>* taken) {
  std::string framework;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--framework" && i + 1 < args.size()) framework = args[i + 1];
    if (args[i].rfind("--framework=", 0) == 0) framework = args[i].substr(12);
  }
  Args out;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    const size_t eq = a.find('=');
    const std::string name = a.substr(0, eq);
    const bool inline_value = eq != std::string::npos;
    auto value_next = [&] { return !inline_value && i + 1 < args.size() && args[i + 1].rfind("--", 0) != 0; };
    if (name == "--host") {
      const std::string v = inline_value ? a.substr(eq + 1) : (value_next() ? args[i + 1] : "");
      // A bind address: an IPv4/IPv6 address, localhost or a dotted host name; a bare
      // word is plan's OS (an unknown one is refused by plan with the choices).
      const bool bind = v == "localhost" || v.find(':') != std::string::npos ||
                        (v.find('.') != std::string::npos && v != "." && v != "..");
      if (!bind) {
        out.push_back(a);
        continue;
      }
      taken->push_back("--host " + v);
      if (!inline_value) ++i;
      continue;
    }
    bool takes_value = false;
    if (a.rfind("--", 0) != 0 || !memory::NoMemoryEffectFlag(framework, name, &takes_value)) {
      out.push_back(a);
      continue;
    }
    if (takes_value && value_next()) {
      taken->push_back(name + " " + args[i + 1]);
      ++i;
    } else {
      taken->push_back(a);
    }
  }
  return out;
}

}  // namespace

int RunPlan(const Args& pasted) {
  std::vector<std::string> taken;
  const Args args = DropServerOnlyFlags(pasted, &taken);
  PlanFlags flags;
  po::options_description desc = Options(flags);
  po::variables_map vm;
  if (auto code = ParseCommandLine(args, desc, "plan", /*positional=*/nullptr, &vm)) return *code;
  if (Status st = memory::LoadUserGpuCatalog(flags.gpu_catalog); !st.ok()) return UsageError(st.message());
  auto input = ValidatePlanFlags(flags, vm);
  if (!input.ok()) return UsageError(input.status().message());
  auto plan = memory::MakePlan(*input);
  if (!plan.ok()) return UsageError(plan.status().message());
  if (auto given = Size("gpu-mem", flags.gpu_mem); vm.count("gpu-mem") && given.ok() && *given != input->total_bytes) {
    const mem::GpuInfo* smi = memory::GpuByNvidiaSmiTotal(*given);
    plan->assumptions.push_back("--gpu-mem " + flags.gpu_mem + " is the " + (smi ? smi->name : std::string("card")) +
                                "'s nvidia-smi total: on Linux CUDA reports " + memory::FormatGiB(input->total_bytes) +
                                " of it (the GPU catalog's, cited), the total the servers size from and the plan takes; "
                                "on Windows or WSL2, which report it whole, pass --host");
  } else if (vm.count("gpu-mem")) {
    // The servers size from CUDA's total (cudaMemGetInfo, torch's total_memory); nvidia-smi's
    // MiB figure is the card's, a few hundred MiB above it on Linux (memory/README.md, catalog).
    plan->assumptions.push_back("--gpu-mem " + flags.gpu_mem + " is CUDA's total (torch's total_memory, cudaMemGetInfo's, "
                                "what the servers size from), not nvidia-smi's: on Linux nvidia-smi shows 0.3-0.6 GiB "
                                "more (RTX 5060 Ti 16,311 MiB, torch 15.48 GiB; H100 81,559 MiB, torch 79.11 GiB), a "
                                "plan that much optimistic; --gpu NAME takes the catalog's CUDA total");
  }
  if (!taken.empty()) {
    std::string said;
    for (const std::string& t : taken) said += (said.empty() ? "" : ", ") + t;
    plan->assumptions.push_back("taken from the launch line, no effect on the server's memory: " + said);
  }
  if (flags.format == "json") {
    std::cout << memory::PlanToJson(*plan).dump(2) << "\n";
  } else {
    std::cout << memory::PlanToText(*plan);
  }
  return plan->fits ? 0 : 1;
}

}  // namespace tpt::cli
