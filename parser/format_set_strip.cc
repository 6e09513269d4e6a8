// format_set_strip.cc: the FormatSet's half that reads a line's start:
// wrappers and producer prefixes stripped (StripLine), their metadata
// (ApplyPrefix, LineMeta), and the RE2::Set over both that says which can
// match at a place, with the smaller sets that prove a prediction
// (PrefixSetHolder). Loading and pattern matching are in format_set.cc.
#include "parser/format_set.h"
#include "parser/format_set_internal.h"
#include "parser/json_reuse.h"
#include "parser/regex_groups.h"

#include <re2/re2.h>
#include <re2/set.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>

namespace tpt {

using format_internal::RunRe;
using json = nlohmann::json;

namespace {

std::optional<int> ToSmallInt(std::string_view s) {
  if (s.empty() || s.size() > 9) return std::nullopt;
  int v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  return v;
}

}  // namespace

struct PrefixSetHolder {
  explicit PrefixSetHolder(const RE2::Options& o) : set(o, RE2::ANCHOR_START), options(o) {}
  RE2::Set set;
  RE2::Options options;
  std::vector<std::string> patterns;  // the set's members, wrappers then prefixes
  // The members as they can follow another one in a concatenation
  // (ConcatenableForm); empty when one of them cannot.
  std::vector<std::string> concatenable;
  // A set of some members built the first time StripLine asks about it
  // often enough (its predictions, below).
  struct Lazy {
    std::atomic<int> asked{0};
    std::once_flag once;
    std::unique_ptr<RE2::Set> set;  // null: could not be built (ask the whole set)
  };
  // Compiling one costs ~5 M instructions, which a short log would not win back.
  static constexpr int kAskedBeforeBuilt = 256;
  // earlier[k]: the members [0, k). after[k]: the same and one more member,
  // member k followed by any member.
  std::vector<std::unique_ptr<Lazy>> earlier, after;

