// run_facts.h: what one run's events say, in the shape `tptriage diff` compares.
//
// RunFacts gathers, from the typed events of one run (parser/EVENTS.md), its
// configuration (flags, environment, versions, parallel sizes, model, GPU),
// the startup phases it completed, its first own error, and a per-rank memory
// ledger (bytes) at each startup phase. Nothing here knows about the other run.
//
//   std::vector<tpt::Event> events = ...;          // ParseRunToMemory(...)->events
//   tpt::diff::RunFacts facts = tpt::diff::CollectFacts(events);
//   if (facts.failure) Print(facts.failure->kind, facts.failure->phase);
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "parser/event.h"
#include "rules/vocabulary.h"

namespace tpt::diff {

// Phases (startup and serving, in order) and PhaseIndex: rules/vocabulary.h.

// One rank's memory at each startup phase, in bytes; unset when the log does
// not say. "free" values are what the server measured as free on the device.
struct RankMemory {
  std::optional<double> free_at_init;          // before distributed init
  std::optional<double> dist_init_usage;       // taken by distributed init (NCCL, custom all-reduce)
  std::optional<double> free_after_dist_init;  // SGLang's pre_model_load_memory / "Load weight begin"
  std::optional<double> weights_usage;         // taken by loading weights
  std::optional<double> free_after_weights;    // SGLang "Load weight end. avail mem"
  std::optional<double> kv_pool;               // K + V bytes of the pool
  std::optional<double> free_after_kv_pool;
  std::optional<double> graphs_usage;          // taken by CUDA-graph capture
  std::optional<double> left;                  // free after the last startup phase logged
};

// The quantities of RankMemory that diff compares, with the phase each belongs to.
struct MemoryQuantity {
  const char* name;   // difference key part, e.g. "free_at_init"
  const char* label;  // table row label
  const char* phase;
  std::optional<double> RankMemory::*field;
};
extern const MemoryQuantity kMemoryQuantities[];
extern const int kNumMemoryQuantities;

// The first error a run printed itself (not launcher noise).
struct Failure {
  std::string kind;   // event kind, e.g. "not_enough_memory"
  std::string phase;  // phase in progress when it happened
  std::string file;
  uint64_t line = 0;
  int rank = -1;
  std::string text;
  nlohmann::json fields = nlohmann::json::object();
};

struct RunFacts {
  std::string framework;  // "sglang", "vllm", ... ("" when no line says)
  std::string version;    // version of `framework`
  // Configuration by difference key: "flag.<name>", "env.<NAME>", "version.<component>",
  // and the summary keys "framework", "tp", "pp", "dp", "ep", "model", "gpu",
  // "gpu_total_bytes", "custom_all_reduce" (effective state from the log).
  std::map<std::string, nlohmann::json> config;
  // Keys of `config` read from lines printed during startup (custom all-reduce
  // state, GPU, profiled figures) rather than from the launch arguments: a run
  // that died before printing them says nothing about them.
  std::set<std::string> observed;
  std::map<int, RankMemory> ranks;   // by rank; -1 when the log names no rank
  std::vector<bool> completed = std::vector<bool>(Phases().size(), false);  // by PhaseIndex
  std::optional<Failure> failure;
  std::map<std::string, int> event_counts;  // kind -> events
  // vLLM's own profile figures when printed (memory_profile fields, bytes).
  nlohmann::json profile = nlohmann::json::object();
  // The rules engine's verdict on the run (rules/analysis.h root_cause), when
  // the caller ran it; "" when not.
  std::string root_cause;

  // Last phase completed ("" when none), and the first one not completed.
  std::string LastPhase() const;
  // Typed reads of config; nullopt when absent or not a number / bool.
  std::optional<double> Number(const std::string& key) const;
  std::optional<bool> Bool(const std::string& key) const;
  // Min over ranks of a memory quantity (what the servers all-reduce with MIN).
  std::optional<double> MinOverRanks(std::optional<double> RankMemory::*field) const;
};

// Event kinds that are a run's own failure (parser/EVENTS.md "Errors"). A
// generic one (a Python exception, a signal) is the failure only when no
// specific error kind appears in the run: "Scheduler hit an exception" comes
// before the line that says what happened.
bool IsErrorKind(const std::string& kind);
bool IsGenericErrorKind(const std::string& kind);

// Turns a value read from a log ("True", "0.85", "None", 4) into JSON with the
// type it means, so that "0.85" and 0.85 compare equal.
nlohmann::json NormalizeValue(const nlohmann::json& v);

RunFacts CollectFacts(const std::vector<Event>& events);

// Records the rules engine's root cause for the run; when the run shows no
// error event of its own but the engine found a failure (root cause other than
// "none"), that failure stands in, in the first phase the run did not complete.
void SetRootCause(RunFacts& facts, const std::string& root_cause, const std::string& verdict);

}  // namespace tpt::diff
