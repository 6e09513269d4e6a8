// launch_command.cc: one renderer per server (launch_command.h has the flags' sources).
#include "memory/launch_command.h"

#include <cstdio>

namespace tpt::memory {
namespace {

std::string Two(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

bool Fp8(const std::string& kv) { return kv.rfind("fp8", 0) == 0; }
bool AutoKv(const std::string& kv) { return kv.empty() || kv == "auto" || kv == "bf16" || kv == "fp16"; }

// SGLang and vLLM: the flags tptriage plan has always printed.
LaunchLine SglangOrVllm(const LaunchSpec& s, const std::string& model) {
  const bool sglang = s.framework == "sglang";
  LaunchLine l;
  std::string& out = l.command;
  out = sglang ? "python -m sglang.launch_server --model-path " + model : "vllm serve " + model;
  auto flag = [&](const std::string& sg, const std::string& vl, const std::string& value) {
    out += " " + (sglang ? sg : vl) + " " + value;
  };
  if (s.tp > 1) flag("--tp-size", "--tensor-parallel-size", std::to_string(s.tp));
  if (s.pp > 1) flag("--pp-size", "--pipeline-parallel-size", std::to_string(s.pp));
  if (s.dp > 1) flag("--dp-size", "--data-parallel-size", std::to_string(s.dp));
  // The fraction the plan sized the pool with, always: the server's own default
  // differs by version and card, and the plan's figures hold for this one.
  if (s.fraction) flag("--mem-fraction-static", "--gpu-memory-utilization", Two(*s.fraction));
  if (s.context_length) flag("--context-length", "--max-model-len", std::to_string(*s.context_length));
  if (s.quantize_fp8) flag("--quantization", "--quantization", "fp8");  // online FP8 of a 16-bit checkpoint
  if (!AutoKv(s.kv_cache_dtype)) flag("--kv-cache-dtype", "--kv-cache-dtype", s.kv_cache_dtype);
  if (!s.quantization.empty()) flag("--quantization", "--quantization", s.quantization);  // a method as given
  if (s.max_batch_size) flag("--cuda-graph-max-bs", "--max-num-seqs", std::to_string(*s.max_batch_size));
  if (s.enforce_eager && !sglang) out += " --enforce-eager";
  if (s.max_batch_tokens) flag("--chunked-prefill-size", "--max-num-batched-tokens", std::to_string(*s.max_batch_tokens));
  if (!s.mm_limits.empty() && !sglang) out += " --limit-mm-per-prompt " + s.mm_limits;
  if (!s.performance_mode.empty() && !sglang) out += " --performance-mode " + s.performance_mode;
  if (s.enable_dp_attention && sglang) out += " --enable-dp-attention";
  if (s.enable_multimodal && sglang) out += " --enable-multimodal";
  if (!s.speculative_algorithm.empty() && sglang) flag("--speculative-algorithm", "", s.speculative_algorithm);
  if (sglang && s.max_running_requests) flag("--max-running-requests", "", std::to_string(*s.max_running_requests));
  if (sglang && s.max_mamba_cache_size) flag("--max-mamba-cache-size", "", std::to_string(*s.max_mamba_cache_size));
  if (sglang && s.disable_radix_cache) out += " --disable-radix-cache";
  return l;
}

// vLLM's offline class (--vllm-entrypoint llm): the same values as EngineArgs keywords of
// `LLM(...)` (vllm/entrypoints/llm.py passes **kwargs to EngineArgs; the names are the
// fields of engine/arg_utils.py EngineArgs), the multimodal limits as a dict.
LaunchLine VllmLlmClass(const LaunchSpec& s, const std::string& model) {
  LaunchLine l;
  std::string& out = l.command;
  out = "LLM(model=\"" + model + "\"";
  auto kw = [&](const std::string& name, const std::string& value) { out += ", " + name + "=" + value; };
  if (s.tp > 1) kw("tensor_parallel_size", std::to_string(s.tp));
  if (s.pp > 1) kw("pipeline_parallel_size", std::to_string(s.pp));
  if (s.dp > 1) kw("data_parallel_size", std::to_string(s.dp));
  if (s.fraction) kw("gpu_memory_utilization", Two(*s.fraction));
  if (s.context_length) kw("max_model_len", std::to_string(*s.context_length));
  if (s.quantize_fp8) kw("quantization", "\"fp8\"");
  else if (!s.quantization.empty()) kw("quantization", "\"" + s.quantization + "\"");
  if (!AutoKv(s.kv_cache_dtype)) kw("kv_cache_dtype", "\"" + s.kv_cache_dtype + "\"");
  if (s.max_batch_tokens) kw("max_num_batched_tokens", std::to_string(*s.max_batch_tokens));
  if (s.max_batch_size) kw("max_num_seqs", std::to_string(*s.max_batch_size));
  if (s.enforce_eager) kw("enforce_eager", "True");
  if (s.mm_limits_images >= 0) {
    kw("limit_mm_per_prompt", "{\"image\": " + std::to_string(s.mm_limits_images) +
                                  ", \"video\": " + std::to_string(s.mm_limits_videos) + "}");
  }
  if (!s.performance_mode.empty()) kw("performance_mode", "\"" + s.performance_mode + "\"");
  out += ")";
  l.defaults.push_back("LLM(...): vLLM's offline class (from vllm import LLM); what the call does not pass takes "
                       "UsageContext.LLM_CLASS's defaults, not vllm serve's");
  return l;
}

StatusOr<LaunchLine> Tgi(const LaunchSpec& s, const std::string& model) {
  if (s.pp > 1 || s.dp > 1) {
    return InvalidArgumentError("TGI shards a model by tensor parallelism only (--num-shard); it has no pipeline or "
                                "data parallelism: run one launcher per replica");
  }
  LaunchLine l;
  l.command = "text-generation-launcher --model-id " + model;
  if (s.tp > 1) l.command += " --num-shard " + std::to_string(s.tp);
  else l.defaults.push_back("--num-shard: 1 (TGI's default without --sharded)");
  if (s.context_length) {
    l.command += std::string(s.tgi_input_length ? " --max-input-length " : " --max-input-tokens ") +
                 std::to_string(s.max_input_tokens.value_or(*s.context_length - 1)) + " --max-total-tokens " +
                 std::to_string(*s.context_length);
  } else {
    l.defaults.push_back("--max-input-tokens/--max-total-tokens: TGI's default from the model's context length");
  }
  if (s.max_batch_tokens) l.command += " --max-batch-prefill-tokens " + std::to_string(*s.max_batch_tokens);
  else l.defaults.push_back("--max-batch-prefill-tokens: TGI's default (v3: the launcher's by card and model FLOPs, "
                            "capped by max_position_embeddings and its VRAM estimate; v2: max-input-tokens + 50)");
  if (s.max_batch_total_tokens) l.command += " --max-batch-total-tokens " + std::to_string(*s.max_batch_total_tokens);
  if (s.max_batch_size) l.command += " --max-batch-size " + std::to_string(*s.max_batch_size);
  if (s.tgi_prefill_logprobs) l.command += " --enable-prefill-logprobs";
  if (!s.tgi_cuda_graphs.empty()) l.command += " --cuda-graphs " + s.tgi_cuda_graphs;
  if (s.quantize_fp8) l.command += " --quantize fp8";  // the launcher's Quantization::Fp8
  // Before v0.9.4 there is no --cuda-memory-fraction: the KV cache is the total asked.
  if (s.max_batch_total_tokens) {
    l.defaults.push_back("--max-batch-total-tokens is the KV cache before TGI v0.9.4 (no --cuda-memory-fraction)");
  } else if (s.fraction && *s.fraction < 0.995) {
    l.command += " --cuda-memory-fraction " + Two(*s.fraction);
  } else {
    l.defaults.push_back("--cuda-memory-fraction: 1.0 (TGI's default: the KV cache takes what warm-up leaves)");
  }
  if (Fp8(s.kv_cache_dtype)) {
    l.command += " --kv-cache-dtype " + std::string(s.kv_cache_dtype == "fp8_e5m2" ? "fp8_e5m2" : "fp8_e4m3");
  } else if (!AutoKv(s.kv_cache_dtype)) {
    return InvalidArgumentError("TGI's --kv-cache-dtype takes fp8_e4m3 or fp8_e5m2, not " + s.kv_cache_dtype);
  }
  return l;
}

// An engine's build limits as trtllm-build's or trtllm-serve's flags (the same names and
// BuildConfig defaults), each default left in place said once.
void BuildLimits(const LaunchSpec& s, const std::string& whose, LaunchLine& l) {
  if (s.max_batch_size) l.command += " --max_batch_size " + std::to_string(*s.max_batch_size);
  else l.defaults.push_back("--max_batch_size: 2048 (" + whose + " default; it sizes the engine's logits and decoder buffers)");
  if (s.max_batch_tokens) l.command += " --max_num_tokens " + std::to_string(*s.max_batch_tokens);
  else l.defaults.push_back("--max_num_tokens: 8192 (" + whose + " default; it sizes the engine's activations)");
  if (s.context_length) l.command += " --max_seq_len " + std::to_string(*s.context_length);
  else l.defaults.push_back("--max_seq_len: " + whose + " default from the model's context length");
}

// A TensorRT engine that trtllm-serve builds from the checkpoint (--engine-build serve, the
// default): serve.py passes --max_batch_size, --max_num_tokens and --max_seq_len to the
// engine's BuildConfig (tensorrt_llm/commands/serve.py: the 0.1x copy, "MODEL: model name | HF
// checkpoint path | TensorRT engine path", search-index file 5947430652, and from 1.0, where
// pytorch is the default, under `backend == 'tensorrt'`, file 60100631092).
StatusOr<LaunchLine> TrtllmServeBuilds(const LaunchSpec& s, const std::string& model) {
  LaunchLine l;
  std::string& out = l.command;
  out = "trtllm-serve " + model;
  if (s.explicit_tensorrt_backend) out += " --backend tensorrt";
  if (s.tp > 1) out += " --tp_size " + std::to_string(s.tp);
  if (s.pp > 1) out += " --pp_size " + std::to_string(s.pp);
  BuildLimits(s, "BuildConfig's", l);
  if (s.fraction) out += " --kv_cache_free_gpu_memory_fraction " + Two(*s.fraction);
  // The engine's KV dtype is its QuantConfig's kv_cache_quant_algo (the LLM API's; a ModelOpt
  // checkpoint's hf_quant_config.json sets it): no trtllm-serve flag.
  if (Fp8(s.kv_cache_dtype)) {
    l.defaults.push_back("the engine's fp8 KV cache: QuantConfig kv_cache_quant_algo FP8 (a ModelOpt checkpoint's "
                         "hf_quant_config.json, or `quant_config: {kv_cache_quant_algo: FP8}` in "
                         "--extra_llm_api_options); trtllm-serve has no KV dtype flag");
  } else if (!AutoKv(s.kv_cache_dtype)) {
    return InvalidArgumentError("a TensorRT-LLM engine's KV cache is the model's, fp8 or int8, not " + s.kv_cache_dtype);
  }
  return l;
}

// An engine built elsewhere (--engine-build elsewhere): trtllm-serve on the engine directory; its
// limits are the engine's own, fixed when it was built (serve.py's build flags are ignored there).
StatusOr<LaunchLine> TrtllmServeEngine(const LaunchSpec& s, const std::string& model) {
  std::string base = model;
  while (base.size() > 1 && base.back() == '/') base.pop_back();
  const std::string engine = base + "-trtllm-engine";
  LaunchLine l;
  l.command = "trtllm-serve " + engine + " --tokenizer " + model;
  if (s.explicit_tensorrt_backend) l.command += " --backend tensorrt";
  if (s.tp > 1) l.command += " --tp_size " + std::to_string(s.tp);
  if (s.pp > 1) l.command += " --pp_size " + std::to_string(s.pp);
  if (s.fraction) l.command += " --kv_cache_free_gpu_memory_fraction " + Two(*s.fraction);
  std::string limits;
  auto add = [&](const std::string& x) { limits += (limits.empty() ? "" : ", ") + x; };
  add("--max_batch_size " + (s.max_batch_size ? std::to_string(*s.max_batch_size) : std::string("2048")));
  add("--max_num_tokens " + (s.max_batch_tokens ? std::to_string(*s.max_batch_tokens) : std::string("8192")));
  add("--max_seq_len " + (s.context_length ? std::to_string(*s.context_length) : std::string("the model's")));
  std::string d = engine + ": built elsewhere, as the plan assumed: trtllm-build " + limits;
  if (s.tp > 1) d += ", TP " + std::to_string(s.tp);
  if (Fp8(s.kv_cache_dtype)) d += ", an fp8 KV cache";
  else if (!AutoKv(s.kv_cache_dtype)) {
    return InvalidArgumentError("a TensorRT-LLM engine's KV cache is the model's, fp8 or int8, not " + s.kv_cache_dtype);
  }
  l.defaults.push_back(d + " (an engine's limits are fixed at its build)");
  return l;
}

// A TensorRT engine: trtllm-build over a TensorRT-LLM checkpoint, then trtllm-serve on the
// engine; the engine's limits are build-time flags, the KV fraction a serve-time one.
StatusOr<LaunchLine> TrtllmEngine(const LaunchSpec& s, const std::string& model) {
  if (s.trtllm_engine_build.empty() || s.trtllm_engine_build == "serve") return TrtllmServeBuilds(s, model);
  if (s.trtllm_engine_build == "elsewhere") return TrtllmServeEngine(s, model);
  if (s.trtllm_engine_build != "trtllm-build") {
    return InvalidArgumentError("--engine-build is serve, trtllm-build or elsewhere, not " + s.trtllm_engine_build);
  }
  std::string base = model;
  while (base.size() > 1 && base.back() == '/') base.pop_back();
  const std::string ckpt = base + "-trtllm-ckpt", engine = base + "-trtllm-engine";
  LaunchLine l;
  std::string& out = l.command;
  out = "trtllm-build --checkpoint_dir " + ckpt + " --output_dir " + engine;
  BuildLimits(s, "trtllm-build's", l);
  out += " && trtllm-serve " + engine + " --tokenizer " + model;
  if (s.explicit_tensorrt_backend) out += " --backend tensorrt";
  if (s.tp > 1) out += " --tp_size " + std::to_string(s.tp);
  if (s.pp > 1) out += " --pp_size " + std::to_string(s.pp);
  if (s.fraction) out += " --kv_cache_free_gpu_memory_fraction " + Two(*s.fraction);
  std::string from = ckpt + ": the examples' convert_checkpoint.py (quantize.py for FP8/INT4) of " + model;
  if (s.tp > 1) from += " with --tp_size " + std::to_string(s.tp);
  if (s.pp > 1) from += " --pp_size " + std::to_string(s.pp);
  if (Fp8(s.kv_cache_dtype)) from += " and --kv_cache_dtype fp8 (an engine's KV dtype is fixed at conversion)";
  else if (!AutoKv(s.kv_cache_dtype)) {
    return InvalidArgumentError("a TensorRT-LLM engine's KV cache is the model's, fp8 or int8, not " + s.kv_cache_dtype);
  }
  l.defaults.push_back(from);
  return l;
}

StatusOr<LaunchLine> Trtllm(const LaunchSpec& s, const std::string& model) {
  if (s.dp > 1) {
    return InvalidArgumentError("trtllm-serve: data parallelism (attention DP) is set in --extra_llm_api_options, "
                                "not modelled here; plan one replica");
  }
  if (s.backend == "tensorrt") return TrtllmEngine(s, model);
  if (!s.backend.empty() && s.backend != "pytorch") {
    return InvalidArgumentError("TensorRT-LLM's backend is tensorrt (an engine) or pytorch, not " + s.backend);
  }
  LaunchLine l;
  l.command = "trtllm-serve " + model + " --backend pytorch";
  if (s.quantize_fp8) {
    l.defaults.push_back("weights: trtllm-serve quantizes no checkpoint at load; the plan priced FP8 weights, so "
                         "quantize the checkpoint to FP8 first (ModelOpt, which writes hf_quant_config.json)");
  }
  if (s.tp > 1) l.command += " --tp_size " + std::to_string(s.tp);
  if (s.pp > 1) l.command += " --pp_size " + std::to_string(s.pp);
  if (s.context_length) l.command += " --max_seq_len " + std::to_string(*s.context_length);
  else l.defaults.push_back("--max_seq_len: TensorRT-LLM's default from the model's context length");
  if (s.max_batch_tokens) l.command += " --max_num_tokens " + std::to_string(*s.max_batch_tokens);
  else l.defaults.push_back("--max_num_tokens: 8192 (BuildConfig's default)");
  if (s.max_batch_size) l.command += " --max_batch_size " + std::to_string(*s.max_batch_size);
  else l.defaults.push_back("--max_batch_size: 2048 (BuildConfig's default)");
  if (s.fraction) l.command += " --kv_cache_free_gpu_memory_fraction " + Two(*s.fraction);
  else l.defaults.push_back("--kv_cache_free_gpu_memory_fraction: 0.9 of the memory free after weights (the default)");
  if (Fp8(s.kv_cache_dtype)) {
    l.command += " --extra_llm_api_options kv_cache_fp8.yaml";
    l.defaults.push_back("kv_cache_fp8.yaml holds `kv_cache_config: {dtype: fp8}` (trtllm-serve has no KV dtype flag)");
  } else if (!AutoKv(s.kv_cache_dtype)) {
    return InvalidArgumentError("trtllm-serve's KV cache dtype is fp8 (or the model's), not " + s.kv_cache_dtype);
  }
  return l;
}

StatusOr<LaunchLine> Lmdeploy(const LaunchSpec& s, const std::string& model) {
  if (s.pp > 1) return InvalidArgumentError("lmdeploy serve api_server has no pipeline parallelism; use --tp");
  LaunchLine l;
  l.command = "lmdeploy serve api_server " + model;
  if (s.quantize_fp8) {
    l.defaults.push_back("weights: LMDeploy quantizes no weights to FP8 at load; the plan priced FP8 weights, so "
                         "quantize the checkpoint first (lmdeploy lite)");
  }
  if (s.backend == "pytorch") l.command += " --backend pytorch";
  else if (!s.backend.empty() && s.backend != "turbomind") {
    return InvalidArgumentError("LMDeploy's --backend is turbomind or pytorch, not " + s.backend);
  }
  if (s.tp > 1) l.command += " --tp " + std::to_string(s.tp);
  if (s.dp > 1) l.command += " --dp " + std::to_string(s.dp);
  if (s.context_length) l.command += " --session-len " + std::to_string(*s.context_length);
  else l.defaults.push_back("--session-len: LMDeploy's default from the model's context length");
  if (s.fraction) l.command += " --cache-max-entry-count " + Two(*s.fraction);
  else l.defaults.push_back("--cache-max-entry-count: 0.8 of the memory free after weights (the default)");
  if (s.max_batch_size) l.command += " --max-batch-size " + std::to_string(*s.max_batch_size);
  else l.defaults.push_back("--max-batch-size: LMDeploy's default for the device");
  if (s.max_batch_tokens) l.command += " --max-prefill-token-num " + std::to_string(*s.max_batch_tokens);
  else l.defaults.push_back("--max-prefill-token-num: 8192 (the default)");
  if (Fp8(s.kv_cache_dtype) || s.kv_cache_dtype == "int8") {
    l.command += " --quant-policy 8";
    if (Fp8(s.kv_cache_dtype)) l.defaults.push_back("--quant-policy 8: LMDeploy's 8-bit KV cache is int8, not fp8");
  } else if (s.kv_cache_dtype == "int4") {
    l.command += " --quant-policy 4";
  } else if (!AutoKv(s.kv_cache_dtype)) {
    return InvalidArgumentError("LMDeploy's KV cache is 16-bit, int8 or int4 (--quant-policy), not " + s.kv_cache_dtype);
  }
  return l;
}

}  // namespace

StatusOr<LaunchLine> RenderLaunch(const LaunchSpec& s) {
  const std::string model = s.model.empty() ? "MODEL" : s.model;
  if (s.tp < 1 || s.pp < 1 || s.dp < 1) return InvalidArgumentError("launch command: tp, pp and dp must be >= 1");
  if (s.framework == "vllm" && s.vllm_llm_class) return VllmLlmClass(s, model);
  if (s.framework == "sglang" || s.framework == "vllm") return SglangOrVllm(s, model);
  if (s.framework == "tgi") return Tgi(s, model);
  if (s.framework == "trtllm" || s.framework == "tensorrt-llm") return Trtllm(s, model);
  if (s.framework == "lmdeploy") return Lmdeploy(s, model);
  return InvalidArgumentError("no launch command for framework '" + s.framework +
                              "' (sglang, vllm, tgi, trtllm, lmdeploy)");
}

}  // namespace tpt::memory
