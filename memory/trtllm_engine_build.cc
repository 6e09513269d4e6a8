// trtllm_engine_build.cc: a TensorRT-backend launch that builds its engine on the serving GPUs
// runs TensorRT's builder there before any runtime exists; what it holds is priced here, the
// runtime after it by PlanTrtllmEngine (launch_plan_servers.cc, trtllm_model.cc).
//
// Which launches build (NVIDIA/TensorRT-LLM):
//   - trtllm-serve / the LLM API with a Hugging Face or TensorRT-LLM checkpoint and the TensorRT
//     backend (the default before 1.0): tensorrt_llm/llmapi/llm_utils.py ModelLoader
//     (_gather_build_steps; the 0.1x copy with `self.config`, search-index file 5691813214, and the
//     later one with `llm_args`, 781189894): ("Loading HF model to memory", _load_model_from_hf)
//     then ("Building TRT-LLM engine", _build_engine) -> builder.build(model, build_config), in the
//     serving process on its own GPU (torch.cuda.set_device per MPI rank), then the executor.
//   - trtllm-build (tensorrt_llm/commands/build.py): each rank's engine on GPU rank % gpus_per_node
//     (parallel_build / build_and_save; --workers only runs them at once), so a per-rank figure.
//   - An engine directory (_ModelFormatKind.TLLM_ENGINE: "Nothing need to do") builds nothing.
//   The PyTorch backend (the default from 1.0) builds no engine: not priced here.
//   The two build paths differ in what a checkpoint quantized in its config.json becomes. The LLM
//   API takes its QuantConfig from the user or from ModelOpt's hf_quant_config.json only
//   (ModelLoader._load_model_from_hf; the later copy's _update_from_hf_quant_config reads
//   config.json's quantization_config for DeepSeek's FP8 blocks and mxfp4 alone and raises
//   NotImplementedError for others), and LLaMAConfig.from_hugging_face (models/llama/config.py,
//   search-index file 50600730436) passes that quant_config through with dtype =
//   infer_dtype('auto', torch_dtype): a config.json FP8 checkpoint (fbgemm_fp8, fp8, w8a8_fp8)
//   is built unquantized, its weights at torch_dtype. examples/llama/convert_checkpoint.py
//   (update_quant_config_from_hf, search-index files 735600683 and 898498240) maps fbgemm_fp8 to
//   FP8_PER_CHANNEL_PER_TOKEN: trtllm-build of that conversion keeps FP8.
//
// What is on the device while it builds:
//   - Not the checkpoint's tensors: _load_model_from_hf calls from_hugging_face(...,
//     load_model_on_cpu=True) in both copies read ("TODO:TRTLLM-195 to enhance the weights loading
//     memory usage"), from_checkpoint reads the safetensors to host memory, and
//     Builder.build_engine (tensorrt_llm/builder.py, the 0.11-era copy with weight_streaming,
//     use_fused_mlp and dry_run, search-index file 3063623504) fills the network's weights from
//     host numpy arrays (network._fill_weights(), np.copyto) before
//     trt_builder.build_serialized_network(). (The LLM API's quantize path, ModelOpt calibration of
//     an unquantized checkpoint, loads the model on the GPUs first: no plan input says it runs.)
//   - The engine's weights, TensorRT's copy: its build logs show the allocators' peak at the
//     engine's weights ("Total Weights Memory: 3523622456", "Peak memory usage of TRT CPU/GPU
//     memory allocators: ... GPU 3361 MiB", "TensorRT-managed allocation in building engine:
//     GPU +3361" for a 3B TP2 rank; 775 MiB both in the gpt2 example's log, search-index files
//     331867391 and 765528027). That is the point's figure.
//   - Beyond it, TensorRT's own (closed): "During build, TensorRT allocates device memory for
//     timing layer implementations ... The workspace size defaults to the full size of device
//     global memory ... timing requires creating buffers for input, output, and weights"
//     (TensorRT developer guide, How TensorRT Works, Memory, The Build Phase); TensorRT-LLM's
//     create_builder_config sets no memory-pool limit. No source sizes it. What bounds it are
//     launches: 2 x A100 80GB did not build Mixtral-8x7B fp16 TP2 (43.5 GiB a rank, 0.11.0,
//     TensorRT-LLM#2043: out of memory in the build with 1.81x the weights free), while a
//     Llama-2-7B fp16 engine (12.55 GiB) for an A10 (21.7 GiB free, 1.73x; 0.5.0, #224) served,
//     built there or not. (#2586, Llama-3.1-405B-FP8 through trtllm-serve 0.15 on 8 x A100 80GB,
//     bounds nothing: its engine was bf16, 94.5 GiB a rank, below.) No factor the plan could fit
//     is told by the source, so it calls no outcome certain that turns on it: the range runs
//     from nothing beyond the weights to as much again as the weights (a stated bound that
//     holds the failed build, not a fit).
//   - With context FMHA off (trtllm-build --context_fmha disable; on by default), the GPT attention
//     plugin's unfused context path: GPTAttentionPlugin::getWorkspaceSize
//     (cpp/tensorrt_llm/plugins/gptAttentionPlugin/gptAttentionPlugin.cpp) passes max_num_seq (the
//     context_lengths input's profile maximum, max_batch_size) and mMaxContextLength (max_input_len)
//     to GPTAttentionPluginCommon::getWorkspaceSizeForContext (gptAttentionCommon/
//     gptAttentionCommon.cpp), which sizes, when !mEnableContextFMHA, qk_buf_size = sizeof(T) x
//     batch x mNumHeads x input_seq_length x kv_length and qk_buf_float_size = sizeof(float) x the
//     same (mNumHeads is the rank's heads, num_heads / tp; kv_length = input_seq_length without
//     cross attention), beside q/k/v/qkv buffers linear in the length. The terms are the same in
//     every stored version of the file, 0.7-era to 0.2x (search-index file ids 4677202398,
//     441861056, 3351357547, 76655944; the plugin's getWorkspaceSize 2480216603, 980302831); the
//     v0.10.0 tag's copy itself was not read (the repository's snapshot is over the fetch limit).
//     TensorRT reserves a plugin's workspace as the engine's scratch at build (TensorRT-LLM#2688:
//     "requires 210571452800 bytes of scratch space"), so weights + that do not fit -> the build
//     fails at the attention plugin (TensorRT-LLM#2122, 0.10.0, 4 x 2080 Ti, max_input_len 32256).
#include "memory/trtllm_engine_build.h"

