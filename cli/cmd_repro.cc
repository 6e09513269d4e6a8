// cmd_repro.cc: `tptriage repro` (placeholder until its issue lands).
#include <cstdio>

#include "cli/commands.h"

namespace tpt::cli {

int RunRepro(const Args& args) {
  std::fprintf(stderr, "tptriage repro: not built yet\n");
  return 2;
}

}  // namespace tpt::cli