  // True when `lazy`, built from `patterns` once asked for often enough, is
  // known and does not match at the start of `text`.
  template <typename Members>
  bool NoMatch(Lazy& lazy, Members members_of, re2::StringPiece text) {
    if (lazy.asked.load(std::memory_order_relaxed) < kAskedBeforeBuilt) {
      lazy.asked.fetch_add(1, std::memory_order_relaxed);
      return false;
    }
    std::call_once(lazy.once, [&] {
      auto s = std::make_unique<RE2::Set>(options, RE2::ANCHOR_START);
      for (const std::string& m : members_of()) {
        if (s->Add(m, nullptr) < 0) return;
      }
      if (s->Compile()) lazy.set = std::move(s);
    });
    return lazy.set && !lazy.set->Match(text, nullptr);
  }
  // True when no member before k matches at the start of `text`; false when
  // one may (or the set is not built yet).
  bool NoneBefore(size_t k, re2::StringPiece text) {
    if (k == 0) return true;
    if (k >= patterns.size()) return !set.Match(text, nullptr);
    auto members = [&] { return std::vector<std::string>(patterns.begin(), patterns.begin() + static_cast<long>(k)); };
    return NoMatch(*earlier[k], members, text);
  }
  // NoneBefore(k) and, wherever member k matches at the start of `text`, no
  // member matches right after that match (one run instead of two: a member
  // matching there would make "member k, then that member" match).
  bool NoneBeforeNorAfter(size_t k, re2::StringPiece text) {
    if (concatenable.empty() || k >= patterns.size()) return false;
    auto members = [&] {
      std::vector<std::string> m(patterns.begin(), patterns.begin() + static_cast<long>(k));
      std::string any;
      for (const std::string& c : concatenable) any += (any.empty() ? "(?:" : "|(?:") + c + ")";
      m.push_back("(?:" + concatenable[k] + ")(?:" + any + ")");
      return m;
    };
    return NoMatch(*after[k], members, text);
  }
};

// ---- LineMeta ----------------------------------------------------------------

std::string LineMeta::Key() const {
  if (!HasProducer()) return "";
  return std::to_string(rank) + "/" + std::to_string(local_rank) + "/" + std::to_string(tp_rank) + "/" +
         std::to_string(dp_rank) + "/" + host + "/" + std::to_string(pid);
}

void LineMeta::ApplyTo(Event* e) const {
  e->host = host;
  e->process = process;
  AssignReusing(&e->wrapper, wrapper);
  ApplyScalars(e);
}

void LineMeta::SwapInto(Event* e) {
  e->host.swap(host);
  e->process.swap(process);
  e->wrapper.swap(wrapper);
  ApplyScalars(e);
}

void LineMeta::Reset() {
  rank = local_rank = pid = -1;
  dp_rank = pp_rank = tp_rank = ep_rank = -1;
  host.clear();
  process.clear();
  ts.reset();
}

void LineMeta::ApplyScalars(Event* e) const {
  e->rank = rank;
  e->local_rank = local_rank;
  e->pid = pid;
  e->dp_rank = dp_rank;
  e->pp_rank = pp_rank;
  e->tp_rank = tp_rank;
  e->ep_rank = ep_rank;
  if (ts) {
    e->ts = ts->value;
    e->ts_is_time_of_day = ts->time_of_day;
  } else {
    e->ts.reset();
    e->ts_is_time_of_day = false;
  }
  // Single-node servers print only a TP rank: it is the global rank there.
  if (e->rank < 0 && tp_rank >= 0 && dp_rank <= 0 && pp_rank <= 0) e->rank = tp_rank;
}

// ---- FormatSet: stripping ----------------------------------------------------

void FormatSet::ApplyPrefix(const PrefixSpec& p, const std::vector<std::string_view>& g, LineMeta* meta,
                            bool is_wrapper, ObjectFiller* top) const {
  using G = PrefixSpec::Group;
  static const std::string kPrefixKey = "prefix", kIdKey = "id";
  // The metadata object is refilled in place: a line with the same prefix as
  // the last one reuses its nodes and string buffers (json_reuse.h).
  const std::string& key = is_wrapper ? p.id : kPrefixKey;
  json& slot = top ? top->Slot(key) : meta->wrapper[key];
  // Groups are sorted by name (RE2::NamedCapturingGroups); "id" goes in its
  // place among them so the object is filled in key order.
  auto after_id = [](const std::string& name) {
    unsigned char c = name.empty() ? 0 : static_cast<unsigned char>(name[0]);
    return c != 'i' ? c > 'i' : name > kIdKey;
  };
  // A recycled "prefix" object mostly holds another prefix's keys when the log
  // interleaves two producers (SGLang's and vLLM's lines): refilled key by key
  // it would lose and regain nodes on every line. Objects of other shapes wait
  // in `shapes` instead, and one with this prefix's first key and key count is
  // swapped in (a guess: the filler below makes the keys right whatever comes).
  if (!is_wrapper && slot.is_object() && !slot.empty()) {
    // The keys this line sets: "id" and the groups that took part.
    const std::string* first = &kIdKey;
    size_t size = 1;
    for (const G& grp : p.groups) {
      if (g[grp.index].data() == nullptr) continue;
      if (size++ == 1 && !after_id(grp.name)) first = &grp.name;
    }
    auto fits = [&](const json& o) {
      const auto& m = o.get_ref<const json::object_t&>();
      return m.size() == size && SameText(m.begin()->first, *first);
    };
    thread_local std::vector<json> shapes;
    if (!fits(slot)) {
      bool swapped = false;
      for (json& other : shapes) {
        if (other.is_object() && !other.empty() && fits(other)) {
          slot.swap(other);
          swapped = true;
          break;
        }
      }
      if (!swapped && shapes.size() < 4) {
        shapes.emplace_back(json::object());
        slot.swap(shapes.back());
      }
    }
  }
  thread_local ObjectFiller info;
  info.Begin(&slot);
  std::string_view date, time, month_day, ts;
  bool id_done = is_wrapper;
  for (const G& grp : p.groups) {
    if (!id_done && after_id(grp.name)) {
      info.SetString(kIdKey, p.full_id);
      id_done = true;
    }
    std::string_view v = g[grp.index];
    if (v.data() == nullptr) continue;
    std::optional<int> n = ToSmallInt(v);
    switch (grp.role) {
      case G::kDate: date = v; break;
      case G::kTime: time = v; break;
      case G::kMonthDay: month_day = v; break;
      case G::kTs: ts = v; break;
      case G::kHost: meta->host = SanitizeUtf8(v); break;
      case G::kProcess: meta->process = SanitizeUtf8(v); break;
      case G::kRank: if (n) meta->rank = *n; break;
      case G::kLocalRank: if (n) meta->local_rank = *n; break;
      case G::kPid: if (n) meta->pid = *n; break;
      case G::kDp: if (n) meta->dp_rank = *n; break;
      case G::kPp: if (n) meta->pp_rank = *n; break;
      case G::kTp: if (n) meta->tp_rank = *n; break;
      case G::kEp: if (n) meta->ep_rank = *n; break;
      case G::kOther: break;
    }
    if (n) {
      info.Set(grp.name, int64_t{*n});
    } else if (IsValidUtf8(v)) {
      info.SetString(grp.name, v);
    } else {
      info.SetString(grp.name, SanitizeUtf8(v));
    }
  }
  std::optional<Timestamp> t;
  if (!ts.empty()) {
    t = ParseTimestamp(ts);
  } else if (!date.empty() && !time.empty()) {
    char buf[64];
    if (date.size() + 1 + time.size() <= sizeof buf) {
      std::memcpy(buf, date.data(), date.size());
      buf[date.size()] = ' ';
      std::memcpy(buf + date.size() + 1, time.data(), time.size());
      t = ParseTimestamp(std::string_view(buf, date.size() + 1 + time.size()));
    } else {
      t = ParseTimestamp(std::string(date) + " " + std::string(time));
    }
  } else if (!time.empty()) {
    t = ParseTimestamp(time);
  }
  // An absolute time beats a time of day; the first absolute one (outermost
  // collector stamp) is kept, a producer's own absolute stamp replaces a
  // collector's time of day.
  if (t && (!meta->ts || (meta->ts->time_of_day && !t->time_of_day))) meta->ts = t;
  if (!id_done) info.SetString(kIdKey, p.full_id);
  info.End();
}

FormatSet::Stripped FormatSet::StripLine(std::string_view line, LineMeta* meta, std::string_view previous) const {
  size_t pos = 0, stop = line.size();
  thread_local std::vector<std::string_view> groups;
  thread_local std::vector<int> candidates, found;
  // Wrapper keys set on this line; the others (the last line's) go at the end.
  thread_local ObjectFiller top;
  top.Begin(&meta->wrapper);
  // Which wrappers and which prefixes can match at [pos, stop): one pass of
  // the set holding both answers for both lists, and is asked once per place
  // (a line typically asks at its start, then after its producer prefix).
  thread_local std::vector<int> wrapper_cands, prefix_cands;
  size_t cands_pos = std::string_view::npos, cands_stop = 0;
  auto candidates_at = [&](bool is_wrapper) -> const std::vector<int>& {
    if (cands_pos != pos || cands_stop != stop) {
      cands_pos = pos;
      cands_stop = stop;
      wrapper_cands.clear();
      prefix_cands.clear();
      re2::StringPiece rest(line.data() + pos, stop - pos);
      // Most places match nothing: a yes/no run stops early and skips the
      // match list's allocation; only a hit asks which ones. A line's start
      // is asked like the previous line's start answered (a prefixed log
      // hits there every time): same answer, one pass fewer.
      thread_local bool start_hit = false;
      bool hit;
      if (pos == 0 && start_hit) {
        found.clear();
        hit = both_set_->set.Match(rest, &found);
      } else {
        hit = both_set_->set.Match(rest, nullptr) && both_set_->set.Match(rest, &found);
      }
      if (pos == 0) start_hit = hit;
      if (hit) {
        std::sort(found.begin(), found.end());
        for (int i : found) {
          if (i < static_cast<int>(wrappers_.size())) {
            wrapper_cands.push_back(i);
          } else {
            prefix_cands.push_back(i - static_cast<int>(wrappers_.size()));
          }
        }
      }
    }
    return is_wrapper ? wrapper_cands : prefix_cands;
  };
  // Predictions: the member (index into the set: wrappers, then prefixes)
  // the last line took at each round of each strip call below, or none. A
  // prefixed log repeats them line after line, and they are cheap to prove:
  // one yes/no run of the set of the members before the predicted one (which
  // the full answer would try first) says none of those can match; then the
  // predicted member is tried as the set's answer would try it. Anything else
  // asks the whole set, as before.
  // Kept per place key (its first 8 bytes, hashed to one byte): lines of a
  // mixed log that start alike were mostly printed alike.
  constexpr int kUnknown = -2, kNone = -1, kSlots = 24;
  using Predictions = std::array<std::array<int, 256>, kSlots>;
  thread_local std::unique_ptr<Predictions> predicted_table = [] {
    auto t = std::make_unique<Predictions>();
    for (auto& row : *t) row.fill(-2);
    return t;
  }();
  Predictions& predicted = *predicted_table;
  // This line's answers (slot, place key, member), written back at the end.
  struct Answer {
    int slot, member;
    unsigned char key;
  };
  std::array<Answer, kSlots> answers;
  size_t num_answers = 0;
  const size_t num_wrappers = wrappers_.size(), num_members = wrappers_.size() + prefixes_.size();
  size_t proven_pos = std::string_view::npos, proven_stop = 0, proven_upto = 0;
  // Proven along with the above: no member matches right after member
  // `after_member` taken at (proven_pos, proven_stop).
  int after_member = -1;
  // True when no member before k can match at [pos, stop).
  auto none_before = [&](size_t k) {
    if (proven_pos == pos && proven_stop == stop && proven_upto >= k) return true;
    if (!both_set_->NoneBefore(k, re2::StringPiece(line.data() + pos, stop - pos))) return false;
    if (proven_pos != pos || proven_stop != stop) proven_upto = 0;
    proven_pos = pos;
    proven_stop = stop;
    proven_upto = std::max(proven_upto, k);
    return true;
  };
  // Returns the number of prefixes stripped.
  auto strip = [&](const std::vector<PrefixSpec>& specs, bool is_wrapper, int max_rounds, int phase) {
    const bool from_set = both_set_ != nullptr;
    const int base = is_wrapper ? 0 : static_cast<int>(num_wrappers);
    int round = 0;
    for (; round < max_rounds && pos < stop; ++round) {
      const int slot = phase * 8 + round;
      // The place's first 8 bytes, hashed: "INFO 10-14" and "INFO:    " differ.
      uint64_t head = 0;
      std::memcpy(&head, line.data() + pos, std::min<size_t>(8, stop - pos));
      const unsigned char key = static_cast<unsigned char>((head * 0x9E3779B97F4A7C15ULL) >> 56);
      bool hit = false;
      std::string_view text = line.substr(0, stop);
      candidates.clear();
      // Tries the candidates in order; `verify`: not known to match yet.
      auto try_candidates = [&](bool verify) {
        for (int i : candidates) {
          const PrefixSpec& p = specs[i];
          unsigned char c = static_cast<unsigned char>(text[pos]);
          if (c < p.first_min || c > p.first_max) continue;
          bool fast = false;
          for (const auto& fl : p.fast) {
            if ((fast = fl->Match(text.substr(pos), &groups))) break;
          }
          // A candidate from the set is known to match: capture at once.
          if (!fast && !RunRe(*p.re, text, pos, RE2::ANCHOR_START, &groups, /*precheck=*/verify)) continue;
          size_t next = pos + groups[0].size();
          if (next == pos) continue;  // an empty match strips nothing
          if (p.repeat && previous.substr(std::min(pos, previous.size()), next - pos) != text.substr(pos, next - pos)) {
            continue;
          }
          if (p.then && !p.then->Match(re2::StringPiece(text.data() + next, text.size() - next), 0,
                                       text.size() - next, RE2::ANCHOR_START, nullptr, 0)) {
            continue;
          }
          ApplyPrefix(p, groups, meta, is_wrapper, &top);
          answers[num_answers++] = {slot, base + i, key};
          const bool nothing_after = after_member == base + i && proven_pos == pos && proven_stop == stop;
          after_member = -1;
          pos = next;
          if (nothing_after) {  // proven with the members before it (NoneBeforeNorAfter)
            proven_pos = pos;
            proven_upto = num_members;
          }
          return true;
        }
        return false;
      };
      if (from_set) {
        const int pred = predicted[slot][key];
        const bool asked_here = cands_pos == pos && cands_stop == stop;
        if (pred != kUnknown && !asked_here) {
          if (pred == kNone) {
            size_t k = is_wrapper ? num_wrappers : num_members;
            // The first wrapper round at a place is followed by the first
            // prefix round there: prove both with one run when that is likely.
            const int next_pred = phase == 0 && round == 0 ? predicted[8][key] : kUnknown;
            size_t wide = next_pred == kNone ? num_members : next_pred >= static_cast<int>(num_wrappers) ? next_pred : 0;
            bool proven = false;
            if (wide > k && wide < num_members &&
                both_set_->NoneBeforeNorAfter(wide, re2::StringPiece(line.data() + pos, stop - pos))) {
              // Members before `wide` do not match here, nor any member
              // after `wide` wherever it matches here.
              proven_pos = pos;
              proven_stop = stop;
              proven_upto = wide;
              after_member = static_cast<int>(wide);
              proven = true;
            }
            proven = proven || (wide > k && none_before(wide));
            if (proven || none_before(k)) {
              answers[num_answers++] = {slot, kNone, key};
              break;
            }
          } else if (pred >= base && pred < base + static_cast<int>(specs.size()) &&
                     none_before(static_cast<size_t>(pred))) {
            candidates.push_back(pred - base);
            if ((hit = try_candidates(/*verify=*/true))) continue;
            candidates.clear();
          }
        }
        candidates = candidates_at(is_wrapper);
        if (candidates.empty()) {
          answers[num_answers++] = {slot, kNone, key};
          break;
        }
      } else {
        for (size_t i = 0; i < specs.size(); ++i) candidates.push_back(static_cast<int>(i));
      }
      hit = try_candidates(/*verify=*/!from_set);
      if (!hit) {
        answers[num_answers++] = {slot, kNone, key};
        break;
      }
    }
    return round;
  };
  const int kWrapperRounds = 8;
  bool wrappers_done = strip(wrappers_, true, kWrapperRounds, 0) < kWrapperRounds;
  const size_t wrappers_pos = pos, wrappers_stop = stop;
  Stripped out;
  out.wrapped_end = pos;
  for (const PrefixSpec& p : suffixes_) {
    std::string_view text = line.substr(pos, stop - pos);
    bool has_literal = p.literals.empty();
    for (const auto& lit : p.literals) has_literal |= text.find(lit) != std::string_view::npos;
    if (!has_literal) continue;
    if (RunRe(*p.re, text, 0, RE2::UNANCHORED, &groups) && groups[0].data() + groups[0].size() == text.data() + text.size()) {
      ApplyPrefix(p, groups, meta, true, &top);
      stop = static_cast<size_t>(groups[0].data() - line.data());
      break;
    }
  }
  strip(prefixes_, false, 3, 1);
  // Wrappers may follow a producer prefix too ("[2025-..] [rank0]: ..."): one
  // more pass, unless nothing moved since the first pass ended on a miss at
  // this very place (it would miss again).
  if (!(wrappers_done && pos == wrappers_pos && stop == wrappers_stop)) strip(wrappers_, true, 2, 2);
  for (size_t i = 0; i < num_answers; ++i) predicted[answers[i].slot][answers[i].key] = answers[i].member;
  top.End();
  out.begin = pos;
  out.end = stop;
  return out;
}

Status FormatSet::BuildPrefixSets() {
  // Wrappers first, then producer prefixes: index i < wrappers_.size() is wrappers_[i].
  both_set_.reset();
  if (wrappers_.empty() && prefixes_.empty()) return OkStatus();
  RE2::Options opt;
  opt.set_log_errors(false);
  opt.set_max_mem(64 << 20);
  auto holder = std::make_shared<PrefixSetHolder>(opt);
  for (const auto* list : {&wrappers_, &prefixes_}) {
    for (const auto& p : *list) {
      std::string err;
      if (holder->set.Add(p.re->pattern(), &err) < 0) {
        return InternalError(p.family + "." + p.id + ": cannot join the prefix set: " + err);
      }
      holder->patterns.push_back(p.re->pattern());
    }
  }
  for (const std::string& m : holder->patterns) {
    auto c = ConcatenableForm(m);
    if (!c) {
      holder->concatenable.clear();
      break;
    }
    holder->concatenable.push_back(*c);
  }
  for (size_t k = 0; k < holder->patterns.size(); ++k) {
    holder->earlier.push_back(std::make_unique<PrefixSetHolder::Lazy>());
    holder->after.push_back(std::make_unique<PrefixSetHolder::Lazy>());
  }
  if (!holder->set.Compile()) return InternalError("compiling the prefix set failed (out of memory?)");
  both_set_ = std::move(holder);
  return OkStatus();
}

}  // namespace tpt
