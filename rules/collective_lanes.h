// collective_lanes.h: the report's lane per rank of a hung process group,
// from the flight-recorder dumps (rules/hang_wavefront.h decides who waits and
// who is missing; this groups each rank's place into rows).
//
// A rank's place is its last record in the group (seq, op, sizes, state, the
// program frame that called it) and where its stack dump has its main thread.
// Ranks whose places print the same share a row, so 64 or 1,024 ranks read as
// a few rows: "0-2, 4, 5, 7  waiting at seq 4" / "3, 6  MISSING at seq 3".
//
//   std::map<int, const Event*> stacks = MainStacks(events);
//   std::vector<LanePlace> places = ...;  // one a rank
//   lanes.rows = LaneRows(places, stacks);
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "parser/event.h"
#include "rules/analysis.h"

namespace tpt {

// One rank's place in a group.
struct LanePlace {
  int rank = -1;
  std::string mark;               // LaneRow::mark
  int64_t seq = -1;               // its last seq when it has no record (pg_status)
  const Event* record = nullptr;  // its last fr_collective in the group
};

// "0, 2" or, for runs of three or more, "0-16, 18-63".
std::string RankList(const std::set<int>& ranks);

// Each rank's stack_thread event (parser/stack_dump.h) that has program
// frames, its main thread when it has one.
std::map<int, const Event*> MainStacks(const std::vector<Event>& events);

// The innermost program frame of a stack_thread event ("load_next_batch (m.py:16)").
std::string StackTop(const Event& thread);

// The places as rows of ranks that print the same, ordered by first rank.
std::vector<LaneRow> LaneRows(const std::vector<LanePlace>& places, const std::map<int, const Event*>& stacks);

}  // namespace tpt
