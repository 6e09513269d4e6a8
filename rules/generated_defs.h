// generated_defs.h: data compiled into the binary at build time: the rule
// files of rules/defs/*.json and the finding files of rules/findings/*.json
// (tpt_embed, cmake/Embed.cmake), and the event kinds listed in
// parser/EVENTS.md (all kinds, and those of its "Errors" and "Consequences"
// sections, which mean a failure; rules/embed_defs.cmake).
#pragma once

#include <cstddef>

#include "base/embedded.h"

namespace tpt::generated {

extern const EmbeddedFile kRuleDefs[];
extern const size_t kRuleDefsCount;
extern const EmbeddedFile kFindingDefs[];
extern const size_t kFindingDefsCount;
extern const char* const kEventKinds[];
extern const size_t kNumEventKinds;
extern const char* const kFailureKinds[];
extern const size_t kNumFailureKinds;

}  // namespace tpt::generated
