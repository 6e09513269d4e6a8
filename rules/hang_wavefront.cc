// hang_wavefront.cc: the collective wavefront of the dumps; see hang_wavefront.h.
#include "rules/hang_wavefront.h"

#include "rules/collective_lanes.h"

#include <algorithm>
#include <cctype>
#include <tuple>
#include <iterator>
#include <map>
#include <set>
#include <string>

namespace tpt {
namespace {

struct PgRankState {
  int64_t last = -1;                   // the highest collective seq it scheduled
  std::map<int64_t, size_t> records;   // seq -> its fr_collective event (the latest)
  int64_t completed = -1;              // the highest collective seq known completed
  bool status = false;                 // pg_status gave last_enqueued
  bool cut = false;                    // its dump was cut
};

// A rank's newest p2p record per (op, peer) in one process group.
struct P2pKey {
  int rank;
  std::string op;  // send, recv
  int64_t peer;    // the peer's rank in the group
  bool operator<(const P2pKey& o) const { return std::tie(rank, op, peer) < std::tie(o.rank, o.op, o.peer); }
};

// pg_config's "ranks" as torch writes it ("[0, 1, 2]"), read as torch's own
// analyser does (flight_recorder/components/builder.py,
// build_groups_memberships: ast.literal_eval); empty when not such a list.
std::vector<int> ParseRanks(const std::string& text) {
  std::vector<int> out;
  size_t i = text.find_first_not_of(" "), end = text.find_last_not_of(" ");
  if (i == std::string::npos || text[i] != '[' || text[end] != ']') return {};
  std::string num;
  for (++i; i <= end; ++i) {
    const char c = text[i];
    if (std::isdigit(static_cast<unsigned char>(c))) {
      if (num.size() > 7) return {};
      num += c;
    } else if (c == ',' || c == ']') {
      if (num.empty()) {
        if (c == ']' && out.empty()) return {};
        if (c == ',') return {};
        continue;
      }
      out.push_back(std::stoi(num));
      num.clear();
    } else if (c != ' ') {
      return {};
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
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
std::string StackWhere(const std::map<int, const Event*>& stacks, int rank) {
  auto it = stacks.find(rank);
  if (it == stacks.end()) return "";
  const Event* best = it->second;
  std::string chain;
  for (const auto& f : best->Get("program_frames").json()) chain += (chain.empty() ? "" : " < ") + f.get<std::string>();
  const std::string thread = best->Get("name").is_string() && !best->Get("name").string().empty()
                                 ? "thread " + best->Get("name").string()
                             : best->Get("main").boolean()      ? "main thread"
                             : best->Get("thread").string().empty()
                                 ? "the traced thread"  // a vLLM trace renamed after its rank: no thread id
                                 : "thread " + best->Get("thread").string();
  const std::string by = best->Get("via").string() == "sglang_watchdog" ? " logged by SGLang's watchdog" : "";
  return "its stack (" + best->Get("tool").string() + by + ", " + thread + "): " + chain;
}

}  // namespace

size_t AddCollectiveWavefront(std::vector<Event>* events_in, RunTotals* totals, std::vector<CollectiveLanes>* lanes) {
  std::vector<Event>& events = *events_in;
  const std::map<int, const Event*> stacks = MainStacks(events);
  // pg id -> name, as the records give it (pg_status is keyed by id).
  std::map<std::string, std::string> pg_name, pg_desc;
  std::set<int> cut_ranks, dumped, wrapped;
  std::map<std::string, std::vector<int>> members;  // pg name -> its global ranks (pg_config)
  std::map<int, size_t> dump_of;                    // rank -> its fr_dump event
  for (size_t i = 0; i < events.size(); ++i) {
    const Event& e = events[i];
    if (e.kind != "fr_dump" || e.rank < 0) continue;
    dumped.insert(e.rank);
    dump_of.emplace(e.rank, i);
    if (e.Get("wrapped").boolean()) wrapped.insert(e.rank);
    if (const FieldValue g = e.Get("pg_ranks"); g.present() && g.json().is_object())
      for (auto it = g.json().begin(); it != g.json().end(); ++it)
        if (it->is_string()) {
          // Gloo's dumps (PyTorch 2.11, samples/hangs) key the default group's
          // config "" where its records say process group "0".
          const std::string pg = it.key().empty() ? "0" : it.key();
          std::vector<int> ranks = ParseRanks(it->get<std::string>());
          if (!ranks.empty() && !members.count(pg)) members[pg] = std::move(ranks);
        }
  }
  for (const Event& e : events) {
    if (e.kind == "fr_collective" && e.Get("pg_id").is_number()) {
      std::string id = std::to_string(static_cast<int64_t>(e.Get("pg_id").number()));
      pg_name.emplace(id, e.Get("pg").string());
    }
    if (e.kind == "fr_collective" && e.Get("pg_desc").is_string()) pg_desc.emplace(e.Get("pg").string(), e.Get("pg_desc").string());
    if (e.kind == "fr_dump" && e.Get("cut").boolean()) cut_ranks.insert(e.rank);
  }
  // pg -> rank -> state
  std::map<std::string, std::map<int, PgRankState>> groups;
  std::map<std::string, std::map<P2pKey, size_t>> p2p;  // pg -> newest p2p record per (rank, op, peer)
  std::map<std::string, std::map<int, size_t>> newest;  // pg -> rank -> its newest record of any kind
  for (size_t i = 0; i < events.size(); ++i) {
    const Event& e = events[i];
    if (e.rank < 0) continue;
    if (e.kind == "fr_collective") {
      size_t& n = newest[e.Get("pg").string()].emplace(e.rank, i).first->second;
      if (events[n].file != e.file || events[n].line < e.line) n = i;
    }
    if (e.kind == "fr_collective" && e.Get("is_p2p").boolean() && e.Get("p2p_op").is_string()) {
      const P2pKey key{e.rank, e.Get("p2p_op").string(), static_cast<int64_t>(e.Get("peer").number())};
      auto [it, fresh] = p2p[e.Get("pg").string()].emplace(key, i);
      if (!fresh && events[it->second].Get("p2p_nth").number() < e.Get("p2p_nth").number()) it->second = i;
    } else if (e.kind == "fr_collective" && !e.Get("is_p2p").boolean() && e.Get("seq").is_number()) {
      PgRankState& s = groups[e.Get("pg").string()][e.rank];
      const int64_t seq = static_cast<int64_t>(e.Get("seq").number());
      s.records[seq] = i;
      s.last = std::max(s.last, seq);
      if (e.Get("state").string() == "completed") s.completed = std::max(s.completed, seq);
    } else if (e.kind == "fr_pg_status" && e.Get("last_enqueued").is_number()) {
      const std::string id = e.Get("pg_id").string();
      auto it = pg_name.find(id);
      PgRankState& s = groups[it != pg_name.end() ? it->second : id][e.rank];
      s.last = std::max(s.last, static_cast<int64_t>(e.Get("last_enqueued").number()));
      if (e.Get("last_completed").is_number())
        s.completed = std::max(s.completed, static_cast<int64_t>(e.Get("last_completed").number()));
      s.status = true;
    }
  }
  // The ranks a group's pg_config names that left no dump at all.
  auto no_dump_of = [&](const std::string& pg) {
    std::set<int> out;
    if (auto it = members.find(pg); it != members.end())
      for (int r : it->second)
        if (!dumped.count(r)) out.insert(r);
    return out;
  };
  const std::string kNoDump =
      " left no flight-recorder dump, though its process group names it: it died or was killed before the "
      "others dumped (the likeliest stuck or dead rank), or its dump was not given; look for its last log "
      "lines and exit";
  // NCCL RAS (parser/nccl_ras.h): the ranks of the job's communicator that did
  // not answer, and which of them RAS considers dead (when, from monitor mode).
  struct RasRank {
    bool dead = false;
    double dead_at = 0;  // 0: not known
    std::string comm, note;
    size_t event = 0;
  };
  std::map<std::string, double> dead_at;  // pid@node -> when RAS declared it dead
  for (const Event& e : events)
    if (e.kind == "ras_process" && e.Get("state").string() == "dead" && e.ts)
      dead_at[e.Get("pid").string() + "@" + e.Get("node").string()] = *e.ts;
  std::map<int, RasRank> ras;  // global rank -> what RAS says of it
  for (size_t i = 0; i < events.size(); ++i) {
    const Event& e = events[i];
    if (e.kind != "ras_missing_rank" || e.rank < 0) continue;
    RasRank& r = ras[e.rank];
    r.event = i;
    r.dead = e.Get("dead").boolean();
    const std::string id = e.Get("comm").string(), hash = e.Get("comm_hash").string();
    r.comm = id.empty() ? hash : hash.empty() ? id : id + " (" + hash + ")";
    const std::string process = e.Get("pid").is_string() ? "process " + e.Get("pid").string() + " on node " +
                                                                 e.Get("node").string() +
                                                                 (e.Get("gpu").is_string() ? " (GPU " + e.Get("gpu").string() + ")" : "")
                                                           : "its process";
    if (auto it = dead_at.find(e.Get("pid").string() + "@" + e.Get("node").string()); it != dead_at.end())
      r.dead_at = it->second;
    r.note = "NCCL RAS: " + process + (r.dead ? " is considered dead (unreachable)" : " did not answer") +
             " for communicator " + r.comm;
  }
  auto with_ras = [&](int rank, std::string where) {
    if (auto it = ras.find(rank); it != ras.end()) where += "; " + it->second.note;
    return where;
  };
  // Ranks RAS calls dead first (the earliest death first), then the others.
  auto dead_first = [&](std::vector<Event>* list) {
    std::stable_sort(list->begin(), list->end(), [&](const Event& a, const Event& b) {
      auto key = [&](const Event& e) {
        auto it = ras.find(e.rank);
        const bool dead = it != ras.end() && it->second.dead;
        return std::make_pair(dead ? 0 : 1, dead && it->second.dead_at > 0 ? it->second.dead_at : 1e300);
      };
      return key(a) < key(b);
    });
  };
  std::vector<Event> added;
  // One group's missing ranks, dead ones first, each with every rank's place.
  auto add_group = [&](std::vector<Event>* per_rank, const std::string& where_all) {
    dead_first(per_rank);
    for (Event& w : *per_rank) {
      w.Set("where_all", where_all);
      added.push_back(std::move(w));
    }
  };
  // A group's lanes (rules/collective_lanes.h): each dumped rank's last
  // collective, and the ranks that left no dump, read against `seq`.
  auto add_lanes = [&](const std::string& pg, const std::string& desc, int64_t seq, const Event* stuck,
                       const std::map<int, PgRankState>& ranks, const std::set<int>& no_dump, auto mark_of) {
    if (!lanes) return;
    CollectiveLanes l;
    l.pg = pg;
    l.pg_desc = desc;
    l.seq = seq;
    if (stuck) {
      l.op = stuck->Get("op").string();
      l.input_sizes = Sizes(*stuck);
    }
    std::vector<LanePlace> places;
    for (const auto& [r, s] : ranks) {
      LanePlace p{r, mark_of(r), s.last, nullptr};
      // Its record of that seq (a cut dump's pg_status may be ahead of its records).
      if (!s.records.empty() && s.records.rbegin()->first == s.last) p.record = &events[s.records.rbegin()->second];
      places.push_back(std::move(p));
    }
    for (int r : no_dump) places.push_back({r, "no_dump", -1, nullptr});
    l.rows = LaneRows(places, stacks);
    lanes->push_back(std::move(l));
  };
  for (auto& group : groups) {
    // Named references, not a structured binding: the lambdas below capture them, which
    // clang before 16 refuses for bindings (the fuzz build is clang's).
    const auto& pg = group.first;
    auto& ranks = group.second;
    const std::set<int> no_dump = no_dump_of(pg);
    if (ranks.size() + no_dump.size() < 2) continue;
    for (auto& [r, s] : ranks) s.cut = cut_ranks.count(r) > 0;
    const std::string desc = pg_desc.count(pg) ? pg_desc[pg] : "";
    // Desync: the first seq at which ranks recorded different ops or sizes.
    std::set<int64_t> seqs;
    int64_t desync_seq = -1;
    const Event* desync_at = nullptr;  // the most common call's record
    std::set<int> odd;                 // the ranks that called another
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
                   RankList(order[k].second) + " called " + order[k].first;
      message += " where rank" + std::string(order[0].second.size() > 1 ? "s " : " ") + RankList(order[0].second) +
                 " called " + order[0].first + ", in " + PgLabel(pg, desc) + " (flight-recorder dumps)";
      Event m = Derived("collective_mismatch", events[example[order[1].first]]);
      m.Set("seq", seq);
      m.Set("pg", pg);
      m.Set("message", message);
      m.Set("source", "flight_recorder");
      m.text = "collective " + std::to_string(seq) + ": " + message;
      added.push_back(std::move(m));
      desync_seq = seq;
      desync_at = &events[example[order[0].first]];
      for (size_t k = 1; k < order.size(); ++k) odd.insert(order[k].second.begin(), order[k].second.end());
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
    bool hang = (!missing.empty() || !no_dump.empty()) && front >= 0;
    if (hang && missing.empty()) {
      // Only ranks without a dump: a hang only if the front is not completed
      // where it was reached (else the dumps show a job that went on).
      bool open = false;
      for (int r : reached) open = open || ranks[r].completed < front;
      hang = open;
    }
    if (!hang) {
      if (desync_seq >= 0)
        add_lanes(pg, desc, desync_seq, desync_at, ranks, no_dump,
                  [&](int r) { return odd.count(r) ? std::string("mismatch") : std::string(); });
      continue;
    }
    std::set<int> all_missing = missing;
    all_missing.insert(no_dump.begin(), no_dump.end());
    // The stuck collective as a rank that reached it recorded it.
    const Event* stuck = nullptr;
    for (int r : reached) {
      auto it = ranks[r].records.find(front);
      if (it != ranks[r].records.end()) {
        stuck = &events[it->second];
        break;
      }
    }
    add_lanes(pg, desc, front, stuck, ranks, no_dump, [&](int r) {
      return std::string(reached.count(r) ? "waiting" : missing.count(r) ? "missing" : "unknown");
    });
    const std::string op = stuck ? stuck->Get("op").string() : "";
    const std::string sizes = stuck ? Sizes(*stuck) : "";
    const std::string stuck_text = "collective " + std::to_string(front) + " of " + PgLabel(pg, desc) +
                                   (stuck ? " (" + op + ", input sizes " + sizes + ")" : " (its record was not in the dumps read)");
    // What every missing rank's event says of the front.
    auto set_front = [&](Event* w) {
      w->Set("pg", pg);
      if (!desc.empty()) w->Set("pg_desc", desc);
      w->Set("seq", front);
      if (stuck) {
        w->Set("op", op);
        w->Set("input_sizes", sizes);
        w->Set("stuck_state", stuck->Get("state").string());
      }
      w->Set("ranks_reached", RankList(reached));
      w->Set("missing_ranks", RankList(all_missing));
      w->Set("missing_count", all_missing.size());
      if (!no_dump.empty()) w->Set("no_dump_ranks", RankList(no_dump));
      w->Set("ranks_dumped", ranks.size());
      w->Set("source", "flight_recorder");
    };
    std::string where_all;
    std::vector<Event> per_rank;
    for (int r : missing) {
      const PgRankState& s = ranks[r];
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
      if (std::string stack = StackWhere(stacks, r); !stack.empty()) where += "; " + stack;
      where = with_ras(r, where);
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
      set_front(&w);
      w.Set("last_seq", s.last);
      w.Set("where", where);
      w.text = "rank " + std::to_string(r) + " never scheduled " + stuck_text + "; " + where;
      per_rank.push_back(std::move(w));
    }
    for (int r : no_dump) {
      const std::string where = with_ras(r, "rank " + std::to_string(r) + kNoDump);
      where_all += (where_all.empty() ? "" : "; ") + where;
      // Placed at the first dump that names it (a rank that reached the front).
      const Event& at = stuck ? *stuck : events[dump_of.begin()->second];
      Event w = Derived("collective_wavefront", at);
      w.rank = r;
      set_front(&w);
      w.Set("no_dump", true);
      w.Set("where", where);
      w.text = "rank " + std::to_string(r) + " (no dump) never reached " + stuck_text + "; " + where;
      per_rank.push_back(std::move(w));
    }
    add_group(&per_rank, where_all);
  }
  // Point-to-point: the k-th send of a to b pairs with the k-th recv of b
  // from a (torch's analyser pairs them by src, dst and sizes, not by
  // p2p_seq_id: flight_recorder/components/types.py, Op.match). A rank whose
  // newest op with its peer is behind the peer's never posted the one the
  // peer waits in. Counts are from each dump's start, so they are compared
  // only where neither dump wrapped; else a pending op (state not completed)
  // whose peer has none pending towards it says the same.
  for (const auto& [pg, recs] : p2p) {
    const auto it_members = members.find(pg);
    const std::vector<int>* group = it_members != members.end() ? &it_members->second : nullptr;
    auto global = [&](int64_t local) -> int {
      return group && local >= 0 && static_cast<size_t>(local) < group->size() ? (*group)[local] : static_cast<int>(local);
    };
    auto local_of = [&](int rank) -> int64_t {
      if (!group) return rank;
      auto f = std::lower_bound(group->begin(), group->end(), rank);
      return f != group->end() && *f == rank ? f - group->begin() : -1;
    };
    std::set<std::pair<int, int>> told;  // (waiting, missing)
    const Event* first_stuck = nullptr;  // the first op found waiting: the lanes' column
    for (const auto& [key, i] : recs) {
      const Event& mine = events[i];
      const int peer = global(key.peer);
      const std::string other_op = key.op == "send" ? "recv" : "send";
      auto other = recs.find(P2pKey{peer, other_op, local_of(key.rank)});
      const Event* theirs = other != recs.end() ? &events[other->second] : nullptr;
      const int64_t n_mine = static_cast<int64_t>(mine.Get("p2p_nth").number());
      const int64_t n_theirs = theirs ? static_cast<int64_t>(theirs->Get("p2p_nth").number()) : 0;
      bool behind = false;
      if (!dumped.count(peer)) {
        behind = mine.Get("state").string() != "completed";
      } else if (!wrapped.count(key.rank) && !wrapped.count(peer)) {
        behind = n_mine > n_theirs;
      } else {
        behind = mine.Get("state").string() != "completed" && (!theirs || theirs->Get("state").string() == "completed");
      }
      if (!behind || !told.insert({key.rank, peer}).second) continue;
      const std::string desc = pg_desc.count(pg) ? pg_desc.at(pg) : "";
      const std::string op = mine.Get("op").string();
      const int64_t p2p_seq = mine.Get("p2p_seq").is_number() ? static_cast<int64_t>(mine.Get("p2p_seq").number()) : -1;
      std::string where;
      if (!dumped.count(peer)) {
        where = with_ras(peer, "rank " + std::to_string(peer) + kNoDump);
      } else {
        where = "rank " + std::to_string(peer) + " posted " + std::to_string(n_theirs) + " " + other_op + "(s) " +
                (other_op == "recv" ? "from" : "to") + " rank " + std::to_string(key.rank) + " where rank " +
                std::to_string(key.rank) + " posted " + std::to_string(n_mine) + " " + key.op + "(s)";
        if (auto nw = newest.find(pg); nw != newest.end() && nw->second.count(peer)) {
          const Event& last = events[nw->second.at(peer)];
          where += "; its last record: " + last.Get("op").string() + " (" + last.Get("state").string() + ")" +
                   (last.Get("where").is_string() ? ", called from " + last.Get("where").string() : "");
        }
        if (std::string stack = StackWhere(stacks, peer); !stack.empty()) where += "; " + stack;
        where = with_ras(peer, where);
      }
      Event w = Derived("collective_wavefront", mine);
      w.rank = peer;
      w.Set("pg", pg);
      if (!desc.empty()) w.Set("pg_desc", desc);
      w.Set("p2p", true);
      w.Set("seq", p2p_seq);
      w.Set("op", op);
      w.Set("input_sizes", Sizes(mine));
      w.Set("stuck_state", mine.Get("state").string());
      w.Set("ranks_reached", std::to_string(key.rank));
      w.Set("missing_ranks", std::to_string(peer));
      w.Set("missing_count", 1);
      if (!dumped.count(peer)) {
        w.Set("no_dump", true);
        w.Set("no_dump_ranks", std::to_string(peer));
      }
      w.Set("where", where);
      w.Set("where_all", where);
      w.Set("source", "flight_recorder");
      if (!first_stuck) first_stuck = &mine;
      w.text = "rank " + std::to_string(peer) + " never posted the " + other_op + " matching rank " +
               std::to_string(key.rank) + "'s " + op + " (p2p seq " + std::to_string(p2p_seq) + ", its " + key.op + " #" +
               std::to_string(n_mine) + " " + (key.op == "send" ? "to" : "from") + " rank " + std::to_string(peer) + ") of " +
               PgLabel(pg, desc) + "; " + where;
      added.push_back(std::move(w));
    }
    // The group's lanes: each rank's newest record, the waiting and missing marked.
    if (lanes && first_stuck) {
      std::set<int> waiting, behind;
      for (const auto& [w, m] : told) {
        waiting.insert(w);
        behind.insert(m);
      }
      CollectiveLanes l;
      l.pg = pg;
      l.pg_desc = pg_desc.count(pg) ? pg_desc.at(pg) : "";
      l.p2p = true;
      l.seq = first_stuck->Get("p2p_seq").is_number() ? static_cast<int64_t>(first_stuck->Get("p2p_seq").number()) : -1;
      l.op = first_stuck->Get("op").string();
      l.input_sizes = Sizes(*first_stuck);
      std::vector<LanePlace> places;
      auto mark_of = [&](int r) {
        return std::string(behind.count(r) ? "missing" : waiting.count(r) ? "waiting" : "");
      };
      if (auto nw = newest.find(pg); nw != newest.end())
        for (const auto& [r, i] : nw->second) places.push_back({r, mark_of(r), -1, &events[i]});
      for (int r : behind)
        if (!dumped.count(r)) places.push_back({r, "no_dump", -1, nullptr});
      l.rows = LaneRows(places, stacks);
      lanes->push_back(std::move(l));
    }
  }
  // NCCL RAS alone (no dump of the flight recorder): per communicator, its
  // missing ranks, the one RAS declared dead first leading.
  if (added.empty() && groups.empty() && p2p.empty() && !ras.empty()) {
    std::map<std::string, std::set<int>> by_comm;
    for (const auto& [r, info] : ras) by_comm[info.comm].insert(r);
    for (const auto& [comm, ranks] : by_comm) {
      std::string where_all;
      std::vector<Event> per_rank;
      for (int r : ranks) {
        const RasRank& info = ras[r];
        const std::string where = "rank " + std::to_string(r) + ": " + info.note;
        where_all += (where_all.empty() ? "" : "; ") + where;
        Event w = Derived("collective_wavefront", events[info.event]);
        w.family = "nccl_ras";
        w.Set("ras", true);
        w.Set("pg", comm);
        w.Set("missing_ranks", RankList(ranks));
        w.Set("missing_count", ranks.size());
        w.Set("dead", info.dead);
        w.Set("where", where);
        w.Set("source", "nccl_ras");
        w.text = "rank " + std::to_string(r) + " missing from NCCL communicator " + comm + "; " + where;
        per_rank.push_back(std::move(w));
      }
      add_group(&per_rank, where_all);
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
