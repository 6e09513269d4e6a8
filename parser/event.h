// event.h: the typed event the parser produces and everything downstream reads.
//
// One Event per log line (or multi-line block, e.g. a Python traceback) that a
// pattern in parser/formats/*.json recognised. Kinds are listed with their
// fields in parser/EVENTS.md; memory fields are in BYTES (the pattern's unit
// converts "GB"/"GiB"/"MiB"), times in seconds, fractions as 0..1 doubles.
//
//   class Printer : public tpt::EventSink {
//     bool OnEvent(const tpt::Event& e) override { Print(e.kind, e.rank); return true; }
//   };
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace tpt {

struct Event {
  std::string kind;        // e.g. "cuda_oom", "kv_pool_alloc" (parser/EVENTS.md)
  std::string family;      // format family that matched: "sglang", "vllm", "nccl", ...
  std::string pattern_id;  // id of the pattern inside its format file
  bool consequence = false;  // launcher noise caused by another error (sigquit, ChildFailedError, EngineDeadError)

  // Where it came from.
  int source = 0;          // index of the input stream (file) in the run
  std::string file;        // path as given by the user ("-" for stdin)
  uint64_t line = 0;       // 1-based line number in the (decompressed) stream
  uint64_t offset = 0;     // byte offset of the line start in the (decompressed) stream

  // Who printed it. -1 / empty when the log does not say.
  int rank = -1;           // global rank (tp rank for single-node servers)
  int local_rank = -1;     // local rank / device index when that is all a prefix says
  std::string host;
  int pid = -1;
  int dp_rank = -1, pp_rank = -1, tp_rank = -1, ep_rank = -1;
  std::string process;     // process role from a prefix: "EngineCore_DP0", "APIServer", "Worker_TP1", "draft", ...
  std::optional<double> ts;  // seconds since the Unix epoch (UTC assumed); seconds since midnight when only a time of day is printed (ts_is_time_of_day)
  bool ts_is_time_of_day = false;

  nlohmann::json fields = nlohmann::json::object();  // named fields (bytes, seconds, counts, strings)
  nlohmann::json wrapper = nlohmann::json::object(); // metadata of stripped wrapper prefixes (docker ts, srun label, ray actor, ...)
  std::string text;        // the line after wrapper prefixes were stripped (capped, see parser/README)
  std::vector<std::string> extra_lines;  // continuation lines that belong to it (traceback body)
};

// Receives events in stream order. Return false to stop early.
class EventSink {
 public:
  virtual ~EventSink() = default;
  virtual bool OnEvent(const Event& event) = 0;
};

}  // namespace tpt
