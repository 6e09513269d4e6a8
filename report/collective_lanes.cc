// collective_lanes.cc: the words of a hung group's lanes (report/common.h
// LanesTitle ...), shared by text, markdown and HTML.
#include <string>

#include "report/common.h"

namespace tpt::report {

std::string LanesTitle(const CollectiveLanes& l) {
  std::string s = "process group " + (l.pg.empty() ? std::string("?") : l.pg) + (l.pg_desc.empty() ? "" : " (" + l.pg_desc + ")");
  s += ", read against " + std::string(l.p2p ? "p2p seq " : "collective ") + std::to_string(l.seq);
  if (!l.op.empty()) s += " (" + l.op + (l.input_sizes.empty() ? "" : " " + l.input_sizes) + ")";
  return s;
}

std::string LaneMark(const LaneRow& r) {
  if (r.mark == "waiting") return "waits in it";
  if (r.mark == "missing") return "MISSING";
  if (r.mark == "no_dump") return "NO DUMP";
  if (r.mark == "mismatch") return "MISMATCH";
  if (r.mark == "unknown") return "unknown (dump cut)";
  return r.mark;
}

std::string LaneAt(const LaneRow& r) {
  if (r.mark == "no_dump") return "no dump";
  std::string s = r.seq >= 0 ? std::string(r.p2p ? "p2p seq " : "seq ") + std::to_string(r.seq) : std::string();
  if (r.op.empty()) return s.empty() ? "no record" : s + " (no record of it)";
  s += (s.empty() ? "" : " ") + r.op;
  if (!r.input_sizes.empty()) s += " " + r.input_sizes;
  if (!r.state.empty()) s += " " + r.state;
  return s;
}

std::string LaneWhere(const LaneRow& r) {
  std::string s = r.stack.empty() ? "" : "stack: " + r.stack;
  if (!r.called_from.empty() && r.called_from != r.stack) s += (s.empty() ? "" : "; ") + std::string("called from ") + r.called_from;
  return s;
}

}  // namespace tpt::report
