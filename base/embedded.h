// embedded.h: data files compiled into the binary by tpt_embed()
// (cmake/Embed.cmake): format files, rule and finding files, the event and
// taxonomy tables, the GPU catalog.
//
//   namespace tpt::generated { extern const EmbeddedFile kRuleDefs[]; extern const size_t kRuleDefsCount; }
//   for (size_t i = 0; i < generated::kRuleDefsCount; ++i) Use(generated::kRuleDefs[i].name, ...);
#pragma once

#include <cstddef>

namespace tpt::generated {

struct EmbeddedFile {
  const char* name;  // "rules/defs/oom_weights.json"
  const char* text;  // the file's bytes
};

}  // namespace tpt::generated
