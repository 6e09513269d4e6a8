// model_weights.cc: what a ModelConfig costs on a rank: weights per rank under
// TP/PP/EP (the servers' parallel layers, quantized linears with their scales), KV
// dims, vLLM's profiling activation peak, and the one-line description.
// model_config.h has the sharding rules.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <regex>
#include <sstream>

#include "memory/model_config.h"
#include "memory/model_defaults.h"
#include "memory/vllm_fused_moe.h"

namespace tpt::memory {

namespace {

int64_t PadTo(int64_t v, int64_t m) { return (v + m - 1) / m * m; }
int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

bool MatchesSkip(const std::string& name, const std::vector<std::string>& skip) {
  for (const auto& s : skip) {
    if (s.rfind("re:", 0) == 0) {
      try {
        if (std::regex_search(name, std::regex(s.substr(3)))) return true;
      } catch (const std::regex_error&) {
      }
    } else if (!s.empty() && name.find(s) != std::string::npos) {
      return true;
    }
  }
  return false;
}

// Bytes of one model replica's tensors as held by one rank. `tp`, `moe_world` = 1
// gives the unsharded total. Layers [first, last) are on this rank.
struct Tally {
  double bytes = 0;
  double quantized = 0, unquantized = 0;
  double rounding = 0;  // allocator rounding of large tensors (not in `bytes`)
};

class WeightCounter {
 public:
  WeightCounter(const ModelConfig& m, int tp, int attn_tp, int moe_world, bool sglang_ep)
      : m_(m), tp_(tp), attn_tp_(attn_tp), moe_world_(moe_world), sglang_ep_(sglang_ep) {}

  // elements of a linear's weight, `quantizable` if quantization applies to it.
  double Linear(const std::string& name, double elems, bool quantizable = true) {
    bool q = quantizable && m_.quant.linear_bytes > 0 && !MatchesSkip(name, m_.quant.skip);
    if (q && m_.quant.experts_only && name.find("experts") == std::string::npos) q = false;
    if (q && name.find("shared_expert") != std::string::npos && m_.quant.experts_only) q = false;
    double b = elems * (q ? m_.quant.linear_bytes : m_.dtype_bytes);
    t_.bytes += b;
    (q ? t_.quantized : t_.unquantized) += b;
    return b;
  }
  double Plain(double elems) {  // norms, biases, embeddings: 16-bit
    t_.bytes += elems * m_.dtype_bytes;
    t_.unquantized += elems * m_.dtype_bytes;
    return elems * m_.dtype_bytes;
  }
  // One tensor the server allocates (fused qkv, gate_up, an expert stack...). torch's
  // caching allocator gives tensors over 10 MiB their own segment rounded up to 2 MiB;
  // SGLang measures weights with cudaMemGetInfo, so it sees the rounding.
  void Alloc(double bytes) {
    constexpr double kRound = 2.0 * 1024 * 1024, kLarge = 10.0 * 1024 * 1024;
    if (bytes > kLarge) t_.rounding += std::ceil(bytes / kRound) * kRound - bytes;
  }

