// ledger_from_events.h: the per-rank memory ledger of a run (memory/ledger.h LedgerRow),
// read from each rank's startup lines and summed by memory/.
//
//   tpt::RunIndex run(events);
//   std::vector<tpt::LedgerRow> rows = tpt::BuildLedger(run);
#pragma once

#include <vector>

#include "rules/analysis.h"
#include "rules/run_index.h"

namespace tpt {

// One row per rank that printed a memory figure (free at init, weights, KV
// pool or graphs); empty when the log holds none.
std::vector<LedgerRow> BuildLedger(const RunIndex& run);

// Rows (role "draft") of a speculative draft model, one per rank whose draft
// worker printed figures: the draft repeats weight load, pool and capture
// after the target, so its lines are the second of each kind, or carry
// role=draft. Empty when the run has no draft.
std::vector<LedgerRow> DraftLedger(const RunIndex& run);

}  // namespace tpt
