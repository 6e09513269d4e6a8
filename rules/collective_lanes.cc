// collective_lanes.cc: a hung group's ranks as rows; see collective_lanes.h.
#include "rules/collective_lanes.h"

#include <algorithm>
#include <iterator>
#include <tuple>

#include "rules/evidence_read.h"

namespace tpt {

std::string RankList(const std::set<int>& ranks) {
  std::string s;
  for (auto it = ranks.begin(); it != ranks.end();) {
    int first = *it, last = first;
    auto next = std::next(it);
    while (next != ranks.end() && *next == last + 1) last = *next++;
    s += (s.empty() ? "" : ", ") + std::to_string(first);
    if (last - first >= 2) s += "-" + std::to_string(last);
    else if (last != first) s += ", " + std::to_string(last);
    it = next;
  }
  return s;
}

std::map<int, const Event*> MainStacks(const std::vector<Event>& events) {
  std::map<int, const Event*> best;
  for (const Event& e : events) {
    if (e.kind != "stack_thread" || e.rank < 0 || !e.Get("program_frames").present()) continue;
    auto [it, fresh] = best.emplace(e.rank, &e);
    if (!fresh && e.Get("main").boolean() && !it->second->Get("main").boolean()) it->second = &e;
  }
  return best;
}

std::string StackTop(const Event& thread) {
  const FieldValue frames = thread.Get("program_frames");
  if (!frames.present() || !frames.json().is_array() || frames.json().empty() || !frames.json()[0].is_string()) return "";
  return frames.json()[0].get<std::string>();
}

std::vector<LaneRow> LaneRows(const std::vector<LanePlace>& places, const std::map<int, const Event*>& stacks) {
  struct Built {
    LaneRow row;
    std::set<int> ranks;
  };
  std::vector<Built> rows;
  std::map<std::tuple<std::string, int64_t, bool, std::string, std::string, std::string, std::string, std::string>, size_t> index;
  for (const LanePlace& p : places) {
    LaneRow r;
    r.mark = p.mark;
    r.seq = p.seq;
    if (const Event* e = p.record) {
      r.p2p = e->Get("is_p2p").boolean();
      const FieldValue seq = e->Get(r.p2p ? "p2p_seq" : "seq");
      if (seq.is_number()) r.seq = static_cast<int64_t>(seq.number());
      r.op = e->Get("op").string();
      if (const FieldValue v = e->Get("input_sizes"); v.present()) r.input_sizes = v.json().dump();
      r.state = e->Get("state").string();
      if (e->Get("where").is_string()) r.called_from = e->Get("where").string();
      r.evidence.file = e->file;
      r.evidence.line = e->line;
      r.evidence.rank = e->rank;
      r.evidence.text = EvidenceText(e->text);
    }
    if (auto it = stacks.find(p.rank); it != stacks.end()) r.stack = StackTop(*it->second);
    auto key = std::make_tuple(r.mark, r.seq, r.p2p, r.op, r.input_sizes, r.state, r.called_from, r.stack);
    auto [it, fresh] = index.emplace(key, rows.size());
    if (fresh) rows.push_back({std::move(r), {}});
    rows[it->second].ranks.insert(p.rank);
  }
  std::vector<LaneRow> out;
  std::sort(rows.begin(), rows.end(), [](const Built& a, const Built& b) { return *a.ranks.begin() < *b.ranks.begin(); });
  for (Built& b : rows) {
    b.row.ranks = RankList(b.ranks);
    b.row.count = static_cast<int>(b.ranks.size());
    out.push_back(std::move(b.row));
  }
  return out;
}

}  // namespace tpt
