// launch_plan_derive.cc: what `plan` derives before the servers' formulas run: the
// weights, KV dimensions and context from the model's files (and --dtype beside them),
// and each server's defaults by version and engine (vLLM's profiling run size and
// activation peak, the CUDA-graph estimate); every assumption is recorded.
#include <algorithm>
#include <cmath>

#include "base/strings.h"
#include "memory/launch_plan_internal.h"
#include "memory/vllm_deepseek_mha.h"
#include "memory/vllm_eager_forward.h"
#include "memory/lmdeploy_pytorch_weights.h"
#include "memory/tgi_launcher.h"
#include "memory/vllm_entrypoint.h"
#include "memory/vllm_performance_mode.h"
#include "memory/vllm_fused_moe.h"
#include "memory/sglang_dp_attention.h"
#include "memory/vllm_v0_gemma3.h"
#include "memory/vllm_v0_graphs.h"
#include "memory/vllm_v0_internvl.h"
#include "memory/vllm_v0_mllama.h"
#include "memory/vllm_v0_reserved.h"

namespace tpt::memory {
namespace {

constexpr double kVllmGraphEstimateBytes = 0.25 * kGiB;  // corpus: 0.06 - 0.36 GiB "took"/"Estimated"
// From 0.21 the profiler's estimate is reserved inside the budget (gpu_model_runner.py
// profile_cudagraph_memory): the default cudagraph_mode FULL_AND_PIECEWISE captures a
// piecewise graph per size and a full decode graph per decode size ("Profiling CUDA graph
// memory: PIECEWISE=51 (largest=512), FULL=35 (largest=256)"), twice the graphs of the
// piecewise-only capture the 0.25 GiB above was logged from. Logged on dense 7-8B models at
// the default sizes: 0.52 GiB (Qwen3-8B, 0.21.0, LMCache/LMCache#3430 "Estimated CUDA graph
// memory: 0.52 GiB total"), 0.48 and 0.53 GiB (Qwen2.5-7B-AWQ, 0.26.0 and 0.28.0, the
// samples' engine notes).
constexpr double kVllmGraphInBudgetEstimateBytes = 0.5 * kGiB;

// vLLM V0's profiling run of a multimodal model (worker/model_runner.py profile_run,
// multimodal/profiling.py): the sequences are max(1, min(max_num_seqs, T // M)) with M
// the dummy's multimodal tokens at max_model_len; each holds the largest image and,
// when the processor takes video, one video filling the rest of its T / seqs tokens
// (at least one frame pair); a dummy prompt is never cut shorter than its items.
struct MmDummy {
  int64_t seqs = 1, lm_tokens = 0, mm_tokens = 0;
};
MmDummy VllmV0MultimodalDummy(const ModelConfig& m, int64_t tokens, int64_t max_seqs, int64_t max_model_len) {
  const int64_t item = std::max<int64_t>(m.mm_item_tokens, 1);
  auto mm_tokens = [&](int64_t seq_len) {
    return item + (m.mm_video ? std::max(item, (seq_len - item) / item * item) : 0);
  };
  MmDummy d;
  d.seqs = std::max<int64_t>(1, std::min(max_seqs, tokens / mm_tokens(max_model_len)));
  const int64_t seq_len = tokens / d.seqs;
  d.mm_tokens = d.seqs * mm_tokens(seq_len);
  d.lm_tokens = d.seqs * std::max(seq_len, mm_tokens(seq_len));
  return d;
}

// V0's profiling run size when --max-num-batched-tokens is not given (vllm/config.py
// SchedulerConfig, vllm/engine/arg_utils.py): without chunked prefill
// max(max_model_len, 2048), so the activation peak grows with the context; chunked
// prefill is switched on by default above 32,768 tokens (use_long_context), and then
// the budget is 512 tokens ("512 is the default max_num_batched_tokens for chunked
// prefill", the V0 performance docs) until vllm#10544 (2024-11-21, first in 0.6.5) made
// it 2048 (_DEFAULT_MAX_NUM_BATCHED_TOKENS). vllm#10517: Llama-3.1-8B on an
// RTX 3090 at 0.6.4 profiles 20,000 and 29,000 tokens (peaks 2.07 and 2.99 GiB over
// the weights) but 512 at 35,000 (0.06 GiB), which starts where 29,000 fails. The switch
// (arg_utils.py create_engine_config, use_long_context) is in the 0.5.3 wheel, not in 0.4.3's,
// 0.5.0's, 0.5.1's or 0.5.2's (enable_chunked_prefill defaults to False there, arg_utils.py
// 0.5.1:82; SchedulerConfig takes max(max_model_len, 2048) whatever the length, config.py
// 0.5.1:771-785): a 65,536-token context profiles 65,536 tokens at 0.4.3 (holdout40 M1), and
// DeepSeek-Coder-V2-Lite's 163,840 at 0.5.1 (holdout41, vllm#6156).
// From 0.6.2 the switch leaves a multimodal model's chunked prefill off at any length
// (`use_long_context and not model_config.is_multimodal_model`, arg_utils.py 0.6.2:917,
// 0.6.3:944; 0.8.3:1553 `_set_default_args_v0`: "Chunked prefill not supported for
// Multimodal or MLA in V0"; 0.5.3.post1-0.6.1 switch it on for every model): a
// Llama-3.2-Vision launch at its 131,072 tokens profiles all of them (holdout53).
int64_t VllmV0BatchedTokens(const PlanInput& in, std::string* why) {
  const int64_t len = in.context_length.value_or(2048);
  const bool multimodal_off = len > 32768 && in.model && in.model->vision_params > 0 &&
                              !VersionBefore(in.version, {0, 6, 2});
  if (len <= 32768 || VersionBefore(in.version, {0, 5, 3}) || multimodal_off) {
    *why = len <= 32768     ? "V0 without chunked prefill: max(max_model_len, 2048)"
           : multimodal_off ? "V0 from 0.6.2 keeps chunked prefill off for a multimodal model at any length: "
                              "max(max_model_len, 2048)"
                            : "V0 before 0.5.3 keeps chunked prefill off at any length: max(max_model_len, 2048)";
    return std::max<int64_t>(len, 2048);
  }
  auto v = ParseVersion(in.version);
  const bool old = v.ok() && CompareVersions(*v, {0, 6, 5}) < 0;
  *why = std::string("V0 switches chunked prefill on above 32,768 tokens: ") +
         (old ? "512 (its chunked default before vllm#10544, 0.6.5)" : "2048");
  return old ? 512 : 2048;
}

// --dtype beside --model: used where the server would use it (the 16-bit load dtype,
// float32, FP8 on the fly as --quantization fp8), said where it conflicts with the
// checkpoint (a quantized one, or a 4-bit dtype asked of 16-bit weights).
void ApplyDtypeFlag(PlanInput& in, std::vector<std::string>& assumptions) {
  ModelConfig& m = *in.model;
  const std::string d = Lower(in.weight_dtype);
  const bool half = d == "fp16" || d == "float16" || d == "half";
  const bool sixteen = half || d == "bf16" || d == "bfloat16";
  const std::string flag = "--dtype " + in.weight_dtype;
  if (!m.quant.method.empty()) {
    assumptions.push_back(sixteen ? flag + ": the activation dtype; the weights stay " + m.quant.scheme +
                                        " (a quantized checkpoint)"
                                  : flag + " ignored: the checkpoint is " + m.quant.scheme + " (" + m.quant.source +
                                        "); its weights are counted as they are");
    in.weight_dtype = half ? "fp16" : "bf16";
    return;
  }
  if (sixteen) {
    in.weight_dtype = half ? "fp16" : "bf16";
    const bool ckpt_half = m.torch_dtype.find("float16") != std::string::npos &&
                           m.torch_dtype.find("bfloat16") == std::string::npos;
    if (half != ckpt_half) {
      assumptions.push_back(flag + ": the weights load as " + (half ? "float16" : "bfloat16") + " (the checkpoint is " +
                            m.torch_dtype + "; 2 bytes either way)");
    }
    return;
  }
  if (d == "fp32" || d == "float32") {
    if (m.dtype_bytes < 4 && m.index_total_bytes && Lower(m.torch_dtype).find("float32") == std::string::npos) {
      *m.index_total_bytes *= 4.0 / m.dtype_bytes;
    }
    m.dtype_bytes = 4;
    assumptions.push_back(flag + ": weights and activations in 4 bytes (the checkpoint is " + m.torch_dtype + ")");
    return;
  }
  if (d.rfind("fp8", 0) == 0) {
    m.quant.method = "fp8";
    m.quant.linear_bytes = 1.0;
    m.quant.scheme = "fp8 on the fly";
    m.index_total_bytes.reset();
    assumptions.push_back(flag + ": the " + m.torch_dtype +
                          " linears quantized to FP8 at load (the servers' --quantization fp8, per-tensor scales)");
    in.weight_dtype = "bf16";
    in.quantize_fp8_at_load = true;
    return;
  }
  assumptions.push_back(flag + " ignored: the checkpoint is " + m.torch_dtype + " and a server cannot load it as " +
                        in.weight_dtype + " (quantize it first, or give --weights-per-rank)");
  in.weight_dtype = "bf16";
}

// vLLM before 0.6.5 cannot run an interleaved sliding window: for Gemma-2 (model_type gemma2,
// a sliding_window in its config) ModelConfig.__init__ sets disable_sliding_window and
// _get_and_verify_max_len caps max_model_len at the window (config.py 0.5.4:163-176,
// 0.6.0:213, 0.6.3.post1:176-190, 0.6.4.post1:226-240; 0.6.5 keeps the window in the
// attention layers, interleaved_sliding_window, and caps only under VLLM_ATTENTION_BACKEND=
// XFORMERS). Gemma-2 arrived in 0.5.1. The cap, or 0 where none applies.
int64_t VllmInterleavedWindowCap(const PlanInput& in, const ModelConfig& m) {
  if (in.framework != "vllm" || m.model_type != "gemma2" || m.sliding_window <= 0) return 0;
  if (in.version.empty() || !VersionBefore(in.version, {0, 6, 5})) return 0;
  return m.sliding_window;
}

}  // namespace

namespace internal {

// flashinfer_sampler_supported (v1/sample/ops/topk_topp_sampler.py, the 2026 form): CUDA
// only, FlashInferBackend.supports_compute_capability (7.5 to 12.x) and more than 16 SMs
// ("top-k masking requires more than 16 SMs"); otherwise vLLM falls back to the native
// path. Jetson AGX Orin has 16 SMs (2,048 CUDA cores; 14 on the 32 GB module).
// --vllm-flashinfer absent: the package is not there, so the sampler cannot take it.
bool FlashInferSamplerRuns(const PlanInput& in) {
  if (in.vllm_flashinfer == false) return false;
  if (in.gpu_arch == "cdna3" || in.gpu_arch == "volta") return false;
  return Lower(in.gpu_name).find("orin") == std::string::npos;
}

// The engine: --vllm-engine, else V1 from 0.8.0 (its default) and V0 before. The era
// alone does not say it: 0.6.4-0.6.5 V0 and V1 before 0.9.1 share one budget formula.
bool IsVllmV1(const PlanInput& in) {
  if (in.vllm_engine == "v0") return false;
  if (in.vllm_engine == "v1") return true;
  auto v = ParseVersion(in.version);
  return !v.ok() || CompareVersions(*v, {0, 8}) >= 0;
}

// Fills what the model's files and the server's defaults give; records each assumption.
StatusOr<PlanInput> Derive(const PlanInput& user, std::vector<std::string>& assumptions,
                           std::optional<WeightEstimate>& west) {
  PlanInput in = user;
  const bool vllm = in.framework == "vllm";
  // SGLang's --enable-dp-attention: the DP size the release runs (0.3.6-0.4.4 set it to the
  // TP size; later ones need --dp > 1) and DeepSeek's vocabulary kept whole (sglang_dp_attention.h).
  std::optional<SglangDpAttention> dp_attn;
  if (in.framework == "sglang" && in.enable_dp_attention) {
    auto r = ResolveSglangDpAttention(in.version, in.tp, in.dp, in.model ? &*in.model : nullptr);
    if (!r.ok()) return r.status();
    dp_attn = *r;
    in.dp = r->dp;
    if (!r->note.empty()) assumptions.push_back(r->note);
  }
  bool weights_from_config = false;
  size_t weights_assumption = 0;  // where the weights' line is, to restate it with the buffers below
  if (in.model) {
    for (const auto& n : in.model->notes) assumptions.push_back("config: " + n);
    if (in.weight_dtype_given) ApplyDtypeFlag(in, assumptions);
    if (!in.quantization_method.empty()) {
      // --quantization other than fp8: SGLang and vLLM build that method's config; on a checkpoint
      // quantized for it the quantization_config sizes the weights (it names the kernel only).
      const ModelConfig& mq = *in.model;
      const std::string flag = "--quantization " + in.quantization_method;
      assumptions.push_back(!mq.quant.method.empty()
                                ? flag + ": the kernel for the checkpoint's " + mq.quant.scheme +
                                      " weights; the checkpoint's quantization_config sizes them"
                                : flag + " not priced: the checkpoint is " + mq.torch_dtype +
                                      " and its weights are counted so (only fp8 is modelled as quantized at "
                                      "load); give --weights-per-rank from the log");
    }
    const ModelConfig& m = *in.model;
    const int attn_tp = !vllm && in.enable_dp_attention ? std::max(1, in.tp / in.dp) : in.tp;
    TPT_RETURN_IF_ERROR(CheckTensorParallel(m, attn_tp, in.framework));
    if (!in.weights_bytes && !in.avail_after_weights_bytes) {
      Sharding s;
      s.framework = in.framework;
      s.tp = in.tp;
      s.pp = in.pp;
      s.ep = in.ep;
      s.dp = in.dp;
      s.enable_dp_attention = in.enable_dp_attention;
      s.version = in.version;
      s.gpu_arch = in.gpu_arch;
      if (dp_attn) {
        s.embedding_whole = dp_attn->embedding_whole;
        s.lm_head_whole = dp_attn->lm_head_whole;
      }
      if (in.framework == "lmdeploy" && in.lmdeploy_backend == "pytorch") {
        const LmdeployWhole v = LmdeployPytorchWhole(m, in.version);
        s.embedding_whole = v.embedding;
        s.lm_head_whole = v.lm_head;
        s.vision_merger_whole = v.vision_merger && m.vision_merger_params > 0;
        if (in.tp > 1 && (v.embedding || v.lm_head)) {
          assumptions.push_back(std::string("LMDeploy's PyTorch engine keeps ") +
                                (v.embedding && v.lm_head ? "the embedding and the LM head"
                                 : v.embedding            ? "the embedding"
                                                          : "the LM head") +
                                (s.vision_merger_whole ? ", and the vision tower's patch embedding and merger," : "") +
                                " whole on every rank (lmdeploy/pytorch/models, nn/linear.py: not split by TP)");
        }
      }
      auto w = WeightsPerRank(m, s);
      if (!w.ok()) return w.status();
      west = *w;
      weights_from_config = true;
      in.weights_bytes = w->per_rank_bytes;
      weights_assumption = assumptions.size();
      assumptions.push_back("weights " + FormatGiB(w->per_rank_bytes) + " per rank from " + w->source + " (" +
                            (m.quant.method.empty() ? m.torch_dtype : m.quant.scheme) + ")");
      if (in.draft_weights_bytes) {
        in.weights_bytes = *in.weights_bytes + *in.draft_weights_bytes;
        assumptions.push_back("draft model weights " + FormatGiB(*in.draft_weights_bytes) + " per rank added");
      }
    }
    if (!in.cell_bytes && in.dims.layers == 0) {
      KvDims d = KvDimsOf(m, in.pp);
      std::string mha_why;
      if (in.framework == "vllm" && VllmDeepseekKvAsMha(m, in.version, &d, &mha_why)) assumptions.push_back(mha_why);
      in.dims = d;
      if (m.SlidingLayers() > 0 || m.LinearLayers() > 0) {
        assumptions.push_back("KV cell of " + std::to_string(m.AttentionLayers()) + " attention layers (" +
                              std::to_string(m.SlidingLayers()) + " of them sliding-window; " +
                              std::to_string(m.LinearLayers()) +
                              " linear/mamba layers keep per-request state, not per-token KV)");
      }
    }
    if (!in.weight_dtype_given && in.weight_dtype == "bf16" && m.torch_dtype.find("float16") != std::string::npos &&
        m.torch_dtype.find("bfloat16") == std::string::npos) {
      in.weight_dtype = "fp16";
    }
    // TGI before v2.0 does not read the model's context: its launcher defaults to
    // --max-total-tokens 2048 (launcher/src/main.rs v0.9.3-v1.4.5); PlanTgi says so.
    const bool tgi_v1 = in.framework == "tgi" && VersionBefore(in.version, {2, 0, 0});
    // TGI v2.0.0-v2.4.0: the launcher's default --max-total-tokens is max_position_embeddings
    // capped at 4096 (TgiV2LauncherMaxPosition, tgi_launcher.cc).
    const int64_t tgi_v2_cap = in.framework == "tgi" ? TgiV2LauncherMaxPosition(in.version, &m) : 0;
    if (!in.context_length && tgi_v2_cap > 0) {
      in.context_length = tgi_v2_cap;
      in.context_from_model = true;
      assumptions.push_back("--max-total-tokens " + std::to_string(tgi_v2_cap) + " (TGI " + in.version +
                            "'s default: " +
                            (m.top.max_position > 0
                                 ? "min(max_position_embeddings " + std::to_string(m.top.max_position) + ", 4096)"
                                 : std::string("4096 without a max_position_embeddings at the config's top level")) +
                            ", launcher/src/main.rs get_max_position_embeddings v2.0.0-v2.4.0); pass "
                            "--max-total-tokens and --max-input-tokens for more");
    } else if (const int64_t cap = VllmInterleavedWindowCap(in, m); cap > 0) {
      // vLLM 0.5.x-0.6.4 disables Gemma-2's interleaved sliding window and caps max_model_len
      // at the window (VllmInterleavedWindowCap); a --max-model-len above it is refused.
      if (in.context_length && *in.context_length > cap) {
        return InvalidArgumentError(
            "vLLM " + in.version + " caps " + m.model_type + "'s max_model_len at its sliding window (" +
            std::to_string(cap) + "): 'has interleaved attention, which is currently not supported by vLLM. "
            "Disabling sliding window and capping the max length to the sliding window size' (config.py "
            "ModelConfig, 0.5.4-0.6.4.post1), and --max-model-len " + std::to_string(*in.context_length) +
            " is refused ('User-specified max_model_len ... is greater than the derived max_model_len'); pass "
            "--max-model-len " + std::to_string(cap) + " or less, or plan vLLM 0.6.5 or later");
      }
      if (!in.context_length) {
        in.context_length = std::min<int64_t>(cap, m.max_position > 0 ? m.max_position : cap);
        in.context_from_model = true;
        assumptions.push_back("context length " + std::to_string(*in.context_length) + ": vLLM " + in.version +
                              " caps " + m.model_type + "'s max_model_len at its sliding window (" +
                              std::to_string(cap) +
                              ", interleaved attention is not supported: config.py ModelConfig, 0.5.4-0.6.4.post1)");
      }
    } else if (const ServerContext sc = ServerDefaultContext(m, in.framework, in.version);
               !in.context_length && sc.tokens > 0) {
      // vLLM and SGLang derive it themselves: length keys and rope_scaling (launch_plan_context.cc).
      in.context_length = sc.tokens;
      in.context_from_model = true;
      assumptions.push_back(sc.why + (vllm ? "; pass --max-model-len" : "; pass --context-length"));
    } else if (!in.context_length && m.max_position > 0 && !tgi_v1) {
      in.context_length = m.max_position;
      in.context_from_model = true;
      assumptions.push_back("context length " + std::to_string(m.max_position) +
                            " = max_position_embeddings (the servers' default); pass --context-length/--max-model-len");
    }
  }
  if (vllm) {
    const bool v1 = IsVllmV1(in);
    auto v = ParseVersion(in.version);
    // V1's defaults by entry point (`vllm serve` or the offline LLM class, --vllm-entrypoint),
    // release and card: vllm_entrypoint.h has the tables read, 0.6.6.post1-0.28.0.
    const VllmV1BatchDefaults v1d = VllmV1Defaults(in.version, in.total_bytes, in.gpu_name, in.vllm_entrypoint == "llm");
    std::string batched_why;
    if (!in.max_num_batched_tokens) {
      if (v1) {
        in.max_num_batched_tokens = v1d.batched_tokens;
        batched_why = v1d.why;
      } else {
        in.max_num_batched_tokens = VllmV0BatchedTokens(in, &batched_why);
      }
      // V0's SchedulerConfig raises the default for multimodal models to hold their items
      // (_MULTIMODAL_MODEL_MAX_NUM_BATCHED_TOKENS, 5120). Only when it is unset: V1's
      // EngineArgs sets it first (_set_default_args_v1, 0.8.2 and 0.9.2 config.py /
      // arg_utils.py), so V1 keeps 2048/8192 (a 0.9.0.1 V1 Qwen2.5-VL launch on an L4 logs
      // "Chunked prefill is enabled with max_num_batched_tokens=2048").
      if (!v1 && in.model && in.model->vision_params > 0) {
        in.max_num_batched_tokens = std::max<int64_t>(*in.max_num_batched_tokens, 5120);
      }
    }
    // Qwen3-VL's deepstack buffers (qwen3_vl.py, qwen3_vl_moe.py Qwen3VL(Moe)ForConditionalGeneration
    // __init__, 0.11.0-0.21.0): one max_num_batched_tokens x text hidden tensor per deepstack
    // level, allocated with the model (torch.zeros under the loader's device and dtype), on
    // every rank: "Model loading took" counts them. 0.11.0-0.14.1 leave them out with the
    // tower when --limit-mm-per-prompt turns images and videos off (`if self.use_deepstack
    // and self.visual is not None`); from 0.16.0 they are made whatever the limits (0.15 not
    // read, taken as 0.14).
    const bool towerless = in.mm_limits && in.mm_limits->given && in.mm_limits->image == 0 &&
                           in.mm_limits->video == 0 && VersionBefore(in.version, {0, 16});
    if (weights_from_config && in.model && in.model->vit_qwen3 && in.model->vit_deepstack > 0 && !towerless &&
        !VersionBefore(in.version, {0, 11})) {
      const double buffers = static_cast<double>(in.model->vit_deepstack) *
                             static_cast<double>(*in.max_num_batched_tokens) * in.model->hidden * in.model->dtype_bytes;
      in.weights_bytes = *in.weights_bytes + buffers;
      west->per_rank_bytes += buffers;
      const std::string what = "Qwen3-VL's deepstack buffers, " + std::to_string(in.model->vit_deepstack) + " x " +
                               std::to_string(*in.max_num_batched_tokens) + " batched tokens x hidden " +
                               std::to_string(in.model->hidden) + ": " + FormatGiB(buffers) +
                               " a rank, allocated with the model";
      west->notes.push_back(what);
      if (weights_assumption < assumptions.size()) {
        assumptions[weights_assumption] += " + " + what + " = " + FormatGiB(*in.weights_bytes);
      }
    }
    // V1's max_num_seqs by the same rows (vllm_entrypoint.h); V0 256.
    if (!in.max_num_seqs) in.max_num_seqs = v1 ? v1d.max_num_seqs : 256;
    const bool v1_early = v1 && v.ok() && CompareVersions(*v, {0, 8, 4}) < 0;
    ApplyVllmPerformanceMode(user, in, assumptions);
    if (!in.activation_peak_bytes && in.model) {
      int64_t tokens = *in.max_num_batched_tokens, seqs = std::min(*in.max_num_seqs, tokens);
      double held = 0;
      double held_embeds = 0;  // V0's dummy items' embeddings (part of held)
      std::string mm_note;
      double v0_encoder_phase = 0;  // V0: the encoder's call inside the forward, with what is held
      // V0 InternVL (vllm_v0_internvl.h): the dummy images from --limit-mm-per-prompt (1 by
      // default), InternViT over all their tiles before the language model's run.
      const VllmV0Gemma3Profile g3 =
          v1 ? VllmV0Gemma3Profile{}
             : VllmV0Gemma3(*in.model, in.version, in.tp, tokens, *in.max_num_seqs,
                            in.mm_limits && in.mm_limits->given ? in.mm_limits->image : 1);
      const VllmV0InternVlProfile ivl =
          v1 ? VllmV0InternVlProfile{}
             : VllmV0InternVl(*in.model, in.version, in.tp, tokens, *in.max_num_seqs,
                              in.mm_limits && in.mm_limits->given ? in.mm_limits->image : 1);
      if (ivl.modelled) {
        if (!(in.mm_limits && in.mm_limits->given)) {
          in.mm_images_worst = InternVlMostImagesAPrompt(*in.model, in.context_length.value_or(in.model->max_position));
        }
        tokens = ivl.lm_tokens;
        seqs = ivl.seqs;
        held = ivl.held;
        v0_encoder_phase = ivl.vit_peak;
        mm_note = "; " + ivl.arithmetic + (ivl.tiles > 0 ? ", beside the images' float32 pixels and embeddings (" +
                                                               FormatGiB(ivl.held) + ")"
                                                         : "");
      } else if (const VllmV0MllamaFloor ml =
                     v1 ? VllmV0MllamaFloor{}
                        : VllmV0Mllama(*in.model, in.version, *in.max_num_seqs,
                                       in.mm_limits && in.mm_limits->given ? in.mm_limits->image : 1);
                 ml.modelled) {
        // V0 mllama (vllm_v0_mllama.h): the tower over every dummy tile at once, a floor.
        v0_encoder_phase = ml.floor;
        in.activation_floor_bytes = ml.floor;
        mm_note = "; " + ml.arithmetic;
      } else if (g3.modelled) {
        // V0 Gemma-3 (vllm_v0_gemma3.h): sequences capped by its images' tokens, SigLIP over
        // all their images at once, the language model's run beside their pixels and embeddings.
        tokens = g3.lm_tokens;
        seqs = g3.seqs;
        held = g3.held;
        v0_encoder_phase = g3.encoder_phase;
        mm_note = "; " + g3.arithmetic;
      } else if (!v1 && in.model->mm_item_tokens > 0 && !in.model->vit_siglip) {  // V0: the Qwen processors read
        const MmDummy d = VllmV0MultimodalDummy(*in.model, tokens, *in.max_num_seqs, in.context_length.value_or(tokens));
        tokens = d.lm_tokens;
        seqs = d.seqs;
        held = static_cast<double>(d.mm_tokens) * in.model->hidden * in.model->dtype_bytes;
        held_embeds = held;
        mm_note = "; V0 profiles " + std::to_string(d.seqs) + " dummy sequence(s) holding the largest image (" +
                  std::to_string(in.model->mm_item_tokens) + " tokens)" + (in.model->mm_video ? " and one video" : "") +
                  ": the language model runs over " + std::to_string(d.lm_tokens) + " tokens";
        // The dummy items' pixel_values stay on the GPU for the whole forward (the model
        // runner passes MultiModalKwargs.as_kwargs(..., device) into the model, which
        // only casts a copy for the encoder: pixel_values.type(self.visual.dtype)), in the
        // HF processor's float32: patches x 1176 values x 4 B per image and per video
        // (1 x 256 x 256 patches for a 2-frame video at the largest size; 4 patches a token).
        const int64_t per_token = in.model->vision_max_patches / std::max<int64_t>(in.model->mm_item_tokens, 1);
        const int64_t image_patches = d.seqs * in.model->vision_max_patches;
        const int64_t video_patches = (d.mm_tokens - d.seqs * in.model->mm_item_tokens) * per_token;
        if (in.model->vision_patch_elems > 0) {
          const double pixels = static_cast<double>(image_patches + video_patches) *
                                static_cast<double>(in.model->vision_patch_elems) * 4;
          held += pixels;
          mm_note += "; their float32 pixel values (" + FormatGiB(pixels) + ") stay on the GPU";
        }
        // The model encodes the images, then the videos, inside that forward
        // (get_input_embeddings_v0 after the prompt's embeddings, qwen2_5_vl.py 0.7.3): the
        // vision transformer's widest layer over the larger call (vllm_mm_profile.cc) and
        // its cast pixel values, beside the prompt's T x hidden embeddings and what is held.
        if (in.model->vit_width > 0) {
          const int64_t patches = std::max(image_patches, video_patches);
          const QwenVitPeak vit = QwenVitLayerPeak(*in.model, patches, in.tp, in.version);
          const double cast = static_cast<double>(patches) * static_cast<double>(in.model->vision_patch_elems) *
                              in.model->dtype_bytes;
          const double embeds = static_cast<double>(d.lm_tokens) * in.model->hidden * in.model->dtype_bytes;
          v0_encoder_phase = vit.layer + cast + embeds + held;
          mm_note += "; the encoder's call: " + vit.arithmetic + " + cast pixel values " + FormatGiB(cast) +
                     " + prompt embeddings " + FormatGiB(embeds) + " + held = " + FormatGiB(v0_encoder_phase);
        }
      }
      // V1 encodes its dummy items before the language model's run (vllm_mm_profile.cc):
      // the peak is the larger of the encoder's and the language model's (or sampler's)
      // with the items' pixel values and encoder outputs still held.
      VllmEncoderProfile enc;
      if (v1 && in.model->vision_params > 0) {
        enc = VllmV1EncoderProfile(*in.model, in.version, in.tp, tokens, *in.max_num_seqs,
                                   in.context_length.value_or(in.model->max_position),
                                   in.mm_limits.value_or(VllmMmLimits::Default()));
      }
      ModelConfig text_only;
      const ModelConfig* lm = &*in.model;
      if (enc.modelled || v0_encoder_phase > 0 || ivl.modelled || g3.modelled) {
        text_only = *in.model;
        text_only.vision_max_patches = 0;  // the encoder is priced above, not by the rough term
        lm = &text_only;
      }
      const VllmLogitsProfile logits = VllmSamplerProfile(in, v1);
      const VllmMoeCaches moe_caches = VllmMoeCachesFor(in.version, *lm);
      // V1 data parallelism gathers every DP rank's dummy batch into the MoE layers.
      const int64_t moe_tokens = v1 ? VllmDpMoeTokens(*lm, in.dp, tokens) : tokens;
      const VllmEagerForward eager = VllmEagerForwardFor(*lm, in.version, v1, in.enforce_eager, in.tp);
      // Where the eager forward is priced by its references (vllm_eager_forward.h), the
      // language model's run holds the dummy items' pixel values (the runner's kwargs) but not
      // their embeddings: image_embeds / video_embeds are locals of get_input_embeddings_v0
      // (qwen2_5_vl.py 0.7.3 L985-1010), merged into the prompt's embeddings and freed at return.
      if (eager.eager && held_embeds > 0) {
        held -= held_embeds;
        mm_note += "; the items' embeddings are merged into the prompt's and freed before the language model runs";
      }
      double peak = VllmActivationPeakBytes(*lm, in.tp, tokens, seqs, logits, moe_caches, moe_tokens, eager) + held;
      if (eager.eager) {
        mm_note += std::string("; the eager forward keeps the model loop's layer input beside the MLP's tensors") +
                   (eager.mlp_keeps_gate_up ? " (this model's MLP keeps gate_up until down_proj returns)" : "") +
                   (eager.out_of_place ? "; its all-reduces are out of place (0.6.5 on): a T x hidden copy more" : "");
      }
      // V1 0.8.x samples with FlashInfer where an older FlashInfer is installed (its
      // images), with PyTorch's sort where it is not (a pip install): the plan prices the
      // sort and keeps FlashInfer's peak for the range (model_config.h kFlashInferProbs).
      // 0.9.0-0.11.0 do the same with FlashInfer 0.2.3 or newer (the images; pip's
      // `flashinfer` extra, METADATA of 0.10.1.1-0.11.0): VLLM_USE_FLASHINFER_SAMPLER unset
      // means on in V1 (topk_topp_sampler.py 0.9.2:40, 0.10.1.1:43, 0.11.0:46) until
      // vllm#26859 (0.11.1), and the dummy run's top-k and top-p go to
      // top_k_top_p_sampling_from_logits (flashinfer_sample, 0.10.1.1:262-296): 14 bytes a
      // logit (kFlashInferSampler), no sort.
      const bool fi_new = v.ok() && CompareVersions(*v, {0, 9}) >= 0;
      const bool flashinfer_probs = v1 && logits == VllmLogitsProfile::kSampler && v.ok() &&
                                    CompareVersions(*v, {0, 8}) >= 0 && CompareVersions(*v, {0, 11, 1}) < 0 &&
                                    FlashInferSamplerRuns(in) && v0_encoder_phase == 0;
      double fi_peak = 0;
      if (flashinfer_probs) {
        fi_peak = VllmActivationPeakBytes(*lm, in.tp, tokens, seqs,
                                          fi_new ? VllmLogitsProfile::kFlashInferSampler
                                                 : VllmLogitsProfile::kFlashInferProbs,
                                          moe_caches, moe_tokens, eager) +
                  held;
      }
      if (v0_encoder_phase > 0) {
        mm_note += "; the language model's forward " + FormatGiB(peak) + " (with what is held): the peak is " +
                   (v0_encoder_phase > peak ? "the encoder's" : "the language model's");
        peak = std::max(peak, v0_encoder_phase);
      }
      if (enc.modelled) {
        in.encoder_modality = enc.modality;
        in.encoder_peak_bytes = enc.encoder_peak;
        const double lm_peak = peak;
        peak = std::max(lm_peak + enc.held, enc.encoder_peak);
        if (fi_peak > 0) fi_peak = std::max(fi_peak + enc.held, enc.encoder_peak);
        mm_note += "; " + enc.arithmetic + "; language model's run and sampler " + FormatGiB(lm_peak) + " + held " +
                   FormatGiB(enc.held) + " = " + FormatGiB(lm_peak + enc.held) + ": the peak is " +
                   (enc.encoder_peak > lm_peak + enc.held ? "the encoder's" : "after the encoder");
      }
      if (v1_early && !user.max_num_seqs) {
        mm_note += "; max_num_seqs " + std::to_string(*in.max_num_seqs) + " is V1's default before 0.8.4 on every card";
      }
      if (logits == VllmLogitsProfile::kEveryToken) {
        mm_note += "; V1 before 0.7.3 computes the logits of every batched token there (no sampler run)";
      } else if (logits == VllmLogitsProfile::kPerSequence) {
        mm_note += "; V1 0.7.3-0.7.x computes one row of logits per dummy sequence (no sampler run)";
      } else if (logits == VllmLogitsProfile::kFlashInferSampler) {
        mm_note += "; the sampler is FlashInfer's top-k/top-p kernel, on by default from 0.22 (vllm#40376): 14 bytes a "
                   "logit, no sort (with VLLM_USE_FLASHINFER_SAMPLER=0 the native path runs: pass --activation-peak)";
      } else if (logits == VllmLogitsProfile::kTritonTopKTopP && seqs >= 8) {
        mm_note += "; the sampler's top-k/top-p is vLLM's Triton kernel (vllm#33538, 0.16 on, 8 rows or more): " +
                   std::string(in.model->dtype_bytes == 4 ? "12" : "14") +
                   " bytes a logit and its scratch rows, no sort (FlashInfer's sampler stays opt-in until 0.22)";
      }
      // Before 0.6.4 the peak is read from cudaMemGetInfo after the profiling run without
      // emptying the cache (vllm-source.md §1.2 (a), (b)): the caching allocator's reserve
      // over the allocated peak counts too. 1.2x reproduces Qwen1.5-7B-GPTQ on an RTX 3090
      // with vLLM 0.3.0 (24,320 KV tokens logged); from 0.6.4 torch's allocated peak is used.
      // Where the layers change shape along the forward (a dense first layer before MoE
      // layers, DeepSeek's padded attention) the allocator reserves more than 1.2x: its
      // replay over the forward's tensors (vllm_v0_reserved.h) is the point when larger.
      auto era = VllmEraForVersion(in.version, in.vllm_engine);
      const bool reserved = era.ok() && (*era == VllmEra::kV0PeakWholeGpu || *era == VllmEra::kV0InstancePeak);
      bool replayed = false;
      if (reserved) {
        const VllmV0Reserve replay = VllmV0ReservedPeak(*lm, in.tp, tokens, in.version);
        if (replay.modelled && replay.reserved_peak + held > 1.2 * peak) {
          replayed = true;
          mm_note += "; the caching allocator's replay of that forward reserves " + FormatGiB(replay.reserved_peak) +
                     " over an allocated peak of " + FormatGiB(replay.allocated_peak) +
                      " (the layer input the model loop still names; freed blocks too small for the next layers' "
                     "tensors), more than the 1.2x this version measures on uniform layers";
          peak = replay.reserved_peak + held;
        } else {
          peak *= 1.2;
        }
      }
      // --vllm-flashinfer installed: the sampler the version takes with it is the point, not a range.
      const bool fi_point = in.vllm_flashinfer == true && fi_peak > 0;
      if (fi_point) {
        mm_note += "; FlashInfer installed (--vllm-flashinfer): its sampler runs in the profiling, " + FormatGiB(fi_peak) +
                   " against the sort's " + FormatGiB(peak);
      }
      in.activation_peak_bytes = fi_point ? fi_peak : peak;
      in.flashinfer_probs_peak_bytes = !fi_point && fi_peak < peak ? fi_peak : 0;
      in.encoder_profile_unmodelled =
          in.model->vision_params > 0 &&
          (v1 ? !enc.modelled
              : !ivl.modelled && !g3.modelled && (in.model->mm_item_tokens == 0 || in.model->vit_siglip));
      assumptions.push_back("activation peak " + FormatGiB(*in.activation_peak_bytes) + " estimated for a profiling run of " +
                            std::to_string(*in.max_num_batched_tokens) + " tokens and " +
                            std::to_string(*in.max_num_seqs) + " sequences (max_num_batched_tokens, max_num_seqs" +
                            (user.max_num_batched_tokens ? ""
                                                         : ": the version's default" +
                                                               (batched_why.empty() ? "" : ", " + batched_why)) +
                            ")" +
                            (reserved && !replayed ? ", x1.2 for the allocator's reserve this version measures" : "") + mm_note +
                            (in.encoder_profile_unmodelled
                                 ? "; the vision encoder's profiling peak is a rough estimate (it can be twice as large)"
                                 : ""));
    }
    auto era = VllmEraForVersion(in.version, in.vllm_engine);
    if (era.ok() && *era == VllmEra::kV1GraphsInBudget && !in.cuda_graph_bytes && !in.enforce_eager) {
      in.cuda_graph_bytes = kVllmGraphInBudgetEstimateBytes;
      assumptions.push_back("CUDA graph estimate " + FormatGiB(kVllmGraphInBudgetEstimateBytes) +
                            " inside the budget (vLLM >= 0.21, piecewise and full graphs; logged 0.48-0.53 GiB on "
                            "7-8B models); pass --cuda-graph-mem");
    } else if (era.ok() && v1 && !in.cuda_graph_bytes && !in.enforce_eager) {
      // V1 before 0.21 captures its graphs after the KV cache, from what the budget leaves
      // outside (gpu_model_runner.capture_model; vllm-source.md 1.3): the same estimate,
      // captured outside, so a utilization that leaves less fails at capture.
      in.cuda_graph_bytes = kVllmGraphEstimateBytes;
      assumptions.push_back("CUDA graphs " + FormatGiB(kVllmGraphEstimateBytes) +
                            " (estimate; logged 0.06-0.36 GiB) captured after the KV cache, outside the "
                            "--gpu-memory-utilization budget (V1 before 0.21); pass --cuda-graph-mem, or "
                            "--enforce-eager for none");
    } else if (era.ok() && !v1 && !in.cuda_graph_bytes && !in.enforce_eager && in.model && in.max_num_seqs) {
      // V0 captures a whole-model graph a batch size after the KV cache (vllm_v0_graphs.h).
      const VllmV0Graphs g = VllmV0GraphsFor(*in.model, in.version, *in.max_num_seqs, in.pp);
      if (g.captured) {
        in.cuda_graph_bytes = g.point_bytes;
        assumptions.push_back(g.why);
      }
    }
  }
  return in;
}

VllmLogitsProfile VllmSamplerProfile(const PlanInput& in, bool v1) {
  const VllmLogitsProfile p = VllmLogitsProfileFor(in.version, v1);
  // Where FlashInfer's sampler does not run, 0.22 on takes forward_native, whose
  // apply_top_k_top_p still sends 8 rows or more to the Triton kernel (vllm#33538).
  return p == VllmLogitsProfile::kFlashInferSampler && !FlashInferSamplerRuns(in) ? VllmLogitsProfile::kTritonTopKTopP
                                                                                   : p;
}

}  // namespace internal
}  // namespace tpt::memory
