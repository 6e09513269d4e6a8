// rank_resolve.cc: see rank_resolve.h.
#include "parser/rank_resolve.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include <re2/re2.h>

namespace tpt {
namespace {

// Fills `*rank` from `re`'s number in `process` when it is unset.
void FillFromProcess(const RE2& re, const std::string& process, int* rank) {
  if (*rank >= 0) return;
  int v = -1;
  if (RE2::PartialMatch(process, re, &v) && v >= 0) *rank = v;
}

// A positive integer `key` of a server_args event, else 0.
int SizeFromServerArgs(const Event& e, const char* key) {
  if (e.kind != "server_args") return 0;
  auto it = e.fields().find(key);
  if (it != e.fields().end() && it->is_number_integer() && it->get<int64_t>() > 0 && it->get<int64_t>() < (1 << 20))
    return static_cast<int>(it->get<int64_t>());
  return 0;
}

}  // namespace

void RankResolver::Observe(Event* e) {
  static const RE2 kDp("_DP(\\d{1,6})"), kPp("_PP(\\d{1,6})"), kTp("_TP(\\d{1,6})"), kEp("_EP(\\d{1,6})");
  if (!e->process.empty()) {
    FillFromProcess(kDp, e->process, &e->dp_rank);
    FillFromProcess(kPp, e->process, &e->pp_rank);
    FillFromProcess(kTp, e->process, &e->tp_rank);
    FillFromProcess(kEp, e->process, &e->ep_rank);
  }
  // torch's "[Rank N] Watchdog caught ..." names the rank in its process
  // group; in the default group (no PG named, or PG 0 / default_pg) that is
  // the global rank, which a torchrun "[defaultN]:" prefix does not give.
  if (e->rank < 0 && e->MayHaveField("pg_rank")) {  // most events: no decoding
    auto pr = e->fields().find("pg_rank");
    if (pr != e->fields().end() && pr->is_number_integer() && pr->get<int64_t>() >= 0 && pr->get<int64_t>() < (1 << 20)) {
      auto pg = e->fields().find("pg");
      std::string g = pg != e->fields().end() && pg->is_string() ? pg->get<std::string>() : "";
      if (g.empty() || g == "0" || g.find("default_pg") != std::string::npos) e->rank = static_cast<int>(pr->get<int64_t>());
    }
  }
  bool nobody = e->rank < 0 && e->local_rank < 0 && e->tp_rank < 0;
  if (!last_file_ || *last_file_ != e->file) {
    auto it = recent_.try_emplace(e->file).first;
    last_file_ = &it->first;
    last_recent_ = &it->second;
  }
  Recent& recent = *last_recent_;
  if (nobody && e->kind == "exception") {
    uint64_t first = e->line;
    if (auto it = e->fields().find("traceback_line"); it != e->fields().end() && it->is_number_integer() && it->get<int64_t>() > 0)
      first = static_cast<uint64_t>(it->get<int64_t>());
    for (size_t k = 0; k < recent.size(); ++k) {  // the newest first
      const Who* w = &recent.NewestButK(k);
      if (w->line != first && w->line + 1 != first) continue;
      e->rank = w->rank, e->local_rank = w->local_rank;
      e->dp_rank = w->dp, e->pp_rank = w->pp, e->tp_rank = w->tp, e->ep_rank = w->ep;
      nobody = false;
      break;
    }
  } else if (!nobody) {
    recent.Add({e->line, e->rank, e->local_rank, e->dp_rank, e->pp_rank, e->tp_rank, e->ep_rank});
  }
  if (e->kind == "nccl_comm_init" && e->pid >= 0) {
    auto rk = e->fields().find("comm_rank"), nr = e->fields().find("nranks");
    if (rk != e->fields().end() && nr != e->fields().end() && rk->is_number_integer() && nr->is_number_integer()) {
      int64_t r = rk->get<int64_t>(), n = nr->get<int64_t>();
      if (r >= 0 && n > r && n < (1 << 20)) {
        CommRank& c = pid_ranks_[std::make_pair(e->host, e->pid)];
        if (n > c.nranks) c = {static_cast<int>(n), static_cast<int>(r), false};
        else if (n == c.nranks && r != c.rank) c.ambiguous = true;
      }
    }
  }
  if (e->pid >= 0 && e->tp_rank >= 0) {
    auto [it, fresh] = pid_parallel_.try_emplace(std::make_pair(e->host, e->pid));
    ProcessParallel& p = it->second;
    if (fresh) {
      p = {e->dp_rank, e->pp_rank, e->tp_rank, false};
    } else if (p.tp != e->tp_rank || p.dp != e->dp_rank || p.pp != e->pp_rank) {
      p.ambiguous = true;
    }
  }
  if ((tp_size_arg_ == 0 || pp_size_arg_ == 0) && e->kind == "server_args") {
    if (tp_size_arg_ == 0) tp_size_arg_ = SizeFromServerArgs(*e, "tp_size");
    if (pp_size_arg_ == 0) pp_size_arg_ = SizeFromServerArgs(*e, "pp_size");
  }
  if (e->tp_rank < 0) return;
  max_tp_ = std::max(max_tp_, e->tp_rank);
  max_pp_ = std::max(max_pp_, e->pp_rank);
  tp_groups_[e->tp_rank].insert(std::make_pair(std::max(e->dp_rank, 0), std::max(e->pp_rank, 0)));
}

void RankResolver::Assign(Event* e) const {
  if (e->rank < 0 && e->pid >= 0 && !pid_ranks_.empty()) {
    auto it = pid_ranks_.find(std::make_pair(e->host, e->pid));
    if (it != pid_ranks_.end() && !it->second.ambiguous) {
      e->rank = it->second.rank;
      return;
    }
  }
  if (e->rank < 0 && e->tp_rank < 0 && e->pid >= 0 && !pid_parallel_.empty()) {
    auto it = pid_parallel_.find(std::make_pair(e->host, e->pid));
    if (it != pid_parallel_.end() && !it->second.ambiguous) {
      e->dp_rank = it->second.dp, e->pp_rank = it->second.pp, e->tp_rank = it->second.tp;
    }
  }
  if (max_tp_ < 0 || e->rank >= 0 || e->tp_rank < 0) return;
  bool tp_is_global = std::all_of(tp_groups_.begin(), tp_groups_.end(),
                                  [](const auto& g) { return g.second.size() == 1; });
  if (tp_is_global) {
    e->rank = e->tp_rank;
    return;
  }
  // Sizes: never below what the run printed, so two ranks cannot collide.
  int tp_size = std::max(tp_size_arg_, max_tp_ + 1);
  int pp_size = std::max({pp_size_arg_, max_pp_ + 1, 1});
  int64_t r = (static_cast<int64_t>(std::max(e->dp_rank, 0)) * pp_size + std::max(e->pp_rank, 0)) * tp_size + e->tp_rank;
  e->rank = r < (1 << 30) ? static_cast<int>(r) : -1;
}

void ShareLineRanks(std::vector<Event>* events) {
  std::map<std::pair<std::string, uint64_t>, const Event*> known;
  for (const Event& e : *events)
    if (e.line > 0 && (e.rank >= 0 || e.local_rank >= 0 || e.tp_rank >= 0))
      known.emplace(std::make_pair(e.file, e.line), &e);
  if (known.empty()) return;
  for (Event& e : *events) {
    if (e.line == 0 || e.rank >= 0 || e.local_rank >= 0 || e.tp_rank >= 0) continue;
    auto it = known.find(std::make_pair(e.file, e.line));
    if (it == known.end()) continue;
    const Event& w = *it->second;
    e.rank = w.rank, e.local_rank = w.local_rank;
    e.dp_rank = w.dp_rank, e.pp_rank = w.pp_rank, e.tp_rank = w.tp_rank, e.ep_rank = w.ep_rank;
  }
}

std::map<std::pair<std::string, int>, int> RankResolver::ProcessRanks() const {
  std::map<std::pair<std::string, int>, int> out;
  for (const auto& [who, c] : pid_ranks_)
    if (!c.ambiguous) out[who] = c.rank;
  return out;
}

void ResolveRanks(std::vector<Event>* events, std::map<std::pair<std::string, int>, int>* process_ranks) {
  RankResolver r;
  for (Event& e : *events) r.Observe(&e);
  ShareLineRanks(events);
  for (Event& e : *events) r.Assign(&e);
  if (process_ranks) *process_ranks = r.ProcessRanks();
}

}  // namespace tpt
