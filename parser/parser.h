// parser.h: read the logs of one run and turn them into events.
//
// Inputs are files, directories (their logs, recursively), "-" for stdin,
// .gz/.xz/.zst files and archives (.zip, .tar.*) read like the folder they
// unpack to, one member at a time (parser/reader.h). Streams of one incident
// merge by timestamp where lines have one, else keep file order. Memory stays bounded whatever the input size.
//
//   auto formats = tpt::FormatSet::LoadBuiltin();        // parser/format_set.h
//   tpt::ParseOptions opts;
//   auto run = tpt::ParseRunToMemory({"rank0.log", "rank1.log.gz"}, *formats, opts);
//   for (const tpt::Event& e : run->events) ...
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "parser/event.h"
#include "parser/reader.h"
#include "base/status.h"

namespace tpt {

class FormatSet;  // parser/format_set.h

struct ParseOptions {
  // Long-line policy: a line longer than this is cut; the first
  // max_line_bytes are matched, the rest skipped without being held.
  size_t max_line_bytes = 1 << 20;
  size_t buffer_bytes = 1 << 20;    // read buffer; tests run it down to 1 byte
  // Inputs open at once (file descriptors and read buffers). A run of more
  // files is read this many at a time: ParseRunToMemory merges what it keeps
  // by time as if all were open; ParseRun's sink gets each group merged by
  // time, one group after the other.
  size_t max_open_inputs = 64;
  // Told of every read of every input (a progress line); null: none. Not
  // owned; called on the reading thread.
  ReadObserver* progress = nullptr;
  std::vector<std::string> kinds;   // keep only these kinds (empty = all)
  // ParseRunToMemory keeps the first and last N events of each producer's
  // kind (see ParsedRun); batch_stats and http_access count as one producer.
  size_t keep_high_volume = 1000;  // N for batch_stats and http_access
  size_t keep_per_group = 1000;    // N for every other kind, per producer
  // What the kept events may cost (estimated); past it every N is halved,
  // down to 1, so memory follows the run's shape (kinds x producers), not its length.
  size_t keep_bytes = size_t{40} << 20;
  // Decompressed bytes one run may read (reader.h SetExpandedByteBudget).
  uint64_t max_input_bytes = kDefaultMaxExpandedBytes;
};

// What happened to one input stream.
struct InputReport {
  std::string path;
  uint64_t bytes = 0;   // decompressed bytes read
  uint64_t lines = 0;
  uint64_t events = 0;
  uint64_t long_lines = 0;  // lines cut by the long-line policy
  std::string error;        // empty when read fine; else names the input and what to do
  bool empty = false;       // the input held no byte at all (read whole: nothing lost)
};

// True when a file of this name inside an input directory is read as a log
// of the run (by its extension, or a text file without one).
bool ReadFromDirectory(const std::string& path);

// What a person must be told about one input that was read only in part: its
// read error (truncated .gz, missing file, ...) and lines cut by the long-line
// policy. Every command prints these words (analyze also puts them in its
// reports).
std::string LongLineWarning(const InputReport& report, const ParseOptions& options);  // "" when none
std::vector<std::string> InputWarnings(const InputReport& report, const ParseOptions& options);

// Parse every input of one run and deliver events to `sink` in merged order.
// Returns an error only when nothing could be read; per-input problems are in
// `reports` (one per stream actually opened or attempted).
Status ParseRun(const std::vector<std::string>& inputs, const FormatSet& formats,
                const ParseOptions& options, EventSink* sink, std::vector<InputReport>* reports);

// What a run held beyond the events kept in memory.
struct RunTotals {
  uint64_t events = 0;  // every event parsed, kept or not
  // `count` events of `kind` by one producer were not kept; all of them came
  // before events[before] (that producer's oldest kept event past the gap;
  // events.size() when none), which also says who printed them.
  struct Dropped {
    std::string kind;
    size_t before = 0;
    uint64_t count = 0;
  };
  std::vector<Dropped> dropped;
  // rank_seen[r] != 0 when some event of rank r was parsed, kept or not
  // (ranks below kMaxRanksSeen, as the line printed them).
  static constexpr int kMaxRanksSeen = 1 << 16;
  std::vector<uint8_t> rank_seen;
  size_t RanksSeen() const;
};

// The same, collected in memory for the rules engine, bounded whatever the
// input's length: for each producer (kind, rank, local/tp/dp/pp rank, pid,
// process, stream) the first and the last N events are kept in stream order
// and the ones between counted (`totals`, `dropped`). What rules read of a
// kind (its first and last values, who printed it, what came before and after
// an error) stays exact; a log under N events per producer is kept whole.
struct ParsedRun {
  std::vector<Event> events;
  std::vector<InputReport> inputs;
  nlohmann::json dropped = nlohmann::json::object();  // kind -> events not kept
  RunTotals totals;
  std::map<std::pair<std::string, int>, int> process_ranks;  // (host, pid) -> rank (ResolveRanks)
};
StatusOr<ParsedRun> ParseRunToMemory(const std::vector<std::string>& inputs, const FormatSet& formats,
                                     const ParseOptions& options);

}  // namespace tpt
