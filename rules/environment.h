// environment.h: environment dumps given next to a log.
//
// `vllm collect-env`, `python -m sglang.check_env`, `nvidia-smi -q` and
// `nvidia-smi topo -m` (parser/formats/envdump.json) describe the machine, not
// what the server did. Their events are taken out of the run before the rules
// see it, so a dump is never evidence: alone it is no_evidence, beside a
// healthy log the run stays healthy, beside a failing one the diagnosis is the
// log's. What they say fills the run's facts the log lacks (framework version,
// GPU model and memory, driver, CUDA, NVLink or PCIe) for the report.
//
//   tpt::HostFacts facts = tpt::TakeEnvironment(&run->events, &run->totals, inputs);
//   tpt::Analysis a = tpt::Analyze(run->events, rules, opts);
//   tpt::ApplyHostFacts(facts, &a.run);
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "parser/event.h"
#include "parser/parser.h"
#include "rules/analysis.h"

namespace tpt {

struct HostFacts {
  std::string framework, version;  // a serving framework's version (not torch's)
  std::string torch;               // PyTorch version
  std::string gpu;                 // GPU model
  int64_t gpu_memory_bytes = 0;    // the card's total memory (nvidia-smi -q FB total)
  std::string driver, cuda;
  std::string topology;            // "NVLink (NV18)", "PCIe (PIX, SYS)", or ""
  std::vector<std::string> inputs; // the inputs that were environment dumps
  size_t events = 0;               // events taken out
  // Dumps that disagree (two GPU models, two drivers) or a value outside the
  // schema (a memory total no card has): a warning each; the disputed fact
  // is left unknown, never merged from both.
  std::vector<std::string> conflicts;
};

// A warning when the dumps' GPU is not the one the log names; "" when they
// agree or either is unknown.
std::string GpuDisagreement(const HostFacts& facts, const std::string& log_gpu);

// True for an event that is a fact about the machine wherever it appears:
// an envdump.json line (family "env") or an `nvidia-smi topo -m` row.
bool IsHostFactEvent(const Event& e);

// Takes the environment's events out of `events` (in place, order kept):
// every host-fact event, and every event of an input that holds an env_dump
// header or envdump.json line and nothing but facts (its version and
// env_var lines too). `totals` (its event count and the dropped records'
// places) is kept consistent. `inputs` names the streams (event.source).
HostFacts TakeEnvironment(std::vector<Event>* events, RunTotals* totals);

// Fills what the log left empty in `run` (framework, version, gpu) and sets
// the facts only dumps give (driver, CUDA, topology, GPU memory, dump inputs).
void ApplyHostFacts(const HostFacts& facts, RunInfo* run);

}  // namespace tpt
