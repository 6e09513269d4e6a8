// model_config.h: a Hugging Face model's config.json (and model.safetensors.index.json)
// read into the numbers the memory model needs: attention and MLP shapes, MLA ranks,
// MoE experts, sliding-window/hybrid layers, vision towers, quantization; and from
// them the weight bytes one rank holds under TP/PP/EP and the KV dimensions.
//
//   auto m = tpt::memory::LoadModel("/models/Qwen3-32B");      // dir or its config.json
//   tpt::memory::Sharding s; s.tp = 2; s.framework = "vllm";
//   auto w = tpt::memory::WeightsPerRank(*m, s);              // w->per_rank_bytes
//   KvDims d = tpt::memory::KvDimsOf(*m, /*pp=*/1);
//
// Sharding follows the servers' parallel layers (vLLM/SGLang share the design):
// q/k/v and gate/up are column parallel, o/down row parallel (split by TP); K/V heads
// are replicated when kv_heads < tp; norms, routers and MLA's q_a/kv_a projections are
// replicated; the vocabulary is padded to a multiple of 64 and split (embedding and
// LM head; one copy when tied); routed experts are split over the MoE group (TP, or
// EP x TP/EP); PP stages take ceil(layers/pp) layers, the first the embedding and the
// last the LM head. No network access: everything comes from local files.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "memory/memory_model.h"

