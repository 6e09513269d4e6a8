// cmd_diff.cc: `tptriage diff` (placeholder until its issue lands).
#include <cstdio>

#include "cli/commands.h"

namespace tpt::cli {

int RunDiff(const Args& args) {
  std::fprintf(stderr, "tptriage diff: not built yet\n");
  return 2;
}

}  // namespace tpt::cli
