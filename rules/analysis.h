// analysis.h: what `tptriage analyze` concludes about one run, as data.
//
// rules/ fills an Analysis from events; report/ renders it (text, json,
// markdown, junit, sarif, github, html); repro/ reads its `repro` plan back.
// The JSON form (schema_version 1) is documented in README.md and is the
// machine interface: field names here are the JSON keys.
//
//   tpt::Analysis a = ...;
//   nlohmann::json j = a;                 // to JSON
//   auto back = j.get<tpt::Analysis>();   // and back
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "memory/ledger.h"
#include "memory/remedy.h"

namespace tpt {

inline constexpr int kSchemaVersion = 1;
// A verdict whose diagnosis is less sure than this reads "Possible: ..." and
// names the runner-up (rules/verdict.cc).
inline constexpr double kSureEnough = 0.7;

struct Evidence {
  std::string file;
  uint64_t line = 0;
  int rank = -1;
  std::string text;  // the whole line (up to rules/evidence_read.h kMaxEvidenceBytes)
  // Keys of the line's values the diagnosis read (rules/evidence_read.h), for
  // showing a long argument dump by its start and these; not in the JSON.
  std::vector<std::string> read = {};
};

struct RuledOut {
  std::string id;      // the suspect, e.g. "custom_allreduce_buffers"
  std::string reason;  // with a number: "allocates ~24 MiB a rank against a 25.3 GiB shortfall"
};

struct Diagnosis {
  std::string id;           // root-cause id from the taxonomy
  std::string rule;         // rule id from rules/defs
  double confidence = 0;    // 0..1
  std::string title;
  std::string explanation;  // one-sentence root cause with numbers, placeholders filled
  std::vector<Evidence> evidence;
  nlohmann::json figures = nlohmann::json::object();
  std::vector<RuledOut> ruled_out;
  std::vector<Remedy> remedy;
  nlohmann::json repro = nlohmann::json::object();  // plan parameters for `tptriage repro`
  bool consequence = false;  // a consequence of another diagnosis (ranked below causes)
  int rank = -1;             // the rank it blames: the rule's `suspect_rank` figure, else its anchor's; -1 unknown
  // The terminal failure it explains (rules/terminal.h): the line that ended
  // a process, which the diagnosis's own line is, precedes in that process, or
  // leads to through a named link; line 0 when nothing ended (a hang, a cut log).
  Evidence explains;
};

struct Finding {
  std::string id;        // finding rule id
  std::string severity;  // "warning" | "info"
  std::string title;
  std::vector<Evidence> evidence;
  nlohmann::json figures = nlohmann::json::object();
  std::string advice;
};

// A moment in one rank's life, for the time axis of reports: the first line
// of a phase, a warning, an error or a timeout, with the line itself.
inline constexpr size_t kMaxRankMarks = 24;  // warnings and errors kept a rank (phases are few)

// What printed a line that carries no rank, as the line names it
// (rules/line_source.h): the lane of the reports' time axis and rank rows.
// Set on the rank-less state's marks only; not in the JSON.
struct LineSource {
  std::string label;  // "shard 1", "engine core", "launcher", "GPU 0000:81:00"; "" when the line names nothing
  std::string what;   // a sentence for a hover: whose lines these are and what in the line says so
};

struct RankMark {
  double ts = 0;                 // seconds; 0 when the line has no time
  bool time_of_day = false;      // ts counts from midnight (the log printed no date)
  std::string type;              // "phase" | "warning" | "error" | "timeout"
  std::string label;             // the phase name or the event kind
  Evidence evidence;
  LineSource source;             // rank-less lines: what printed it (not in the JSON)
};

struct RankState {
  int rank = -1;                    // -1: the lines of no rank (the launcher / main process of a ranked run)
  std::string role = "rank";        // "rank", or "launcher" for the rank -1 row of a run that has ranks
  std::string host;
  std::vector<std::string> phases;  // phases reached in order: init, dist_init, weights, kv_pool, graphs, ready, serving
  std::string last_phase;
  std::string first_error;          // event kind of its first own error ("" if none)
  Evidence first_error_evidence;
  double first_ts = 0, last_ts = 0; // 0 when the log has no timestamps
  double first_error_ts = 0;
  uint64_t events = 0;
  Evidence last_evidence;           // its last line understood (where it stopped)
  double last_line_ts = 0;          // that line's time (0 unknown); time_of_day as in marks
  bool last_line_time_of_day = false;
  std::vector<RankMark> marks;      // in log order; phases, then at most kMaxRankMarks warnings/errors
  // Rank-less lines: what printed the first error and the last line (not in the JSON).
  LineSource first_error_source, last_source;
};

struct RunInfo {
  std::string framework;  // "sglang", "vllm", "tgi", "trtllm", "lmdeploy", "torch", "nccl", ""
  std::string version;
  int tp = 0, pp = 0, dp = 0, ep = 0;  // 0 = not known
  std::string gpu;
  nlohmann::json config = nlohmann::json::object();  // configuration read from the log
  std::vector<std::string> inputs;                   // files analysed
  // Facts only environment dumps give (rules/environment.h); empty / 0 when none.
  std::string driver, cuda;
  std::string topology;              // "NVLink (NV18)", "PCIe only, no NVLink (PIX, SYS)"
  int64_t gpu_memory_bytes = 0;      // the card's total (nvidia-smi -q)
  std::vector<std::string> environment;  // inputs that were environment dumps, not logs
};

// One start of the server in a log that holds several (restart loops,
// concatenated logs): where it began and what it concluded.
struct Launch {
  int index = 0;            // 1-based
  std::string file;
  uint64_t first_line = 0;  // its start line
  std::string root_cause;
  std::string verdict;
};

// Where each rank of a process group stood against its stuck collective,
// from the flight-recorder dumps beside the logs (rules/collective_lanes.h):
// ranks in the same place share a row, so 1,024 ranks stay a few rows.
struct LaneRow {
  std::string ranks;          // "0-2, 4, 5, 7"
  int count = 0;              // how many ranks
  // "waiting": scheduled the stuck collective (or posted the p2p op waited on);
  // "missing": never scheduled it (never posted the op its peer waits in);
  // "no_dump": named by the group's pg_config, left no dump; "unknown": its
  // dump was cut before its place; "": a rank of the group in neither role.
  std::string mark;
  int64_t seq = -1;           // its last sequence id in the group (p2p seq when p2p); -1 none
  bool p2p = false;           // its last record is a send/recv
  std::string op;             // its last record's op ("gloo:all_reduce"); "" when its dump holds none
  std::string input_sizes;    // as torch records them ("[[4096]]")
  std::string state;          // scheduled, started, completed
  std::string called_from;    // the first frame of the program in that record
  std::string stack;          // where its stack dump has it (innermost program frame); "" none given
  Evidence evidence;          // that record (of the row's first rank)
};

struct CollectiveLanes {
  std::string pg;             // process group name ("0")
  std::string pg_desc;        // "default_pg"
  bool p2p = false;           // read against a point-to-point op (seq is its p2p seq)
  int64_t seq = -1;           // the stuck collective's sequence id: the column rows are read against
  std::string op, input_sizes;  // the stuck collective as a rank that reached it recorded it
  std::vector<LaneRow> rows;  // by first rank
};

struct Analysis {
  int schema_version = kSchemaVersion;
  // taxonomy id, "none" healthy, "unknown" unexplained failure, "no_evidence"
  // nothing understood (no phase, no server line): never called healthy
  std::string root_cause = "none";
  std::string verdict;              // one line for a person
  std::string signature;            // stable grouping id (report/grouping)
  RunInfo run;
  std::vector<RankState> ranks;
  std::vector<LedgerRow> ledger;
  std::vector<Diagnosis> diagnoses;  // ranked: primary first
  std::vector<Finding> findings;
  std::vector<std::string> warnings; // inputs that could not be read, etc.
  // (host, pid) -> the rank its NCCL communicator gave it (not in the JSON):
  // `tptriage log` tags that process's lines with it, as the analysis did.
  std::map<std::pair<std::string, int>, int> process_ranks;
  std::vector<Launch> launches;      // when the server started more than once: each start, the last analysed above
  std::vector<CollectiveLanes> collective_lanes;  // flight-recorder dumps given: a group's lanes where it hangs or desyncs
};

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Evidence, file, line, rank, text)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(RuledOut, id, reason)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Diagnosis, id, rule, confidence, title, explanation,
                                                evidence, figures, ruled_out, remedy, repro, consequence, rank, explains)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Finding, id, severity, title, evidence, figures, advice)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(RankMark, ts, time_of_day, type, label, evidence)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(RankState, rank, role, host, phases, last_phase, first_error,
                                                first_error_evidence, first_ts, last_ts, first_error_ts, events,
                                                last_evidence, last_line_ts, last_line_time_of_day, marks)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(RunInfo, framework, version, tp, pp, dp, ep, gpu, config, inputs, driver, cuda,
                                                topology, gpu_memory_bytes, environment)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Launch, index, file, first_line, root_cause, verdict)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(LaneRow, ranks, count, mark, seq, p2p, op, input_sizes, state,
                                                called_from, stack, evidence)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(CollectiveLanes, pg, pg_desc, p2p, seq, op, input_sizes, rows)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Analysis, schema_version, root_cause, verdict, signature, run,
                                                ranks, ledger, diagnoses, findings, warnings, launches,
                                                collective_lanes)

// Exit codes of analyze (documented in README.md).
inline constexpr int kExitHealthy = 0;
inline constexpr int kExitDiagnosed = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitUnclassified = 3;
inline constexpr int kExitNoEvidence = 4;  // nothing in the input says a server ran: neither healthy nor failed

}  // namespace tpt
