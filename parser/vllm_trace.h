// vllm_trace.h: vLLM's function-call trace (VLLM_TRACE_FUNCTION=1) read as
// the traced thread's stack where the trace stops.
//
// vLLM's own way to see where a stuck worker is (docs/usage/troubleshooting.md,
// "Enable more logging"): with VLLM_TRACE_FUNCTION=1 the traced thread of each
// process writes every call and return of vLLM's code to
// $TMPDIR/<user>/vllm/vllm-instance-<id>/
//   VLLM_TRACE_FUNCTION_for_process_<pid>_thread_<tid>_at_<date>_<time>.log
// (vllm/utils enable_trace_function_call_for_thread), a line each
// (vllm/logger.py _trace_calls; vllm-project/vllm 43f45549, as in v0.6-v0.11):
//   2025-05-12 10:00:31.815092 Call to fn in /x/vllm/a.py:12 from caller in /x/vllm/b.py:40
//   2025-05-12 10:00:31.815101 Return from fn in /x/vllm/a.py:20 to caller in /x/vllm/b.py:40
// and the log says "Trace frame log is saved to PATH". Replayed (a call
// pushes its frame, a return pops it), the calls that never returned are the
// stack the thread was in when the trace stopped: where a hung worker waits.
// The file is read as it streams (a trace grows to gigabytes), keeping only
// the open calls (at most kMaxTraceDepth, the outermost dropped first).
//
// One `stack_thread` event (tool `vllm_trace`, parser/EVENTS.md) at the
// trace's last line and time, frames innermost first, as py-spy's are. vLLM's
// own file name gives the process and thread (`pid` is set): given beside the
// log, the rank is the one that process's prefixed lines named
// (`(Worker_TP1 pid=4242)`, parser/rank_resolve.h step 6); a renamed file's
// trailing number (`vllm_trace_rank_3.log`) is taken as the rank.
//
//   if (tpt::LooksLikeVllmTrace(head)) stream = tpt::ReadVllmTrace(std::move(source), path, 3);
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "parser/event.h"
#include "parser/reader.h"
#include "parser/stream_parser.h"

namespace tpt {

// True when a file's first line is a line of vLLM's function-call trace.
bool LooksLikeVllmTrace(std::string_view head);

// The open calls kept (a deeper stack keeps its innermost).
inline constexpr size_t kMaxTraceDepth = 256;

// Reads the trace as it streams; one stack_thread event, or none (no line
// of the trace), with error() naming the file when it could not be read.
std::unique_ptr<EventStream> ReadVllmTrace(std::unique_ptr<ByteSource> source, const std::string& path, int source_index);

// The same over bytes in memory (tests, fuzzing).
std::vector<Event> VllmTraceEvents(std::string_view text, const std::string& path, int source_index);

}  // namespace tpt
