// hang_wavefront.h: where each rank stood in its collectives, from the
// flight-recorder dumps beside the logs (parser/flight_recorder.h).
//
// Per process group, each rank's last collective sequence id (the records'
// collective_seq_id and the dump's pg_status last_enqueued_collective, the
// larger). The front is the highest; a rank below it never scheduled the
// collective the others started and wait in: the hang's missing rank. Where it
// was comes from the frames of its own last record. At one sequence id, ranks
// that recorded different ops or input sizes called different collectives:
// a desync, named rank by rank. The result is added to the run as events the
// rules read like any other (rules/defs/fr_hang_wavefront.json anchors
// `collective_wavefront`, collective_desync.json `collective_mismatch`), each
// placed at the dump record it comes from, so the evidence quotes the records.
// A rank whose dump was cut before its records and without pg_status is never
// called missing: its place is unknown. A rank that pg_config names but that
// left no dump at all is missing "with no dump" (while the front is not
// completed where it was reached). Send/recv records pair per peer by count:
// the k-th send of a to b with the k-th recv of b from a; the rank behind
// never posted the op its peer waits in (a pending op whose peer has none
// pending towards it, where a dump wrapped).
//
//   std::vector<CollectiveLanes> lanes;
//   AddCollectiveWavefront(&run->events, &run->totals, &lanes);
//   RunIndex index(run->events, &run->totals);
#pragma once

#include <vector>

#include "parser/event.h"
#include "parser/parser.h"
#include "rules/analysis.h"

namespace tpt {

// Appends the wavefront's events (none without fr_collective events of two
// ranks or more) and keeps `totals` consistent. Returns how many were added.
// With `lanes`, adds there each hung (or desynced) group's lane per rank
// (rules/collective_lanes.h) for the report.
size_t AddCollectiveWavefront(std::vector<Event>* events, RunTotals* totals,
                              std::vector<CollectiveLanes>* lanes = nullptr);

}  // namespace tpt
