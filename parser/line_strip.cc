// line_strip.cc: a line's start read: wrappers and producer prefixes
// stripped (FormatSet::StripLine), their metadata (ApplyPrefix, LineMeta,
// PrefixDecoder). Which of them match at a place is the PrefixMatcher's
// question (parser/match/prefix_matcher.h).
#include "parser/line_strip.h"

#include "parser/format_set.h"
#include "parser/match/capture.h"
#include "parser/format_set_internal.h"
#include "parser/json_reuse.h"
#include "parser/json_text.h"

#include <re2/re2.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>

namespace tpt {

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

// A recycled "prefix" object mostly holds another prefix's keys when the log
// interleaves two producers (SGLang's and vLLM's lines): refilled key by key
// it would lose and regain nodes on every line. Objects of other shapes wait
// in a pool of the thread instead, and one with this prefix's first key and
// key count is swapped in (a guess: the filler makes the keys right whatever
// comes).
void FitPrefixSlot(const std::vector<PrefixSpec::Group>& spec_groups, const std::vector<std::string_view>& g,
                   json* slot) {
  if (!slot->is_object() || slot->empty()) return;
  static const std::string kIdKey = "id";
  // The keys this prefix sets: "id" and the groups that took part.
  const std::string* first = &kIdKey;
  size_t size = 1;
  for (const PrefixSpec::Group& grp : spec_groups) {
    if (g[grp.index].data() == nullptr) continue;
    if (size++ == 1 && !grp.after_id) first = &grp.name;
  }
  auto fits = [&](const json& o) {
    const auto& m = o.get_ref<const json::object_t&>();
    return m.size() == size && SameText(m.begin()->first, *first);
  };
  if (fits(*slot)) return;
  thread_local std::vector<json> shapes;
  for (json& other : shapes) {
    if (other.is_object() && !other.empty() && fits(other)) {
      slot->swap(other);
      return;
    }
  }
  if (shapes.size() < 4) {
    shapes.emplace_back(json::object());
    slot->swap(shapes.back());
  }
}

// The metadata object of a stripped prefix: its taken groups (small
// integers as numbers, other text as UTF-8 strings) and "id" (the spec's
// family.id; not for a wrapper, whose key is its id), in key order.
// `Sink`: an ObjectFiller, or a JsonObjectText (the same object as JSON text).
template <class Sink>
void FillPrefixInfo(const std::vector<PrefixSpec::Group>& spec_groups, const std::string& full_id, bool is_wrapper,
                    const std::vector<std::string_view>& g, Sink* info) {
  static const std::string kIdName = "id";
  static const std::string kIdText = JsonKeyText(kIdName);
  const JsonKey id_key{kIdName, kIdText};
  bool id_done = is_wrapper;
  for (const PrefixSpec::Group& grp : spec_groups) {
    if (!id_done && grp.after_id) {
      info->SetString(id_key, full_id);
      id_done = true;
    }
    std::string_view v = g[grp.index];
    if (v.data() == nullptr) continue;
    const JsonKey key{grp.name, grp.json_key};
    if (std::optional<int> n = ToSmallInt(v)) {
      info->Set(key, int64_t{*n});
    } else if (IsValidUtf8(v)) {
      info->SetString(key, v);
    } else {
      info->SetString(key, SanitizeUtf8(v));
    }
  }
  if (!id_done) info->SetString(id_key, full_id);
}

// The filler of a line's wrapper object (StripLine's, one per thread). A
// deferred producer prefix leaves its "prefix" key out of the wrapper; the
// rounds of this filler then erase the key a recycled wrapper had and keep its
// node aside, and decoding (PrefixDecoder) takes it back.
ObjectFiller& WrapperFiller() {
  thread_local ObjectFiller filler;
  return filler;
}

const std::string kPrefixKey = "prefix";

// Decodes into an event's wrapper object: its "prefix" key.
// (Lines of its own, as FieldDecoder's: pattern_match.cc.)
class alignas(64) PrefixDecoder : public DeferredDecoder {
 public:
  explicit PrefixDecoder(const PrefixSpec& p) : groups_(p.groups), full_id_(p.full_id) {
    // FillPrefixInfo sets the groups (sorted by name) with "id" in its place:
    // each key once, in order, unless a group is named "id" itself.
    for (size_t i = 0; i < groups_.size(); ++i) {
      if (i > 0 && !(groups_[i - 1].name < groups_[i].name)) keys_in_order_ = false;
      if (groups_[i].name == "id") keys_in_order_ = false;
    }
  }
  void Decode(std::string_view text, const std::vector<uint32_t>& spans, json* wrapper) const override {
    thread_local std::vector<std::string_view> g;
    thread_local ObjectFiller info;
    auto& obj = wrapper->get_ref<json::object_t&>();
    auto it = obj.find(kPrefixKey);
    if (it == obj.end()) it = obj.insert(WrapperFiller().TakeNode(kPrefixKey)).position;
    json* out = &it->second;
    format_internal::SpansToGroups(text, spans, &g);
    FitPrefixSlot(groups_, g, out);
    info.Begin(out);
    FillPrefixInfo(groups_, full_id_, /*is_wrapper=*/false, g, &info);
    info.End();
  }
  // The value of the wrapper's "prefix" key.
  void AppendJson(std::string_view text, const std::vector<uint32_t>& spans, JsonOut* out) const override {
    thread_local std::vector<std::string_view> g;
    thread_local JsonObjectText info;
    format_internal::SpansToGroups(text, spans, &g);
    info.Begin(out, keys_in_order_);  // (no slot to fit: the text is written afresh)
    FillPrefixInfo(groups_, full_id_, /*is_wrapper=*/false, g, &info);
    info.End();
  }
  bool MayHave(std::string_view key) const override { return key == kPrefixKey; }

