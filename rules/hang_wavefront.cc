// hang_wavefront.cc: the collective wavefront of the dumps; see hang_wavefront.h.
#include "rules/hang_wavefront.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <set>
#include <string>

namespace tpt {
namespace {

struct RankState {
  int64_t last = -1;                   // the highest collective seq it scheduled
  std::map<int64_t, size_t> records;   // seq -> its fr_collective event (the latest)
  bool status = false;                 // pg_status gave last_enqueued
  bool cut = false;                    // its dump was cut
};

// "0, 2" or, for runs of three or more, "0-16, 18-63".
std::string Join(const std::set<int>& ranks) {
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

std::string Sizes(const Event& e) {
  FieldValue v = e.Get("input_sizes");
  return v.present() ? v.json().dump() : "?";
}

std::string PgLabel(const std::string& pg, const std::string& desc) {
  return "process group " + (pg.empty() ? std::string("?") : pg) + (desc.empty() ? "" : " (" + desc + ")");
}

Event Derived(const std::string& kind, const Event& at) {
  Event e;
  e.kind = kind;
  e.family = "torch_fr";
  e.pattern_id = "collective_wavefront";
  e.source = at.source;
  e.file = at.file;
  e.line = at.line;
  e.offset = at.offset;
  e.rank = at.rank;
  e.ts = at.ts;
  return e;
}

// Where a rank's stack dump (parser/stack_dump.h) has its main thread:
// "its stack (faulthandler, main thread): load_next_batch (m.py:16) < worker (m.py:38)".
std::string StackWhere(const std::vector<Event>& events, int rank) {
  const Event* best = nullptr;
  for (const Event& e : events) {
    if (e.kind != "stack_thread" || e.rank != rank || !e.Get("program_frames").present()) continue;
    if (!best || (e.Get("main").boolean() && !best->Get("main").boolean())) best = &e;
  }
  if (!best) return "";
  std::string chain;
  for (const auto& f : best->Get("program_frames").json()) chain += (chain.empty() ? "" : " < ") + f.get<std::string>();
  const std::string thread = best->Get("name").is_string() && !best->Get("name").string().empty()
                                 ? "thread " + best->Get("name").string()
                                 : best->Get("main").boolean() ? "main thread" : "thread " + best->Get("thread").string();
  return "its stack (" + best->Get("tool").string() + ", " + thread + "): " + chain;
}

}  // namespace

size_t AddCollectiveWavefront(std::vector<Event>* events_in, RunTotals* totals) {
  std::vector<Event>& events = *events_in;
  // pg id -> name, as the records give it (pg_status is keyed by id).
  std::map<std::string, std::string> pg_name, pg_desc;
  std::set<int> cut_ranks;
  for (const Event& e : events) {
    if (e.kind == "fr_collective" && e.Get("pg_id").is_number()) {
      std::string id = std::to_string(static_cast<int64_t>(e.Get("pg_id").number()));
      pg_name.emplace(id, e.Get("pg").string());
    }
    if (e.kind == "fr_collective" && e.Get("pg_desc").is_string()) pg_desc.emplace(e.Get("pg").string(), e.Get("pg_desc").string());
    if (e.kind == "fr_dump" && e.Get("cut").boolean()) cut_ranks.insert(e.rank);
  }
  // pg -> rank -> state
  std::map<std::string, std::map<int, RankState>> groups;
  for (size_t i = 0; i < events.size(); ++i) {
    const Event& e = events[i];
    if (e.rank < 0) continue;
    if (e.kind == "fr_collective" && !e.Get("is_p2p").boolean() && e.Get("seq").is_number()) {
      RankState& s = groups[e.Get("pg").string()][e.rank];
      const int64_t seq = static_cast<int64_t>(e.Get("seq").number());
      s.records[seq] = i;
      s.last = std::max(s.last, seq);
    } else if (e.kind == "fr_pg_status" && e.Get("last_enqueued").is_number()) {
      const std::string id = e.Get("pg_id").string();
      auto it = pg_name.find(id);
      RankState& s = groups[it != pg_name.end() ? it->second : id][e.rank];
      s.last = std::max(s.last, static_cast<int64_t>(e.Get("last_enqueued").number()));
      s.status = true;
    }
  }
  std::vector<Event> added;
  for (auto& [pg, ranks] : groups) {
    if (ranks.size() < 2) continue;
    for (auto& [r, s] : ranks) s.cut = cut_ranks.count(r) > 0;
    const std::string desc = pg_desc.count(pg) ? pg_desc[pg] : "";
    // Desync: the first seq at which ranks recorded different ops or sizes.
    std::set<int64_t> seqs;
    for (const auto& [r, s] : ranks)
      for (const auto& [seq, i] : s.records) seqs.insert(seq);
    for (int64_t seq : seqs) {
      std::map<std::string, std::set<int>> calls;  // "op in sizes" -> ranks
      std::map<std::string, size_t> example;
      for (const auto& [r, s] : ranks) {
        auto it = s.records.find(seq);
        if (it == s.records.end()) continue;
        const Event& rec = events[it->second];
        std::string call = rec.Get("op").string() + " (in " + Sizes(rec) + ")";
        calls[call].insert(r);
        example.emplace(call, it->second);
      }
      if (calls.size() < 2) continue;
      // The most common call first; each other one names its ranks.
      std::vector<std::pair<std::string, std::set<int>>> order(calls.begin(), calls.end());
      std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.second.size() > b.second.size(); });
      std::string message;
      for (size_t k = 1; k < order.size(); ++k)
        message += std::string(k > 1 ? "; " : "") + "rank" + (order[k].second.size() > 1 ? "s " : " ") +
                   Join(order[k].second) + " called " + order[k].first;
      message += " where rank" + std::string(order[0].second.size() > 1 ? "s " : " ") + Join(order[0].second) +
                 " called " + order[0].first + ", in " + PgLabel(pg, desc) + " (flight-recorder dumps)";
      Event m = Derived("collective_mismatch", events[example[order[1].first]]);
      m.Set("seq", seq);
      m.Set("pg", pg);
      m.Set("message", message);
      m.Set("source", "flight_recorder");
      m.text = "collective " + std::to_string(seq) + ": " + message;
      added.push_back(std::move(m));
      break;
    }
    // The wavefront: the highest seq any rank scheduled, and who never did.
    int64_t front = -1;
    for (const auto& [r, s] : ranks) front = std::max(front, s.last);
    std::set<int> reached, missing;
    for (const auto& [r, s] : ranks) {
      if (s.last >= front) reached.insert(r);
      else if (!(s.cut && !s.status)) missing.insert(r);  // a cut dump without pg_status: unknown, not missing
    }
    if (missing.empty() || front < 0) continue;
    // The stuck collective as a rank that reached it recorded it.
    const Event* stuck = nullptr;
    for (int r : reached) {
      auto it = ranks[r].records.find(front);
      if (it != ranks[r].records.end()) {
        stuck = &events[it->second];
        break;
      }
    }
    const std::string op = stuck ? stuck->Get("op").string() : "";
    const std::string sizes = stuck ? Sizes(*stuck) : "";
    const std::string stuck_text = "collective " + std::to_string(front) + " of " + PgLabel(pg, desc) +
                                   (stuck ? " (" + op + ", input sizes " + sizes + ")" : " (its record was not in the dumps read)");
    std::string where_all;
    std::vector<Event> per_rank;
    for (int r : missing) {
      const RankState& s = ranks[r];
      std::string where;
      const Event* last = nullptr;
      if (!s.records.empty()) last = &events[s.records.rbegin()->second];
      if (last) {
        where = "rank " + std::to_string(r) + " last scheduled collective " + std::to_string(s.records.rbegin()->first) +
                " (" + last->Get("op").string() + ", " + last->Get("state").string() + ")" +
                (last->Get("where").is_string() ? ", called from " + last->Get("where").string() : "");
      } else {
        where = "rank " + std::to_string(r) + " last scheduled collective " + std::to_string(s.last) +
                " (its dump holds no record of it)";
      }
      if (std::string stack = StackWhere(events, r); !stack.empty()) where += "; " + stack;
      where_all += (where_all.empty() ? "" : "; ") + where;
      Event w = last ? Derived("collective_wavefront", *last) : Event();
      if (!last) {  // placed at the rank's dump header
        for (const Event& e : events)
          if (e.kind == "fr_dump" && e.rank == r) {
            w = Derived("collective_wavefront", e);
            break;
          }
        w.kind = "collective_wavefront";
        w.rank = r;
      }
      w.Set("pg", pg);
      if (!desc.empty()) w.Set("pg_desc", desc);
      w.Set("seq", front);
      if (stuck) {
        w.Set("op", op);
        w.Set("input_sizes", sizes);
        w.Set("stuck_state", stuck->Get("state").string());
      }
      w.Set("ranks_reached", Join(reached));
      w.Set("missing_ranks", Join(missing));
      w.Set("missing_count", missing.size());
      w.Set("ranks_dumped", ranks.size());
      w.Set("last_seq", s.last);
      w.Set("where", where);
      w.Set("source", "flight_recorder");
      w.text = "rank " + std::to_string(r) + " never scheduled " + stuck_text + "; " + where;
      per_rank.push_back(std::move(w));
    }
    for (Event& w : per_rank) {
      w.Set("where_all", where_all);
      added.push_back(std::move(w));
    }
  }
  const size_t old_size = events.size();
  for (Event& e : added) {
    if (totals) {
      ++totals->events;
      if (e.rank >= 0 && e.rank < RunTotals::kMaxRanksSeen) {
        if (totals->rank_seen.size() <= static_cast<size_t>(e.rank)) totals->rank_seen.resize(e.rank + 1);
        totals->rank_seen[e.rank] = 1;
      }
    }
    events.push_back(std::move(e));
  }
  if (totals)
    for (auto& d : totals->dropped)
      if (d.before == old_size) d.before = events.size();  // "none after": still past the end
  return added.size();
}

}  // namespace tpt
