// launches.h: one run or many? Inputs that hold different runs, and a log in
// which the server started several times (restart loops, concatenated logs).
//
// Called by rules/analyzer.cc on a run's parsed events, before the rules:
//   - DifferentRuns: the input files are not one run (their configurations
//     conflict: TP size, model, memory fraction; or their clocks do not
//     overlap by hours). analyze refuses and points at --runs: never one
//     merged verdict over two runs.
//   - SplitLaunches: one file in which the server started more than once:
//     a start line (server_args) after the previous launch had got somewhere
//     (a phase reached, a failure). Each launch is analysed on its own; the
//     last one gives the verdict.
//
//   auto why = tpt::DifferentRuns(run.events);      // "" when one run
//   auto parts = tpt::SplitLaunches(run.events);    // begin indices, >= 1 entry
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "parser/event.h"

namespace tpt {

// A sentence naming the files and what differs, or "" when the files can be
// one run (one file, or nothing conflicts).
std::string DifferentRuns(const std::vector<Event>& events);

// Indices into `events` where each launch begins (the first is 0). Only for a
// run read from one file; events of other files keep one launch.
std::vector<size_t> SplitLaunches(const std::vector<Event>& events);

}  // namespace tpt
