// pattern_match.h: what format_set.cc needs of pattern_match.cc besides the
// FormatSet members it defines (MatchPattern, MatchBlockEnd). Not an API.
#pragma once

#include <memory>

#include "parser/event.h"
#include "parser/format_spec.h"

namespace tpt {

// Types a pattern's kept captures into its fields on first read
// (Event::Deferred); null for server args (kv_group), decoded at once.
std::shared_ptr<const DeferredDecoder> NewFieldDecoder(const PatternSpec& p);

}  // namespace tpt
