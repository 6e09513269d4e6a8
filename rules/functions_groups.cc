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
#include <map>
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

}  // namespace tpt
