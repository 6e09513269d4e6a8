// cmd_plan.cc: `tptriage plan` (placeholder until its issue lands).
#include <cstdio>

#include "cli/commands.h"

namespace tpt::cli {

int RunPlan(const Args& args) {
  std::fprintf(stderr, "tptriage plan: not built yet\n");
  return 2;
}

}  // namespace tpt::cli
