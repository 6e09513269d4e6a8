// functions_quiet.cc: quiet_for() and count_after(), functions of rule
// expressions (rules/functions.cc's table; rules/README.md "Expressions").
//
// quiet_for(kind) is how long the run went on after the anchor without a line
// of `kind`: the largest time between the anchor and a later event on the
// same clock (both timed, both dates or both times of day), in seconds. Null
// when an event of `kind` follows the anchor (on any rank), when the anchor
// has no time, or when no timed event follows it. What it is for: a server
// that prints a line for every unit of work (SGLang's scheduler logs each
// prefill batch it forms, rules/defs/sglang_scheduler_stall.json) and whose
// other processes go on printing (the HTTP server's access lines): the time
// those others printed over with no work line is how long the work stood.
//
// count_after(kind, field, value[, field2, value2]) counts the events of
// `kind` after the anchor whose field equals value (and field2 value2), in
// the order seen_after uses: the same input stream, or both lines timed.
#include <string>
#include <vector>

#include "rules/functions_quiet.h"
#include "rules/run_index.h"

namespace tpt {

namespace {

std::string Str(const std::vector<Value>& a, size_t i) {
  return i < a.size() && a[i].is_string() ? a[i].str() : std::string();
}

// `e` comes after the anchor `an` (index `i` > `anchor` in the merged stream)
// in an order the log shows: the same stream, or both lines timed.
bool OrderedAfter(const Event& e, size_t i, const Event& an, size_t anchor) {
  return i > anchor && (e.source == an.source || (e.ts && an.ts));
}

bool FieldEquals(const Event& e, const std::vector<Value>& a, size_t f) {
  if (a.size() <= f + 1) return true;
  FieldValue fv = e.Get(Str(a, f));
  return fv.present() && JsonToValue(fv.json()).ToString() == a[f + 1].ToString();
}

}  // namespace

Value QuietFor(const RunScope& s, const std::vector<Value>& a) {
  size_t anchor = s.anchor();
  if (anchor == RunScope::kNoAnchor) return Value();
  const auto& evs = s.run().events();
  const Event& an = evs[anchor];
  if (!an.ts) return Value();
  const std::string kind = Str(a, 0);
  const auto& of_kind = s.run().OfKind(kind);  // in stream order: the latest first
  for (auto it = of_kind.rbegin(); it != of_kind.rend() && *it > anchor; ++it)
    if (OrderedAfter(evs[*it], *it, an, anchor)) return Value();
  double longest = -1;
  for (size_t i = anchor + 1; i < evs.size(); ++i) {
    const Event& e = evs[i];
    if (!e.ts || e.ts_is_time_of_day != an.ts_is_time_of_day) continue;
    double d = *e.ts - *an.ts;
    if (d > longest) longest = d;
  }
  return longest < 0 ? Value() : Value(longest);
}

Value CountAfter(const RunScope& s, const std::vector<Value>& a) {
  size_t anchor = s.anchor();
  const auto& evs = s.run().events();
  double n = 0;
  for (size_t i : s.run().OfKind(Str(a, 0))) {
    if (anchor != RunScope::kNoAnchor && !OrderedAfter(evs[i], i, evs[anchor], anchor)) continue;
    if (FieldEquals(evs[i], a, 1) && FieldEquals(evs[i], a, 3)) ++n;
  }
  return n;
}

}  // namespace tpt