 private:
  std::vector<PrefixSpec::Group> groups_;
  std::string full_id_;
  bool keys_in_order_ = true;
};

}  // namespace

std::shared_ptr<const DeferredDecoder> NewPrefixDecoder(const PrefixSpec& p) {
  return std::make_shared<PrefixDecoder>(p);
}

// ---- LineMeta ----------------------------------------------------------------

std::string LineMeta::Key() const {
  if (!HasProducer()) return "";
  return std::to_string(rank) + "/" + std::to_string(local_rank) + "/" + std::to_string(tp_rank) + "/" +
         std::to_string(dp_rank) + "/" + host + "/" + std::to_string(pid);
}

void LineMeta::ApplyTo(Event* e) const {
  e->host = host;
  e->process = process;
  AssignReusing(&e->wrapper_, wrapper);
  Event::Deferred& d = e->deferred_prefix_;
  d.pending = prefix.pending;
  if (prefix.pending) {
    if (d.decoder != prefix.decoder) d.decoder = prefix.decoder;
    d.spans = prefix.spans;
  }
  ApplyScalars(e);
}

void LineMeta::SwapInto(Event* e) {
  e->host.swap(host);
  e->process.swap(process);
  e->wrapper_.swap(wrapper);
  Event::Deferred& d = e->deferred_prefix_;
  std::swap(d.pending, prefix.pending);
  d.decoder.swap(prefix.decoder);
  d.spans.swap(prefix.spans);
  ApplyScalars(e);
}

