// tgi_launcher.cc: TGI v3's defaults before the warm-up (tgi_launcher.h).
//
// Sources (huggingface/text-generation-inference, launcher/src/main.rs unless named):
//   main(): `max_batch_prefill_tokens` when not given (v3.0.0-v3.3.7):
//     default = compute_optimal(config, compute_type).unwrap_or(default_optimal), then
//     min(default, max_position_embeddings) when the config has it, then min(vram_maximum)
//     when that is Some ("Reducing the max batch prefill from {default} to {vram_maximum}"),
//     logged as "Default `max_batch_prefill_tokens` to {value}".
//     default_optimal: 4096 (v3.0.0-v3.1.0); qwen2_vl | qwen2_5_vl 10_000 from v3.1.1;
//     gemma3 8000 from v3.2.0 ("a short term temporary fix to enable vlms to avoid
//     rejecting images").
//   compute_optimal: f16_flop(card) x num_shard / Config::flop(), kept only above 100.
//   Config::flop(): None for a config with vision_config ("VLM are much harder to predict");
//     per token 2 d h (3 heads + 2 kv_heads) + 6 h intermediate (experts_per_tok +
//     shared_experts), x layers; d = head_dim (get_head_dim() from v3.3.0).
//   ComputeType::f16_flop(): RTX4090 82, T4 65, L4 121, L40 181, L40S 363, A10G 125, A40 149,
//     A100 312, H100 900, H200 989 (x 1e12); any other card "Unkown compute for card" -> None.
//   compute_type(): nvidia-smi --query-gpu=gpu_name, lower case, ' ' -> '-', matched exactly
//     against the From<&str> for Gpu table: "nvidia-4090", "nvidia-t4", "nvidia-l4",
//     "nvidia-l40", "nvidia-l40s", "nvidia-a10g", "nvidia-h100-80gb-hbm3",
//     "nvidia-a100-sxm4-80gb", "nvidia-a100" (v3.0.0); "nvidia-a40", "nvidia-h100-nvl",
//     "nvidia-h100", "nvidia-a100-sxm4-40gb", "nvidia-a100-80gb-pcie" from v3.0.2;
//     "nvidia-h200" from v3.1.0. nvidia-smi says "NVIDIA GeForce RTX 4090" and "Tesla T4",
//     so those two entries never match.
//   vram_maximum: (nvidia-smi memory.total x num_shard x cuda_memory_fraction x
//     TGI_WIGGLE_ROOM (the launcher's default 0.95 at every v3 tag) - model_vram) / token_vram;
//     None when the config is quantized (quantization_config.quant_method) or lacks a field.
//     model_vram = 2 x (layers x ((heads + 2 kv) x d + heads x d x hidden + 3 x intermediate x
//     num_local_experts x hidden) + 2 x hidden x vocab) (the q/k/v term is not multiplied by
//     hidden in TGI's code; kept as written); token_vram = kv_heads x 2 x d x 2 x layers +
//     (intermediate + intermediate / 2) x num_local_experts x 2 x 3.
//   The config is read at the top level only (RawConfig -> Config): a VLM whose language
//     model sits in text_config has no heads, layers or max_position_embeddings there.
//   resolve_attention(): flashinfer unless the head dim (config.head_dim, v3.0.0-v3.2.0;
//     get_head_dim(), text_config.head_dim and gemma3's 256, from v3.2.1) is not 64/128/256,
//     or the model is falcon / deepseek_v2: then the fallback, "paged" on compute capability
//     < 8 (or unknown, from v3.1.0) else "flashdecoding". server/text_generation_server/models/
//     globals.py: BLOCK_SIZE 1 (flashinfer), 256 (flashdecoding), 16 (paged).
//   Chunking (server/text_generation_server/models/model.py v3.3.4: off unless flashinfer or
//     flashdecoding; vlm_causal_lm.py v3.0.1-v3.2.3: every VlmCausalLM support_chunking=False;
//     models/__init__.py v3.3.0-v3.3.6: gemma3, qwen2_vl, qwen2_5_vl, mllama pass False).
//     flash_causal_lm.py warmup (v3.0.1-v3.3.6): max_total_tokens, when not given, is
//     min(num_blocks x BLOCK_SIZE, model_max_length, max_position_embeddings) with chunking,
//     else sum(batch.cache_lengths): the warm-up's own tokens.
#include "memory/tgi_launcher.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "memory/memory_model.h"

