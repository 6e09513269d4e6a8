// rank_resolve.h: run-level rank resolution, after every stream is parsed.
//
// Prefixes often say only part of who printed a line: SGLang `DP1 TP3` sets
// dp_rank/tp_rank, vLLM `(Worker_PP1_TP3 pid=N)` only a process name (the
// ray_actor wrapper strips it). Rules group by Event::rank, so this step
//   1. fills dp/pp/tp/ep ranks from process names (`_DP(\d+)`, `_PP(\d+)`,
//      `_TP(\d+)`, `_EP(\d+)`) where the prefix left them unset, and
//   2. sets a global rank where rank is -1 and tp_rank is known: tp_rank when
//      the run's tp ranks never repeat across (dp, pp) (SGLang DP attention:
//      TP is already global), else (dp * pp_size + pp) * tp_size + tp with
//      sizes from a server_args event, else the largest rank seen + 1.
// The rule is documented in parser/README.md ("Ranks").
//
//   tpt::ResolveRanks(&run.events);   // ParseRunToMemory does this
#pragma once

#include <vector>

#include "parser/event.h"

namespace tpt {

void ResolveRanks(std::vector<Event>* events);

}  // namespace tpt