namespace tpt::memory {

// What quantization_config (or hf_quant_config.json) says about the weights.
struct QuantInfo {
  std::string method;            // "" (none), fp8, awq, gptq, compressed-tensors, modelopt, mxfp4, bitsandbytes
  std::string scheme;            // human summary, e.g. "fp8 block 128x128", "int4 g128", "nvfp4 g16"
  double linear_bytes = 0;       // bytes per element of a quantized linear weight incl. scales/zeros
  bool experts_only = false;     // mxfp4 (gpt-oss): only the MoE experts are quantized
  std::vector<std::string> skip; // modules left unquantized (substring match on tensor names)
  double kv_bytes = 0;           // KV dtype the checkpoint asks for (fp8 kv_cache_scheme): 1, else 0
  // Set when the config names a quantization this reader cannot price (an unknown
  // quant_method, a ModelOpt quant_algo or compressed-tensors scheme it does not know):
  // why, naming it. LoadModel refuses such a model unless the safetensors index gives
  // the checkpoint's total bytes.
  std::string unsupported;
  std::string source;            // the file and key it was read from
};

struct ModelConfig {
  std::string source;            // path read
  std::string model_type, architecture;
  std::string torch_dtype = "bfloat16";
  double dtype_bytes = 2;        // unquantized weights (bf16/fp16; fp32 checkpoints load as 16-bit)
  int layers = 0, hidden = 0, intermediate = 0, heads = 0, kv_heads = 0, head_dim = 0, v_head_dim = 0;
  int64_t vocab = 0;
  bool tied_embeddings = false;
  bool tied_known = false;       // the config (or the index) said; otherwise assumed untied
  bool qkv_bias = false, o_bias = false;
  int64_t max_position = 0;
  // M-RoPE: rope_scaling / rope_parameters carry mrope_section (Qwen2-VL, Qwen2.5-VL,
  // Qwen3-VL), or the architecture is one of those whose checkpoints all do (a note says
  // so). vLLM's MRotaryEmbedding sizes its cos/sin cache for 4 x max_position (model_weights.cc).
  bool mrope = false;
  // rope_scaling {"rope_type": "linear", "factor": F} (Gemma-3's global layers): vLLM's
  // LinearScalingRotaryEmbedding caches max_position x F positions. 1 without it.
  double rope_linear_factor = 1;
  // What vLLM and SGLang derive the default context length from (ServerDefaultContext,
  // launch_plan_context.cc): the text config's rope_scaling (rope_parameters in transformers
  // 5) "rope_type" (else the legacy "type"; empty without one), its "factor" (0 when absent)
  // and its original_max_position_embeddings (YaRN; 0 when absent), the top-level
  // original_max_position_embeddings (Phi-3 LongRoPE), and each length key of the text
  // config the servers read (max_position_embeddings, n_positions, seq_length, ...), in
  // the file's order.
  std::string rope_type;
  double rope_factor = 0;
  int64_t rope_original_max = 0;
  int64_t original_max_position = 0;
  std::vector<std::pair<std::string, int64_t>> length_keys;
  // A cos/sin cache built in every attention layer rather than shared through get_rope's
  // cache: Grok-1/2 with a top-level rope_type (SGLang grok.py Grok1Attention makes a
  // ScalingRotaryEmbedding per layer). Positions and rotary dim of one such cache; 0 = none.
  int64_t layer_rope_positions = 0;
  int layer_rope_dim = 0;
  // MLA (DeepSeek V2/V3/R1, Kimi K2, GLM-4.5+ MLA variants)
  int q_lora_rank = 0, kv_lora_rank = 0, qk_nope_head_dim = 0, qk_rope_head_dim = 0;
  // MoE
  int experts = 0, shared_experts = 0, experts_per_tok = 0, moe_intermediate = 0, shared_intermediate = 0;
  std::vector<bool> moe_layer;   // per layer: routed experts (empty: dense model)
  // Attention layer kinds: per layer "full", "sliding" or "linear" (mamba / linear attention)
  std::vector<std::string> layer_kind;
  int sliding_window = 0;
  double linear_mixer_params = 0;  // parameters of one linear-attention/mamba mixer (unsharded)
  // Per-request state of one linear/mamba layer (what SGLang's and vLLM's mamba pools hold,
  // configs/mamba_utils.py): "gdn" (Qwen3-Next gated delta net: conv over q,k,v and a
  // heads x key_dim x value_dim recurrent state) or "mamba2" (Nemotron-H, Falcon-H1:
  // conv over x,B,C and a heads x head_dim x state_size SSM state); "" when unknown.
  std::string mamba_kind;
  int mamba_heads = 0, mamba_head_dim = 0, mamba_state = 0, mamba_groups = 0, mamba_conv_kernel = 4;
  int gdn_key_heads = 0, gdn_key_dim = 0, gdn_value_heads = 0, gdn_value_dim = 0;
  // The text config's mamba_ssm_dtype ("float32" in Qwen3.5's): the recurrent state's dtype
  // vLLM keeps for Qwen3.5 (models/config.py Qwen3_5ForConditionalGenerationConfig); "" absent.
  std::string mamba_ssm_dtype;
  int mtp_layers = 0;            // num_nextn_predict_layers (checkpoint extras, not loaded by default)
  // Towers
  double vision_params = 0;      // estimated parameter count of the vision/audio encoder + projector
  int vision_hidden = 0, vision_intermediate = 0;
  // What SGLang's adjust_mem_fraction_for_vlm reads: vision_config.num_hidden_layers (24 when
  // absent, e.g. Qwen2.5-VL's "depth") and hidden_size (1024 when absent).
  int vision_layers_attr = 24, vision_hidden_attr = 1024;
  int64_t vision_max_patches = 0;  // patches of the largest image the processor makes (profiling)
  // What vLLM's profiler puts in a dummy prompt (multimodal/profiling.py): the language
  // model tokens of the largest image, and whether the processor takes video too (one
  // dummy video then fills the rest of the sequence, at least one frame pair). Known for
  // the Qwen2/2.5/3-VL processors (merged 2x2 patches, max_pixels 12,845,056); 0 otherwise.
  int64_t mm_item_tokens = 0;
  bool mm_video = false;
  // Values one patch of the processor's pixel_values holds (channels x temporal patch x
  // patch^2: 3 x 2 x 14 x 14 = 1176 for Qwen2/2.5-VL); 0 when unknown.
  int64_t vision_patch_elems = 0;
  // The Qwen2-VL / Qwen2.5-VL vision transformer as vLLM builds it (qwen2_vl.py,
  // qwen2_5_vl.py): width (Qwen2-VL's embed_dim, Qwen2.5-VL's hidden_size), heads, MLP
  // width (Qwen2.5-VL's gated intermediate_size; Qwen2-VL's embed_dim x mlp_ratio,
  // fc1-GELU-fc2), spatial merge, temporal patch. 0 for other towers; vLLM V1's encoder
  // profiling is priced from them (vllm_mm_profile.cc).
  // Gemma-3's SigLIP tower (gemma3_mm.py, siglip.py) fills the same fields: width, heads,
  // fc1-GELU-fc2 MLP, the projector's average-pool kernel as vit_merge (4: 64 x 64 patches
  // to 16 x 16 tokens), no temporal patch; vit_siglip tells the two forwards apart.
  int vit_width = 0, vit_heads = 0, vit_mlp = 0, vit_merge = 0, vit_temporal = 0;
  bool vit_mlp_gated = false;
  bool vit_siglip = false;
  // Qwen3-VL (qwen3_vl.py, vLLM 0.11.0): the Qwen2.5-VL attention with a plain
  // fc1-GELU-fc2 MLP, patch 16; its embeddings are the merger's out_hidden_size rows with
  // the deepstack mergers' outputs beside them (vit_out_width = out_hidden x (1 + deepstack),
  // vit_deepstack_width = out_hidden x deepstack); the largest dummy video is the video
  // processor's max pixels whatever its frames (mm_video_rows encoder rows), counted
  // x12.5 for the timestamps each row is formatted with (mm_video_token_scale).
  bool vit_qwen3 = false;
  int vit_patch = 0, vit_out_width = 0, vit_deepstack_width = 0;
  int vit_deepstack = 0;  // deepstack_visual_indexes' count (the deepstack mergers)
  int64_t mm_video_rows = 0;
  double mm_video_token_scale = 1.0;
  std::string vision_note;
  int vision_heads = 0;            // vision_config.num_attention_heads (eager ViT attention scores)
  // The parts of an InternVL tower (InternVLChatModel) that vLLM does not split by TP, within
  // vision_params: the projector mlp1 (nn.Linear, internvl.py _init_mlp1, 0.6.6:561-571),
  // whole on every rank; the ViT's attention (qkv, proj, q/k norms), whole on every rank
  // when vision_config.num_attention_heads % tp != 0 (intern_vit.py _init_attn 0.6.6:345-360
  // falls back to InternSdpaAttention's nn.Linear; later versions set use_data_parallel for
  // the same test). 0 for every other tower.
  double vision_whole_params = 0;
  // Qwen2-VL / Qwen2.5-VL, within vision_params: the patch embedding (Conv3d, patch x patch x
  // channels x temporal x width) and the merger (norm, Linear(width x merge^2) twice, the second
  // to the text width, with biases): what LMDeploy's PyTorch engine keeps whole
  // (lmdeploy_pytorch_weights.h). 0 for every other tower.
  double vision_merger_params = 0;
  double vision_attn_params = 0;
  // InternVL's InternViT as vLLM V0 profiles it (vllm_v0_internvl.h, read at 0.6.5-0.7.0):
  // tiles = 0 for every other tower.
  struct InternVit {
    int width = 0, heads = 0, mlp = 0, layers = 0;  // layers run: num_hidden_layers + select_layer + 1
    int tiles = 0;             // the dummy image's tiles: max_dynamic_patch (+1 thumbnail), or 1
    int tile_patches = 0;      // rows a tile takes through the ViT: (image_size / patch)^2 + the class token
    int tile_tokens = 0;       // language-model tokens a tile becomes: (image_size / patch)^2 x downsample^2
    int channels = 3, image_size = 0;
    bool qk_norm = false;
    std::string defaults;      // the InternVLChatConfig defaults taken for fields config.json lacks ("" none)
  } intern_vit;
  // Llama-3.2-Vision's tower (MllamaForConditionalGeneration) as vLLM V0 profiles it
  // (vllm_v0_mllama.h): tiles = 0 for every other tower.
  struct MllamaVit {
    int tiles = 0;          // vision_config.max_num_tiles: the dummy image's tiles
    int tile_rows = 0;      // (image_size / patch)^2 + the class token, padded to a multiple of 8
    int width = 0;          // vision_config.hidden_size
    int kept_layers = 0;    // intermediate_layers_indices' count: hidden states kept to the end
  } mllama_vit;
  // The top level of config.json as TGI's launcher reads it (launcher/src/main.rs RawConfig
  // -> Config, v3.0.0-v3.3.6): no descent into text_config, so a VLM whose language model is
  // nested has none of these. 0 / false when absent.
  struct TopLevel {
    int64_t max_position = 0, hidden = 0, intermediate = 0, heads = 0, kv_heads = 0, layers = 0, head_dim = 0,
            vocab = 0;
    int experts_per_tok = 1, shared_experts = 0, local_experts = 1;  // RawConfig's unwrap_or defaults
    bool quantized = false;      // quantization_config.quant_method at the top level
    bool vision_config = false;  // a top-level vision_config (TGI: a VLM)
  } top;
  QuantInfo quant;
  // model.safetensors.index.json
  std::optional<double> index_total_bytes;
  std::vector<std::string> tensor_names;
  std::vector<std::string> notes;  // what was inferred while reading

