// pattern_match.h: a pattern run on a stripped line. pattern_match.cc
// defines FormatSet::MatchPattern and MatchBlockEnd (format_set.h):
//
// MatchPattern runs one pattern on the (stripped) text: its fast layouts
// first (parser/match/fast_layout.h; a layout may decline), else its regex.
// On a match it fills the Event's fields (and kind, family, pattern_id,
// consequence); `error` receives conversion problems. A recycled Event keeps
// its fields' nodes where keys repeat; keys the match does not set are
// erased. On no match the Event is untouched. With `defer_base`, captures
// lying in [defer_base, defer_base + defer_limit) (the Event's text) are kept
// as places and typed on first read of the fields (Event::Deferred, through
// NewFieldDecoder's decoder); conversion problems then go unreported.
//
// MatchBlockEnd: the fields of a block's end line; false when `end` does not
// match.
#pragma once

#include <memory>

#include "parser/event.h"
#include "parser/format_spec.h"

namespace tpt {

// Types a pattern's kept captures into its fields on first read
// (Event::Deferred); null for server args (kv_group), decoded at once.
std::shared_ptr<const DeferredDecoder> NewFieldDecoder(const PatternSpec& p);

}  // namespace tpt
