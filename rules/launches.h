// launches.h: one run or many? Inputs that hold different runs, and a log in
// which the server started several times (restart loops, concatenated logs).
//
// Called by rules/analyzer.cc on a run's parsed events, before the rules:
//   - DifferentRuns: the input files are not one run (their configurations
//     conflict: TP size, model, memory fraction; or their clocks do not
//     overlap by hours). analyze refuses and points at --runs: never one
//     merged verdict over two runs.
//   - SplitLaunches: one file in which the server started more than once:
//     a start line (server_args) after the previous launch failed or was up
//     (ready, serving). Each launch is analysed on its own; the last one gives
//     the verdict.
//   - FoldersWithOwnStarts: a directory given as one run whose subfolders
//     each hold a start of the server: likely one run a folder (a CI
//     artifacts tree); analyze says so and points at --runs.
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

// For an input directory `dir`: its subfolders (first level) whose files hold
// a start line (server_args), sorted; fewer than 2 means nothing to say.
std::vector<std::string> FoldersWithOwnStarts(const std::string& dir, const std::vector<Event>& events);

}  // namespace tpt
