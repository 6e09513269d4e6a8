// lanes.cc: the lines of no rank, split into lanes by what printed them
// (report/common.h SourceLanes, RanklessLanes). What a line names is decided
// once, by the engine (rules/line_source.h), and kept on its marks.
#include <algorithm>
#include <string>
#include <vector>

#include "report/common.h"

namespace tpt::report {

namespace {

// Where a line is: comparable with another line of the same file by line
// number, of another file by time when both are timed alike.
struct Place {
  std::string file;
  uint64_t line = 0;
  double ts = 0;
  bool tod = false;
};

bool AtOrBefore(const RankMark& m, const Place& at) {
  if (m.evidence.file == at.file) return m.evidence.line <= at.line;
  return m.ts > 0 && at.ts > 0 && m.time_of_day == at.tod && m.ts <= at.ts;
}

// The furthest phase any line at or before `at` had reached: a rank's phase
// lines and the rank-less phase lines (a launcher or runtime line that says
// the weights loaded). "" when no phase line comes before it.
std::string RunPhaseAt(const Analysis& a, const Place& at) {
  int best = -1;
  for (const RankState& r : a.ranks) {
    for (const RankMark& m : r.marks) {
      if (!AtOrBefore(m, at)) continue;
      if (m.type == "phase") best = std::max(best, PhaseIndex(m.label));
      // An error raised inside a later phase (a rank's "Not enough memory"
      // while sizing the KV pool): the run had got that far.
      if (const EventKind* k = m.type == "error" ? FindEventKind(m.label) : nullptr; k != nullptr)
        best = std::max(best, PhaseIndex(k->phase_intrinsic));
    }
  }
  return best < 0 ? "" : Phases()[best];
}

std::vector<SourceLane> BuildLanes(const Analysis& a, const RankState& rankless, const std::string& unnamed) {
  constexpr size_t kMaxLanes = 12;  // more sources than that: the rest share the unnamed lane
  const std::string what_unnamed = unnamed == "no rank" ? "lines that carry no rank and name no process that printed them"
                                                        : "lines that name no GPU, shard or process";
  std::vector<SourceLane> lanes;
  // The lane of a line, made on first sight (lanes in the order the log shows them).
  auto lane_of = [&](const LineSource& s) -> SourceLane& {
    std::string label = s.label, what = s.what;
    auto find = [&](const std::string& l) {
      return std::find_if(lanes.begin(), lanes.end(), [&](const SourceLane& x) { return x.label == l; });
    };
    if (label.empty() || (find(label) == lanes.end() && lanes.size() + 1 >= kMaxLanes)) {
      label = unnamed;
      what = what_unnamed;
    }
    if (auto it = find(label); it != lanes.end()) return *it;
    SourceLane l;
    l.label = label;
    l.what = what;
    l.state.rank = rankless.rank;
    l.state.role = rankless.role;
    l.state.host = rankless.host;
    l.state.phases.clear();
    lanes.push_back(std::move(l));
    return lanes.back();
  };
  for (const RankMark& m : rankless.marks) {
    SourceLane& l = lane_of(m.source);
    l.state.marks.push_back(m);
    ++l.state.events;
    if (m.type == "phase") {
      l.state.phases.push_back(m.label);
      l.state.last_phase = m.label;
    }
    if (m.type == "error" && l.state.first_error.empty()) {
      l.state.first_error = m.label;
      l.state.first_error_evidence = m.evidence;
      l.state.first_error_ts = m.time_of_day ? 0 : m.ts;
    }
  }
  if (!rankless.last_evidence.text.empty()) {
    SourceLane& l = lane_of(rankless.last_source);
    l.state.last_evidence = rankless.last_evidence;
    l.state.last_line_ts = rankless.last_line_ts;
    l.state.last_line_time_of_day = rankless.last_line_time_of_day;
  }
  if (!rankless.first_error.empty()) {
    SourceLane& l = lane_of(rankless.first_error_source);
    l.state.first_error = rankless.first_error;
    l.state.first_error_evidence = rankless.first_error_evidence;
    l.state.first_error_ts = rankless.first_error_ts;
    l.first = true;
  }
  for (SourceLane& l : lanes) {
    if (l.state.first_error.empty()) {
      l.phase = l.state.last_phase;
      continue;
    }
    Place at{l.state.first_error_evidence.file, l.state.first_error_evidence.line, l.state.first_error_ts, false};
    for (const RankMark& m : l.state.marks) {  // its time as the mark has it (a time of day too)
      if (m.evidence.file == at.file && m.evidence.line == at.line) {
        at.ts = m.ts;
        at.tod = m.time_of_day;
        break;
      }
    }
    l.phase = RunPhaseAt(a, at);
  }
  return lanes;
}

const RankState* Rankless(const Analysis& a, bool* ranked) {
  const RankState* rankless = nullptr;
  *ranked = false;
  for (const RankState& r : a.ranks) {
    if (r.rank >= 0) {
      *ranked = true;
    } else {
      rankless = &r;
    }
  }
  return rankless;
}

}  // namespace

std::vector<SourceLane> SourceLanes(const Analysis& a) {
  bool ranked = false;
  const RankState* rankless = Rankless(a, &ranked);
  if (ranked || rankless == nullptr) return {};
  std::vector<SourceLane> lanes = BuildLanes(a, *rankless, "other lines");
  if (lanes.size() == 1 && lanes[0].label == "other lines") {
    lanes[0].label = "all lines";
    lanes[0].what = "every line: the log names no rank, GPU, shard or process";
  }
  return lanes;
}

std::vector<SourceLane> RanklessLanes(const Analysis& a) {
  bool ranked = false;
  const RankState* rankless = Rankless(a, &ranked);
  if (!ranked || rankless == nullptr) return {};
  return BuildLanes(a, *rankless, "no rank");
}

const Evidence& LaneLastLine(const RankState& lane, double* ts, bool* tod) {
  if (!lane.last_evidence.text.empty() || lane.marks.empty()) {
    *ts = lane.last_line_ts;
    *tod = lane.last_line_time_of_day;
    return lane.last_evidence;
  }
  const RankMark& m = lane.marks.back();
  *ts = m.ts;
  *tod = m.time_of_day;
  return m.evidence;
}

}  // namespace tpt::report
