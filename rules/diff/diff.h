// diff.h: compare a working launch with a failing one (`tptriage diff`).
//
// Compare() takes the facts of a GOOD and a BAD run (run_facts.h) and finds
//  - every difference: configuration (flags, environment, TP/PP/DP/EP, model,
//    GPU), versions, memory per rank and phase, and events (errors, phases);
//  - the first phase where the runs diverge (init, dist_init, weights,
//    kv_pool, graphs, ready, serving);
//  - an attribution: which difference explains the bad run's failure, with
//    numbers, and why each other difference cannot (too small, wrong phase).
// Memory failures are attributed by counterfactuals through the memory model
// (memory/memory_model.h): the bad run's KV arithmetic is recomputed with
// one difference reverted to the good run's value; a difference explains the
// failure when reverting it alone makes the bad run fit.
//
//   auto good = tpt::diff::CollectFacts(good_events);
//   auto bad = tpt::diff::CollectFacts(bad_events);
//   tpt::diff::DiffResult r = tpt::diff::Compare(good, bad);
//   nlohmann::json j = r;              // differences[], diverges_at, attribution
//   return r.exit_code;                // 0 healthy / 1 attributed / 3 not attributed
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "rules/diff/run_facts.h"

namespace tpt::diff {

inline constexpr int kDiffSchemaVersion = 1;

// Memory differences smaller than this are noise between two launches of the
// same configuration (allocator rounding, CUDA context growth): they are listed
// but do not mark the phase where the runs diverge.
inline constexpr double kMaterialBytes = 256.0 * 1024 * 1024;

struct Difference {
  std::string key;   // "flag.mem_fraction_static", "env.NCCL_P2P_DISABLE", "version.sglang",
                     // "memory.free_at_init.rank2", "error.not_enough_memory", "phase.reached"
  nlohmann::json good, bad;  // null when absent from that run
  std::string kind;  // "config" | "memory" | "version" | "event"
  std::string phase; // phase the difference belongs to ("" for launch configuration)
  std::optional<double> delta_bytes;  // memory: bad - good
  int rank = -1;     // memory: the rank (-1 for every rank alike)
};

struct RuledOut {
  std::string key;
  std::string reason;  // with the size: "adds 24.0 MiB a rank against a 20.00 GiB shortfall"
};

struct Attribution {
  std::string cause;        // key of the explaining difference ("" when none)
  std::string explanation;  // one or two sentences with numbers
  std::vector<RuledOut> ruled_out;
};

// The KV-pool arithmetic of one run as its version computes it (memory model).
struct KvArithmetic {
  bool computed = false;
  std::string framework, version, era;
  std::string formula;     // e.g. "rest = avail_after_weights - free_at_init x (1 - mem_fraction_static)"
  std::string arithmetic;  // the formula with the run's numbers: "18.48 - 78.48 x (1 - 0.51) = -19.98 GiB"
  nlohmann::json inputs = nlohmann::json::object();   // bytes / fractions fed to the model
  nlohmann::json results = nlohmann::json::object();  // what the model computed
  double budget_bytes = 0;     // SGLang rest / vLLM KV bytes (negative = shortfall)
  double shortfall_bytes = 0;  // > 0 when the model says the run cannot start
  bool fails = false;
  std::string note;            // inputs borrowed from the other run, model errors
};

struct DiffResult {
  int schema_version = kDiffSchemaVersion;
  RunFacts good, bad;
  std::vector<Difference> differences;
  std::string diverges_at;  // "" when the runs do not diverge
  KvArithmetic good_kv, bad_kv;
  Attribution attribution;
  std::vector<std::string> warnings;
  int exit_code = 0;  // 0 no failure-relevant difference, 1 attributed, 3 not attributed
};

DiffResult Compare(const RunFacts& good, const RunFacts& bad);

// The KV arithmetic of `run`, with inputs the run did not print taken from
// `other` (the other run of the pair) when both ran the same model and TP.
KvArithmetic ComputeKv(const RunFacts& run, const RunFacts* other);

void to_json(nlohmann::json& j, const Difference& d);
void to_json(nlohmann::json& j, const RuledOut& r);
void to_json(nlohmann::json& j, const Attribution& a);
void to_json(nlohmann::json& j, const KvArithmetic& k);
void to_json(nlohmann::json& j, const DiffResult& r);
// The per-rank memory table of a run, keyed by quantity name then rank.
nlohmann::json MemoryTable(const RunFacts& f);
// Human-readable sizes: "20.00 GiB", "24.0 MiB".
std::string FormatBytes(double bytes);

}  // namespace tpt::diff
