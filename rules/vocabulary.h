// vocabulary.h: the domain's words as data, read once from the files the
// build embeds: the event kinds of parser/events.json (section, failure,
// consequence, phases, units) and the root causes of rules/taxonomy.json.
// Nothing else in the tree keeps a list of kinds, phases or root-cause ids.
//
//   if (const tpt::EventKind* k = tpt::FindEventKind("cuda_oom"); k && k->failure) ...
//   int i = tpt::PhaseIndex("kv_pool");              // order of tpt::Phases()
//   const tpt::RootCause* rc = tpt::FindRootCause("weights_oom");
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace tpt {

struct EventKind {
  std::string kind, section;
  bool failure = false;      // something went wrong (no rule firing: unknown, not none)
  bool consequence = false;  // launcher noise caused by another error
  bool warning = false;      // a warning by nature: never a run's own failure (nccl_warn, fallback)
  bool running = false;      // only a job that ran prints it (server_args, nccl_comm_init, ...)
  bool ends_launch = false;  // a failure after which a restart loop's next launch begins
  bool progress = false;     // a startup or serving step
  bool generic = false;      // says something failed, not what (exception, signal, a process header)
  std::string phase;            // the startup phase a line of this kind belongs to; "" none
  std::string phase_completed;  // the phase such a line shows finished; "" none
  std::string phase_intrinsic;  // the phase an error of this kind is raised in; "" none
  std::string phase_label;      // what the rank does after such a line ("weight loading"); "" none
  std::string read_by;    // the source file reading a kind no rule or finding names; "" none
  std::string harmless;   // why nothing needs to read it; "" none
  // Failure kinds a line of this kind still explains after its producer went
  // on (rules/terminal.h: a link the vocabulary names).
  std::vector<std::string> leads_to;
  std::map<std::string, std::string> units;  // field -> "bytes" / "seconds"
  std::string fields;           // the EVENTS.md description of its fields
};

struct Outranks {
  std::string id;   // the adjacent root cause this one comes before
  std::string why;  // the cause, and the surface it showed on
  // A rule of the surface's root cause written for the case where the surface
  // is itself the cause (it names the kernel behind the fault): its diagnosis
  // is not put after this one. "" none.
  std::string unless_rule;
};

struct RootCause {
  std::string id, title;
  std::string repro_step;  // the `tptriage repro` step the server stops at; "" none
  // Adjacent root causes this one explains when both are read from one run
  // (cause before surface: an illegal address beats the capture it broke).
  std::vector<Outranks> outranks;
};

// Null when `kind` is not in parser/events.json.
const EventKind* FindEventKind(std::string_view kind);
const std::vector<EventKind>& EventKinds();  // in file order
// The startup and serving phases in the order a server goes through them.
const std::vector<std::string>& Phases();
int PhaseIndex(std::string_view phase);  // -1 when not a phase

// A traceback frame pattern and the stage it places an error in
// (rules/stages.json; matched by rules/frame_stage.h).
struct FrameStage {
  std::string stage, framework;
  std::string match;  // RE2 over "FILE::FUNCTION"
  // Holds only when no frame further out names another stage: needs the
  // traceback's outermost frames (its "Traceback" line), not a cut one.
  bool whole_stack = false;
};
const std::vector<FrameStage>& FrameStages();  // in file order: the first that matches wins

const RootCause* FindRootCause(std::string_view id);
const std::vector<RootCause>& RootCauses();

}  // namespace tpt
