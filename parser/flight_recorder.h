// flight_recorder.h: PyTorch flight-recorder dumps read as events of one rank.
//
// With TORCH_NCCL_TRACE_BUFFER_SIZE (TORCH_FR_BUFFER_SIZE) set, torch keeps
// the last collectives of every process group; on a watchdog timeout
// (TORCH_NCCL_DUMP_ON_TIMEOUT=1) or through `_dump_nccl_trace` /
// `_dump_fr_trace` each rank writes them to TORCH_NCCL_DEBUG_INFO_TEMP_FILE
// + its rank: a pickle by default, JSON from `_dump_*_trace_json`. The format
// is torch's (torch/csrc/distributed/c10d/FlightRecorder.hpp, the keys;
// FlightRecorderDetail.hpp, dump_dict/dump_json; "version" 2.2 to 2.10 read).
// A dump is detected by its content (LooksLikeFlightRecorder), never its name;
// the rank is the number its file name ends with, as torch names it.
//
// Events (parser/EVENTS.md): one `fr_dump`, one `fr_pg_status` per process
// group, one `fr_collective` per record, in the dump's order (oldest first).
//
//   auto stream = tpt::ReadFlightRecorder(std::move(source), "nccl_trace_rank_1", 3);
//   while (const tpt::Event* e = stream->NextRef()) Use(*e);
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "parser/event.h"
#include "parser/reader.h"
#include "parser/stream_parser.h"

namespace tpt {

// True when a file's first bytes are a flight-recorder dump: a pickle whose
// top dict starts with torch's keys, or a JSON object with them.
bool LooksLikeFlightRecorder(std::string_view head);

// A Python frame of torch's own code, the launcher's or the interpreter's
// (its file), not the program's: "where" is the first frame that is not.
bool IsLibraryFrame(const std::string& file);

// The rank a dump's file name gives ("nccl_trace_rank_3" -> 3), or -1.
int RankFromDumpName(const std::string& path);

// The largest dump read (bytes, decompressed); a larger one is refused.
inline constexpr size_t kMaxFlightRecorderBytes = size_t{256} << 20;

// Records a dump gives per process group (the newest; collectives and p2p
// counted apart), and of those the ones that keep their Python frames: what
// the wavefront needs (the front, the desync at it, where the rank was),
// whatever TORCH_NCCL_TRACE_BUFFER_SIZE was. A rank's events are thus a small
// summary that does not grow with its records, and the run's store keeps
// them whole (IsDumpSummaryKind): 1,024 ranks of 2,000 records read in
// bounded memory (bench/RESULTS.md "Flight-recorder dumps at scale").
inline constexpr size_t kKeepRecords = 8;
inline constexpr size_t kKeepFrames = 2;

// The kinds a dump gives (fr_dump, fr_pg_status, fr_collective): bounded per
// rank by the reader, so kept whole by ParseRunToMemory (never thinned like a
// log's lines: the wavefront needs every rank's newest records).
bool IsDumpSummaryKind(const std::string& kind);

// Reads the whole dump (bounded) and hands out its events. A dump that
// cannot be read gives no event and an error() naming the file and the
// reason; a cut one gives what was read and an error() saying it was cut.
std::unique_ptr<EventStream> ReadFlightRecorder(std::unique_ptr<ByteSource> source, const std::string& path,
                                                int source_index, const std::vector<std::string>& kinds = {});

// The same over bytes in memory (tests, fuzzing).
std::vector<Event> FlightRecorderEvents(std::string_view bytes, const std::string& path, int source_index,
                                        std::string* error);

}  // namespace tpt
