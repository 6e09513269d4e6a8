// generated_defs.h: data compiled into the binary at build time by
// rules/embed_defs.cmake: the rule files of rules/defs/*.json and the event
// kinds listed in parser/EVENTS.md (all kinds, and those of its "Errors" and
// "Consequences" sections, which mean a failure).
#pragma once

#include <cstddef>

namespace tpt::generated {

struct EmbeddedFile {
  const char* name;  // "rules/defs/kv_pool_no_room_sglang.json"
  const char* text;
};

extern const EmbeddedFile kRuleDefs[];
extern const size_t kNumRuleDefs;
extern const char* const kEventKinds[];
extern const size_t kNumEventKinds;
extern const char* const kFailureKinds[];
extern const size_t kNumFailureKinds;

}  // namespace tpt::generated
