// plan_values.cc: the small value helpers of repro_plan.h (per-rank figures,
// sizes and lists read and written), apart from the plan's JSON so that the
// files completing a plan (plan_figures.cc) use them without a cycle.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <sstream>

#include "repro/repro_plan.h"

namespace tpt::repro {

bool HasKvFormula(const std::string& framework) {
  return framework == "sglang" || framework == "vllm" || framework == "tgi" || framework == "lmdeploy" ||
         framework == "trtllm";
}

int64_t FreeAtInit(const Plan& p, int rank) {
  if (rank >= 0 && rank < static_cast<int>(p.free_at_init_per_rank.size())) return p.free_at_init_per_rank[rank];
  return p.free_at_init_bytes;
}

int64_t Weights(const Plan& p, int rank) {
  if (rank >= 0 && rank < static_cast<int>(p.weights_per_rank.size())) return p.weights_per_rank[rank];
  return p.weights_bytes;
}

StatusOr<int64_t> ParseSize(const std::string& text, BareNumber bare) {
  auto b = ParseWholeBytes(text, bare);
  if (!b.ok()) return b.status();
  if (*b > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return InvalidArgumentError("'" + text + "' is too large a size");
  return static_cast<int64_t>(*b);
}

StatusOr<std::vector<int>> ParseIntList(const std::string& text) {
  std::vector<int> out;
  std::stringstream ss(text);
  std::string item;
  auto bad = [&] { return InvalidArgumentError("'" + text + "' is not a list like 1,2,4,8 or 1-8,16"); };
  while (std::getline(ss, item, ',')) {
    if (item.empty()) return bad();
    const size_t dash = item.find('-', 1);
    char* end = nullptr;
    const long a = std::strtol(item.c_str(), &end, 10);
    if (end == item.c_str()) return bad();
    long b = a;
    if (dash != std::string::npos) {
      if (end != item.c_str() + dash) return bad();
      const char* bs = item.c_str() + dash + 1;
      b = std::strtol(bs, &end, 10);
      if (end == bs) return bad();
    }
    if (*end != '\0' || a < 0 || b < a || b - a > 4096) return bad();
    for (long v = a; v <= b; ++v) out.push_back(static_cast<int>(v));
  }
  if (out.empty()) return bad();
  return out;
}

std::string FormatBytes(int64_t bytes) {
  char buf[64];
  const double a = std::fabs(static_cast<double>(bytes));
  if (a >= kGiB) {
    std::snprintf(buf, sizeof buf, "%.2f GiB", bytes / double(kGiB));
  } else if (a >= kMiB) {
    std::snprintf(buf, sizeof buf, "%.1f MiB", bytes / double(kMiB));
  } else {
    std::snprintf(buf, sizeof buf, "%lld B", static_cast<long long>(bytes));
  }
  return buf;
}

}  // namespace tpt::repro