namespace tpt::memory {
namespace {

struct CardRow {
  const char* catalog;   // GpuCatalog() canonical name
  const char* smi_name;  // nvidia-smi gpu_name as the launcher rewrites it
  double tflops;         // the launcher's f16_flop, 0 when its table has no match
  int since[3];          // first tag whose table matches smi_name
};

// Catalog cards whose nvidia-smi name is known; others are "not in TGI's table".
constexpr CardRow kCards[] = {
    {"H100 SXM 80GB", "nvidia-h100-80gb-hbm3", 900, {3, 0, 0}},
    {"H100 NVL 94GB", "nvidia-h100-nvl", 900, {3, 0, 2}},
    {"H100 PCIe 80GB", "nvidia-h100-pcie", 0, {0, 0, 0}},
    {"H200 141GB", "nvidia-h200", 989, {3, 1, 0}},
    {"H200 NVL 141GB", "nvidia-h200-nvl", 0, {0, 0, 0}},
    {"A100 SXM 80GB", "nvidia-a100-sxm4-80gb", 312, {3, 0, 0}},
    {"A100 SXM 40GB", "nvidia-a100-sxm4-40gb", 312, {3, 0, 2}},
    {"A100 PCIe 80GB", "nvidia-a100-80gb-pcie", 312, {3, 0, 2}},
    {"L4 24GB", "nvidia-l4", 121, {3, 0, 0}},
    {"L40 48GB", "nvidia-l40", 181, {3, 0, 0}},
    {"L40S 48GB", "nvidia-l40s", 363, {3, 0, 0}},
    {"A10G 24GB", "nvidia-a10g", 125, {3, 0, 0}},
    {"A40 48GB", "nvidia-a40", 149, {3, 0, 2}},
    {"RTX 4090 24GB", "nvidia-geforce-rtx-4090", 0, {0, 0, 0}},
    {"RTX 3090 24GB", "nvidia-geforce-rtx-3090", 0, {0, 0, 0}},
    {"RTX A6000 48GB", "nvidia-rtx-a6000", 0, {0, 0, 0}},
    {"T4 16GB", "tesla-t4", 0, {0, 0, 0}},
};

std::string Two(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.2f", v);
  return b;
}

// The launcher's head dim for resolve_attention and flop().
int64_t LauncherHeadDim(std::string_view version, const ModelConfig& m) {
  if (m.top.head_dim > 0) return m.top.head_dim;
  if (VersionBefore(version, {3, 2, 1})) return 0;
  if (m.head_dim > 0) return m.head_dim;  // text_config.head_dim
  return m.model_type == "gemma3" ? 256 : 0;
}

}  // namespace

TgiCard TgiLauncherCard(std::string_view version, std::string_view catalog_name) {
  for (const CardRow& r : kCards) {
    if (catalog_name != r.catalog) continue;
    TgiCard c;
    c.name = r.smi_name;
    if (r.tflops > 0 && !VersionBefore(version, {r.since[0], r.since[1], r.since[2]})) c.f16_flops = r.tflops * 1e12;
    return c;
  }
  return {};
}

TgiPrefillDefault TgiV3DefaultPrefill(std::string_view version, const ModelConfig* m, std::string_view catalog_name,
                                      int num_shard, double total_bytes, double fraction) {
  TgiPrefillDefault d;
  if (m == nullptr) {
    d.tokens = 4096;
    d.why = "TGI v3's default without a readable config.json (launcher/src/main.rs)";
    return d;
  }
  const ModelConfig::TopLevel& t = m->top;
  const int shards = std::max(num_shard, 1);
  int64_t fixed = 4096;
  std::string fixed_why = "the launcher's fixed default";
  if (!VersionBefore(version, {3, 1, 1}) && (m->model_type == "qwen2_vl" || m->model_type == "qwen2_5_vl")) {
    fixed = 10000;
    fixed_why = "the launcher's default for qwen2_vl/qwen2_5_vl from v3.1.1";
  } else if (!VersionBefore(version, {3, 2, 0}) && m->model_type == "gemma3") {
    fixed = 8000;
    fixed_why = "the launcher's default for gemma3 from v3.2.0";
  }
  // compute_optimal
  const TgiCard card = TgiLauncherCard(version, catalog_name);
  const int64_t hd = LauncherHeadDim(version, *m);
  int64_t value = fixed;
  std::string why;
  double flop = 0;
  if (!t.vision_config && t.heads > 0 && t.kv_heads > 0 && hd > 0 && t.hidden > 0 && t.intermediate > 0 && t.layers > 0) {
    const double h = static_cast<double>(t.hidden);
    flop = (2.0 * hd * h * (3.0 * t.heads + 2.0 * t.kv_heads) +
            6.0 * h * static_cast<double>(t.intermediate) * (t.experts_per_tok + t.shared_experts)) *
           static_cast<double>(t.layers);
  }
  const int64_t optimal = card.f16_flops > 0 && flop > 0 ? static_cast<int64_t>(std::floor(card.f16_flops * shards / flop)) : 0;
  if (optimal > 100) {
    value = optimal;
    why = "compute_optimal: " + card.name + "'s f16 " + std::to_string(static_cast<int64_t>(card.f16_flops / 1e12)) +
          " TFLOPS x " + std::to_string(shards) + " / the model's " + Two(flop / 1e9) + " GFLOP a token";
  } else {
    const std::string on = catalog_name.empty() ? std::string("no card named") : std::string(catalog_name);
    why = fixed_why + " (" +
          (t.vision_config       ? "a VLM: the launcher does not estimate its FLOPs; " + on
           : card.name.empty()   ? on + ": nvidia-smi's name unknown to us, taken as not in TGI's table"
           : card.f16_flops <= 0 ? on + ": \"Unkown compute for card " + card.name + "\""
                                 : on + ": the config lacks a field the FLOPs estimate needs") +
          ")";
  }
  if (t.max_position > 0 && t.max_position < value) {
    value = t.max_position;
    why += ", capped at max_position_embeddings " + std::to_string(t.max_position);
  }
  // vram_maximum: any card nvidia-smi reports (known to the FLOPs table or not), an
  // unquantized config with every field. The catalog's total (what torch reports) stands for
  // nvidia-smi's memory.total, which is a few hundred MiB larger on most cards: the cap here
  // can come out a few hundred tokens lower than the launcher's.
  if (total_bytes > 0 && !t.quantized && t.heads > 0 && t.kv_heads > 0 && hd > 0 && t.hidden > 0 &&
      t.intermediate > 0 && t.layers > 0 && t.vocab > 0) {
    const double I = static_cast<double>(t.intermediate), h = static_cast<double>(t.hidden);
    const double layer = (t.heads + 2.0 * t.kv_heads) * hd + static_cast<double>(t.heads) * hd * h + 3.0 * I * t.local_experts * h;
    const double model_vram = 2.0 * (layer * static_cast<double>(t.layers) + 2.0 * h * static_cast<double>(t.vocab));
    const double token_vram = static_cast<double>(t.kv_heads) * 2 * hd * 2 * static_cast<double>(t.layers) +
                              std::floor(I + std::floor(I / 2)) * t.local_experts * 2 * 3;
    const double available = total_bytes * shards * fraction * 0.95;
    if (available > model_vram && token_vram > 0) {
      const int64_t cap = static_cast<int64_t>(std::floor((available - model_vram) / token_vram));
      if (cap < value) {
        value = cap;
        why += ", reduced to the launcher's VRAM estimate (" + Two(available / kGiB) +
               " GiB: the cards x --cuda-memory-fraction x 0.95, less " + Two(model_vram / kGiB) +
               " GiB of weights, at " + std::to_string(static_cast<int64_t>(token_vram)) + " B a token)";
      }
    }
  }
  d.tokens = std::max<int64_t>(value, 1);
  d.why = "TGI " + std::string(version) + "'s default: " + why + "; launcher/src/main.rs";
  return d;
}

// launcher/src/main.rs, get_max_position_embeddings (v2.0.0 l.1297-1317, v2.0.4 l.1351-1372,
// v2.2.0 l.1439-1460; main() from v2.3.0 l.1609-1629): `let max_default = 4096;` and the
// config's max_position_embeddings (v2.0.0-v2.0.3: or max_seq_len; RawConfig from v2.0.4:
// or max_seq_len or n_positions) when not larger, else max_default, whatever flags are given
// (from v2.0.2 the flags only silence the "Model supports up to {max} but tgi will now set
// its default to {max_default}" line); `.unwrap_or(4096)` without one. v2.4.1 keeps the cap
// for the prefill default only (`4096.min(max_position_embeddings)`) and leaves
// max_input_tokens / max_total_tokens to the server.
int64_t TgiV2LauncherMaxPosition(std::string_view version, const ModelConfig* m) {
  if (VersionBefore(version, {2, 0, 0}) || !VersionBefore(version, {2, 4, 1})) return 0;
  constexpr int64_t kMaxDefault = 4096;
  const int64_t mpe = m != nullptr ? m->top.max_position : 0;
  return mpe > 0 ? std::min(mpe, kMaxDefault) : kMaxDefault;
}

// launcher/src/main.rs: `max_input_length` with clap's default 1024 (v0.9.3-v1.4.5);
// from v2.0.0 `match (args.max_input_tokens, args.max_input_length)`: both -> "Both ..."
// (the same at v2.4.1 l.1722, v3.0.0 l.2020, v3.3.6 l.2100), either -> it, neither ->
// max_position_embeddings - 1 ("Default `max_input_tokens` to {value}", v2.0.0-v2.4.0) or
// None (v2.4.1 on).
StatusOr<TgiMaxInput> TgiLauncherMaxInput(std::string_view version, const ModelConfig* m,
                                          std::optional<int64_t> max_input_tokens,
                                          std::optional<int64_t> max_input_length) {
  const bool v1 = VersionBefore(version, {2, 0, 0});
  if (max_input_tokens && v1) {
    return InvalidArgumentError("--max-input-tokens came with TGI v2.0.0; TGI " + std::string(version) +
                                "'s flag is --max-input-length");
  }
  if (max_input_tokens && max_input_length) {
    return InvalidArgumentError("Both `max_input_tokens` (" + std::to_string(*max_input_tokens) +
                                ") and `max_input_length` (" + std::to_string(*max_input_length) +
                                ") are set. Please define only `max_input_tokens` as `max_input_length is deprecated "
                                "for naming consistency. (TGI's launcher refuses both; give --max-input-tokens)");
  }
  TgiMaxInput out;
  if (max_input_tokens || max_input_length) {
    out.tokens = max_input_tokens ? *max_input_tokens : *max_input_length;
    return out;
  }
  if (v1) {
    out.tokens = 1024;
    out.why = "--max-input-length 1024 (TGI's default before v2.0; launcher/src/main.rs v0.9.3-v1.4.5)";
    return out;
  }
  const int64_t cap = TgiV2LauncherMaxPosition(version, m);
  if (cap <= 0) return out;
  out.tokens = cap - 1;
  const int64_t mpe = m != nullptr ? m->top.max_position : 0;
  out.why = "--max-input-tokens " + std::to_string(out.tokens) + " (TGI " + std::string(version) +
            "'s default: " +
            (mpe > 0 ? "min(max_position_embeddings " + std::to_string(mpe) + ", 4096) - 1"
                     : std::string("4096 - 1 without a max_position_embeddings")) +
            ", whatever --max-total-tokens is; launcher/src/main.rs get_max_position_embeddings, v2.0.0-v2.4.0)";
  return out;
}

// resolve_attention (launcher/src/main.rs, read at v2.3.0, v2.3.1, v2.4.0, v2.4.1, v3.0.1-v3.3.7):
// flashinfer by default from v2.3.0 (before it the server's paged attention); flashdecoding
// when the head dim is not 64/128/256 or the model is falcon, deepseek_v2 (and gemma2 at
// v2.3.x: "gemma2 needs bfloat16 which is not supported by flashinfer ?"); from v2.3.1 that
// fallback is paged on cards below sm 8.0 (get_cuda_capability), and on an unknown card
// from v3.1.0.
std::string TgiLauncherAttention(std::string_view version, const ModelConfig* m, int sm) {
  if (VersionBefore(version, {2, 3, 0})) return "paged";
  if (m == nullptr) return "flashinfer";
  const int64_t hd = LauncherHeadDim(version, *m);
  const bool supported = hd == 64 || hd == 128 || hd == 256;
  const bool forced = m->model_type == "falcon" || m->model_type == "deepseek_v2" ||
                      (m->model_type == "gemma2" && VersionBefore(version, {2, 4, 0}));
  if (supported && !forced) return "flashinfer";
  if (VersionBefore(version, {2, 3, 1})) return "flashdecoding";
  const bool unknown_sm = sm <= 0;
  if ((sm > 0 && sm < 80) || (unknown_sm && !VersionBefore(version, {3, 1, 0}))) return "paged";
  return "flashdecoding";
}

int TgiBlockSize(std::string_view attention) {
  if (attention == "flashinfer") return 1;
  if (attention == "flashdecoding") return 256;
  return 16;
}

bool TgiV3SupportsChunking(std::string_view version, const ModelConfig* m, std::string_view attention) {
  if (attention != "flashinfer" && attention != "flashdecoding") return false;
  if (m == nullptr || !m->top.vision_config) return true;
  if (VersionBefore(version, {3, 3, 0})) return false;
  const std::string& t = m->model_type;
  return !(t == "gemma3" || t == "qwen2_vl" || t == "qwen2_5_vl" || t == "mllama");
}

}  // namespace tpt::memory
