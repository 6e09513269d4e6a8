// line_source.h: what printed a line that carries no rank, as the line itself
// names it: a GPU's PCI bus id (kernel Xid lines), a TGI shard (rank=N), a
// process the producer prefix names (vLLM's EngineCore, APIServer), torchrun's
// elastic agent, TGI's launcher or router, LMDeploy's TurboMind, SGLang's main
// process (its prefix without a TP rank), TensorRT-LLM's C++ runtime (its
// [TensorRT-LLM] tag, printed by a rank that the line does not name), a
// process id, else the input file when the run has several. Never a rank
// number the line does not print.
//
//   LineSource s = SourceOfLine(event, {run.framework(), several_inputs, !run.ranks().empty()});
//   if (s.label.empty()) ...  // the line names nothing: "no rank" / "other lines"
//
// The engine keeps one phase mark per source of the rank-less lines (TGI's
// two "Shard ready" lines both count); the reports draw a lane (HTML) and a
// row (text, markdown) per source (report/lanes.cc).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "parser/event.h"
#include "rules/analysis.h"  // LineSource

namespace tpt {

// What a run tells about its lines: its framework (RunIndex::framework()),
// whether it reads several files (then a line that names nothing is its
// file's) and whether some of its lines carry a rank (then SGLang's lines
// without a TP rank are its main process', not a TP=1 scheduler's).
struct LineContext {
  std::string framework;
  bool several_inputs = false;
  bool ranked = false;
};
LineSource SourceOfLine(const Event& e, const LineContext& run);

// SourceOfLine over a run's events in order, with one more reading for a run
// of no ranks (TGI, whose launcher relays every process' output): a line that
// names nothing and has no prefix of its own (no time, no producer prefix: a
// traceback's body, a Rust main's `Error: ...` at exit) continues the line
// before it in its file, and is that line's source's. Beside ranks such a line
// may be any process' bare stderr: it stays unnamed ("no rank"), as it does
// after a rank's line (no rank is given to a line that does not print it).
//
//   LineSources sources({run.framework(), several_inputs, !run.ranks().empty()});
//   for (const Event& e : events) { ... sources.Of(e) ...; sources.Saw(e); }
class LineSources {
 public:
  explicit LineSources(LineContext run) : run_(std::move(run)) {}
  // The source of `e`, a line that carries no rank (computed once an event).
  const LineSource& Of(const Event& e);
  // Every event, in stream order, after any Of(e).
  void Saw(const Event& e);

 private:
  struct Previous {
    const Event* event = nullptr;
    bool known = false;  // `source` computed
    LineSource source;
  };
  LineContext run_;
  std::vector<Previous> previous_;           // by input stream (Event::source): its last event
  const Event* last_of_ = nullptr;           // the last Of() call's event, and its answer
  LineSource last_;
};

}  // namespace tpt