void LineMeta::Reset() {
  rank = local_rank = pid = -1;
  dp_rank = pp_rank = tp_rank = ep_rank = -1;
  host.clear();
  process.clear();
  ts.reset();
  prefix.pending = false;
  defer_base = nullptr;
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

void ApplyPrefix(const PrefixSpec& p, const std::vector<std::string_view>& g, LineMeta* meta, bool is_wrapper,
                 ObjectFiller* top) {
  using G = PrefixSpec::Group;
  // What the groups say about the producer, typed at once.
  std::string_view date, time, month_day, ts;
  for (const G& grp : p.groups) {
    std::string_view v = g[grp.index];
    if (v.data() == nullptr) continue;
    switch (grp.role) {
      case G::kDate: date = v; break;
      case G::kTime: time = v; break;
      case G::kMonthDay: month_day = v; break;
      case G::kTs: ts = v; break;
      case G::kHost: meta->host = SanitizeUtf8(v); break;
      case G::kProcess: meta->process = SanitizeUtf8(v); break;
      case G::kRank: if (auto n = ToSmallInt(v)) meta->rank = *n; break;
      case G::kLocalRank: if (auto n = ToSmallInt(v)) meta->local_rank = *n; break;
      case G::kPid: if (auto n = ToSmallInt(v)) meta->pid = *n; break;
      case G::kDp: if (auto n = ToSmallInt(v)) meta->dp_rank = *n; break;
      case G::kPp: if (auto n = ToSmallInt(v)) meta->pp_rank = *n; break;
      case G::kTp: if (auto n = ToSmallInt(v)) meta->tp_rank = *n; break;
      case G::kEp: if (auto n = ToSmallInt(v)) meta->ep_rank = *n; break;
      case G::kOther: break;
    }
  }
  std::optional<Timestamp> t;
  if (!ts.empty()) {
    t = ParseTimestamp(ts);
  } else if (!date.empty() && !time.empty()) {
    t = ParseTimestamp(date, time);
  } else if (!time.empty()) {
    t = ParseTimestamp(time);
  }
  // An absolute time beats a time of day; the first absolute one (outermost
  // collector stamp) is kept, a producer's own absolute stamp replaces a
  // collector's time of day.
  if (t && (!meta->ts || (meta->ts->time_of_day && !t->time_of_day))) meta->ts = t;

  // The metadata object: a producer prefix's is left to decode on first read
  // when its captures lie in the event's text (LineMeta::defer_limit); its
  // "prefix" key is left out until then (PrefixDecoder inserts it).
  if (!is_wrapper) {
    meta->prefix.pending = false;
    if (top && meta->defer_base && p.decoder &&
        format_internal::RecordSpans(g, meta->defer_base, meta->defer_limit, &meta->prefix.spans)) {
      if (meta->prefix.decoder != p.decoder) meta->prefix.decoder = p.decoder;
      meta->prefix.pending = true;
      return;
    }
  }
  // The metadata object is refilled in place: a line with the same prefix as
  // the last one reuses its nodes and string buffers (json_reuse.h).
  const std::string& key = is_wrapper ? p.id : kPrefixKey;
  json& slot = top ? top->Slot(key) : meta->wrapper[key];
  // Groups are sorted by name (RE2::NamedCapturingGroups); "id" goes in its
  // place among them (Group::after_id) so the object is filled in key order.
  if (!is_wrapper) FitPrefixSlot(p.groups, g, &slot);
  thread_local ObjectFiller info;
  info.Begin(&slot);
  FillPrefixInfo(p.groups, p.full_id, is_wrapper, g, &info);
  info.End();
}

// The members of `specs` (members [base, base + size) of the matcher) among
// `found` that match `text` at `pos`, in order: the first that captures a
// non-empty start (and whose `repeat` and `then` hold); its groups in `groups`.
const PrefixSpec* FormatSet::FirstAt(const std::vector<PrefixSpec>& specs, int base, const std::vector<int>& found,
                                     std::string_view text, size_t pos, const PreviousLine& previous_line,
                                     std::vector<std::string_view>* groups) const {
  for (int member : found) {
    if (member < base || member >= base + static_cast<int>(specs.size())) continue;
    const PrefixSpec& p = specs[member - base];
    unsigned char c = static_cast<unsigned char>(text[pos]);
    if (c < p.first_min || c > p.first_max) continue;
    // Known to match: capture at once.
    if (!Capture(p.fast, p.re, text, pos, RE2::ANCHOR_START, groups, /*precheck=*/false)) continue;
    size_t next = pos + (*groups)[0].size();
    if (next == pos) continue;  // an empty match strips nothing
    if (p.repeat) {
      std::string_view previous = previous_line.Get();
      if (previous.substr(std::min(pos, previous.size()), next - pos) != text.substr(pos, next - pos)) continue;
    }
    if (p.then && !p.then->Match(re2::StringPiece(text.data() + next, text.size() - next), 0, text.size() - next,
                                 RE2::ANCHOR_START, nullptr, 0)) {
      continue;
    }
    return &p;
  }
  return nullptr;
}

bool FormatSet::HasLineStart(std::string_view line) const {
  if (line.empty()) return false;
  // StripLine's first question, without its fields: a wrapper at the start,
  // or (when no suffix can move the line's end first) a producer prefix.
  thread_local std::vector<std::string_view> groups;
  thread_local std::vector<int> found;
  prefix_matcher_.MembersAt(line, &found);
  const PreviousLine none;
  if (FirstAt(wrappers_, 0, found, line, 0, none, &groups)) return true;
  bool suffix_may_apply = false;
  for (const PrefixSpec& p : suffixes_) {
    bool has_literal = p.literals.empty();
    for (const auto& lit : p.literals) has_literal |= line.find(lit) != std::string_view::npos;
    suffix_may_apply |= has_literal;
  }
  if (!suffix_may_apply && FirstAt(prefixes_, static_cast<int>(wrappers_.size()), found, line, 0, none, &groups)) {
    return true;
  }
  LineMeta meta;
  Stripped st = StripLine(line, &meta);
  return st.begin > 0 || meta.HasProducer();
}

FormatSet::Stripped FormatSet::StripLine(std::string_view line, LineMeta* meta, const PreviousLine& previous_line,
                                         bool suffix_literals) const {
  size_t pos = 0, stop = line.size();
  thread_local std::vector<std::string_view> groups;
  thread_local std::vector<int> found;
  // Wrapper keys set on this line; the others (the last line's) go at the end.
  ObjectFiller& top = WrapperFiller();
  top.Begin(&meta->wrapper);
  // Which wrappers and which prefixes match at [pos, stop): one question
  // answers both lists, and is asked once per place (a line typically asks
  // at its start, then after its producer prefix).
  size_t found_pos = std::string_view::npos, found_stop = 0;
  const int num_wrappers = static_cast<int>(wrappers_.size());
  // Returns the number of prefixes stripped.
  auto strip = [&](const std::vector<PrefixSpec>& specs, bool is_wrapper, int max_rounds) {
    const int base = is_wrapper ? 0 : num_wrappers;
    int round = 0;
    for (; round < max_rounds && pos < stop; ++round) {
      std::string_view text = line.substr(0, stop);
      if (found_pos != pos || found_stop != stop) {
        found_pos = pos;
        found_stop = stop;
        prefix_matcher_.MembersAt(text.substr(pos), &found);
      }
      const PrefixSpec* p = FirstAt(specs, base, found, text, pos, previous_line, &groups);
      if (!p) break;
      ApplyPrefix(*p, groups, meta, is_wrapper, &top);
      pos += groups[0].size();
    }
    return round;
  };
  const int kWrapperRounds = 8;
  bool wrappers_done = strip(wrappers_, true, kWrapperRounds) < kWrapperRounds;
  const size_t wrappers_pos = pos, wrappers_stop = stop;
  Stripped out;
  out.wrapped_end = pos;
  if (meta->defer_limit > 0) meta->defer_base = line.data() + pos;  // where the event's text starts
  for (const PrefixSpec& p : suffixes_) {
    std::string_view text = line.substr(pos, stop - pos);
    bool has_literal = p.literals.empty();
    if (!has_literal && !suffix_literals) continue;
    for (const auto& lit : p.literals) has_literal |= text.find(lit) != std::string_view::npos;
    if (!has_literal) continue;
    if (RunRe(*p.re, text, 0, RE2::UNANCHORED, &groups) && groups[0].data() + groups[0].size() == text.data() + text.size()) {
      ApplyPrefix(p, groups, meta, true, &top);
      stop = static_cast<size_t>(groups[0].data() - line.data());
      break;
    }
  }
  strip(prefixes_, false, 3);
  // Wrappers may follow a producer prefix too ("[2025-..] [rank0]: ..."): one
  // more pass, unless nothing moved since the first pass ended on a miss at
  // this very place (it would miss again).
  if (!(wrappers_done && pos == wrappers_pos && stop == wrappers_stop)) strip(wrappers_, true, 2);
  top.End();
  out.begin = pos;
  out.end = stop;
  return out;
}

}  // namespace tpt