  void Layer(int i) {
    const std::string p = "model.layers." + std::to_string(i) + ".";
    const double h = m_.hidden;
    const std::string kind = i < static_cast<int>(m_.layer_kind.size()) ? m_.layer_kind[i] : "full";
    Plain(2 * h);  // input/post-attention norms, replicated
    if (kind == "linear") {
      Linear(p + "linear_attn", linear_mixer_params_ / tp_);
    } else if (kind == "mlp") {
      // Nemotron-H MLP-only layer: no mixer.
    } else if (m_.IsMla()) {
      const double qk = m_.qk_nope_head_dim + m_.qk_rope_head_dim;
      if (m_.q_lora_rank > 0) {
        Alloc(Linear(p + "self_attn.q_a_proj", h * m_.q_lora_rank));  // replicated
        Plain(m_.q_lora_rank);
        Alloc(Linear(p + "self_attn.q_b_proj", static_cast<double>(m_.q_lora_rank) * m_.heads * qk / attn_tp_));
      } else {
        Alloc(Linear(p + "self_attn.q_proj", h * m_.heads * qk / attn_tp_));
      }
      Alloc(Linear(p + "self_attn.kv_a_proj_with_mqa", h * (m_.kv_lora_rank + m_.qk_rope_head_dim)));  // replicated
      Plain(m_.kv_lora_rank);
      Alloc(Linear(p + "self_attn.kv_b_proj",
                   static_cast<double>(m_.kv_lora_rank) * m_.heads * (m_.qk_nope_head_dim + m_.v_head_dim) / attn_tp_));
      Alloc(Linear(p + "self_attn.o_proj", static_cast<double>(m_.heads) * m_.v_head_dim * h / attn_tp_));
    } else {
      const double q_cols = static_cast<double>(m_.heads) * m_.head_dim / attn_tp_;
      const double kv_cols = static_cast<double>(KvHeadsPerRank(m_.kv_heads, attn_tp_)) * m_.head_dim;
      Alloc(Linear(p + "self_attn.q_proj", h * q_cols) + Linear(p + "self_attn.k_proj", h * kv_cols) +
            Linear(p + "self_attn.v_proj", h * kv_cols));  // fused qkv_proj
      Alloc(Linear(p + "self_attn.o_proj", q_cols * h));
      if (m_.qkv_bias) Plain(q_cols + 2 * kv_cols);
      if (m_.o_bias) Plain(h);
      if (m_.model_type.find("qwen3") != std::string::npos) Plain(2.0 * m_.head_dim);  // q_norm, k_norm
    }
    const bool moe = i < static_cast<int>(m_.moe_layer.size()) && m_.moe_layer[i];
    if (moe) {
      Linear(p + "mlp.gate", h * m_.experts, /*quantizable=*/false);  // router, replicated, never quantized
      // Routed experts over the MoE group: vLLM EP gives each rank experts/ep whole experts;
      // SGLang EP gives experts/ep and splits each by tp/ep; without EP each expert is split by TP.
      double per_expert = 3.0 * h * m_.moe_intermediate;
      if (moe_pad_hidden_ > 0 || moe_pad_inter_ > 0) {
        // Padded expert shapes (vLLM mxfp4 kernels): hidden and the per-partition width.
        const double split0 = sglang_ep_ ? static_cast<double>(tp_) / moe_world_ : (moe_world_ > 1 ? 1.0 : tp_);
        const int64_t inter_pp = static_cast<int64_t>(m_.moe_intermediate / std::max(split0, 1.0));
        const double hp = moe_pad_hidden_ > 0 ? static_cast<double>(PadTo(m_.hidden, moe_pad_hidden_)) : h;
        const double ip = moe_pad_inter_ > 0 ? static_cast<double>(PadTo(inter_pp, moe_pad_inter_)) : inter_pp;
        per_expert = 3.0 * hp * ip * std::max(split0, 1.0);
      }
      double experts_here = moe_world_ > 1 ? static_cast<double>(CeilDiv(m_.experts, moe_world_)) : m_.experts;
      double split = sglang_ep_ ? static_cast<double>(tp_) / moe_world_ : (moe_world_ > 1 ? 1.0 : tp_);
      if (split < 1) split = 1;
      double experts = Linear(p + "mlp.experts", experts_here * per_expert / split);
      Alloc(experts * 2 / 3);  // w13 (gate and up of every expert), then w2
      Alloc(experts / 3);
      if (m_.shared_experts > 0) {
        double shared = Linear(p + "mlp.shared_experts", 3.0 * h * m_.shared_intermediate * m_.shared_experts / tp_);
        Alloc(shared * 2 / 3);
        Alloc(shared / 3);
      }
    } else if (m_.intermediate > 0) {
      double mlp = Linear(p + "mlp.gate_up_proj", (gated_ ? 3.0 : 2.0) * h * m_.intermediate / tp_);
      Alloc(gated_ ? mlp * 2 / 3 : mlp / 2);
      Alloc(gated_ ? mlp / 3 : mlp / 2);
    }
  }

  void Embedding(bool first_stage, bool last_stage) {
    const double padded = static_cast<double>(PadTo(m_.vocab, 64));
    const double per_rank = std::ceil(padded / tp_) * m_.hidden;
    // Kept whole on every rank (embedding_whole_ / lm_head_whole_): vocab x hidden, unpadded.
    const double whole = static_cast<double>(m_.vocab) * m_.hidden;
    if (first_stage) Alloc(Plain(embedding_whole_ ? whole : per_rank));
    if (last_stage) {
      Plain(m_.hidden);  // final norm
      if (!m_.tied_embeddings || !first_stage || head_copies_tied_) {
        const double head = lm_head_whole_ ? whole : per_rank;
        bool q = m_.quant.method == "compressed-tensors" && !MatchesSkip("lm_head", m_.quant.skip);
        Alloc(q ? Linear("lm_head", head) : Plain(head));
      }
    }
  }

  // The tower split by TP, but for what vLLM keeps whole on every rank (InternVL's projector,
  // and its ViT attention when the heads do not divide by TP: ModelConfig::vision_whole_params).
  void Vision(bool vllm, bool merger_whole) {
    double whole = merger_whole ? m_.vision_merger_params : 0;
    if (vllm) {
      whole = m_.vision_whole_params;
      if (m_.vision_heads > 0 && m_.vision_heads % tp_ != 0) whole += m_.vision_attn_params;
    }
    Plain((m_.vision_params - whole) / tp_ + whole);
  }


  void set_linear_mixer_params(double v) { linear_mixer_params_ = v; }
  void set_gated(bool g) { gated_ = g; }
  // TGI loads a tied head again from the embedding's tensor (TensorParallelHead.load:
  // weights.get_sharded(f"{prefix}.weight"), prefix "...embed_tokens" when
  // tie_word_embeddings; layers/tensor_parallel.py, flash_gemma3_modeling.py,
  // flash_llama_modeling.py v3.3.4): a second copy beside TensorParallelEmbedding's.
  void set_head_copies_tied(bool c) { head_copies_tied_ = c; }
  void set_vocab_whole(bool embedding, bool lm_head) {
    embedding_whole_ = embedding;
    lm_head_whole_ = lm_head;
  }
  void set_moe_padding(int hidden_multiple, int inter_multiple) {
    moe_pad_hidden_ = hidden_multiple;
    moe_pad_inter_ = inter_multiple;
  }
  Tally Take() {
    Tally t = t_;
    t_ = Tally();
    return t;
  }

