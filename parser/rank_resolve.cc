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

// The first positive integer `key` of a server_args event, else 0.
int SizeFromServerArgs(const std::vector<Event>& events, const char* key) {
  for (const Event& e : events) {
    if (e.kind != "server_args") continue;
    auto it = e.fields.find(key);
    if (it != e.fields.end() && it->is_number_integer() && it->get<int64_t>() > 0 &&
        it->get<int64_t>() < (1 << 20)) {
      return static_cast<int>(it->get<int64_t>());
    }
  }
  return 0;
}

}  // namespace

void ResolveRanks(std::vector<Event>* events) {
  static const RE2 kDp("_DP(\\d{1,6})"), kPp("_PP(\\d{1,6})"), kTp("_TP(\\d{1,6})"), kEp("_EP(\\d{1,6})");
  int max_tp = -1, max_pp = -1;
  // tp rank -> the (dp, pp) pairs it was seen with.
  std::map<int, std::set<std::pair<int, int>>> tp_groups;
  for (Event& e : *events) {
    if (!e.process.empty()) {
      FillFromProcess(kDp, e.process, &e.dp_rank);
      FillFromProcess(kPp, e.process, &e.pp_rank);
      FillFromProcess(kTp, e.process, &e.tp_rank);
      FillFromProcess(kEp, e.process, &e.ep_rank);
    }
    if (e.tp_rank < 0) continue;
    max_tp = std::max(max_tp, e.tp_rank);
    max_pp = std::max(max_pp, e.pp_rank);
    tp_groups[e.tp_rank].insert(std::make_pair(std::max(e.dp_rank, 0), std::max(e.pp_rank, 0)));
  }
  if (max_tp < 0) return;
  bool tp_is_global = std::all_of(tp_groups.begin(), tp_groups.end(),
                                  [](const auto& g) { return g.second.size() == 1; });
  // Sizes: never below what the run printed, so two ranks cannot collide.
  int tp_size = std::max(SizeFromServerArgs(*events, "tp_size"), max_tp + 1);
  int pp_size = std::max({SizeFromServerArgs(*events, "pp_size"), max_pp + 1, 1});
  for (Event& e : *events) {
    if (e.rank >= 0 || e.tp_rank < 0) continue;
    if (tp_is_global) {
      e.rank = e.tp_rank;
    } else {
      int64_t r = (static_cast<int64_t>(std::max(e.dp_rank, 0)) * pp_size + std::max(e.pp_rank, 0)) * tp_size +
                  e.tp_rank;
      e.rank = r < (1 << 30) ? static_cast<int>(r) : -1;
    }
  }
}

}  // namespace tpt
