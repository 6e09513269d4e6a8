// functions.cc: the functions of rule and finding expressions, one table.
#include "rules/functions.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <map>
#include <memory>
#include <set>
#include <unordered_map>

#include <re2/re2.h>

#include "base/strings.h"
#include "memory/memory_model.h"
#include "parser/values.h"
#include "rules/frame_stage.h"
#include "rules/frames.h"
#include "rules/functions_groups.h"
#include "rules/functions_quiet.h"
#include "rules/run_index.h"
#include "rules/terminal.h"
#include "rules/vocabulary.h"

namespace tpt {

namespace {

using Args = std::vector<Value>;

// Argument i as a string when it is one ("" otherwise): kinds and fields.
std::string Str(const Args& a, size_t i) { return i < a.size() && a[i].is_string() ? a[i].str() : std::string(); }
// Argument i as text, whatever its type ("" when null or absent).
std::string Text(const Args& a, size_t i) { return i < a.size() && !a[i].is_null() ? a[i].ToString() : ""; }

bool ContainsCaseless(std::string_view hay, std::string_view needle) {
  if (needle.empty()) return true;
  return Lower(hay).find(Lower(needle)) != std::string::npos;
}

// RE2 patterns come from rule files; compiled once per thread, caseless.
const RE2* Pattern(const std::string& re) {
  thread_local std::unordered_map<std::string, std::unique_ptr<RE2>> cache;
  auto& slot = cache[re];
  if (!slot) {
    RE2::Options o;
    o.set_log_errors(false);
    o.set_case_sensitive(false);
    slot = std::make_unique<RE2>(re, o);
  }
  return slot->ok() ? slot.get() : nullptr;
}

Value Extract(const std::string& text, const std::string& re) {
  const RE2* p = Pattern(re);
  if (!p) return Value();
  re2::StringPiece whole;
  if (p->NumberOfCapturingGroups() == 0) {
    // (Match, not PartialMatch: PartialMatch refuses more arguments than the
    // pattern has groups, so a pattern without one never matched.)
    if (!p->Match(text, 0, text.size(), RE2::UNANCHORED, &whole, 1)) return Value();
    return std::string(whole);
  }
  // The first capture group that matched something.
  int n = p->NumberOfCapturingGroups() + 1;
  std::vector<re2::StringPiece> groups(n);
  if (!p->Match(text, 0, text.size(), RE2::UNANCHORED, groups.data(), n)) return Value();
  for (int i = 1; i < n; ++i)
    if (groups[i].data() != nullptr) return std::string(groups[i]);
  return std::string(groups[0]);
}

// ---- Over events of one kind: count('k'), first('k', 'f'), ... ----

Value Count(const RunScope& s, const Args& a) { return static_cast<double>(s.run().CountOf(Str(a, 0))); }
Value Has(const RunScope& s, const Args& a) { return !s.run().OfKind(Str(a, 0)).empty(); }

std::set<int> RanksOf(const RunScope& s, const std::string& kind) {
  std::set<int> r;
  for (size_t i : s.run().OfKind(kind))
    if (s.run().events()[i].rank >= 0) r.insert(s.run().events()[i].rank);
  return r;
}

Value Ranks(const RunScope& s, const Args& a) { return static_cast<double>(RanksOf(s, Str(a, 0)).size()); }

Value MissingRanks(const RunScope& s, const Args& a) {
  size_t all = s.run().ranks().size();
  return static_cast<double>(all - std::min(all, RanksOf(s, Str(a, 0)).size()));
}

// The ranks of the run (0 .. world size - 1) with no event of `kind`: the
// ones the others waited for; null when no rank printed it.
std::vector<int> RanksWithout(const RunScope& s, const Args& a) {
  std::set<int> with = RanksOf(s, Str(a, 0));
  std::vector<int> without;
  if (with.empty()) return without;
  for (int r = 0; r < s.run().WorldSize() && without.size() <= 64; ++r)
    if (!with.count(r)) without.push_back(r);
  return without;
}

Value RanksWithoutList(const RunScope& s, const Args& a) {
  std::vector<int> without = RanksWithout(s, a);
  if (without.empty()) return Value();
  std::string list;
  for (int r : without) list += (list.empty() ? "" : ", ") + std::to_string(r);
  return list;
}

Value RankWithout(const RunScope& s, const Args& a) {
  std::vector<int> without = RanksWithout(s, a);
  return without.size() == 1 ? Value(without[0]) : Value();
}

Value FirstRank(const RunScope& s, const Args& a) {
  for (size_t i : s.run().OfKind(Str(a, 0)))
    if (s.run().events()[i].rank >= 0) return s.run().events()[i].rank;
  return Value();
}

enum class Pick { kFirst, kLast, kMin, kMax, kRank };

template <Pick P>
Value FieldOf(const RunScope& s, const Args& a) {
  const auto& evs = s.run().events();
  std::string field = Str(a, 1);
  Value best;
  for (size_t i : s.run().OfKind(Str(a, 0))) {
    if (P == Pick::kRank && !s.SameRank(evs[i])) continue;
    FieldValue fv = evs[i].Get(field);
    if (!fv.present()) continue;
    Value v = JsonToValue(fv.json());
    if (v.is_null()) continue;
    if (P == Pick::kFirst || P == Pick::kRank) return v;
    if (P == Pick::kLast) best = v;
    else if (v.is_number() && (best.is_null() || (P == Pick::kMin ? v.number() < best.number()
                                                                     : v.number() > best.number())))
      best = v;
  }
  return best;
}

// The rank whose event of `kind` has the smallest (largest) `field`: e.g.
// the rank behind in collective sequence numbers.
template <bool kMin>
Value ArgRank(const RunScope& s, const Args& a) {
  const auto& evs = s.run().events();
  std::string field = Str(a, 1);
  Value best, rank;
  for (size_t i : s.run().OfKind(Str(a, 0))) {
    FieldValue fv = evs[i].Get(field);
    if (evs[i].rank < 0 || !fv.present()) continue;
    Value v = JsonToValue(fv.json());
    if (!v.is_number()) continue;
    if (best.is_null() || (kMin ? v.number() < best.number() : v.number() > best.number())) best = v, rank = evs[i].rank;
  }
  return rank;
}

// count_where / ranks_where('kind', 'field', value): events (distinct ranks)
// of kind whose field equals value.
template <bool kRanks>
Value Where(const RunScope& s, const Args& a) {
  const auto& evs = s.run().events();
  // (kind, field, value[, field2, value2]): the events whose field equals the
  // value, and field2 value2 too when given (both must be present). A null
  // value2 asks only that field2 be present (count_where(k, 'seq', 7, 'numel',
  // null): the events of collective 7 whose line still holds its size).
  auto equal = [&](const auto& ev, size_t f) {
    FieldValue fv = ev.Get(Str(a, f));
    if (!fv.present() || a.size() <= f + 1) return false;
    if (f == 3 && a[f + 1].is_null()) return true;
    return JsonToValue(fv.json()).ToString() == a[f + 1].ToString();
  };
  std::set<int> r;
  double n = 0;
  for (size_t i : s.run().OfKind(Str(a, 0))) {
    if (kRanks && evs[i].rank < 0) continue;
    if (!equal(evs[i], 1) || (a.size() > 3 && !equal(evs[i], 3))) continue;
    ++n;
    r.insert(evs[i].rank);
  }
  return kRanks ? static_cast<double>(r.size()) : n;
}

// ---- Relative to the anchor ----

// The anchor's text, or that of an event printed within 3 events of it on its
// rank (an OOM line and the traceback around it), holds the substring.
Value NearText(const RunScope& s, const Args& a) {
  size_t an = s.anchor();
  if (an == RunScope::kNoAnchor || a.empty()) return false;
  const auto& evs = s.run().events();
  std::string needle = a[0].ToString();
  size_t lo = an >= 3 ? an - 3 : 0, hi = std::min(evs.size(), an + 4);
  for (size_t i = lo; i < hi; ++i)
    if ((i == an || s.SameRank(evs[i])) && ContainsCaseless(FullText(evs[i]), needle)) return true;
  return false;
}

// The traceback of the anchor (its own lines, or the nearest event on its
// rank that has frames: an OOM line and the traceback around it), outermost
// frame first; empty when none. Near: within 3 events, or within 4 lines of
// the lines a traceback spans in the same input (one line can be several
// events: vLLM's 'ERROR ... OOM' line, then 'EngineCore failed to start.' and
// its traceback, each line also a line that says error).
// `cut`, when given: whether that traceback lost its outermost frames (the
// parser's `headerless`: no "Traceback" line above them).
std::vector<Frame> AnchorFrames(const RunScope& s, bool* cut = nullptr) {
  size_t an = s.anchor();
  if (an == RunScope::kNoAnchor) return {};
  const auto& evs = s.run().events();
  constexpr size_t kEvents = 3, kFar = 10;
  constexpr uint64_t kLines = 4;
  size_t lo = an >= kFar ? an - kFar : 0, hi = std::min(evs.size(), an + kFar + 1);
  std::vector<size_t> order = {an};
  for (size_t d = 1; d <= kFar; ++d) {
    if (an + d < hi) order.push_back(an + d);
    if (an >= lo + d) order.push_back(an - d);
  }
  const Event& a = evs[an];
  auto near = [&](size_t i) {
    const size_t d = i > an ? i - an : an - i;
    if (d <= kEvents) return true;
    const Event& e = evs[i];
    if (e.source != a.source) return false;
    // A traceback spans its frames: before its exception line (the event's line), or
    // after its 'Traceback' line when it was cut.
    const uint64_t reach = kLines + e.extra_lines.size() + 1;
    const uint64_t lines = e.line > a.line ? e.line - a.line : a.line - e.line;
    if (lines <= reach) return true;
    // A paste whose lines a terminal cut keeps their numbers: each joined line is
    // followed by empty ones, so the same traceback spans up to 4x the lines (a
    // 320-column line cut at 80). Counted then in the lines events sit on between them.
    if (lines > 4 * reach) return false;
    const uint64_t from = std::min(a.line, e.line), to = std::max(a.line, e.line);
    uint64_t with_events = 0, last = from;
    for (size_t j = std::min(i, an) + 1; j < std::max(i, an); ++j) {
      const Event& b = evs[j];
      if (b.source != a.source || b.line <= last || b.line >= to) continue;
      ++with_events;
      last = b.line;
    }
    return with_events + 1 <= reach;
  };
  for (size_t i : order) {
    if (i != an && (!s.SameRank(evs[i]) || !near(i))) continue;
    std::vector<Frame> fr = FramesOf(FullText(evs[i]));
    if (fr.empty()) continue;
    if (cut) *cut = evs[i].Get("headerless").boolean();
    return fr;
  }
  return {};
}

Value Frames(const RunScope& s, const Args&) {
  std::vector<Frame> fr = AnchorFrames(s);
  if (fr.empty()) return Value();
  std::string joined;
  for (const Frame& f : fr) joined += (joined.empty() ? "" : " > ") + f.function;
  return joined;
}

// The anchor ended its process (rules/terminal.h): no progress after it.
Value Terminal(const RunScope& s, const Args&) {
  if (s.anchor() == RunScope::kNoAnchor) return false;
  const Terminals& t = s.run().Cached<Terminals>("terminals", [&] { return Terminals(s.run()); });
  return t.IsEnd(s.anchor());
}

// The stage the anchor's traceback was raised in (rules/stages.json), from
// its frames; null without frames or when no frame names a stage.
Value Stage(const RunScope& s, const Args&) {
  std::vector<std::string> frames;
  bool cut = false;
  for (const Frame& f : AnchorFrames(s, &cut)) frames.push_back(f.file + "::" + f.function);
  std::string stage = StageOfFrames(frames, cut);
  return stage.empty() ? Value() : Value(stage);
}

// The kind of another error on the anchor's own line that names what went
// wrong (parser/events.json: a failure kind, not a warning, not generic, not
// a consequence): the error a wrapper's message carries, SGLang's 'Capture
// cuda graph failed: <e>' holding a gloo timeout, an OOM, an illegal address,
// vLLM's 'Exception in worker ... while processing method X: NCCL error: ...'.
// Null when the line holds none.
// A Python traceback raised while handling another ("During handling of the
// above exception, another exception occurred:" / "The above exception was
// the direct cause of the following exception:") is that error's wrapper
// too: Python prints the handled exception's line, a blank line, that
// sentence and a blank line right above the new "Traceback" line, so an
// exception of the same producer at most 4 lines above the anchor
// traceback's first line is the one it wraps, and its line is read as well
// (Triton's ptxas CalledProcessError under a capture traceback the log cut).
Value LineFailure(const RunScope& s, const Args&) {
  size_t an = s.anchor();
  if (an == RunScope::kNoAnchor) return Value();
  const auto& evs = s.run().events();
  const Event& a = evs[an];
  auto specific = [&](const Event& e) {
    if (&e == &a || e.kind == a.kind || e.consequence) return false;
    const EventKind* k = FindEventKind(e.kind);
    return k != nullptr && k->failure && !k->warning && !k->generic;
  };
  auto on_line = [&](size_t at) -> Value {  // every event of that line (RunIndex::OnLine)
    for (size_t i : s.run().OnLine(evs[at].source, evs[at].line))
      if (specific(evs[i])) return Value(evs[i].kind);
    return Value();
  };
  if (Value v = on_line(an); !v.is_null() || a.kind != "exception") return v;
  FieldValue tb = a.Get("traceback_line");
  uint64_t first = tb.is_number() && tb.number() > 0 ? static_cast<uint64_t>(tb.number()) : a.line;
  for (size_t j = an; j-- > 0;) {
    const Event& e = evs[j];
    if (e.source != a.source || e.line >= first) continue;
    if (e.line + 4 < first) break;
    if (e.kind != "exception" || e.Get("cut").boolean() || e.Get("type").string().empty()) continue;
    if (e.rank >= 0 && a.rank >= 0 && e.rank != a.rank) continue;
    return on_line(j);
  }
  return Value();
}

template <std::string Frame::*M>
Value Innermost(const RunScope& s, const Args&) {
  std::vector<Frame> fr = AnchorFrames(s);
  return fr.empty() ? Value() : Value(fr.back().*M);
}

template <bool kBefore>
Value Seen(const RunScope& s, const Args& a) {
  const auto& idx = s.run().OfKind(Str(a, 0));
  size_t anchor = s.anchor();
  if (anchor == RunScope::kNoAnchor) return !idx.empty();
  const auto& evs = s.run().events();
  const Event& an = evs[anchor];
  for (size_t i : idx) {
    if (!s.SameRank(evs[i])) continue;
    // Streams without a shared clock (stdout + stderr of one run, no
    // timestamps) have no order between them: an error ends its run, so a
    // phase line of another stream counts as before it, never after.
    bool unordered = evs[i].source != an.source && (!evs[i].ts || !an.ts);
    if (kBefore ? (i < anchor || unordered) : (i > anchor && !unordered)) return true;
  }
  return false;
}

// Some process of the run printed a start-up phase line after the anchor
// (parser/events.json `phase`, before serving): whatever step the anchor's
// process waited on ended. Any rank or process counts, since the line that
// waits (vLLM's EngineCore at its broadcast queue, shm_broadcast.py) is not
// the one doing the work (its Worker compiling, profiling, capturing).
// Serving lines do not count: vLLM's API server prints its statistics on a
// timer while the engine hangs. Order as seen_after: the same input stream,
// or both lines timed.
Value StartupAfter(const RunScope& s, const Args&) {
  size_t anchor = s.anchor();
  if (anchor == RunScope::kNoAnchor) return false;
  static const int kServing = PhaseIndex("serving");
  const auto& evs = s.run().events();
  const Event& an = evs[anchor];
  for (size_t i = anchor + 1; i < evs.size(); ++i) {
    const Event& e = evs[i];
    if (e.source != an.source && (!e.ts || !an.ts)) continue;
    const EventKind* k = FindEventKind(e.kind);
    if (k == nullptr || k->phase.empty()) continue;
    int ph = PhaseIndex(k->phase);
    if (ph >= 0 && ph < kServing) return true;
  }
  return false;
}

Value CountBefore(const RunScope& s, const Args& a) {
  const std::string kind = Str(a, 0);
  return static_cast<double>(s.anchor() == RunScope::kNoAnchor ? s.run().CountOf(kind)
                                                                : s.run().CountBefore(kind, s.anchor()));
}

Value KindBefore(const RunScope& s, const Args& a) {
  const auto& idx = s.run().OfKind(Str(a, 0));
  const auto& other = s.run().OfKind(Str(a, 1));
  if (idx.empty()) return false;
  return other.empty() || idx.front() < other.front();
}

// ---- Text ----

Value Contains(const RunScope&, const Args& a) {
  if (a.size() < 2 || a[0].is_null()) return false;
  return ContainsCaseless(a[0].ToString(), a[1].ToString());
}

Value Matches(const RunScope&, const Args& a) {
  if (a.size() < 2 || a[0].is_null() || !a[1].is_string()) return false;
  const RE2* re = Pattern(a[1].str());
  return re && RE2::PartialMatch(a[0].ToString(), *re);
}

Value AnyText(const RunScope& s, const Args& a) { return s.run().AnyText(Str(a, 0)); }

template <bool kGe>
Value VersionCompare(const RunScope& s, const Args& a) {
  if (s.run().version().empty() || a.empty()) return Value();
  int c = CompareVersions(s.run().version(), a[0].ToString());
  return kGe ? c >= 0 : c < 0;
}

Value Choose(const RunScope&, const Args& a) {
  if (a.size() != 3) return Value();
  return a[0].Truthy() ? a[1] : a[2];
}

Value ExtractFn(const RunScope&, const Args& a) {
  if (a.size() < 2 || a[0].is_null()) return Value();
  return Extract(a[0].ToString(), Text(a, 1));
}

// oom_process_bytes(text, 'others' | 'own'): the processes torch's OOM
// message lists on the card, one 'Process <pid> has <size> memory in use.'
// each and 'Including non-PyTorch memory, this process has <size> ...' for
// the failing one when NVML's pid is its own (c10/cuda/CUDACachingAllocator.cpp
// reportProcessMemoryInfo, torch >= 2.1; sizes as format_size prints them).
// In a container every process is a 'Process <pid>': the largest is taken as
// the failing one, and a process whose pid is within 64 of it as started with
// it (a sibling rank or worker of the same launch: spawned together, adjacent
// pids), not as another's. 'own': the failing process's bytes; 'others': the
// rest's. Null when the text lists no process.
Value OomProcessBytes(const RunScope&, const Args& a) {
  if (a.size() < 2 || a[0].is_null()) return Value();
  static const RE2 proc("Process (\\d+) has ([\\d.]+) ((?:[KMGT]i)?B|bytes) memory in use");
  static const RE2 self("this process has ([\\d.]+) ((?:[KMGT]i)?B|bytes) memory in use");
  auto bytes = [](re2::StringPiece n, re2::StringPiece u) -> double {
    auto v = ConvertField(std::string_view(n.data(), n.size()), "bytes", std::string_view(u.data(), u.size()), false);
    return v.ok() && v->is_number() ? v->get<double>() : 0;
  };
  const std::string text = a[0].ToString();
  struct Proc {
    long long pid;
    double bytes;
  };
  std::vector<Proc> procs;
  re2::StringPiece rest(text), pid, n, u;
  while (RE2::FindAndConsume(&rest, proc, &pid, &n, &u))
    procs.push_back({std::atoll(std::string(pid).c_str()), bytes(n, u)});
  double own = -1;
  if (RE2::PartialMatch(text, self, &n, &u)) own = bytes(n, u);
  if (procs.empty() && own < 0) return Value();
  const bool want_own = Text(a, 1) == "own";
  if (own >= 0) {  // the failing process named itself: every listed pid is another
    if (want_own) return Value(own);
    double sum = 0;
    for (const Proc& p : procs) sum += p.bytes;
    return Value(sum);
  }
  const Proc* mine = &procs.front();
  for (const Proc& p : procs)
    if (p.bytes > mine->bytes) mine = &p;
  if (want_own) return Value(mine->bytes);
  constexpr long long kSiblingPids = 64;
  double sum = 0;
  for (const Proc& p : procs)
    if (&p != mine && std::llabs(p.pid - mine->pid) > kSiblingPids) sum += p.bytes;
  return Value(sum);
}

Value Num(const RunScope&, const Args& a) {
  if (a.empty() || a[0].is_null()) return Value();
  if (a[0].is_number()) return a[0];
  const std::string s = a[0].ToString();
  char* end = nullptr;
  double d = std::strtod(s.c_str(), &end);
  return end != s.c_str() && *end == '\0' ? Value(d) : Value();
}

Value Concat(const RunScope&, const Args& a) {
  std::string out;
  for (const auto& v : a) {
    if (v.is_null()) return Value();
    out += v.ToString();
  }
  return out;
}

Value LowerFn(const RunScope&, const Args& a) {
  return a.empty() || a[0].is_null() ? Value() : Value(Lower(a[0].ToString()));
}

// The same for every anchor: searched once per run.
Value FindText(const RunScope& s, const Args& a) {
  const std::string re = Text(a, 0);
  return s.run().Cached<Value>("find_text\n" + re, [&] {
    for (const Event& e : s.run().events()) {
      Value v = Extract(FullText(e), re);
      if (!v.is_null()) return v;
    }
    return Value();
  });
}

enum class Agg { kMean, kMeanNonzero, kSum };

template <Agg A>
Value Aggregate(const RunScope& s, const Args& a) {
  const auto& evs = s.run().events();
  const std::string field = Text(a, 1);
  double sum = 0, n = 0;
  for (size_t i : s.run().OfKind(Text(a, 0))) {
    FieldValue f = evs[i].Get(field);
    if (!f.present()) continue;
    Value v = JsonToValue(f.json());
    if (!v.is_number() || (A == Agg::kMeanNonzero && v.number() == 0)) continue;
    sum += v.number();
    ++n;
  }
  if (n == 0) return Value();
  return A == Agg::kSum ? sum : sum / n;
}

// "NAME=value" of the first env var whose name matches and whose value is set
// and not 0/false/no/off.
Value EnvMatch(const RunScope& s, const Args& a) {
  const RE2* p = Pattern(Text(a, 0));
  if (!p) return Value();
  for (const auto& [k, v] : s.run().env()) {
    std::string lv = Lower(v);
    if (lv.empty() || lv == "0" || lv == "false" || lv == "no" || lv == "off") continue;
    if (RE2::PartialMatch(k, *p)) return k + "=" + v;
  }
  return Value();
}

// Events of kind on the anchor's rank (and rank-less ones) before the anchor:
// binary searches in the kind's events of each rank, listed once.
Value RankCountBefore(const RunScope& s, const Args& a) {
  const auto& evs = s.run().events();
  const std::string kind = Text(a, 0);
  int rank = AnchorRank(s);
  size_t limit = s.anchor() == RunScope::kNoAnchor ? evs.size() : s.anchor();
  const auto& by_rank = s.run().Cached<std::map<int, std::vector<size_t>>>("of_kind_by_rank\n" + kind, [&] {
    std::map<int, std::vector<size_t>> m;
    for (size_t i : s.run().OfKind(kind)) m[evs[i].rank < 0 ? -1 : evs[i].rank].push_back(i);
    return m;
  });
  auto before = [&](int r) -> double {
    auto it = by_rank.find(r);
    if (it == by_rank.end()) return 0;
    return static_cast<double>(std::lower_bound(it->second.begin(), it->second.end(), limit) - it->second.begin());
  };
  if (rank < 0) {
    double n = 0;
    for (const auto& [r, list] : by_rank) n += before(r);
    return n;
  }
  return before(rank) + before(-1);
}

// Field of the n-th (1-based) event of kind on the anchor's rank.
Value RankNth(const RunScope& s, const Args& a) {
  int rank = AnchorRank(s);
  std::string field = Text(a, 1);
  double want = a.size() > 2 && a[2].is_number() ? a[2].number() : 1;
  double n = 0;
  for (size_t i : s.run().OfKind(Text(a, 0))) {
    const Event& e = s.run().events()[i];
    if (rank >= 0 && e.rank >= 0 && e.rank != rank) continue;
    FieldValue f = e.Get(field);
    if (!f.present()) continue;
    Value v = JsonToValue(f.json());
    if (v.is_null()) continue;
    if (++n == want) return v;
  }
  return Value();
}

// What a rank does after a line of this kind (parser/events.json
// phase_label), or null.
const char* PhaseAfter(const std::string& kind) {
  const EventKind* k = FindEventKind(kind);
  return k == nullptr || k->phase_label.empty() ? nullptr : k->phase_label.c_str();
}

// The startup phase of the anchor's rank when the anchor was printed: the
// last phase line before it on its rank (or rank-less); binary searches in
// the run's phase lines of each rank, listed once.
Value Phase(const RunScope& s, const Args&) {
  size_t anchor = s.anchor();
  if (anchor == RunScope::kNoAnchor) return Value();
  const auto& evs = s.run().events();
  int rank = evs[anchor].rank;
  using Marks = std::map<int, std::vector<std::pair<size_t, const char*>>>;  // rank (-1: none) -> (index, phase)
  const Marks& marks = s.run().Cached<Marks>("phase_marks", [&] {
    Marks m;
    for (size_t i = 0; i < evs.size(); ++i)
      if (const char* p = PhaseAfter(evs[i].kind)) m[evs[i].rank < 0 ? -1 : evs[i].rank].push_back({i, p});
    return m;
  });
  std::pair<size_t, const char*> best = {0, nullptr};
  auto last_before = [&](int r) {
    auto it = marks.find(r);
    if (it == marks.end()) return;
    auto at = std::lower_bound(it->second.begin(), it->second.end(), std::make_pair(anchor, (const char*)nullptr));
    if (at != it->second.begin() && (!best.second || std::prev(at)->first > best.first)) best = *std::prev(at);
  };
  if (rank < 0) {
    for (const auto& [r, list] : marks) last_before(r);
  } else {
    last_before(rank);
    last_before(-1);
  }
  return best.second ? best.second : "startup";
}

Value CeilPow2(const RunScope&, const Args& a) {
  if (a.empty() || !a[0].is_number()) return Value();
  double x = a[0].number();
  if (x <= 0 || x > 1e15) return Value();
  double p = 1;
  while (p < x) p *= 2;
  return p;
}

// largest_divisor_at_most(n, m): the largest d in [1, m] that divides n (a
// parallel size that splits n heads evenly); null unless n, m are whole and >= 1.
Value LargestDivisorAtMost(const RunScope&, const Args& a) {
  if (a.size() < 2 || !a[0].is_number() || !a[1].is_number()) return Value();
  double n = a[0].number(), m = a[1].number();
  if (n < 1 || m < 1 || n > 1e9 || n != static_cast<long long>(n) || m != static_cast<long long>(m)) return Value();
  for (long long d = std::min<long long>(static_cast<long long>(m), static_cast<long long>(n)); d > 1; --d)
    if (static_cast<long long>(n) % d == 0) return static_cast<double>(d);
  return 1.0;
}

template <bool kSm>
Value GpuInfo(const RunScope& s, const Args&) {
  const std::string& name = kSm && s.run().gpu().empty() ? s.run().host_gpu() : s.run().gpu();
  if (name.empty()) return Value();
  auto g = memory::FindGpu(name);
  if (!g.ok()) return Value();
  if (kSm) return g->sm > 0 ? Value(g->sm) : Value();
  return g->interconnect.empty() ? Value() : Value(g->interconnect);
}

constexpr int kAny = -1;

const std::vector<FunctionDef>& Table() {
  static const std::vector<FunctionDef> t = {
      // Pure (rules/expr.cc evaluates them).
      {"min", 1, kAny, nullptr}, {"max", 1, kAny, nullptr}, {"abs", 1, 1, nullptr}, {"gib", 1, 1, nullptr},
      {"mib", 1, 1, nullptr}, {"ceil2", 1, 1, nullptr}, {"floor2", 1, 1, nullptr}, {"floor", 1, 1, nullptr}, {"round2", 1, 1, nullptr},
      {"round1", 1, 1, nullptr}, {"coalesce", 1, kAny, nullptr}, {"if", 2, 3, nullptr},
      // Events of one kind.
      {"count", 1, 1, Count}, {"has", 1, 1, Has}, {"ranks", 1, 1, Ranks}, {"missing_ranks", 1, 1, MissingRanks},
      {"ranks_without", 1, 1, RanksWithoutList}, {"rank_without", 1, 1, RankWithout},
      {"first_rank", 1, 1, FirstRank}, {"first", 2, 2, FieldOf<Pick::kFirst>}, {"last", 2, 2, FieldOf<Pick::kLast>},
      {"minof", 2, 2, FieldOf<Pick::kMin>}, {"maxof", 2, 2, FieldOf<Pick::kMax>},
      {"rank_value", 2, 2, FieldOf<Pick::kRank>}, {"argmin_rank", 2, 2, ArgRank<true>},
      {"argmax_rank", 2, 2, ArgRank<false>}, {"count_where", 3, 5, Where<false>}, {"ranks_where", 3, 5, Where<true>},
      {"meanof", 2, 2, Aggregate<Agg::kMean>}, {"meanof_nonzero", 2, 2, Aggregate<Agg::kMeanNonzero>},
      {"sumof", 2, 2, Aggregate<Agg::kSum>}, {"group_duplicate", 4, 5, GroupDuplicate},
      {"oom_card_shared", 0, 1, OomCardShared},
      // Relative to the anchor.
      {"near_text", 1, 1, NearText}, {"frames", 0, 0, Frames}, {"stage", 0, 0, Stage}, {"terminal", 0, 0, Terminal},
      {"line_failure", 0, 0, LineFailure},
      {"innermost_function", 0, 0, Innermost<&Frame::function>}, {"innermost_code", 0, 0, Innermost<&Frame::code>},
      {"innermost_file", 0, 0, Innermost<&Frame::file>}, {"seen_before", 1, 1, Seen<true>},
      {"seen_after", 1, 1, Seen<false>}, {"startup_after", 0, 0, StartupAfter}, {"count_before", 1, 1, CountBefore}, {"kind_before", 2, 2, KindBefore},
      {"rank_count_before", 1, 1, RankCountBefore}, {"rank_nth", 2, 3, RankNth}, {"phase", 0, 0, Phase},
      {"quiet_for", 1, 1, QuietFor}, {"count_after", 3, 5, CountAfter},
      // Text and values.
      {"contains", 2, 2, Contains}, {"matches", 2, 2, Matches}, {"any_text", 1, 1, AnyText},
      {"find_text", 1, 1, FindText}, {"extract", 2, 2, ExtractFn}, {"lower", 1, 1, LowerFn}, {"num", 1, 1, Num},
      {"oom_process_bytes", 2, 2, OomProcessBytes},
      {"concat", 1, kAny, Concat}, {"choose", 3, 3, Choose}, {"ceil_pow2", 1, 1, CeilPow2},
      {"largest_divisor_at_most", 2, 2, LargestDivisorAtMost},
      {"env_match", 1, 1, EnvMatch},
      // The run.
      {"version_ge", 1, 1, VersionCompare<true>}, {"version_lt", 1, 1, VersionCompare<false>},
      {"gpu_interconnect", 0, 0, GpuInfo<false>}, {"gpu_sm", 0, 0, GpuInfo<true>},
  };
  return t;
}

}  // namespace

const std::vector<FunctionDef>& AllFunctions() { return Table(); }

int RegexArgument(std::string_view name) {
  if (name == "matches" || name == "extract") return 1;
  if (name == "find_text" || name == "env_match") return 0;
  return -1;
}

std::string PatternError(const std::string& re) {
  RE2::Options o;
  o.set_log_errors(false);
  o.set_case_sensitive(false);
  RE2 p(re, o);
  return p.ok() ? "" : p.error();
}

const FunctionDef* FindFunction(std::string_view name) {
  for (const FunctionDef& f : Table())
    if (name == f.name) return &f;
  return nullptr;
}

int TracebackRank(const RunScope& s) {
  size_t anchor = s.anchor();
  if (anchor == RunScope::kNoAnchor) return -1;
  const auto& evs = s.run().events();
  const Event& a = evs[anchor];
  if (a.rank >= 0) return a.rank;
  // The last line of a traceback carries no prefix; the header that opened it
  // does ("[... TP3] Scheduler hit an exception: Traceback ..."). Look back a
  // traceback's length in the same file.
  constexpr uint64_t kMaxTracebackLines = 64;
  const auto& same_file = s.run().OfSource(a.source);
  auto at = std::lower_bound(same_file.begin(), same_file.end(), anchor);
  while (at != same_file.begin()) {
    const Event& e = evs[*--at];
    if (e.line + kMaxTracebackLines < a.line) break;
    if (e.rank >= 0 && (e.kind == "worker_exception" || e.kind == "exception")) return e.rank;
  }
  return -1;
}

int AnchorRank(const RunScope& s) {
  if (int r = TracebackRank(s); r >= 0) return r;
  return s.run().ranks().empty() ? -1 : *s.run().ranks().begin();
}

std::string ArityText(const FunctionDef& f) {
  auto n = [](int k) { return std::to_string(k) + (k == 1 ? " argument" : " arguments"); };
  if (f.max_args < 0) return std::to_string(f.min_args) + " or more arguments";
  if (f.min_args == f.max_args) return n(f.min_args);
  if (f.max_args == f.min_args + 1) return std::to_string(f.min_args) + " or " + n(f.max_args);
  return std::to_string(f.min_args) + " to " + n(f.max_args);
}

}  // namespace tpt
