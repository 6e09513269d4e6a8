// functions_groups.cc: group_duplicate(), a function of rule expressions
// (rules/functions.cc's table; rules/README.md "Expressions").
//
// group_duplicate(kind, group_field, member_field, value_field[, 'members'])
// looks at the events of `kind` that carry all three fields and a host, and
// finds two of the same group (equal group_field) on the same host whose
// members differ but whose value_field is the same. It gives that shared
// value, or with 'members' the two members ("0 and 1"); null when there is
// no such pair.
//
// What it is for: NCCL's own duplicate-GPU check. initTransportsRank
// (NVIDIA/nccl src/init.cc, every 2.x release) compares each peer of a new
// communicator with its own rank: same hostHash and same busId means two
// ranks on one GPU, 'Duplicate GPU detected' (WARN level) and
// ncclInvalidUsage. Every rank prints its own 'ncclCommInitRank comm ...
// rank R nranks N cudaDev D busId B commId C - Init START' line at INFO level
// before that check, so a log without the WARN line (NCCL_DEBUG=INFO filtered
// to a few lines, or a framework that only reports 'invalid usage') still
// shows it: two Init START lines of one commId, one host, two ranks, one busId.
// The same busId on two hosts is normal (every node has a GPU at that slot),
// so the host must match; the hostname stands for NCCL's hostHash, which is
// derived from it (getHostHash: the hostname plus the boot id).
#include <re2/re2.h>

#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "rules/functions_groups.h"
#include "rules/run_index.h"

namespace tpt {

Value GroupDuplicate(const RunScope& s, const std::vector<Value>& a) {
  auto str = [&](size_t i) { return i < a.size() && a[i].is_string() ? a[i].str() : std::string(); };
  const std::string kind = str(0), group = str(1), member = str(2), value = str(3);
  const bool members = str(4) == "members";
  const auto& evs = s.run().events();
  // (host, group, value) -> the first member seen with it.
  std::map<std::tuple<std::string, std::string, std::string>, std::string> seen;
  for (size_t i : s.run().OfKind(kind)) {
    const Event& e = evs[i];
    FieldValue g = e.Get(group), m = e.Get(member), v = e.Get(value);
    if (e.host.empty() || !g.present() || !m.present() || !v.present()) continue;
    std::string gs = JsonToValue(g.json()).ToString(), ms = JsonToValue(m.json()).ToString(),
                vs = JsonToValue(v.json()).ToString();
    auto [it, fresh] = seen.emplace(std::make_tuple(e.host, gs, vs), ms);
    if (fresh || it->second == ms) continue;
    return members ? Value(it->second + " and " + ms) : Value(vs);
  }
  return Value();
}

// oom_card_shared(['pids']): torch's caching-allocator OOM message
// (c10/cuda/CUDACachingAllocator.cpp, torch >= 2.1) names the allocating
// process's current device ('GPU <n> has a total capacity of ...') and lists
// every process NVML reports on that same physical card, 'Process <pid> has
// <size> memory in use.' each, the caller itself as 'Including non-PyTorch
// memory, this process has ...' when NVML's pid is its own (in a container
// every pid is printed as 'Process'). Two OOM messages of two different
// processes that name the same device index and list the same processes (two
// or more pids in common) come from one physical card: the device index alone
// would not say it (with CUDA_VISIBLE_DEVICES per rank every rank is 'GPU 0'
// on its own card, whose list holds only its own process), the shared pid list
// does. Two processes: their ranks differ, or one message names 'this process'
// and the other does not (one process always prints the same form). At least
// one of them must be a rank of the run (a known rank), so the card is the
// run's ranks piled together, not another job's. Gives the device index, or
// with 'pids' the number of processes the two lists hold together; null when
// no such pair. TensorRT-LLM's rank prefix ('[TRT-LLM] [RANK n]',
// tensorrt_llm/logger.py set_rank) behind a progress bar on the same line is
// read from the text when the event has no rank.
Value OomCardShared(const RunScope& s, const std::vector<Value>& a) {
  const bool want_pids = !a.empty() && a[0].is_string() && a[0].str() == "pids";
  // The size's unit and 'memory in use' may be cut off at the end of a cut line:
  // 'Process <pid> has <number>' is already an entry of the list.
  static const RE2 proc("Process (\\d+) has [\\d.]+");
  static const RE2 rank_tag("\\[RANK (\\d+)\\]");
  struct Oom {
    long long gpu;
    int rank;
    bool self_named;
    std::set<long long> pids;
  };
  std::vector<Oom> ooms;
  const auto& evs = s.run().events();
  for (size_t i : s.run().OfKind("cuda_oom")) {
    const Event& e = evs[i];
    FieldValue g = e.Get("gpu");
    if (!g.present()) continue;
    Value gv = JsonToValue(g.json());
    if (!gv.is_number()) continue;
    Oom o{static_cast<long long>(gv.number()), e.rank, e.text.find("this process has") != std::string::npos, {}};
    re2::StringPiece rest(e.text), pid;
    while (RE2::FindAndConsume(&rest, proc, &pid)) o.pids.insert(std::atoll(std::string(pid).c_str()));
    int r = -1;
    if (o.rank < 0 && RE2::PartialMatch(e.text, rank_tag, &r)) o.rank = r;
    ooms.push_back(std::move(o));
  }
  for (size_t i = 0; i < ooms.size(); ++i)
    for (size_t j = i + 1; j < ooms.size(); ++j) {
      const Oom &x = ooms[i], &y = ooms[j];
      if (x.gpu != y.gpu || (x.rank < 0 && y.rank < 0)) continue;
      const bool two = (x.rank >= 0 && y.rank >= 0 && x.rank != y.rank) || x.self_named != y.self_named;
      if (!two) continue;
      std::set<long long> all = x.pids;
      size_t common = 0;
      for (long long p : y.pids) common += all.insert(p).second ? 0 : 1;
      if (common < 2) continue;
      return want_pids ? Value(static_cast<double>(all.size())) : Value(static_cast<double>(x.gpu));
    }
  return Value();
}

}  // namespace tpt
