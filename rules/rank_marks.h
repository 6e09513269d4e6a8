// rank_marks.h: each rank's state for the reports: the phases it reached, its
// first error, its last line, and the marks of its time axis.
//
// One RankState per rank that printed a line, and one for the rank-less lines
// (the launcher's, a server's router); a ranked run's rank-less phase lines are
// kept as phase marks of that state, each named by what printed it
// (rules/line_source.h).
//
//   a.ranks = tpt::BuildRanks(run, /*several_inputs=*/options.inputs.size() > 1);
#pragma once

#include <string>
#include <vector>

#include "rules/analysis.h"
#include "rules/run_index.h"

namespace tpt {

// The startup phase a line of this kind belongs to (parser/events.json), or null.
const char* PhaseOf(const std::string& kind);

// Every rank's state, in rank order (the rank-less state, rank -1, first).
// `several_inputs`: the run was read from more than one file (a rank-less
// line's source then names its file).
std::vector<RankState> BuildRanks(const RunIndex& run, bool several_inputs);

}  // namespace tpt
