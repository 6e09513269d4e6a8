// run_scope.cc: the scope rule and finding expressions are evaluated in.
#include <string>

#include "rules/functions.h"
#include "rules/run_index.h"
#include "rules/vocabulary.h"

namespace tpt {

bool RunScope::IsVariable(std::string_view n) {
  static const std::set<std::string_view> kPlain = {"framework", "version", "tp", "pp", "dp", "ep",
                                                    "nranks", "gpu", "gpu_total_bytes", "world_size"};
  if (kPlain.count(n)) return true;
  for (std::string_view p : {"anchor.", "config.", "env."})
    if (n.size() > p.size() && n.substr(0, p.size()) == p) return true;
  return false;
}

bool RunScope::IsKnownKind(std::string_view kind) { return FindEventKind(kind) != nullptr; }

Value RunScope::Lookup(std::string_view n) const {
  if (auto it = vars_.find(std::string(n)); it != vars_.end()) return it->second;
  auto starts = [&](std::string_view p) { return n.size() > p.size() && n.substr(0, p.size()) == p; };
  if (starts("anchor.")) {
    if (anchor_ == kNoAnchor) return Value();
    const Event& e = run_.events()[anchor_];
    std::string f(n.substr(7));
    if (f == "rank") return e.rank < 0 ? Value() : Value(e.rank);
    // For sentences: "rank 3", or "a rank" when the line does not say which
    // (TGI's processes are shards: "a shard").
    if (f == "who")
      return e.rank >= 0 ? Value("rank " + std::to_string(e.rank)) : Value(run_.framework() == "tgi" ? "a shard" : "a rank");
    if (f == "kind") return e.kind;
    if (f == "family") return e.family;
    if (f == "text") return FullText(e);
    if (f == "line") return static_cast<double>(e.line);
    if (f == "ts") return e.ts ? Value(*e.ts) : Value();
    if (f == "consequence") return e.consequence;
    if (FieldValue v = e.Get(f); v.present()) return JsonToValue(v.json());
    return Value();
  }
  if (starts("config.")) {
    std::string k(n.substr(7));
    if (run_.config().contains(k)) return JsonToValue(run_.config()[k]);
    return Value();
  }
  if (starts("env.")) {
    auto it = run_.env().find(std::string(n.substr(4)));
    return it == run_.env().end() ? Value() : Value(it->second);
  }
  if (n == "framework") return run_.framework().empty() ? Value() : Value(run_.framework());
  if (n == "version") return run_.version().empty() ? Value() : Value(run_.version());
  if (n == "gpu") return run_.gpu().empty() ? Value() : Value(run_.gpu());
  if (n == "gpu_total_bytes") return run_.gpu_total_bytes() > 0 ? Value(run_.gpu_total_bytes()) : Value();
  if (n == "nranks") return static_cast<double>(run_.ranks().size());
  if (n == "world_size") return run_.WorldSize() > 0 ? Value(run_.WorldSize()) : Value();
  if (n == "tp" || n == "pp" || n == "dp" || n == "ep") {
    int v = run_.ConfigInt((std::string(n) + "_size").c_str());
    return v > 0 ? Value(v) : Value();
  }
  return Value();
}

Value RunScope::Call(std::string_view name, const std::vector<Value>& args) const {
  const FunctionDef* f = FindFunction(name);
  return f && f->fn ? f->fn(*this, args) : Value();
}

}  // namespace tpt
