// run_index.h: the events of one run, indexed for rules (run_index.cc), and
// the Scope rule expressions are evaluated in (run_scope.cc).
//
// RunIndex is built once per run: events by kind, ranks, the configuration
// merged from server_args events, env vars, framework and version.
// RunScope binds one anchor event (the error a rule explains) plus the rule's
// own names, and answers the names and functions listed in rules/README.md.
//
//   tpt::RunIndex run(events);
//   tpt::RunScope scope(run, anchor_index);
//   scope.Set("f", 0.5);
//   tpt::Value v = expr->Eval(scope);
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "parser/event.h"
#include "parser/parser.h"
#include "rules/expr.h"

namespace tpt {

class RunIndex {
 public:
  // `totals` (ParseRunToMemory's): what the run held beyond `events`, when
  // only part of it was kept; null when `events` is the whole run.
  explicit RunIndex(const std::vector<Event>& events, const RunTotals* totals = nullptr);

  const std::vector<Event>& events() const { return events_; }
  // Indices into events() of one kind, in stream order (empty when none).
  const std::vector<size_t>& OfKind(const std::string& kind) const;
  const std::set<int>& ranks() const { return ranks_; }  // ranks >= 0 that printed anything
  // Events of the whole run, kept or not: all, of one kind, of one kind
  // before events()[index], printed by one rank (-1: rank-less).
  uint64_t total_events() const { return total_events_; }
  // Ranks that printed anything, kept or not (ranks() holds the kept ones).
  size_t rank_count() const { return std::max(ranks_.size(), totals_ ? totals_->RanksSeen() : size_t{0}); }
  uint64_t CountOf(const std::string& kind) const;
  uint64_t CountBefore(const std::string& kind, size_t index) const;
  uint64_t DroppedOfRank(int rank) const;

  const nlohmann::json& config() const { return config_; }  // merged server_args fields + args
  const std::map<std::string, std::string>& env() const { return env_; }
  const std::string& framework() const { return framework_; }
  const std::string& version() const { return version_; }
  const std::string& gpu() const { return gpu_; }
  double gpu_total_bytes() const { return gpu_total_bytes_; }
  // The GPU model an environment dump beside the log names (rules/environment.h:
  // the dump's events are not in events()); only gpu_sm() reads it, and only
  // when the log itself names no GPU.
  const std::string& host_gpu() const { return host_gpu_; }
  void set_host_gpu(std::string gpu) { host_gpu_ = std::move(gpu); }
  int ConfigInt(const char* key) const;  // 0 when not printed
  // How many ranks the run has: the largest NCCL communicator, tp x pp, or the
  // highest rank seen + 1, whichever is largest; 0 when no rank is known.
  int WorldSize() const { return world_size_; }
  // Some event's text (or traceback line) holds `needle`, case-insensitive;
  // cached, since a rule may ask for every one of its anchors.
  bool AnyText(const std::string& needle) const;
  // Indices into events() of one input stream (Event::source), in stream order.
  const std::vector<size_t>& OfSource(int source) const;
  // Indices into events() printed on one line of one input stream, in index
  // order (empty when none). A record closed later (a cut traceback, emitted
  // when its producer moved on) is not next to the other events of its first
  // line in events(), so neighbours in events() do not find them all.
  const std::vector<size_t>& OnLine(int source, uint64_t line) const;

  // What a rule function computes over the whole run, built on first ask and
  // kept (a function asked at each of thousands of anchors stays O(events)).
  template <class T>
  const T& Cached(const std::string& key, const std::function<T()>& build) const {
    auto& slot = cache_[key];
    if (!slot) slot = std::make_shared<T>(build());
    return *static_cast<const T*>(slot.get());
  }

 private:
  const std::vector<Event>& events_;
  std::map<std::string, std::vector<size_t>> by_kind_;
  std::set<int> ranks_;
  uint64_t total_events_ = 0;
  const RunTotals* totals_ = nullptr;
  std::map<std::string, uint64_t> dropped_of_kind_;
  std::map<int, uint64_t> dropped_of_rank_;
  nlohmann::json config_ = nlohmann::json::object();
  std::map<std::string, std::string> env_;
  std::string framework_, version_, gpu_;
  double gpu_total_bytes_ = 0;
  std::string host_gpu_;
  int world_size_ = 0;
  mutable std::map<std::string, bool> any_text_cache_;  // one run is analysed by one thread
  mutable std::map<std::string, std::shared_ptr<void>> cache_;
  mutable std::map<int, std::vector<size_t>> by_source_;  // built on first OfSource
  mutable std::map<std::pair<int, uint64_t>, std::vector<size_t>> by_line_;  // built on first OnLine
};

// What rule and finding expressions are evaluated in: the run, one anchor
// event (kNoAnchor: the run as a whole) and the file's own names. Functions
// come from the one table of rules/functions.h.
class RunScope : public Scope {
 public:
  static constexpr size_t kNoAnchor = static_cast<size_t>(-1);
  RunScope(const RunIndex& run, size_t anchor) : run_(run), anchor_(anchor) {}

  void Set(const std::string& name, Value v) { vars_[name] = std::move(v); }
  const std::map<std::string, Value>& vars() const { return vars_; }

  Value Lookup(std::string_view name) const override;
  Value Call(std::string_view name, const std::vector<Value>& args) const override;

  // What rule files may name (checked when a rule is loaded); functions:
  // rules/functions.h FindFunction.
  static bool IsVariable(std::string_view name);
  static bool IsKnownKind(std::string_view kind);  // parser/events.json

  const RunIndex& run() const { return run_; }
  size_t anchor() const { return anchor_; }
  // `e` is on the anchor's rank, or rank-less; always true without an anchor
  // or when the anchor has no rank.
  bool SameRank(const Event& e) const {
    if (anchor_ == kNoAnchor) return true;
    int r = run_.events()[anchor_].rank;
    return r < 0 || e.rank < 0 || e.rank == r;
  }

 private:
  const RunIndex& run_;
  size_t anchor_;
  std::map<std::string, Value> vars_;
};

// An event's text with its continuation (traceback) lines.
std::string FullText(const Event& e);

// A JSON field value as an expression Value (arrays of numbers give their maximum).
Value JsonToValue(const nlohmann::json& j);

// Kinds that mean something went wrong (parser/events.json `failure`).
bool IsFailureKind(std::string_view kind);

// "0.4.3.post4" vs "0.4.10": numeric dotted compare; <0, 0, >0.
int CompareVersions(std::string_view a, std::string_view b);

}  // namespace tpt
