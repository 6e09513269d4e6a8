// entrypoint.h: which of vLLM's entry points started the engine a log shows, read
// from the log, so that analyze words its fixes the way that launch takes them.
//
// `vllm serve` takes flags (--gpu-memory-utilization 0.95); the offline Python
// class `LLM(...)` takes EngineArgs' fields as keywords (gpu_memory_utilization=0.95;
// vllm/entrypoints/llm.py passes its keywords to EngineArgs). A log says which:
//   - a traceback frame in vllm/entrypoints/llm.py (LLM.__init__, generate, chat...),
//     or a frame of the user's script whose code line calls `LLM(`: the class;
//   - a frame in vllm/entrypoints/openai/api_server.py, cli/serve.py or
//     api_server.py, or the API server's 'vLLM API server version' line: serve.
// Both, or neither: not known, and the fixes stay serve's flags (the default).
//
//   tpt::EntrypointReading e = tpt::VllmEntrypoint(run);   // e.entry "llm" | "serve" | ""
//   tpt::SpellForEntrypoint(run, &analysis);               // Analyze calls it last
#pragma once

#include <string>

#include "rules/analysis.h"
#include "rules/run_index.h"

namespace tpt {

struct EntrypointReading {
  std::string entry;  // "llm", "serve", or "" (not known, or the log shows both)
  Evidence at;        // the line that says so (the traceback's first line for a frame)
  std::string why;    // "frame vllm/entrypoints/llm.py in __init__"
};

// For a vLLM run; "" for other frameworks.
EntrypointReading VllmEntrypoint(const RunIndex& run);

// When the run's engine was started by the LLM class: every diagnosis' flag fixes
// become the class's keywords (memory/vllm_entrypoint.h SpellRemediesForLlmClass),
// the run's config records "vllm_entrypoint": "llm", and a finding quotes the line.
void SpellForEntrypoint(const RunIndex& run, Analysis* a);

}  // namespace tpt
