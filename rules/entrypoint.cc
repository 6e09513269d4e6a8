// entrypoint.cc: vLLM's entry point from the log (rules/entrypoint.h).
#include "rules/entrypoint.h"

#include <cctype>
#include <vector>

#include "memory/vllm_entrypoint.h"
#include "rules/evidence_read.h"
#include "rules/frames.h"

namespace tpt {

namespace {

// "llm", "serve" or "" for one frame. The class's module is
// vllm/entrypoints/llm.py in every release (0.2 to 0.28); the OpenAI server's
// vllm/entrypoints/openai/api_server.py, `vllm serve`'s vllm/entrypoints/cli/serve.py
// (0.8 on; vllm/scripts.py before), the old demo server vllm/entrypoints/api_server.py.
std::string EntryOfFrame(const Frame& f) {
  if (f.file.ends_with("vllm/entrypoints/llm.py")) return "llm";
  if (f.file.ends_with("vllm/entrypoints/openai/api_server.py") || f.file.ends_with("vllm/entrypoints/cli/serve.py") ||
      f.file.ends_with("vllm/entrypoints/api_server.py") || f.file.ends_with("vllm/scripts.py"))
    return "serve";
  // The user's own script calling the class: `llm = LLM(model=...)`, outside vLLM's package.
  if (f.file.find("/vllm/") == std::string::npos && f.file.find("site-packages") == std::string::npos) {
    const size_t at = f.code.find("LLM(");
    if (at != std::string::npos && (at == 0 || !(std::isalnum(static_cast<unsigned char>(f.code[at - 1])) ||
                                                 f.code[at - 1] == '_' || f.code[at - 1] == '.')))
      return "llm";
  }
  return "";
}

}  // namespace

EntrypointReading VllmEntrypoint(const RunIndex& run) {
  EntrypointReading llm, serve;
  if (run.framework() != "vllm") return {};
  for (const Event& e : run.events()) {
    if (e.pattern_id == "api_server_version" && serve.entry.empty()) {
      serve = {"serve", ToEvidence(e), "vLLM's OpenAI API server printed its version"};
      continue;
    }
    if (e.text.find("Traceback") == std::string::npos && e.kind != "exception") continue;
    // vLLM's own module first (it names the class), then the user's script.
    const std::vector<Frame> frames = FramesOf(FullText(e));
    for (bool script : {false, true}) {
      for (const Frame& f : frames) {
        if ((f.file.find("vllm/") == std::string::npos) != script) continue;
        const std::string entry = EntryOfFrame(f);
        EntrypointReading& r = entry == "llm" ? llm : serve;
        if (entry.empty() || !r.entry.empty()) continue;
        r = {entry, ToEvidence(e),
             "a traceback frame in " + f.file + ", in " + f.function + (script ? ": " + f.code : std::string())};
      }
    }
  }
  if (!llm.entry.empty() && serve.entry.empty()) return llm;
  if (!serve.entry.empty() && llm.entry.empty()) return serve;
  return {};
}

void SpellForEntrypoint(const RunIndex& run, Analysis* a) {
  const EntrypointReading e = VllmEntrypoint(run);
  if (e.entry != "llm") return;
  bool spelled = false;
  for (Diagnosis& d : a->diagnoses) {
    std::vector<bool> was_flag;
    for (const Remedy& r : d.remedy) was_flag.push_back(r.flag.rfind("--", 0) == 0);
    memory::SpellRemediesForLlmClass(d.remedy);
    for (size_t i = 0; i < d.remedy.size(); ++i) {
      Remedy& r = d.remedy[i];
      if (!was_flag[i] || r.flag.rfind("--", 0) == 0) continue;  // not an EngineArgs field: left as it was
      spelled = true;
      // The line to paste into the LLM(...) call: every format prints `command`
      // as the remedy's line (report/common.h RemedyCommand).
      if (r.command.empty() && !r.value.empty()) r.command = RemedySetting(r);
    }
  }
  a->run.config["vllm_entrypoint"] = "llm";
  Finding f;
  f.id = "vllm_entrypoint";
  f.severity = "info";
  f.title = "Started by vLLM's LLM class";
  f.evidence.push_back(e.at);
  f.figures["vllm_entrypoint"] = "llm";
  f.advice = "This engine was built by vLLM's offline LLM(...) class (" + e.why +
             "), not by `vllm serve`: it takes EngineArgs' fields as keywords, so " +
             (spelled ? "the fixes are written as LLM(...) keywords (gpu_memory_utilization=0.95, not "
                        "--gpu-memory-utilization 0.95)."
                      : "a fix to its settings is an LLM(...) keyword (gpu_memory_utilization=0.95), not a flag.");
  a->findings.push_back(std::move(f));
}

}  // namespace tpt
