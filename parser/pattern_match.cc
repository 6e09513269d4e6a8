// pattern_match.cc: a pattern run on a stripped line (FormatSet::MatchPattern),
// a block's end line (MatchBlockEnd), and the typing of captured groups into
// fields, at once or on first read (FieldDecoder).
#include "parser/pattern_match.h"

#include <re2/re2.h>

#include <charconv>
#include <type_traits>

#include "parser/format_set.h"
#include "parser/format_set_internal.h"
#include "parser/json_reuse.h"
#include "parser/json_text.h"
#include "parser/match/capture.h"

namespace tpt {

namespace {

using nlohmann::json;

bool IsAsciiDigit(char c) { return c >= '0' && c <= '9'; }

// a < b as std::string compares them; names mostly differ in their first byte.
bool KeyLess(const std::string& a, const std::string& b) {
  unsigned char ca = a.empty() ? 0 : static_cast<unsigned char>(a[0]);
  unsigned char cb = b.empty() ? 0 : static_cast<unsigned char>(b[0]);
  return ca != cb ? ca < cb : a < b;
}

// Fills `fields` from captured groups, then the constants `set` (which win
// over a field of the same name). Missing optional groups are skipped. Specs
// and constants are both sorted by name (they come from JSON objects), so
// they are set merged, in the order of the fields object's keys: a recycled
// object is then refilled node after node (json_reuse.h). The one place that
// knows how a pattern's captures become its fields: `Sink` is an ObjectFiller
// (into an Event's object) or a JsonObjectText (straight to JSON text, for
// `tptriage events`: json_text.h), which take the same calls.
template <class Sink>
bool ConvertFields(const std::vector<FieldSpec>& specs, const std::vector<std::string_view>& groups,
                   Sink* fields, std::string* error, const json* set = nullptr) {
  const json::object_t* constants = set && set->is_object() ? &set->get_ref<const json::object_t&>() : nullptr;
  json::object_t::const_iterator set_it, set_end;
  if (constants) {
    set_it = constants->begin();
    set_end = constants->end();
  }
  for (const FieldSpec& f : specs) {
    if (constants) {
      for (; set_it != set_end && KeyLess(set_it->first, f.name); ++set_it) {
        fields->SetCopy(set_it->first, set_it->second);
      }
    }
    std::string_view text = groups[f.group_index];
    for (size_t i = 0; text.data() == nullptr && i < f.or_group_indexes.size(); ++i) text = groups[f.or_group_indexes[i]];
    if (text.data() == nullptr) continue;  // no group of the field took part
    const JsonKey key{f.name, f.json_key};  // the name, with its JSON text made at load
    // Plain numbers (what \d+ and [\d.]+ capture) need no trimming, no
    // separators and no '%': the value ConvertField would give, minus the
    // checks and the Status. Anything else is ConvertField's.
    if (f.number_kind == 'i') {
      int64_t v = 0;
      if (ParsePlainInt(text, &v)) {
        fields->Set(key, v);
        continue;
      }
      auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
      if (ec == std::errc() && p == text.data() + text.size() && !text.empty() && text[0] != '-') {
        fields->Set(key, v);
        continue;
      }
    } else if (f.number_kind != 0) {
      double v = 0;
      bool plain = ParsePlainDecimal(text, &v);
      if (!plain) {
        auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
        plain = ec == std::errc() && p == text.data() + text.size() && !text.empty() && IsAsciiDigit(text[0]);
      }
      if (plain) {
        fields->Set(key, f.number_kind == 'r' && f.percent ? v / 100.0 : v);
        continue;
      }
    } else if (f.type.size() == 6 && f.type[0] == 's') {  // "string": ConvertField's SanitizeUtf8, in place
      if (IsValidUtf8(text)) {
        fields->SetString(key, text);
      } else {
        fields->SetString(key, SanitizeUtf8(text));
      }
      continue;
    } else if (f.type.size() == 4 && f.type[0] == 'b') {  // "bool": Python's spellings first
      if (SameText(text, "True") || SameText(text, "true")) {
        fields->SetBool(key, true);
        continue;
      }
      if (SameText(text, "False") || SameText(text, "false")) {
        fields->SetBool(key, false);
        continue;
      }
    }
    std::string_view unit = f.unit;
    if (f.unit_group_index >= 0) {
      std::string_view u = groups[f.unit_group_index];
      if (u.data() != nullptr && !u.empty()) unit = u;
    }
    auto v = ConvertField(text, f.type, unit, f.percent);
    if (!v.ok()) {
      if (error) *error = "field '" + f.name + "': " + v.status().message();
      continue;
    }
    if (v->is_string()) {
      fields->SetString(key, v->get_ref<const std::string&>());
    } else {
      fields->SetValue(key, std::move(*v));
    }
  }
  if (constants) {
    for (; set_it != set_end; ++set_it) fields->SetCopy(set_it->first, set_it->second);
  }
  return true;
}

// A pattern's fields from its kept captures.
// (Lines of its own: its shared count, which the parser's thread changes, is
// not on a line that `tptriage events`' writer thread reads: record_writer.h.)
class alignas(64) FieldDecoder : public DeferredDecoder {
 public:
  FieldDecoder(std::vector<FieldSpec> specs, json set) : specs_(std::move(specs)), set_(std::move(set)) {
    // ConvertFields sets the fields and constants merged in key order: each
    // key once unless a constant shares a field's name (it then wins, and the
    // text writer sorts that out at End()).
    for (size_t i = 0; i < specs_.size(); ++i) {
      if (i > 0 && !(specs_[i - 1].name < specs_[i].name)) keys_in_order_ = false;
      if (set_.is_object() && set_.contains(specs_[i].name)) keys_in_order_ = false;
    }
  }
  void Decode(std::string_view text, const std::vector<uint32_t>& spans, json* out) const override {
    Fill<ObjectFiller>(text, spans, out);
  }
  void AppendJson(std::string_view text, const std::vector<uint32_t>& spans, JsonOut* out) const override {
    Fill<JsonObjectText>(text, spans, out);
  }
  bool MayHave(std::string_view name) const override {
    for (const FieldSpec& f : specs_)
      if (f.name == name) return true;
    return set_.is_object() && set_.contains(name);
  }

