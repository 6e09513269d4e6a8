// units.cc: versions, dtypes and parameter counts for the memory model (sizes:
// base/units.h, the one grammar of every input).
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "base/strings.h"
#include "base/units.h"
#include "memory/memory_model.h"

namespace tpt::memory {
StatusOr<std::vector<int>> ParseVersion(std::string_view text) {
  std::string_view s = Trim(text);
  if (!s.empty() && (s.front() == 'v' || s.front() == 'V')) s.remove_prefix(1);
  std::vector<int> parts;
  size_t i = 0;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) {
    int value = 0;
    size_t start = i;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])) && i - start < 6) {
      value = value * 10 + (s[i] - '0');
      ++i;
    }
    parts.push_back(value);
    // Only "." followed by a digit continues the number: "0.4.3.post4" stops at ".post4".
    if (i + 1 < s.size() && s[i] == '.' && std::isdigit(static_cast<unsigned char>(s[i + 1]))) {
      ++i;
    } else {
      break;
    }
  }
  if (parts.empty()) {
    return InvalidArgumentError("version '" + std::string(text) +
                                "' has no version number; write it like 0.4.3.post4 or 0.10.1");
  }
  return parts;
}

int CompareVersions(const std::vector<int>& a, const std::vector<int>& b) {
  size_t n = std::max(a.size(), b.size());
  for (size_t i = 0; i < n; ++i) {
    int x = i < a.size() ? a[i] : 0;
    int y = i < b.size() ? b[i] : 0;
    if (x != y) return x < y ? -1 : 1;
  }
  return 0;
}

StatusOr<double> KvDtypeBytes(std::string_view kv_cache_dtype, std::string_view model_dtype) {
  std::string d = Lower(Trim(kv_cache_dtype));
  if (d == "auto" || d.empty()) {
    if (Lower(model_dtype) == "auto") return 2.0;  // models ship bf16/fp16 weights
    return KvDtypeBytes(model_dtype, "bf16");
  }
  if (d.rfind("torch.", 0) == 0) d = d.substr(6);
  if (d == "bf16" || d == "bfloat16" || d == "fp16" || d == "float16" || d == "half") return 2.0;
  if (d == "fp32" || d == "float32" || d == "float") return 4.0;
  if (d.rfind("fp8", 0) == 0 || d.rfind("float8", 0) == 0 || d == "int8") return 1.0;
  if (d.rfind("fp4", 0) == 0 || d == "nvfp4" || d.rfind("float4", 0) == 0) return 0.5;
  return InvalidArgumentError("KV cache dtype '" + std::string(kv_cache_dtype) +
                              "' is not known; use auto, bf16, fp16, fp32, fp8 (fp8_e4m3, fp8_e5m2) or fp4");
}

StatusOr<double> WeightDtypeBytes(std::string_view dtype) {
  std::string d = Lower(Trim(dtype));
  if (d.rfind("torch.", 0) == 0) d = d.substr(6);
  if (d == "bf16" || d == "bfloat16" || d == "fp16" || d == "float16" || d == "half" || d == "auto") return 2.0;
  if (d == "fp32" || d == "float32") return 4.0;
  if (d.rfind("fp8", 0) == 0 || d == "int8" || d == "w8a8") return 1.0;
  if (d == "fp4" || d == "nvfp4" || d == "mxfp4" || d == "int4" || d == "awq" || d == "gptq" || d == "w4a16") {
    return 0.5;
  }
  return InvalidArgumentError("weight dtype '" + std::string(dtype) +
                              "' is not known; use bf16, fp16, fp32, fp8, int8, fp4, int4, awq or gptq");
}

double WeightsPerRankBytes(double params, double dtype_bytes, int tp) {
  return params * dtype_bytes / std::max(tp, 1);
}

double DefaultFreeAtInit(double total_bytes, int tp) {
  double free = total_bytes - kTorchContextBytes;
  if (tp > 1) free -= kNcclCommBytes;
  if (tp == 2 || tp == 4 || tp == 6 || tp == 8) free -= kCustomAllReduceBytes;
  return free;
}

int KvHeadsPerRank(int kv_heads, int attn_tp) { return std::max(1, kv_heads / std::max(attn_tp, 1)); }

StatusOr<double> ParseParamCount(std::string_view text) {
  auto nu = SplitNumberUnit(text);
  if (!nu) {
    return InvalidArgumentError("parameter count '" + std::string(text) + "' is not a number; write it like 70B or 350M");
  }
  if (nu->unit.empty()) return nu->number;
  if (nu->unit == "k") return nu->number * 1e3;
  if (nu->unit == "m") return nu->number * 1e6;
  if (nu->unit == "b" || nu->unit == "g") return nu->number * 1e9;
  if (nu->unit == "t") return nu->number * 1e12;
  return InvalidArgumentError("parameter count '" + std::string(text) + "' has an unknown suffix '" + nu->unit +
                              "'; use K, M, B or T (e.g. 70B)");
}

std::string FormatGiB(double bytes) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.2f GiB", bytes / kGiB);
  return buf;
}

bool VersionBefore(std::string_view version, const std::vector<int>& at) {
  auto v = ParseVersion(version);
  return v.ok() && CompareVersions(*v, at) < 0;
}

std::vector<int> VersionWithPost(std::string_view version) {
  auto v = ParseVersion(version);
  std::vector<int> out = v.ok() ? *v : std::vector<int>{};
  out.resize(3, 0);
  const size_t at = version.find(".post");
  int post = 0;
  if (at != std::string_view::npos) {
    for (size_t i = at + 5; i < version.size() && std::isdigit(static_cast<unsigned char>(version[i])); ++i) {
      post = post * 10 + (version[i] - '0');
    }
  }
  out.push_back(post);
  return out;
}

}  // namespace tpt::memory
