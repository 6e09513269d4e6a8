// model_quant.cc: a checkpoint's quantization config -> bytes per element of its
// quantized linears (model_config_internal.h ParseQuant): fp8 (per-tensor, block), GPTQ,
// AWQ, compressed-tensors, ModelOpt (flat or nested, FP8/NVFP4/W4A8), MXFP4 and
// bitsandbytes; anything else is named in QuantInfo::unsupported, not guessed.
#include <algorithm>
#include <cstdio>

#include "base/strings.h"
#include "memory/model_config_internal.h"

namespace tpt::memory::internal {

// Effective bytes per element of a quantized linear weight, from quantization_config.
void ParseQuant(const json& qc, ModelConfig& m) {
  QuantInfo& q = m.quant;
  if (!qc.is_object()) return;
  std::string method = Lower(Str(qc, "quant_method"));
  if (method.empty() && qc.contains("quant_algo")) method = "modelopt";
  const bool bnb4 = Bool(qc, "load_in_4bit").value_or(false) || Bool(qc, "_load_in_4bit").value_or(false);
  const bool bnb8 = Bool(qc, "load_in_8bit").value_or(false) || Bool(qc, "_load_in_8bit").value_or(false);
  if (method.empty() && (bnb4 || bnb8 || qc.contains("load_in_4bit") || qc.contains("load_in_8bit"))) {
    method = "bitsandbytes";
  }
  // AutoGPTQ's quantize_config.json has no quant_method: GPTQ's bits/group_size, or AWQ's w_bit/q_group_size.
  if (method.empty() && qc.contains("w_bit")) method = "awq";
  if (method.empty() && qc.contains("bits") && qc.contains("group_size")) method = "gptq";
  q.method = method;
  auto add_skip = [&](const char* key) {
    auto it = qc.find(key);
    if (it == qc.end() || !it->is_array()) return;
    for (const auto& e : *it) {
      if (e.is_string()) q.skip.push_back(e.get<std::string>());
    }
  };
  for (const char* k : {"modules_to_not_convert", "ignored_layers", "ignore", "exclude_modules", "llm_int8_skip_modules"}) {
    add_skip(k);
  }
  char buf[128];
  if (method == "fp8" || method == "fbgemm_fp8" || method == "w8a8_fp8") {
    auto it = qc.find("weight_block_size");
    if (it != qc.end() && it->is_array() && it->size() == 2 && (*it)[0].is_number() && (*it)[1].is_number()) {
      double a = (*it)[0].get<double>(), b = (*it)[1].get<double>();
      q.linear_bytes = 1.0 + 4.0 / std::max(a * b, 1.0);  // fp32 scale per block
      std::snprintf(buf, sizeof(buf), "fp8 block %gx%g", a, b);
      q.scheme = buf;
    } else {
      q.linear_bytes = 1.0;
      q.scheme = "fp8 per-tensor/channel";
    }
  } else if (method == "awq" || method == "gptq" || method == "awq_marlin" || method == "gptq_marlin") {
    int bits = Num<int>(qc, {"bits", "w_bit"}).value_or(4);
    int group = Num<int>(qc, {"group_size", "q_group_size"}).value_or(128);
    double g = group > 0 ? group : 4096;  // per-channel: one scale per output column
    // packed weight + fp16 scale and packed zero point per group (+ GPTQ's int32 g_idx, negligible)
    q.linear_bytes = bits / 8.0 + (2.0 + bits / 8.0) / g;
    std::snprintf(buf, sizeof(buf), "%s int%d g%d", method.c_str(), bits, group);
    q.scheme = buf;
    if (Bool(qc, "lm_head").value_or(false)) q.scheme += " (lm_head quantized)";
  } else if (method == "compressed-tensors") {
    const json* w = nullptr;
    auto groups = qc.find("config_groups");
    if (groups != qc.end() && groups->is_object()) {
      for (const auto& [name, g] : groups->items()) {
        if (g.is_object() && g.contains("weights") && g["weights"].is_object()) {
          w = &g["weights"];
          break;
        }
      }
    }
    std::string fmt = Lower(Str(qc, "format"));
    if (w != nullptr) {
      int bits = Num<int>(*w, {"num_bits"}).value_or(8);
      std::string type = Lower(Str(*w, "type"));
      std::string strategy = Lower(Str(*w, "strategy"));
      int group = Num<int>(*w, {"group_size"}).value_or(0);
      bool symmetric = Bool(*w, "symmetric").value_or(true);
      if (type == "float" && bits == 4) {
        q.linear_bytes = 0.5 + 1.0 / (group > 0 ? group : 16);  // nvfp4: fp8 scale per 16
        q.scheme = "nvfp4 g" + std::to_string(group > 0 ? group : 16);
      } else if (type == "float" && bits == 8) {
        q.linear_bytes = 1.0;
        auto bs = w->find("block_structure");
        if (strategy == "block" && bs != w->end() && bs->is_array() && bs->size() == 2) {
          q.linear_bytes += 4.0 / std::max((*bs)[0].get<double>() * (*bs)[1].get<double>(), 1.0);
        }
        q.scheme = "fp8 " + (strategy.empty() ? std::string("tensor") : strategy);
      } else {
        double g = group > 0 ? group : 4096;
        q.linear_bytes = bits / 8.0 + 2.0 / g + (symmetric ? 0.0 : bits / 8.0 / g);
        q.scheme = "int" + std::to_string(bits) + (group > 0 ? " g" + std::to_string(group) : " per-channel");
      }
    } else if (fmt.find("fp4") != std::string::npos) {
      q.linear_bytes = 0.5625;
      q.scheme = fmt;
    } else if (fmt.find("float-quantized") != std::string::npos || fmt.find("int-quantized") != std::string::npos) {
      q.linear_bytes = 1.0;  // 8-bit formats
      q.scheme = fmt;
    } else {
      q.unsupported = "compressed-tensors with no weights scheme in config_groups" +
                      (fmt.empty() ? std::string() : " (format '" + fmt + "')");
    }
    auto kv = qc.find("kv_cache_scheme");
    if (kv != qc.end() && kv->is_object() && Num<int>(*kv, {"num_bits"}).value_or(16) == 8) q.kv_bytes = 1;
  } else if (method == "modelopt" || method == "modelopt_fp4" || method == "modelopt_fp8") {
    // ModelOpt writes {"quantization": {"quant_algo": ...}} (hf_quant_config.json, and
    // config.json's quantization_config in that shape) or a flat {"quant_algo": ...,
    // "quant_method": "modelopt"}; vLLM's quantization/modelopt.py reads both.
    const json& mq = qc.contains("quantization") && qc["quantization"].is_object() ? qc["quantization"] : qc;
    if (&mq != &qc) {
      for (const char* k : {"exclude_modules", "ignore"}) {
        if (auto it = mq.find(k); it != mq.end() && it->is_array()) {
          for (const auto& e : *it) {
            if (e.is_string()) q.skip.push_back(e.get<std::string>());
          }
        }
      }
    }
    std::string algo = Lower(Str(mq, "quant_algo"));
    if (algo.empty() && method != "modelopt") algo = method == "modelopt_fp4" ? "nvfp4" : "fp8";
    const int group = Num<int>(mq, {"group_size"}).value_or(0);
    if (algo == "nvfp4" || algo == "nvfp4_awq" || algo == "fp4") {
      const int g = group > 0 ? group : 16;
      q.linear_bytes = 0.5 + 1.0 / g;  // e2m1 + an fp8 scale per group (+ a per-tensor fp32 scale)
      q.scheme = "modelopt nvfp4 g" + std::to_string(g);
    } else if (algo == "fp8" || algo == "fp8_per_channel_per_token") {
      q.linear_bytes = 1.0;
      q.scheme = "modelopt fp8";
    } else if (algo == "fp8_pb_wo" || algo == "fp8_block") {
      q.linear_bytes = 1.0 + 4.0 / (128.0 * 128.0);
      q.scheme = "modelopt fp8 block 128x128";
    } else if (algo == "w4a8_awq" || algo == "w4a16_awq" || algo == "int4_awq") {
      const int g = group > 0 ? group : 128;
      q.linear_bytes = 0.5 + 2.0 / g;
      q.scheme = "modelopt " + algo + " g" + std::to_string(g);
    } else {
      q.unsupported = "ModelOpt quant_algo '" + (algo.empty() ? std::string("(none)") : algo) +
                      "' (known: FP8, FP8_PB_WO, NVFP4, W4A8_AWQ" +
                      std::string(algo == "mixed_precision" ? "; MIXED_PRECISION sets a scheme per layer" : "") + ")";
    }
    std::string kv_algo = Lower(Str(mq, "kv_cache_quant_algo"));
    if (kv_algo.empty()) kv_algo = Lower(Str(qc, "kv_cache_quant_algo"));
    if (kv_algo.find("fp8") != std::string::npos) q.kv_bytes = 1;
  } else if (method == "mxfp4") {
    q.linear_bytes = 0.5 + 1.0 / 32;  // e2m1 + one e8m0 scale per 32
    q.experts_only = true;
    q.scheme = "mxfp4 (MoE experts)";
  } else if (method == "bitsandbytes") {
    if (!bnb4 && !bnb8) {
      q.unsupported = "bitsandbytes with neither load_in_4bit nor load_in_8bit set";
    } else if (bnb4) {
      bool dq = Bool(qc, "bnb_4bit_use_double_quant").value_or(false);
      q.linear_bytes = 0.5 + (dq ? 1.0 / 64 + 4.0 / (64 * 256) : 4.0 / 64);
      q.scheme = std::string("bnb 4-bit") + (dq ? " double-quant" : "");
    } else {
      q.linear_bytes = 1.0;
      q.scheme = "bnb 8-bit";
    }
  } else if (!method.empty()) {
    q.unsupported = "quant_method '" + method +
                    "' (known: fp8, gptq, awq, compressed-tensors, modelopt, mxfp4, bitsandbytes)";
  }
  if (!q.unsupported.empty()) {
    q.linear_bytes = 0;
    q.method = "";
    m.notes.push_back("quantization not priced: " + q.unsupported + "; weights from the index total");
  }
}

}  // namespace tpt::memory::internal
