// cmd_events.cc: `tptriage events` (placeholder until its issue lands).
#include <cstdio>

#include "cli/commands.h"

namespace tpt::cli {

int RunEvents(const Args& args) {
  std::fprintf(stderr, "tptriage events: not built yet\n");
  return 2;
}

}  // namespace tpt::cli