  bool IsMla() const { return kv_lora_rank > 0; }
  bool IsMoe() const { return experts > 0; }
  int AttentionLayers() const;     // layers whose tokens take KV (full + sliding)
  int FullAttentionLayers() const;
  int SlidingLayers() const;
  int LinearLayers() const;
};

// Reads a config.json document. `source` names it in errors.
StatusOr<ModelConfig> ParseModelConfig(const nlohmann::json& config, std::string_view source);
// A model directory (config.json, optional model.safetensors.index.json and
// hf_quant_config.json) or a path to config.json. Errors name the file and what to do.
StatusOr<ModelConfig> LoadModel(const std::string& path);

struct Sharding {
  std::string framework = "vllm";  // "sglang" | "vllm"
  int tp = 1, pp = 1;
  int ep = 1;                      // expert-parallel size (1: experts split by TP)
  int dp = 1;
  bool enable_dp_attention = false;  // SGLang: attention TP = tp / dp
  // Where the MoE kernels pad the experts (vLLM mxfp4): the server version and the GPU
  // family ("hopper", "blackwell", "ampere"...; "" unknown). Empty: no padding modelled.
  std::string version, gpu_arch;
  // The vocabulary matrices whole on every TP rank instead of split (LMDeploy's PyTorch
  // engine: lmdeploy_pytorch_weights.h).
  bool embedding_whole = false, lm_head_whole = false;
  bool vision_merger_whole = false;  // ModelConfig::vision_merger_params on every rank
};

// TP must split the attention heads, and the KV heads (kv % tp == 0, or tp % kv == 0
// when replicated) as vLLM's and SGLang's model configs assert. Error names the sizes
// and lists the TP sizes that work.
Status CheckTensorParallel(const ModelConfig& m, int tp, std::string_view framework);
// TP sizes from 1..max that CheckTensorParallel accepts.
std::vector<int> ValidTensorParallelSizes(const ModelConfig& m, int max_tp = 64);

struct WeightEstimate {
  double per_rank_bytes = 0;     // the largest rank (first or last PP stage)
  double loaded_total_bytes = 0; // everything the server loads, summed over one replica
  double config_total_bytes = 0; // our per-tensor estimate before the index correction
  std::optional<double> index_total_bytes;
  double index_scale = 1;        // index (less unloaded extras) / our estimate
  std::string source;            // "config" | "config + index total"
  std::vector<std::string> notes;
};
StatusOr<WeightEstimate> WeightsPerRank(const ModelConfig& m, const Sharding& s);

// Bytes one request's recurrent state takes on one attention-TP rank over every
// linear/mamba layer of the model (mamba_cache_per_req in SGLang's configs/mamba_utils.py
// and model configs): conv state (conv_dim / tp) x (kernel - 1) in bf16 plus the
// temporal/SSM state (heads / tp) x d1 x d2 in `ssm_dtype_bytes` (SGLang's
// --mamba-ssm-dtype defaults to float32). Mamba2 groups are extended to a multiple of
// tp (extra_groups_for_head_shards). 0 when the model has no such layers or their
// shape is unknown.
double MambaStateBytesPerRequest(const ModelConfig& m, int attn_tp, double ssm_dtype_bytes);

// SGLang keeps a separate sliding-window pool (SWAKVPool) for these architectures only
// (configs/model_config.py is_hybrid_swa_model: Llama4ForConditionalGeneration,
// GptOssForCausalLM, MiMoV2Flash, Step3p5, Gemma4); other sliding-window models
// (Gemma-2/3, Mistral) price every layer as full attention. Fills the layer counts.
bool SglangHybridSwa(const ModelConfig& m, int* full_layers, int* swa_layers);

// KV dimensions of the layers one PP stage caches (full + sliding attention layers;
// linear/mamba layers have no per-token KV). dtype_bytes is left at 2.
KvDims KvDimsOf(const ModelConfig& m, int pp);

// What vLLM's profiling run does after the forward pass, by version and engine
// (v1/worker/gpu_model_runner.py profile_run):
// - kEveryToken: V1 before vllm#10957 (2025-02-06; 0.7.3 taken as the first release
//   with it, inferred from the date): compute_logits over every one of the
//   max_num_batched_tokens hidden states, in the model dtype, no sampler ("TODO(woosuk):
//   Consider the memory usage of the sampler");
// - kPerSequence: V1 0.7.3 until vllm#13776 (2025-03-08, 0.8.0): the logits of one
//   token per dummy request (logit_indices), still no sampler;
// - kSampler: V0, and V1 0.8.0-0.15 (_dummy_sampler_run): the sampler over max_num_seqs
//   rows with every sampling feature on, top-k/top-p by PyTorch's sort (38 B a logit);
// - kFlashInferSampler: V1 from vllm#40376 (merged 2026-04-29, after v0.21.0's branch:
//   0.22.0 taken as the first release with it, inferred from the date), which turns
//   FlashInfer's top-k/top-p sampler on by default on CUDA (v1/sample/ops/
//   topk_topp_sampler.py flashinfer_sampler_supported: not with
//   VLLM_USE_FLASHINFER_SAMPLER=0, an unsupported compute capability or <= 16 SMs):
//   the same dummy run, no sort (14 B a logit, model_weights.cc).
// - kTritonTopKTopP: V1 from vllm#33538 (merged 2026-02-17, before v0.16.0's release in
//   early March: 0.16.0 taken as the first release with it, inferred from the date) until
//   FlashInfer's default in 0.22, and from 0.22 wherever FlashInfer's sampler does not run:
//   topk_topp_sampler.py apply_top_k_top_p sends batches of 8 rows or more to
//   topk_topp_triton.py apply_top_k_top_p_triton, which masks the float32 logits in place
//   (no sort; 14 B a logit, model_weights.cc); fewer than 8 rows still sort.
// - kFlashInferProbs: V1 0.8.x where FlashInfer older than 0.2.3 is installed (the
//   vllm/vllm-openai images: 0.2.1.post2 in 0.8.2's Dockerfile): topk_topp_sampler.py
//   (0.8.2-0.8.5) takes FlashInfer unless VLLM_USE_FLASHINFER_SAMPLER=0 and `forward_cuda`
//   samples from `logits.softmax(dtype=float32)` with top_k_top_p_sampling_from_probs:
//   no sort (10 B a logit, model_weights.cc). A pip install has no FlashInfer and sorts;
//   the plan cannot see which (launch_plan.cc says so under `unknown:`).
// At TP > 1 V1 all-gathers the logits (platforms/interface.py use_all_gather;
// distributed/device_communicators/base_device_communicator.py all_gather: a concat
// buffer, then a reshaped copy beside the rank's slice).
enum class VllmLogitsProfile { kSampler, kPerSequence, kEveryToken, kFlashInferSampler, kFlashInferProbs, kTritonTopKTopP };
VllmLogitsProfile VllmLogitsProfileFor(std::string_view version, bool v1);

// Activation peak of vLLM's profiling run per rank (torch peak increase): one forward
// pass of `tokens` tokens (max_num_batched_tokens) plus what follows it (`logits`,
// above) over `seqs` sequences (max_num_seqs). An estimate: the largest per-layer
// intermediates (MLP or fused-MoE caches, attention projections) plus residual copies,
// or the logits/sampler, whichever is larger.
// `moe_caches`: how vLLM's fused-MoE path lays out its caches, by version
// (vllm_fused_moe.h VllmMoeCachesFor; kSeparate, the three caches, for callers outside vLLM).
enum class VllmMoeCaches { kSeparate, kShared13 };
// `eager`: what an eager forward holds by Python's references (vllm_eager_forward.h): the
// model loop's stale layer input beside down_proj's output, gate_up where the model keeps it
// named, and at TP > 1 the out-of-place all-reduce's copy.
struct VllmEagerForward {
  bool eager = false;              // an eager forward whose allocated peak is read (0.6.4 on)
  bool out_of_place = false;       // its TP all-reduces return a new tensor (0.6.5 on, TP > 1)
  bool mlp_keeps_gate_up = false;  // the model's MLP names gate_up until it returns
};
// `moe_tokens`: the tokens the MoE layers see when more than `tokens` (vLLM data parallelism
// gathers every DP rank's batch into them, vllm_fused_moe.h VllmDpMoeTokens); 0 means `tokens`.
double VllmActivationPeakBytes(const ModelConfig& m, int tp, int64_t tokens, int64_t seqs,
                               VllmLogitsProfile logits = VllmLogitsProfile::kSampler,
                               VllmMoeCaches moe_caches = VllmMoeCaches::kSeparate, int64_t moe_tokens = 0,
                               VllmEagerForward eager = {});

// One-line summary for reports: "Qwen3ForCausalLM: 64 layers, hidden 5120, GQA 64/8 x 128, vocab 151936, bf16".
std::string DescribeModel(const ModelConfig& m);

}  // namespace tpt::memory
