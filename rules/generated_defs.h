// generated_defs.h: data compiled into the binary at build time: the rule
// files of rules/defs/*.json and the finding files of rules/findings/*.json
// (tpt_embed, cmake/Embed.cmake). The event kinds and root causes are read
// through rules/vocabulary.h.
#pragma once

#include <cstddef>

#include "base/embedded.h"

namespace tpt::generated {

extern const EmbeddedFile kRuleDefs[];
extern const size_t kRuleDefsCount;
extern const EmbeddedFile kFindingDefs[];
extern const size_t kFindingDefsCount;

}  // namespace tpt::generated
