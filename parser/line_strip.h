// line_strip.h: what the wrappers and producer prefixes of one line said
// (LineMeta), filled by FormatSet::StripLine (line_strip.cc) and applied to
// the line's Event.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "parser/event.h"
#include "parser/format_spec.h"
#include "parser/values.h"

namespace tpt {

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

// Decodes a producer prefix's kept captures into the "prefix" key of an
// event's wrapper object, as StripLine writes it at once.
std::shared_ptr<const DeferredDecoder> NewPrefixDecoder(const PrefixSpec& p);

}  // namespace tpt
