// line_strip.h: a line's start read. FormatSet::StripLine (format_set.h,
// defined in line_strip.cc) strips wrappers iteratively from the left, a
// trailing suffix wrapper, then producer prefixes iteratively, and fills a
// LineMeta with what they said, which is then applied to the line's Event:
//
//   tpt::LineMeta meta;
//   tpt::StrippedLine st = formats.StripLine(line, &meta, previous_line);
//   // line[st.wrapped_end, st.end): the line without wrappers;
//   // line[st.begin, st.end): the producer's message; meta.rank, meta.ts, ...
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "parser/event.h"
#include "parser/format_spec.h"
#include "parser/values.h"

namespace tpt {

class ObjectFiller;  // json_reuse.h

// Where StripLine left the line: line[wrapped_end, end) is the line without
// wrappers, line[begin, end) the producer's message.
struct StrippedLine {
  size_t wrapped_end = 0, begin = 0, end = 0;
};

// The stream's line before this one, for `repeat` wrappers (pdsh's "host: "
// counts only when the previous line has it too): given, or found only when
// a `repeat` wrapper asks (most lines never do; finding it costs a backward
// search). StripLine's `suffix_literals` false says the prefilter found no
// suffix's literal on the line: suffixes that have literals are not tried.
class PreviousLine {
 public:
  PreviousLine(std::string_view text = {}) : text_(text) {}  // NOLINT: a given line converts
  PreviousLine(const std::string& text) : text_(text) {}     // NOLINT
  PreviousLine(const char* text) : text_(text) {}            // NOLINT
  PreviousLine(std::string_view (*find)(const void*), const void* context) : find_(find), context_(context) {}
  std::string_view Get() const {
    if (find_) {
      text_ = find_(context_);
      find_ = nullptr;
    }
    return text_;
  }

 private:
  mutable std::string_view text_;
  mutable std::string_view (*find_)(const void*) = nullptr;
  const void* context_ = nullptr;
};

// What the wrappers and prefixes of one line said.
struct LineMeta {
  int rank = -1, local_rank = -1, pid = -1;
  int dp_rank = -1, pp_rank = -1, tp_rank = -1, ep_rank = -1;
  std::string host, process;
  std::optional<Timestamp> ts;           // best absolute, else time of day
  nlohmann::json wrapper = nlohmann::json::object();
  // With a defer_limit (the stream parser's), a producer prefix's metadata is
  // not written into wrapper["prefix"] but kept in `prefix` as places relative
  // to defer_base (the end of the wrappers, where an Event's text starts; set
  // by StripLine), when they lie within defer_limit bytes of it.
  size_t defer_limit = 0;
  const char* defer_base = nullptr;
  Event::Deferred prefix;
  bool HasProducer() const { return rank >= 0 || local_rank >= 0 || tp_rank >= 0 || !host.empty() || pid >= 0; }
  std::string Key() const;               // identifies the printing process (traceback state)
  // Sets e's producer members and wrapper to this line's (a recycled Event's
  // wrapper keeps its nodes where keys repeat; ts cleared when none).
  void ApplyTo(Event* e) const;
  // ApplyTo by swapping strings and the wrapper with e's: this meta is left
  // with e's old ones (Reset() and StripLine refill them, reusing their memory).
  void SwapInto(Event* e);
  // Forgets the last line's producer for the next StripLine (the wrapper
  // object is kept: StripLine refills it in place).
  void Reset();

 private:
  void ApplyScalars(Event* e) const;
};

// What one stripped wrapper or prefix (its regex's `groups`) says, written
// into `meta`; `top` (may be null) tracks the wrapper keys set on this line.
void ApplyPrefix(const PrefixSpec& p, const std::vector<std::string_view>& groups, LineMeta* meta, bool is_wrapper,
                 ObjectFiller* top = nullptr);

// Decodes a producer prefix's kept captures into the "prefix" key of an
// event's wrapper object, as StripLine writes it at once.
std::shared_ptr<const DeferredDecoder> NewPrefixDecoder(const PrefixSpec& p);

}  // namespace tpt
