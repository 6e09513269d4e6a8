// rank_marks.cc: each rank's phases, first error and time-axis marks (rank_marks.h).
#include "rules/rank_marks.h"

#include <algorithm>
#include <map>

#include "rules/evidence_read.h"
#include "rules/line_source.h"
#include "rules/terminal.h"
#include "rules/vocabulary.h"

namespace tpt {

// The startup phase a line of this kind belongs to (parser/events.json), or null.
const char* PhaseOf(const std::string& kind) {
  const EventKind* k = FindEventKind(kind);
  return k == nullptr || k->phase.empty() ? nullptr : k->phase.c_str();
}

namespace {

// What a line means on a rank's time axis: "timeout", "error", "warning", or
// "" (not marked).
std::string MarkType(const Event& e) {
  if (e.kind.find("timeout") != std::string::npos || e.kind == "hang_warning") return "timeout";
  if (e.kind == "nccl_warn" || e.kind.find("warn") != std::string::npos) return "warning";
  if (!e.consequence && IsFailureKind(e.kind)) return "error";
  return "";
}

// Keeps the rank's last line, the first line of each phase and its first
// kMaxRankMarks warnings and errors, each with its time, for the reports'
// time axis (report/html.cc) and per-rank timeline (report/text.cc).
// `source`: what printed a rank-less line (rules/line_source.h), else null;
// the rank-less lines keep a phase's first line per source (each TGI shard's
// "Shard ready"), a rank its first line of each phase.
void AddMark(const Event& e, RankState* st, const LineSource* source) {
  // NCCL's back-trace ('file.cc:NNN -> N', src/include/checks.h) repeats the
  // result of the WARN before it: that WARN stays the rank's last line.
  if (e.kind != "nccl_return_trace") st->last_evidence = ToEvidence(e);
  if (e.ts) {
    st->last_line_ts = *e.ts;
    st->last_line_time_of_day = e.ts_is_time_of_day;
  }
  RankMark m;
  if (e.ts) {
    m.ts = *e.ts;
    m.time_of_day = e.ts_is_time_of_day;
  }
  const char* ph = PhaseOf(e.kind);
  // A rank-less source's first line starts its lane, unless it is an error line
  // (TGI's router first speaks to report the warm-up's failure). Rank-less
  // phase marks stop at kMaxRanklessPhaseMarks (a log naming a new pid a line).
  constexpr size_t kMaxRanklessPhaseMarks = 96;
  bool room = source == nullptr || st->marks.size() < kMaxRanklessPhaseMarks;
  auto first_line = [&] {
    return source == nullptr ? st->marks.empty()
                             : room && e.kind != "error_line" &&
                                   std::none_of(st->marks.begin(), st->marks.end(), [&](const RankMark& x) {
                                     return x.source.label == source->label;
                                   });
  };
  if (ph == nullptr && MarkType(e).empty() && first_line()) ph = "init";  // the rank's (a rank-less source's) first line
  bool new_phase = ph != nullptr && room && std::none_of(st->marks.begin(), st->marks.end(), [&](const RankMark& x) {
                     return x.type == "phase" && x.label == ph && (source == nullptr || x.source.label == source->label);
                   });
  if (new_phase) {
    m.type = "phase";
    m.label = ph;
  } else {
    m.type = MarkType(e);
    if (m.type.empty()) return;
    size_t kept = std::count_if(st->marks.begin(), st->marks.end(), [](const RankMark& x) { return x.type != "phase"; });
    if (kept >= kMaxRankMarks) return;
    m.label = e.kind;
  }
  m.evidence = ToEvidence(e);
  if (source != nullptr) m.source = *source;
  st->marks.push_back(std::move(m));
}

// A ranked run's rank-less line of a phase (TensorRT-LLM's C++ runtime sizing
// the KV cache, untagged): a phase mark of the rank-less state, the first line
// of each phase, and nothing else of it (not its phases, events or last line).
// The reports place the rank-less failures after it in that phase.
void AddRanklessPhase(const Event& e, const LineSource& source, std::vector<RankMark>* marks) {
  const char* ph = PhaseOf(e.kind);
  if (ph == nullptr) return;
  RankMark m;
  if (e.ts) {
    m.ts = *e.ts;
    m.time_of_day = e.ts_is_time_of_day;
  }
  m.type = "phase";
  m.label = ph;
  m.evidence = ToEvidence(e);
  m.source = source;
  marks->push_back(std::move(m));
}

}  // namespace

std::vector<RankState> BuildRanks(const RunIndex& run, bool several_inputs) {
  std::map<int, RankState> ranks;
  LineSources sources({run.framework(), several_inputs, !run.ranks().empty()});  // what printed each rank-less line
  std::vector<RankMark> rankless_phases;                 // a ranked run's, until its rank-less state starts
  const Event* previous = nullptr;
  for (const Event& e : run.events()) {
    if (previous != nullptr) sources.Saw(*previous);
    previous = &e;
    int r = e.rank;
    if (r < 0 && !run.ranks().empty() && !IsOwnFailure(e)) {  // rank-less lines of a ranked run
      if (const char* ph = PhaseOf(e.kind)) {  // its first line of each phase (what printed it: asked only then)
        auto it = ranks.find(-1);
        std::vector<RankMark>* marks = it != ranks.end() ? &it->second.marks : &rankless_phases;
        if (std::none_of(marks->begin(), marks->end(), [&](const RankMark& x) { return x.type == "phase" && x.label == ph; }))
          AddRanklessPhase(e, sources.Of(e), marks);
      }
      continue;
    }
    bool fresh = !ranks.count(r);
    RankState& st = ranks[r];
    if (fresh && r < 0) st.marks = std::move(rankless_phases);  // the phase lines before its first line
    st.rank = r;
    if (st.host.empty()) st.host = e.host;
    ++st.events;
    if (st.phases.empty()) st.phases.push_back("init");
    if (const char* ph = PhaseOf(e.kind); ph && std::find(st.phases.begin(), st.phases.end(), ph) == st.phases.end())
      st.phases.push_back(ph);
    if (e.ts && !e.ts_is_time_of_day) {
      if (st.first_ts == 0) st.first_ts = *e.ts;
      st.last_ts = *e.ts;
    }
    const LineSource* source = r < 0 ? &sources.Of(e) : nullptr;
    if (source != nullptr) st.last_source = *source;
    if (st.first_error.empty() && IsOwnFailure(e)) {
      st.first_error = e.kind;
      st.first_error_evidence = ToEvidence(e);
      if (source != nullptr) st.first_error_source = *source;
      if (e.ts && !e.ts_is_time_of_day) st.first_error_ts = *e.ts;
    }
    AddMark(e, &st, source);
  }
  std::vector<RankState> out;
  for (auto& [r, st] : ranks) {
    st.events += run.DroppedOfRank(r);  // events not kept in memory (parser.h ParsedRun)
    st.last_phase = st.phases.empty() ? "" : st.phases.back();
    if (r < 0 && !run.ranks().empty()) st.role = "launcher";
    out.push_back(std::move(st));
  }
  return out;
}

}  // namespace tpt
