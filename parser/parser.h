// parser.h: read the logs of one run and turn them into events.
//
// Inputs are files, directories (their logs, recursively), "-" for stdin and
// .gz files. Streams of one incident merge by timestamp where lines have one,
// else keep file order. Memory stays bounded whatever the input size.
//
//   auto formats = tpt::FormatSet::LoadBuiltin();        // parser/format_set.h
//   tpt::ParseOptions opts;
//   auto run = tpt::ParseRunToMemory({"rank0.log", "rank1.log.gz"}, *formats, opts);
//   for (const tpt::Event& e : run->events) ...
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "parser/event.h"
#include "parser/status.h"

namespace tpt {

class FormatSet;  // parser/format_set.h

struct ParseOptions {
  // Long-line policy: a line longer than this is cut; the first
  // max_line_bytes are matched, the rest skipped without being held.
  size_t max_line_bytes = 1 << 20;
  size_t buffer_bytes = 1 << 20;    // read buffer; tests run it down to 1 byte
  std::vector<std::string> kinds;   // keep only these kinds (empty = all)
  // ParseRunToMemory: first and last N kept of each high-volume kind.
  size_t keep_high_volume = 1000;
};

// What happened to one input stream.
struct InputReport {
  std::string path;
  uint64_t bytes = 0;   // decompressed bytes read
  uint64_t lines = 0;
  uint64_t events = 0;
  uint64_t long_lines = 0;  // lines cut by the long-line policy
  std::string error;        // empty when read fine; else names the input and what to do
};

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

// The same, collected in memory for the rules engine. High-volume kinds
// (batch_stats, http_access) are capped (first and last N kept, plus counts in
// `dropped`) so memory stays bounded.
struct ParsedRun {
  std::vector<Event> events;
  std::vector<InputReport> inputs;
  nlohmann::json dropped = nlohmann::json::object();  // kind -> events not kept
};
StatusOr<ParsedRun> ParseRunToMemory(const std::vector<std::string>& inputs, const FormatSet& formats,
                                     const ParseOptions& options);

}  // namespace tpt
