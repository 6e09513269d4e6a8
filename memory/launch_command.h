// launch_command.h: the command line that launches a planned configuration, for each
// server tptriage knows, ready to copy; and the server defaults it leaves in place,
// each said once. `tptriage plan` fills a LaunchSpec from its plan (LaunchCommand in
// launch_plan.h); a plan of TGI, TensorRT-LLM or LMDeploy fills the same spec.
//
//   LaunchSpec s;
//   s.framework = "tgi"; s.model = "/models/Llama-3.1-8B"; s.tp = 2;
//   s.context_length = 32768; s.fraction = 0.95;
//   LaunchLine l = RenderLaunch(s);
//   // l.command: text-generation-launcher --model-id /models/Llama-3.1-8B --num-shard 2
//   //            --max-input-tokens 32767 --max-total-tokens 32768 --cuda-memory-fraction 0.95
//   // l.defaults: "--max-batch-prefill-tokens: TGI's default (max-input-tokens + 50)", ...
//
// Flag names and defaults, by server (the source read):
//   SGLang   python -m sglang.launch_server (python/sglang/srt/server_args.py)
//   vLLM     vllm serve (vllm/engine/arg_utils.py); the offline class LLM(model=..., EngineArgs'
//            fields as keywords: vllm/entrypoints/llm.py) with --vllm-entrypoint llm
//   TGI      text-generation-launcher (launcher/src/main.rs, huggingface/text-generation-inference
//            @d957e326): --num-shard, --max-input-tokens, --max-total-tokens,
//            --max-batch-prefill-tokens (default max-input-tokens + 50), --cuda-memory-fraction
//            (default 1.0), --kv-cache-dtype fp8_e4m3|fp8_e5m2, --quantize
//   TRT-LLM  trtllm-serve (tensorrt_llm/commands/serve.py, NVIDIA/TensorRT-LLM@00209af1):
//            --backend pytorch, --tp_size, --pp_size, --max_seq_len, --max_num_tokens,
//            --max_batch_size, --kv_cache_free_gpu_memory_fraction (default 0.9); the KV
//            dtype only through --extra_llm_api_options (kv_cache_config.dtype).
//            A TensorRT engine, by where it is built (--engine-build): serve (the default)
//            trtllm-serve CHECKPOINT (--backend tensorrt from 1.0, where pytorch is the default)
//            with the build limits as trtllm-serve's flags (serve.py passes them to BuildConfig);
//            trtllm-build: trtllm-build --checkpoint_dir --output_dir --max_batch_size
//            (default 2048) --max_num_tokens (8192) --max_seq_len (the model's), over a
//            checkpoint from the examples' convert_checkpoint.py / quantize.py (--tp_size and
//            the KV dtype are fixed there), then trtllm-serve ENGINE --tokenizer MODEL;
//            elsewhere: trtllm-serve ENGINE --tokenizer MODEL alone (the limits are the engine's)
//   TGI < v0.9.4: --max-batch-total-tokens (default 16000) is the KV cache; < v2.0 the
//            input flag is --max-input-length
//   LMDeploy lmdeploy serve api_server (lmdeploy/cli/serve.py, utils.py, InternLM/lmdeploy@47fd6a89):
//            --tp (default 1), --backend turbomind|pytorch (default turbomind), --session-len, --cache-max-entry-count (default 0.8 of the free
//            memory after weights), --max-batch-size, --quant-policy 8 (int8 KV) / 4 (int4 KV)
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"

namespace tpt::memory {

struct LaunchSpec {
  std::string framework;               // sglang | vllm | tgi | trtllm | lmdeploy
  std::string model;                   // path or hub id as given ("" -> MODEL)
  int tp = 1, pp = 1, dp = 1;
  // The server's memory knob, as the plan sized it: SGLang --mem-fraction-static, vLLM
  // --gpu-memory-utilization, TGI --cuda-memory-fraction, TRT-LLM
  // --kv_cache_free_gpu_memory_fraction, LMDeploy --cache-max-entry-count.
  std::optional<double> fraction;
  std::optional<int64_t> context_length;       // the longest request (prompt + output)
  std::optional<int64_t> max_batch_tokens;     // tokens of one forward pass (chunked prefill)
  std::optional<int> max_batch_size;           // running requests (graphs, batch)
  std::string kv_cache_dtype = "auto";         // auto | fp8_e4m3 | fp8_e5m2 | fp8 | int8 | int4
  bool enable_dp_attention = false;            // SGLang
  bool enable_multimodal = false;              // SGLang --enable-multimodal
  std::string speculative_algorithm;           // SGLang
  // SGLang: what sizes a hybrid model's mamba states (sglang_mamba_states.h), as given.
  std::optional<int64_t> max_running_requests, max_mamba_cache_size;
  bool disable_radix_cache = false;
  std::string backend;                         // LMDeploy: "" / turbomind (its default) | pytorch;
                                               // TensorRT-LLM: tensorrt (an engine) | pytorch
  std::string performance_mode;                // vLLM --performance-mode as given ("" when not)
  std::string mm_limits;                       // vLLM --limit-mm-per-prompt, shell-ready ("" when not given)
  int mm_limits_images = -1, mm_limits_videos = -1;  // the same as numbers, for LLM(...) (-1 when not given)
  bool vllm_llm_class = false;                 // vLLM's offline LLM(...) class, not vllm serve
  std::optional<int64_t> max_batch_total_tokens;  // TGI before v0.9.4: the KV cache's tokens
  bool tgi_input_length = false;               // TGI before v2.0: --max-input-length (not --max-input-tokens)
  std::optional<int64_t> max_input_tokens;     // TGI: the longest prompt planned (default: context - 1)
  bool tgi_prefill_logprobs = false;           // TGI v3: --enable-prefill-logprobs
  std::string tgi_cuda_graphs;                 // TGI --cuda-graphs as planned ("1,2,4", "0"; "" when not given)
  bool quantize_fp8 = false;                   // a 16-bit checkpoint's weights quantized to FP8 at load
  std::string quantization;                    // SGLang/vLLM --quantization other than online fp8, as given
  bool enforce_eager = false;                  // vLLM --enforce-eager (enforce_eager=True)
  // TensorRT-LLM's TensorRT backend: where the engine is built (PlanInput::trtllm_engine_build):
  // "" or "serve" (trtllm-serve CHECKPOINT builds it), "trtllm-build", "elsewhere" (an engine
  // directory is given; its limits were fixed when it was built).
  std::string trtllm_engine_build;
  bool explicit_tensorrt_backend = false;      // trtllm-serve 1.0 on: --backend tensorrt (pytorch is the default)
};

struct LaunchLine {
  std::string command;
  std::vector<std::string> defaults;  // what the command leaves to the server's defaults, each once
};

// Errors name the framework when it has no launcher here.
StatusOr<LaunchLine> RenderLaunch(const LaunchSpec& s);

}  // namespace tpt::memory
