// ledger.h: one row of the per-rank memory ledger, the table `analyze`, `plan`
// and `repro` print (total, free at init, weights, reserved, KV pool, graphs,
// left), and its JSON form. rules/analysis.h carries a vector of them; the
// memory model (memory_model.h BuildLedgerRow) fills them.
//
//   tpt::LedgerRow row = tpt::memory::BuildLedgerRow(rank_memory);
//   if (tpt::IsShort(row)) ...        // left below 0 by more than rounding
//   nlohmann::json j = row;           // byte counts as integers, unknown as null
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include <nlohmann/json.hpp>

namespace tpt {

// One row of the per-rank memory ledger (bytes; negative left = shortfall).
// A figure the log neither printed nor lets us derive is kUnknownBytes (NaN):
// `?` in text, null in JSON, never 0.
inline constexpr double kUnknownBytes = std::numeric_limits<double>::quiet_NaN();
inline bool KnownBytes(double b) { return std::isfinite(b); }
struct LedgerRow {
  int rank = -1;
  std::string role;  // "target" or "draft"
  double total_bytes = 0, free_at_init_bytes = 0, weights_bytes = 0, reserved_bytes = 0,
         kv_pool_bytes = 0, graphs_bytes = 0, left_bytes = 0;
};
// Logs print GB with two decimals: a left within this of 0 is balanced, not short.
inline constexpr double kLedgerToleranceBytes = 0.05 * 1024 * 1024 * 1024;
// SHORT: left is known (every input it needs was read) and below 0 by more than rounding.
inline bool IsShort(const LedgerRow& r) { return KnownBytes(r.left_bytes) && r.left_bytes < -kLedgerToleranceBytes; }

// Byte counts are integers in JSON; an unknown one is null.
inline void to_json(nlohmann::json& j, const LedgerRow& r) {
  auto bytes = [](double b) -> nlohmann::json {
    return KnownBytes(b) ? nlohmann::json(static_cast<int64_t>(std::llround(b))) : nlohmann::json(nullptr);
  };
  j = nlohmann::json{{"rank", r.rank},
                     {"role", r.role},
                     {"total_bytes", bytes(r.total_bytes)},
                     {"free_at_init_bytes", bytes(r.free_at_init_bytes)},
                     {"weights_bytes", bytes(r.weights_bytes)},
                     {"reserved_bytes", bytes(r.reserved_bytes)},
                     {"kv_pool_bytes", bytes(r.kv_pool_bytes)},
                     {"graphs_bytes", bytes(r.graphs_bytes)},
                     {"left_bytes", bytes(r.left_bytes)}};
}
inline void from_json(const nlohmann::json& j, LedgerRow& r) {
  auto bytes = [&](const char* k) {
    auto it = j.find(k);
    return it != j.end() && it->is_number() ? it->get<double>() : kUnknownBytes;
  };
  r.rank = j.value("rank", -1);
  r.role = j.value("role", std::string());
  r.total_bytes = bytes("total_bytes");
  r.free_at_init_bytes = bytes("free_at_init_bytes");
  r.weights_bytes = bytes("weights_bytes");
  r.reserved_bytes = bytes("reserved_bytes");
  r.kv_pool_bytes = bytes("kv_pool_bytes");
  r.graphs_bytes = bytes("graphs_bytes");
  r.left_bytes = bytes("left_bytes");
}

// Byte counts are whole numbers in every JSON document (analyze, plan, diff,
// repro): a number under a key ending in "_bytes" (or "_bytes_per_rank")
// becomes an integer, recursively; null stays null.
inline void WholeBytes(nlohmann::json* j) {
  auto is_bytes_key = [](const std::string& k) {
    auto ends = [&k](const char* s) {
      size_t n = std::char_traits<char>::length(s);
      return k.size() >= n && k.compare(k.size() - n, n, s) == 0;
    };
    return ends("_bytes") || ends("_bytes_per_rank");
  };
  if (j->is_object()) {
    for (auto it = j->begin(); it != j->end(); ++it) {
      if (it->is_number_float() && is_bytes_key(it.key()) && std::isfinite(it->get<double>()))
        *it = static_cast<int64_t>(std::llround(it->get<double>()));
      else if (it->is_structured())
        WholeBytes(&*it);
    }
  } else if (j->is_array()) {
    for (auto& x : *j) WholeBytes(&x);
  }
}

}  // namespace tpt