 private:
  // The fields into an object (ObjectFiller) or as text (JsonObjectText).
  template <class Sink, class Out>
  void Fill(std::string_view text, const std::vector<uint32_t>& spans, Out* out) const {
    thread_local std::vector<std::string_view> groups;
    thread_local Sink sink;
    format_internal::SpansToGroups(text, spans, &groups);
    if constexpr (std::is_same_v<Sink, JsonObjectText>) {
      sink.Begin(out, keys_in_order_);
    } else {
      sink.Begin(out);
    }
    ConvertFields(specs_, groups, &sink, nullptr, &set_);
    sink.End();
  }

  std::vector<FieldSpec> specs_;
  json set_;
  bool keys_in_order_ = true;
};

}  // namespace

std::shared_ptr<const DeferredDecoder> NewFieldDecoder(const PatternSpec& p) {
  if (p.kv_group_index >= 0) return nullptr;  // server args are decoded at once
  return std::make_shared<FieldDecoder>(p.fields, p.set);
}

bool FormatSet::MatchPattern(const PatternSpec& p, std::string_view text, Event* e, std::string* error,
                             const char* defer_base, size_t defer_limit) const {
  thread_local std::vector<std::string_view> groups;
  // The literal prefilter already said this line is likely: capture at once.
  if (!Capture(p.fast, p.re, text, 0, RE2::UNANCHORED, &groups, /*precheck=*/false)) return false;
  // A recycled slot mostly held an event of this very pattern: compare before copying.
  if (!SameText(e->kind, p.kind)) e->kind = p.kind;
  if (!SameText(e->family, p.family)) e->family = p.family;
  if (!SameText(e->pattern_id, p.id)) e->pattern_id = p.id;
  e->consequence = p.consequence;
  Event::Deferred& later = e->deferred_fields_;
  if (defer_base && p.decoder && format_internal::RecordSpans(groups, defer_base, defer_limit, &later.spans)) {
    if (later.decoder != p.decoder) later.decoder = p.decoder;
    later.pending = true;
    return true;
  }
  later.pending = false;
  // Typed fields go into the existing object in place (a recycled Event's
  // map nodes and strings are reused where keys repeat; json_reuse.h).
  thread_local ObjectFiller fields;
  json& out = e->fields_;
  if (p.kv_group_index >= 0) out = json::object();  // server args: keys vary, start afresh
  fields.Begin(&out);
  ConvertFields(p.fields, groups, &fields, error, p.kv_group_index >= 0 ? nullptr : &p.set);
  if (p.kv_group_index >= 0 && groups[p.kv_group_index].data() != nullptr) {
    json args = ParsePythonKv(groups[p.kv_group_index]);
    CopyKnownServerArgs(args, &out);
    out["args"] = std::move(args);
    for (auto it = p.set.begin(); it != p.set.end(); ++it) out[it.key()] = it.value();
    return true;  // fresh object: nothing stale to erase
  }
  fields.End();
  return true;
}

bool FormatSet::MatchBlockEnd(const BlockSpec& b, std::string_view text, json* fields) const {
  if (!b.end) return false;  // a block without an end ends where its producer moves on
  std::vector<std::string_view> groups;
  if (!RunRe(*b.end, text, 0, RE2::ANCHOR_START, &groups)) return false;
  *fields = json::object();
  ObjectFiller filler;
  filler.Begin(fields);
  ConvertFields(b.fields, groups, &filler, nullptr);
  filler.End();
  for (auto it = b.set.begin(); it != b.set.end(); ++it) (*fields)[it.key()] = it.value();
  return true;
}

}  // namespace tpt
