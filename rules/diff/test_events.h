// test_events.h: hand-made events for the diff tests (shapes of parser/EVENTS.md).
//
//   std::vector<tpt::Event> run = {Ev("server_args", -1, {{"args", {{"tp_size", "2"}}}}),
//                                  Ev("weights_load_end", 0, {{"avail_bytes", Gib(18.5)}})};
#pragma once

#include <string>
#include <vector>

#include "parser/event.h"

namespace tpt::diff::testing {

inline double Gib(double g) { return g * 1024.0 * 1024.0 * 1024.0; }

inline Event Ev(const std::string& kind, int tp_rank, nlohmann::json fields = nlohmann::json::object(),
                const std::string& family = "sglang") {
  static uint64_t line = 0;
  Event e;
  e.kind = kind;
  e.family = family;
  e.tp_rank = tp_rank;
  e.SetFields(std::move(fields));
  e.file = "test.log";
  e.line = ++line;
  e.text = kind;
  return e;
}

// One SGLang rank's startup up to the KV pool: free after dist init, the
// dist-init usage, the weights' usage (all GiB).
inline void SglangRankStartup(std::vector<Event>& out, int rank, double dist_usage, double free_after_dist,
                              double weights) {
  out.push_back(Ev("dist_init_begin", rank));
  out.push_back(Ev("dist_init_end", rank, {{"usage_bytes", Gib(dist_usage)}}));
  out.push_back(Ev("weights_load_begin", rank, {{"avail_bytes", Gib(free_after_dist)}}));
  out.push_back(Ev("weights_load_end", rank,
                   {{"avail_bytes", Gib(free_after_dist - weights)}, {"weights_bytes", Gib(weights)}}));
}

}  // namespace tpt::diff::testing
