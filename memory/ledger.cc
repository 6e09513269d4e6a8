// ledger.cc: per-rank memory ledger rows and the CUDA-graph batch-size remedy.
#include <algorithm>
#include <cmath>

#include "memory/memory_model.h"

namespace tpt::memory {

LedgerRow BuildLedgerRow(const RankMemory& m) {
  LedgerRow row;
  row.rank = m.rank;
  row.role = m.role;
  row.total_bytes = m.total_bytes;
  row.free_at_init_bytes = m.free_at_init_bytes;
  row.weights_bytes = m.weights_bytes;
  row.reserved_bytes = m.reserved_bytes;
  row.kv_pool_bytes = m.kv_pool_bytes;
  row.graphs_bytes = m.graphs_bytes;
  // SGLang captures graphs inside the (1 - f) slice it kept back (sglang-source.md §1.1):
  // they only cost extra where they outgrow it.
  // Its request table is paid from the same slice, before the graphs (sglang_request_table.h).
  const double inside = m.graphs_bytes + m.reserved_use_bytes;
  double held_back = m.graphs_inside_reserved ? std::max(m.reserved_bytes, inside) : m.reserved_bytes + inside;
  row.left_bytes = m.free_at_init_bytes - m.weights_bytes - m.other_bytes - m.kv_pool_bytes - held_back;
  return row;
}

std::vector<LedgerRow> BuildLedger(const std::vector<RankMemory>& ranks) {
  std::vector<LedgerRow> rows;
  rows.reserve(ranks.size());
  for (const auto& m : ranks) rows.push_back(BuildLedgerRow(m));
  std::stable_sort(rows.begin(), rows.end(), [](const LedgerRow& a, const LedgerRow& b) {
    if (a.role != b.role) return a.role == "target";  // target rows first, then draft
    return a.rank < b.rank;
  });
  return rows;
}

StatusOr<int> LargestGraphBatchSize(const std::vector<GraphMemPoint>& points, double budget_bytes, int max_candidate,
                                    const std::vector<int>& candidates) {
  if (points.empty()) return InvalidArgumentError("CUDA-graph model: no measured (batch size, memory) point");
  for (const auto& p : points) {
    if (p.max_bs <= 0 || p.bytes < 0 || !std::isfinite(p.bytes)) {
      return InvalidArgumentError("CUDA-graph model: a point needs batch size > 0 and memory >= 0 (got bs " +
                                  std::to_string(p.max_bs) + ")");
    }
  }
  if (max_candidate <= 0) return InvalidArgumentError("CUDA-graph model: max batch size must be > 0");
  // Graph memory grows with the largest captured batch (activations and outputs are
  // sized for it; smaller batches share the pool, anchors-allreduce.md §4.1):
  // bytes(bs) = intercept + slope x bs, least squares over distinct batch sizes.
  double intercept = 0, slope = 0;
  double n = static_cast<double>(points.size());
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const auto& p : points) {
    sx += p.max_bs;
    sy += p.bytes;
    sxx += static_cast<double>(p.max_bs) * p.max_bs;
    sxy += p.max_bs * p.bytes;
  }
  double denom = n * sxx - sx * sx;
  if (points.size() >= 2 && denom > 0) {
    slope = (n * sxy - sx * sy) / denom;
    intercept = (sy - slope * sx) / n;
  } else {
    slope = sy / sx;  // one point (or one batch size): proportional through zero
  }
  if (slope <= 0) {
    // Memory does not grow with batch size: any batch fits iff the fixed part does.
    bool fits = intercept <= budget_bytes;
    if (!fits) return 0;
    if (!candidates.empty()) return *std::max_element(candidates.begin(), candidates.end());
    return max_candidate;
  }
  double bs_fit = std::floor((budget_bytes - intercept) / slope + 1e-9);
  if (bs_fit < 1) return 0;
  int limit = static_cast<int>(std::min<double>(bs_fit, max_candidate));
  if (candidates.empty()) return limit;
  int best = 0;
  for (int c : candidates) {
    if (c >= 1 && c <= limit) best = std::max(best, c);
  }
  return best;
}

}  // namespace tpt::memory
