// cmd_analyze.cc: `tptriage analyze` (placeholder until its issue lands).
#include <cstdio>

#include "cli/commands.h"

namespace tpt::cli {

int RunAnalyze(const Args& args) {
  std::fprintf(stderr, "tptriage analyze: not built yet\n");
  return 2;
}

}  // namespace tpt::cli