 private:
  const ModelConfig& m_;
  int tp_, attn_tp_, moe_world_;
  bool sglang_ep_;
  double linear_mixer_params_ = 0;
  bool gated_ = true;
  bool head_copies_tied_ = false;
  bool embedding_whole_ = false, lm_head_whole_ = false;
  int moe_pad_hidden_ = 0, moe_pad_inter_ = 0;
  Tally t_;
};

bool GatedMlp(const std::string& model_type) {
  static const char* kPlain[] = {"gpt2", "gpt_neox", "phi", "starcoder2", "falcon", "bloom", "opt", "gpt_bigcode",
                                 "gptj", "mpt"};
  for (const char* p : kPlain) {
    if (model_type == p) return false;
  }
  // Falcon's older config spellings: the same dense_h_to_4h / GELU / dense_4h_to_h MLP.
  return !IsFalconFamily(model_type);
}

}  // namespace

StatusOr<WeightEstimate> WeightsPerRank(const ModelConfig& m, const Sharding& s) {
  if (s.tp < 1 || s.pp < 1 || s.ep < 1 || s.dp < 1) return InvalidArgumentError("tp, pp, ep and dp must be >= 1");
  WeightEstimate w;
  const bool sglang = s.framework == "sglang";
  const int attn_tp = sglang && s.enable_dp_attention ? std::max(1, s.tp / s.dp) : s.tp;
  const int moe_world = s.ep > 1 ? s.ep : 1;
  const bool sglang_ep = sglang && s.ep > 1;
  const bool gated = GatedMlp(m.model_type);
  const double mixer = m.linear_mixer_params > 0 ? m.linear_mixer_params : 4.0 * m.hidden * m.hidden;

  // vLLM's mxfp4 MoE (quantization/mxfp4.py create_weights) pads the expert shapes for its
  // kernels. Marlin, the backend on GPUs without native FP4 ("Your GPU does not have native
  // support for FP4 computation ... leveraging the Marlin kernel"), needs n % 256 and
  // k % 128: hidden to a multiple of 256, the per-partition width to 128 (gpt-oss-120b:
  // 2880 -> 3072 x 2944; "Model loading took 65.9651 GiB" with vLLM 0.10.1 on an H100,
  // vllm#23278; 0.11.0's "Available KV cache memory: 1.71 GiB" at 0.95 on an H100,
  // vllm#27508, fits Marlin-sized weights too). Hopper uses the Triton backend
  // (triton_kernels, "Using Triton backend") by 0.14.1: from 0.12.0 here (inferred:
  // between the two logs); its swizzled layout holds 64.38 GiB for the same model
  // (vllm#33155), i.e. hidden padded to 256, width to 64. Blackwell's FlashInfer
  // backends pad both to 256. SGLang pads only for FlashInfer.
  int pad_hidden = 0, pad_inter = 0;
  if (m.quant.method == "mxfp4" && s.framework == "vllm" && !s.version.empty()) {
    auto v = ParseVersion(s.version);
    const bool triton_hopper = s.gpu_arch == "hopper" && v.ok() && CompareVersions(*v, {0, 12}) >= 0;
    if (s.gpu_arch == "blackwell") {
      pad_hidden = 256, pad_inter = 256;
    } else if (triton_hopper) {
      pad_hidden = 256, pad_inter = 64;
    } else if (s.gpu_arch != "cdna3") {
      pad_hidden = 256, pad_inter = 128;  // Marlin
    }
  }
  auto count = [&](int tp, int atp, int mw, bool sep, int first, int last, bool first_stage, bool last_stage,
                   bool vision) {
    WeightCounter c(m, tp, atp, mw, sep);
    c.set_gated(gated);
    c.set_head_copies_tied(s.framework == "tgi");
    c.set_vocab_whole(s.embedding_whole && tp > 1, s.lm_head_whole && tp > 1);
    c.set_moe_padding(pad_hidden, pad_inter);
    c.set_linear_mixer_params(mixer);
    for (int i = first; i < last; ++i) c.Layer(i);
    c.Embedding(first_stage, last_stage);
    if (vision) c.Vision(s.framework == "vllm", s.vision_merger_whole);
    return c.Take();
  };

  // Per rank: the first and last PP stages (embedding, LM head), ceil(layers/pp) layers each.
  const int per_stage = static_cast<int>(CeilDiv(m.layers, s.pp));
  double per_rank, rounding;
  if (s.pp == 1) {
    Tally t = count(s.tp, attn_tp, moe_world, sglang_ep, 0, m.layers, true, true, true);
    per_rank = t.bytes;
    rounding = t.rounding;
  } else {
    Tally first = count(s.tp, attn_tp, moe_world, sglang_ep, 0, per_stage, true, false, true);
    Tally last = count(s.tp, attn_tp, moe_world, sglang_ep, m.layers - per_stage, m.layers, false, true, false);
    const Tally& big = first.bytes >= last.bytes ? first : last;
    per_rank = big.bytes;
    rounding = big.rounding;
  }
  // The unsharded total is the checkpoint's size (no kernel padding): it is what the
  // index total is compared with.
  const int keep_h = pad_hidden, keep_i = pad_inter;
  pad_hidden = pad_inter = 0;
  Tally total = count(1, 1, 1, false, 0, m.layers, true, true, true);
  pad_hidden = keep_h, pad_inter = keep_i;
  if (keep_h > 0) {
    w.notes.push_back("vLLM's mxfp4 MoE kernels pad the experts: hidden to a multiple of " + std::to_string(keep_h) +
                      ", the per-rank expert width to " + std::to_string(keep_i));
  }
  w.config_total_bytes = total.bytes;
  w.loaded_total_bytes = total.bytes;
  w.per_rank_bytes = per_rank;
  w.source = "config";
  // The rotary embedding's cos/sin cache (one per model, on every rank, not in the
  // checkpoint): max_position x rotary dim in the model dtype. vLLM's Llama-3.1-8B
  // "Model loading took 14.9888 GiB" is its 16,060,522,496 checkpoint bytes plus this 32 MiB.
  // vLLM's M-RoPE (MRotaryEmbedding) sizes that cache for 4 x max_position ("the maximum
  // index value is related to the duration of the input video. We enlarge
  // max_position_embeddings to 4 times"; rotary_embedding.py 0.7.3-0.10.0,
  // rotary_embedding/mrope.py 0.10.1.1-0.21.0, in the model dtype; 0.7.0 sizes it by
  // max_position, 0.7.1-0.7.2 not read): Qwen3-VL's 262,144 positions x 128 hold 256 MiB,
  // not 64 (Qwen3-VL-30B-A3B at TP 4 on vLLM 0.11.0 logs 14.7708 GiB a rank: the config's
  // tensors, this cache and the deepstack buffers, launch_plan_derive.cc).
  const bool mrope4 = m.mrope && s.framework == "vllm" && !VersionBefore(s.version, {0, 7, 3});
  const double rotary_dim = m.IsMla() ? m.qk_rope_head_dim : m.head_dim;
  double rotary = static_cast<double>(std::min<int64_t>(m.max_position, 1 << 20)) * (mrope4 ? 4 : 1) * rotary_dim *
                  m.dtype_bytes;
  if (mrope4 && m.max_position > 0) {
    w.notes.push_back("vLLM's M-RoPE cos/sin cache holds 4 x max_position_embeddings (" +
                      std::to_string(4 * std::min<int64_t>(m.max_position, 1 << 20)) + " positions): " +
                      FormatGiB(rotary));
  }
  if (s.framework == "vllm" && !mrope4) {
    // vLLM's get_rope keeps one cache per distinct rope (rotary_embedding/__init__.py
    // _ROPE_DICT): a linear rope_scaling caches max_position x factor positions
    // (LinearScalingRotaryEmbedding, linear_scaling_rope.py), and Gemma-3's sliding layers
    // take a second, unscaled one of rope_local_base_freq (gemma3.py Gemma3Attention; read
    // at 4ff865c3, 2026-05). Gemma-3-27B: 256 + 32 MiB, not 32 (its launches on 0.19.0 and
    // 0.26.0 load 0.33 and 0.92 GiB more than the config's tensors and one cache).
    const bool gemma3 = m.model_type == "gemma3" || m.model_type == "gemma3_text";
    const double positions = std::min(static_cast<double>(m.max_position) * m.rope_linear_factor, 16777216.0);
    rotary = positions * rotary_dim * m.dtype_bytes +
             (gemma3 && m.SlidingLayers() > 0 ? std::min<int64_t>(m.max_position, 1 << 20) * rotary_dim * m.dtype_bytes
                                              : 0.0);
  }
  if (m.index_total_bytes) {
    // Checkpoint extras the servers do not load by default: MTP layers (DeepSeek's
    // num_nextn_predict_layers) are in the index but not in the served model.
    double extras = 0;
    if (m.mtp_layers > 0) {
      int mtp_in_index = 0;
      if (m.tensor_names.empty()) {
        mtp_in_index = m.mtp_layers;
      } else {
        for (int k = 0; k < m.mtp_layers; ++k) {
          std::string prefix = "model.layers." + std::to_string(m.layers + k) + ".";
          for (const auto& n : m.tensor_names) {
            if (n.rfind(prefix, 0) == 0) {
              ++mtp_in_index;
              break;
            }
          }
        }
      }
      if (mtp_in_index > 0) {
        ModelConfig mtp = m;
        mtp.layers = m.layers + mtp_in_index;
        mtp.moe_layer.resize(mtp.layers, m.IsMoe());
        mtp.layer_kind.resize(mtp.layers, "full");
        WeightCounter c(mtp, 1, 1, 1, false);
        c.set_gated(gated);
        c.set_linear_mixer_params(mixer);
        for (int i = m.layers; i < mtp.layers; ++i) c.Layer(i);
        extras = c.Take().bytes + mtp_in_index * (2.0 * m.hidden * m.hidden + 2.0 * m.hidden) * m.dtype_bytes;
        w.notes.push_back(std::to_string(mtp_in_index) + " MTP layer(s) in the checkpoint (" + FormatGiB(extras) +
                          ") are not loaded without speculative decoding");
      }
    }
    w.index_total_bytes = *m.index_total_bytes;
    double loaded = *m.index_total_bytes - extras;
    double scale = loaded / (total.bytes > 0 ? total.bytes : 1);
    w.index_scale = scale;
    w.loaded_total_bytes = loaded;
    w.per_rank_bytes = per_rank * scale;
    w.source = "config + index total";
    char buf[200];
    std::snprintf(buf, sizeof(buf), "index total %s; the config's per-tensor estimate %s (%+.1f%%)",
                  FormatGiB(*m.index_total_bytes).c_str(), FormatGiB(total.bytes + extras).c_str(),
                  ((total.bytes + extras) / *m.index_total_bytes - 1) * 100);
    w.notes.push_back(buf);
    if (scale < 0.9 || scale > 1.1) {
      w.notes.push_back("the index and the config disagree by more than 10%: tensors the config does not describe "
                        "(or a quantization it does not state); the index is taken as the truth");
    }
  }
  if (sglang && m.layer_rope_positions > 0 && m.layer_rope_dim > 0) {
    // One cos/sin cache per attention layer on this rank (Grok: ModelConfig::layer_rope_*),
    // kept in fp32 on CUDA (SGLang rotary_embedding.py RotaryEmbedding.__init__, 0.4.x-0.5.x:
    // "NOTE(ByronHsu): cache needs to be in FP32 for numerical stability / if not _is_cuda:
    // cache = cache.to(dtype)"). Grok-2: 64 x 131,072 x 128 x 4 B = 4 GiB a rank, allocated in
    // the model's __init__, so inside SGLang's "mem usage" of the weights.
    const int layers_here = s.pp == 1 ? m.layers : per_stage;
    const double caches = static_cast<double>(layers_here) * m.layer_rope_positions * m.layer_rope_dim * 4.0;
    rotary += caches;
    w.notes.push_back("SGLang grok.py builds a rotary cache in each of " + std::to_string(layers_here) +
                      " layers (" + std::to_string(m.layer_rope_positions) + " positions x " +
                      std::to_string(m.layer_rope_dim) + ", fp32): " + FormatGiB(caches));
  }
  w.per_rank_bytes += rotary;
  w.loaded_total_bytes += rotary;
  if (sglang) {
    // SGLang's "mem usage" is the drop in cudaMemGetInfo while loading: it also sees the
    // caching allocator's rounding and the kernels loaded lazily on first use (about
    // 0.1 GiB: QwQ-32B 15.54 vs 15.27 GiB of tensors + 0.16 GiB rounding on L4; Qwen3-32B
    // 30.60 vs 30.52 GiB with no rounding). vLLM's "Model loading took" counts torch
    // allocations only.
    constexpr double kSglangLoadOverhead = 0.1 * 1024 * 1024 * 1024;
    w.per_rank_bytes += rounding + kSglangLoadOverhead;
    char buf[160];
    std::snprintf(buf, sizeof(buf), "SGLang measures free memory: + %.0f MiB allocator rounding + 102 MiB lazily loaded kernels",
                  rounding / (1024.0 * 1024.0));
    w.notes.push_back(buf);
  }
  if (m.vision_params > 0) {
    std::string split = ", assumed split by TP like the language model";
    if (s.framework == "vllm" && m.vision_whole_params > 0) {
      auto billions = [](double p) {
        char b[32];
        std::snprintf(b, sizeof(b), "%.2fB params", p / 1e9);
        return std::string(b);
      };
      split = ", split by TP but for the projector mlp1 (" + billions(m.vision_whole_params) + ")";
      if (m.vision_heads > 0 && m.vision_heads % s.tp != 0) {
        split += " and the ViT attention (" + billions(m.vision_attn_params) + ": " + std::to_string(m.vision_heads) +
                 " heads do not divide by TP " + std::to_string(s.tp) + ")";
      }
      split += ", whole on every rank (vLLM internvl.py _init_mlp1, intern_vit.py _init_attn)";
    }
    if (s.vision_merger_whole && s.tp > 1) {
      char b[32];
      std::snprintf(b, sizeof(b), "%.3fB params", m.vision_merger_params / 1e9);
      split = ", split by TP but for the patch embedding and the merger (" + std::string(b) +
              "), whole on every rank (LMDeploy's PyTorch engine: nn.Conv3d, nn.Linear)";
    }
    w.notes.push_back("vision/audio tower " + m.vision_note + split);
  }
  return w;
}

double MambaStateBytesPerRequest(const ModelConfig& m, int attn_tp, double ssm_dtype_bytes) {
  const int layers = m.LinearLayers();
  const int tp = std::max(attn_tp, 1);
  if (layers == 0) return 0;
  const double k1 = std::max(m.mamba_conv_kernel - 1, 0);
  double conv = 0, temporal = 0;
  if (m.mamba_kind == "gdn") {
    // Qwen3-Next (configs/qwen3_next.py mamba2_cache_params): conv_dim = key_dim x key_heads
    // x 2 + value_dim x value_heads; temporal (value_heads / tp, key_dim, value_dim).
    const double conv_dim = 2.0 * m.gdn_key_dim * m.gdn_key_heads + static_cast<double>(m.gdn_value_dim) * m.gdn_value_heads;
    conv = conv_dim / tp * k1 * 2;
    temporal = static_cast<double>(m.gdn_value_heads) / tp * m.gdn_key_dim * m.gdn_value_dim * ssm_dtype_bytes;
  } else if (m.mamba_kind == "mamba2") {
    // Mamba2StateShape.create: groups extended to shard with the heads, conv_dim =
    // heads x head_dim + 2 x groups x state; temporal (heads / tp, head_dim, state).
    int groups = m.mamba_groups;
    if (groups % tp != 0) groups += tp - groups;  // extra_groups_for_head_shards
    const double conv_dim = static_cast<double>(m.mamba_heads) * m.mamba_head_dim + 2.0 * groups * m.mamba_state;
    conv = conv_dim / tp * k1 * 2;
    temporal = static_cast<double>(m.mamba_heads) / tp * m.mamba_head_dim * m.mamba_state * ssm_dtype_bytes;
  } else {
    return 0;
  }
  return (conv + temporal) * layers;
}

bool SglangHybridSwa(const ModelConfig& m, int* full_layers, int* swa_layers) {
  static const char* kArchs[] = {"Llama4ForConditionalGeneration", "GptOssForCausalLM", "MiMoV2FlashForCausalLM",
                                 "Step3p5ForCausalLM", "Gemma4ForCausalLM", "Gemma4ForConditionalGeneration"};
  bool listed = false;
  for (const char* a : kArchs) listed = listed || m.architecture == a;
  if (!listed) return false;
  int full = 0, swa = 0;
  if (m.architecture == "Llama4ForConditionalGeneration") {
    // get_hybrid_layer_ids: every 4th layer is global, the others chunked-local.
    for (int i = 0; i < m.layers; ++i) ((i + 1) % 4 == 0 ? full : swa)++;
  } else {
    full = m.FullAttentionLayers();
    swa = m.SlidingLayers();
  }
  if (full == 0 || swa == 0) return false;
  *full_layers = full;
  *swa_layers = swa;
  return true;
}

KvDims KvDimsOf(const ModelConfig& m, int pp) {
  KvDims d;
  d.layers = static_cast<int>(CeilDiv(m.AttentionLayers(), std::max(pp, 1)));
  if (m.IsMla()) {
    d.kv_lora_rank = m.kv_lora_rank;
    d.qk_rope_head_dim = m.qk_rope_head_dim;
  } else {
    d.kv_heads = m.kv_heads;
    d.head_dim = m.head_dim;
  }
  return d;
}

VllmLogitsProfile VllmLogitsProfileFor(std::string_view version, bool v1) {
  if (!v1) return VllmLogitsProfile::kSampler;
  auto v = ParseVersion(version);
  if (!v.ok()) return VllmLogitsProfile::kSampler;  // the newest formulas
  if (CompareVersions(*v, {0, 7, 3}) < 0) return VllmLogitsProfile::kEveryToken;
  if (CompareVersions(*v, {0, 8}) < 0) return VllmLogitsProfile::kPerSequence;
  if (CompareVersions(*v, {0, 22}) >= 0) return VllmLogitsProfile::kFlashInferSampler;
  if (CompareVersions(*v, {0, 16}) >= 0) return VllmLogitsProfile::kTritonTopKTopP;
  return VllmLogitsProfile::kSampler;
}

double VllmActivationPeakBytes(const ModelConfig& m, int tp, int64_t tokens, int64_t seqs,
                               VllmLogitsProfile logits, VllmMoeCaches moe_caches, int64_t moe_tokens,
                               VllmEagerForward eager) {
  const double T = static_cast<double>(tokens), h = m.hidden, e = m.dtype_bytes;
  tp = std::max(tp, 1);
  // Alive across a decoder layer (vLLM's Qwen2/Llama DecoderLayer: the fused
  // add-RMSNorm works in place): the residual stream, the normed input the MLP or
  // attention reads, and its output: 3 x T x h. The widest intermediates come on top
  // (the MLP's gate_up + activation, or qkv + attention output). Qwen2.5-VL-7B-AWQ's V0
  // profile (32,768 tokens; 4.92 GiB logged on a Jetson Orin) is this 4.13 GiB plus the
  // dummy items' embeddings (0.22 GiB) and float32 pixel values (0.57 GiB).
  double residual = 3 * T * h * e;
  double mlp = m.intermediate > 0 ? 3 * T * m.intermediate / tp * e : 0;  // gate_up output + activation
  // fused_moe's caches by version, chunked at the runtime default (32,768 tokens), and fp8's
  // quantized inputs (vllm_fused_moe.h); under data parallelism over every DP rank's tokens,
  // with the gathered hidden states and router logits beside them (VllmDpMoeGatherBytes).
  const double moe = moe_tokens > tokens ? VllmFusedMoeBytes(m, tp, moe_tokens, moe_caches) +
                                               VllmDpMoeGatherBytes(m, moe_tokens)
                                         : VllmFusedMoeBytes(m, tp, tokens, moe_caches);
  double attn_cols = m.IsMla() ? static_cast<double>(m.heads) / tp * (m.qk_nope_head_dim + m.qk_rope_head_dim) * 2 +
                                     m.kv_lora_rank + m.qk_rope_head_dim
                               : (static_cast<double>(m.heads) / tp + 2.0 * KvHeadsPerRank(m.kv_heads, tp)) * m.head_dim +
                                     static_cast<double>(m.heads) / tp * m.head_dim;
  double attn = T * attn_cols * e;
  if (eager.eager && mlp > 0) {
    // An eager forward (vllm_eager_forward.h): at the activation the 3 x T x h above are the
    // model loop's input to the layer (still named by the caller), the residual and the
    // normed tensor the MLP reads; at down_proj they stay, with the activation (and gate_up
    // where the model keeps it), down_proj's output and at TP > 1 the all-reduce's copy.
    const double th = T * h * e, inter = T * m.intermediate / tp * e;
    const double reduced = eager.out_of_place && tp > 1 ? th : 0;
    mlp = std::max(mlp, (eager.mlp_keeps_gate_up ? 3 * inter : inter) + th + reduced);
    attn += reduced;  // o_proj's output and its reduced copy, qkv and the attention output held
  }
  double forward = residual + std::max({mlp, moe, attn});
  if (m.vision_max_patches > 0 && m.vision_hidden > 0) {
    // The profiling run encodes the largest dummy image: one encoder layer's
    // intermediates over every patch (MLP and attention projections, residuals).
    double p = static_cast<double>(m.vision_max_patches);
    double vision = p * (3.0 * m.vision_intermediate + 6.0 * m.vision_hidden) * e;
    forward = std::max(forward, vision + residual);
  }
  // Dummy sampler run over the full vocabulary for every sequence, with top-k and top-p
  // on: its peak is the sort of the float32 logits (PyTorch's native top-k/top-p path,
  // v1/sample/ops/topk_topp_sampler.py apply_top_k_top_p; V0's _apply_top_k_top_p
  // sorts the same way). Alive then, per element: the model-dtype logits the caller
  // keeps (2) and their float32 copy (4); the sort's outputs, values and int64 indices
  // (4 + 8); and inside the sort (aten/src/ATen/native/cuda/SortStable.cu
  // segmented_sort_pairs, 128 rows or more) an int64 iota of the indices (8) and cub's
  // alternate key and value buffers (4 + 8): 38 bytes. The probabilities and the
  // scattered logits come after the sort's temporaries are freed (28 bytes alive then).
  // Logged peaks: vLLM 0.14 V1 at 1,024 sequences 38.5-38.9 bytes per element over three
  // models (Llama-3.1-8B 4.76 GiB, Qwen3-32B 5.64, gpt-oss-20b 7.38), vllm#13882 (V0,
  // 256 x 152,064, 1.42 GiB) 39.2. FlashInfer's sampler, where a version turns it on and
  // it is installed, holds less (no sort): from 0.22 it is the default (below).
  //
  // FlashInfer's sampler (the default from vllm#40376, 0.22): the sampler's float32 copy
  // goes to flashinfer.sampling.top_k_top_p_sampling_from_logits (topk_topp_sampler.py
  // flashinfer_sample, both k and p set by the dummy run), which masks the top-k into a
  // new float32 tensor and takes its softmax before sampling from the probabilities:
  // model-dtype logits (2) + float32 logits (4) + masked logits (4) + probabilities (4),
  // 14 bytes, no sort and no int64 indices.
  //
  // Fewer than 128 rows (2 to 127 dummy requests) take SortStable.cu's other path,
  // segmented_sort_pairs_by_full_sort: two int2 (index, segment) buffers (8 + 8), the
  // sorted keys cub writes for a null output (4) and its alternate key and int2 value
  // buffers (4 + 8) instead of the iota and int64 alternates: 50 bytes. Measured on an
  // H100 (torch 2.11, 2026-12-06, this chain replayed): 50.2-50.6 bytes per element at 2,
  // 64 and 127 rows, 38.02 at 256 and 1,024 rows. One row takes the large-segment path
  // (an int64 iota and int64 alternates): 38.
  //
  // FlashInfer before 0.2.3 under V1 0.8.x (kFlashInferProbs; topk_topp_sampler.py
  // forward_cuda and flashinfer_sample, 0.8.2-0.8.5): the float32 copy's softmax in
  // float32, then top_k_top_p_sampling_from_probs by rejection over 32 rounds of uniform
  // samples: model-dtype logits (2) + float32 logits (4) + probabilities (4) = 10 bytes.
  // When a row's rejection fails, top_k_renorm_prob and top_p_renorm_prob each return a
  // new float32 tensor: the profile is priced without them; the warm-up after the pool may
  // take them where the profile did not (vllm_sampler_warmup.h: its "may fail"). FlashInfer
  // 0.2.0-0.2.2's top_k_first renormalises into one copy even when the sample succeeds (14
  // bytes by that source): not priced here (memory/README.md, task fix22a).
  //
  // The Triton top-k/top-p kernel (kTritonTopKTopP, vllm#33538, 0.16.0 on; read at
  // c656ba3b4 and b92ef9ec5~1, vllm/v1/sample/ops/topk_topp_triton.py
  // apply_top_k_top_p_triton), for 8 rows or more (topk_topp_sampler.py apply_top_k_top_p:
  // `logits.shape[0] >= 8`; fewer sort as above): it masks the float32 logits in place
  // (k.to(int32) and p.to(float32) are one value a row). Alive at the peak, per element:
  // the model-dtype logits the dummy run keeps (e), their float32 copy (sampler.py
  // `logits.to(torch.float32)`: 4, none when the model runs in float32, the copy is the
  // same tensor), then forward_native's `logits.softmax(dim=-1, dtype=float32)` (4) and
  // random_sample's `q = torch.empty_like(probs)` (4; `probs.div_(q)` is in place): 14
  // bytes in bf16, 12 in float32. Beside them the kernel's per-program scratch,
  // `logits.new_empty((size, vocab))` float32 with size = min(next_power_of_2(min(SMs,
  // rows)), SMs), cached: the catalog has no SM count, so 128 rows are priced (H100 SXM has
  // 132, A100 108, B200 148: within 1% of the sampler at 1,024 rows).
  const bool triton = logits == VllmLogitsProfile::kTritonTopKTopP && seqs >= 8;
  const bool few_rows = seqs >= 2 && seqs < (logits == VllmLogitsProfile::kTritonTopKTopP ? 8 : 128);
  const double per_logit = logits == VllmLogitsProfile::kFlashInferSampler ? 14.0
                           : logits == VllmLogitsProfile::kFlashInferProbs ? 10.0
                           : triton                                        ? e + (e == 4 ? 0.0 : 4.0) + 4.0 + 4.0
                                                                           : (few_rows ? 50.0 : 38.0);
  double sampler = static_cast<double>(seqs) * m.vocab * per_logit + T * h * e;
  if (triton) {
    int64_t scratch_rows = 1;
    while (scratch_rows < seqs && scratch_rows < 128) scratch_rows *= 2;
    sampler += static_cast<double>(scratch_rows) * m.vocab * 4.0;
  }
  if (logits == VllmLogitsProfile::kPerSequence || logits == VllmLogitsProfile::kEveryToken) {
    // Early V1: the logits alone, in the model dtype, over every batched token or one
    // row per dummy request, beside the hidden states they come from. At TP > 1 the
    // all-gather holds the rank's slice, the gathered buffer and its reshaped copy.
    // vllm#12569 (Llama-3.1-70B w8a8, 0.7.1 V1, 8,192 tokens x 128,256): 1.96 GiB of
    // logits, which the 1,381 logged blocks leave room for.
    const double rows = logits == VllmLogitsProfile::kEveryToken ? T : static_cast<double>(std::min(seqs, tokens));
    const double gathered = tp > 1 ? 2.0 + 1.0 / tp : 1.0;
    sampler = rows * m.vocab * e * gathered + T * h * e;
  }
  return std::max(forward, sampler);
}

std::string DescribeModel(const ModelConfig& m) {
  std::ostringstream s;
  s << (m.architecture.empty() ? m.model_type : m.architecture) << ": " << m.layers << " layers, hidden " << m.hidden;
  if (m.IsMla()) {
    s << ", MLA " << m.heads << " heads, kv_lora " << m.kv_lora_rank << " + rope " << m.qk_rope_head_dim;
  } else {
    s << ", " << (m.kv_heads == m.heads ? "MHA " : "GQA ") << m.heads << "/" << m.kv_heads << " x " << m.head_dim;
  }
  if (m.IsMoe()) {
    int moe_layers = static_cast<int>(std::count(m.moe_layer.begin(), m.moe_layer.end(), true));
    s << ", MoE " << m.experts << " experts (top " << m.experts_per_tok << ", " << m.moe_intermediate << " wide";
    if (m.shared_experts > 0) s << ", " << m.shared_experts << " shared";
    s << ") in " << moe_layers << " layers";
  }
  if (m.SlidingLayers() > 0) s << ", " << m.SlidingLayers() << " sliding-window layers (" << m.sliding_window << ")";
  if (m.LinearLayers() > 0) s << ", " << m.LinearLayers() << " linear/mamba layers";
  s << ", vocab " << m.vocab << (m.tied_embeddings ? " (tied)" : "");
  s << ", " << (m.quant.method.empty() ? m.torch_dtype : m.quant.scheme);
  if (m.vision_params > 0) s << ", vision tower";
  return s.str();
}

}  // namespace tpt::memory