#include <algorithm>
#include <optional>

#include "memory/launch_plan_internal.h"
#include "memory/memory_model.h"
#include "memory/model_config.h"
#include "memory/trtllm_engine_tokens.h"

namespace tpt::memory::internal {

namespace {

// trtllm-serve's LLM API on a config.json FP8 checkpoint: the engine's weights unquantized, as the
// ratio of the config's unquantized estimate to its FP8 one (above); 0 when it does not apply.
double ServeUnquantizedRatio(const PlanInput& in) {
  if (!in.model) return 0;
  const QuantInfo& q = in.model->quant;
  const bool fp8 = q.method == "fbgemm_fp8" || q.method == "fp8" || q.method == "w8a8_fp8";
  if (!fp8 || !q.source.ends_with("quantization_config")) return 0;
  ModelConfig quantized = *in.model, plain = *in.model;
  quantized.index_total_bytes.reset();
  plain.index_total_bytes.reset();
  plain.quant = QuantInfo{};
  Sharding s;
  s.framework = "trtllm";
  s.tp = in.tp;
  s.pp = in.pp;
  s.version = in.version;
  auto a = WeightsPerRank(quantized, s), b = WeightsPerRank(plain, s);
  if (!a.ok() || !b.ok() || !(a->per_rank_bytes > 0)) return 0;
  return b->per_rank_bytes / a->per_rank_bytes;
}

// The unfused context attention's quadratic scratch (above): batch x heads / tp x L^2 x (sizeof(T) + 4),
// L = --max_input_len, else the engine's whole sequence (an upper bound: not certain); 0 with FMHA on.
double ContextWorkspaceBytes(const PlanInput& in, Plan& p, bool& certain) {
  certain = true;
  if (!in.trtllm_context_fmha.has_value() || *in.trtllm_context_fmha || !in.model || in.model->heads <= 0) return 0;
  const std::optional<int64_t> len = in.trtllm_max_input_len ? in.trtllm_max_input_len : in.context_length;
  if (!len) {
    p.unknowns.push_back("context FMHA off: the attention plugin's context workspace grows with max_input_len "
                         "squared; pass --max_input_len to price it");
    return 0;
  }
  // Certain only where the build line's own lengths are known (the batch default is taken, not read).
  certain = in.trtllm_max_input_len.has_value() && in.max_num_seqs.has_value();
  const int64_t batch = TrtllmEngineBuildLimits(in.version, in.max_num_seqs, std::nullopt, std::nullopt).max_batch_size;
  const double heads = static_cast<double>(in.model->heads / std::max(1, in.tp));
  const double l = static_cast<double>(*len), t = in.model->dtype_bytes > 0 ? in.model->dtype_bytes : 2;
  const double bytes = static_cast<double>(batch) * heads * l * l * (t + 4);
  p.figures["context_fmha_off_workspace_bytes"] = bytes;
  p.assumptions.push_back("context FMHA off (--context_fmha disable): the GPT attention plugin's unfused context "
                          "workspace, batch x heads/tp x max_input_len^2 x (dtype + fp32) = " + std::to_string(batch) +
                          " x " + std::to_string(static_cast<int64_t>(heads)) + " x " + std::to_string(*len) + "^2 x " +
                          "(" + std::to_string(static_cast<int>(t)) + " + 4) B = " + FormatGiB(bytes) +
                          (certain ? "" : " (max_input_len or max_batch_size not given: max_seq_len or the default batch taken)") +
                          ", held as the build's scratch (gptAttentionCommon.cpp getWorkspaceSizeForContext)");
  return bytes;
}

}  // namespace

bool TrtllmEngineBuildFails(const PlanInput& in, Plan& p) {
  if (in.trtllm_engine_build == "elsewhere") {
    p.assumptions.push_back("engine built elsewhere (--engine-build elsewhere): no build on these GPUs priced");
    return false;
  }
  const bool serve = in.trtllm_engine_build != "trtllm-build";
  p.assumptions.push_back(
      in.trtllm_engine_build.empty()
          ? "engine build: trtllm-serve builds it from the checkpoint on these GPUs before it serves (the LLM API's "
            "TensorRT backend); pass --engine-build trtllm-build for an engine trtllm-build makes here, or elsewhere "
            "for one built on other cards"
          : "engine build: on these GPUs before the runtime (--engine-build " + in.trtllm_engine_build + ")");
  if (const double r = serve ? ServeUnquantizedRatio(in) : 0; r > 0) {
    p.figures["engine_unquantized_ratio"] = r;
    p.assumptions.push_back(
        "the LLM API builds this checkpoint unquantized: it reads no quantization from config.json (" +
        in.model->quant.method + "; only ModelOpt's hf_quant_config.json), so the engine's weights are " +
        in.model->torch_dtype + ": " + FormatGiB(p.weights_bytes) + " -> " + FormatGiB(p.weights_bytes * r) +
        " a rank (trtllm-build of examples' convert_checkpoint.py keeps FP8: --engine-build trtllm-build)");
    p.weights_bytes *= r;
  }
  const double extra = in.engine_build_extra_bytes.value_or(0.0);
  bool ws_certain = true;
  const double ws = ContextWorkspaceBytes(in, p, ws_certain);
  const double need = p.weights_bytes + extra + ws;
  p.figures["engine_build_weights_bytes"] = p.weights_bytes;
  p.figures["engine_build_bytes"] = need;
  if (!in.engine_build_extra_bytes) {
    p.unknowns.push_back(
        "the engine's build on these GPUs: TensorRT holds the engine's weights (" + FormatGiB(p.weights_bytes) +
        " a rank; the checkpoint stays in host memory); what its tactic timing adds (buffers for a layer's inputs, "
        "outputs and weights, workspaces up to the card's memory) is closed TensorRT's: a build failed with 1.8x the "
        "weights free (TensorRT-LLM#2043), so the range below takes none to as much again as the weights");
  }
  if (need <= p.free_at_init_bytes) return false;
  p.fits = false;
  if (ws > 0 && p.weights_bytes + extra <= p.free_at_init_bytes) {
    p.failure = "warmup_oom";
    if (!ws_certain) p.outcome_certain = false;
    p.error = "out of memory while TensorRT builds the engine: the attention plugin's context workspace with "
              "context FMHA off (" + FormatGiB(ws) + ") beside the engine's weights (" + FormatGiB(p.weights_bytes) +
              " a rank) does not fit in the free memory (" + FormatGiB(p.free_at_init_bytes) +
              "); build with --context_fmha enable, or a shorter --max_input_len or --max_batch_size";
    return true;
  }
  p.failure = "weights_oom";
  p.error = "out of memory while TensorRT builds the engine: the engine's weights (" + FormatGiB(p.weights_bytes) +
            " a rank)" + (extra > 0 ? " and the builder's " + FormatGiB(extra) : std::string()) +
            " do not fit in the free memory (" + FormatGiB(p.free_at_init_bytes) +
            "); build it with trtllm-build where more is free, or with more ranks";
  return true;
}

bool TrtllmEngineBuildVariant(const PlanInput& in, const Plan& p, PlanInput& lo, std::string& what) {
  if (!p.figures.contains("engine_build_weights_bytes") || in.engine_build_extra_bytes) return false;
  lo = in;
  lo.engine_build_extra_bytes = p.figures.at("engine_build_weights_bytes").get<double>();
  what = "the engine's build on these GPUs: TensorRT's tactic timing beyond the engine's weights, none to as much "
         "again as the weights (closed TensorRT)";
  return true;
}

bool TrtllmEngineBuildPathVariant(const PlanInput& in, const Plan& p, PlanInput& other, std::string& what) {
  if (!in.trtllm_engine_build.empty() || !p.figures.contains("engine_unquantized_ratio")) return false;
  other = in;
  other.trtllm_engine_build = "trtllm-build";
  what = "engine build path unsaid: trtllm-serve from the checkpoint (unquantized, the point) or trtllm-build of a "
         "converted FP8 checkpoint";
  return true;
}

}  // namespace tpt::memory::internal
