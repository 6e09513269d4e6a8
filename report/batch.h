// batch.h: many runs, analysed in parallel (`tptriage analyze --runs DIR`).
//
// Each subdirectory or file directly under DIR is one run. The per-run work
// (parse + rules, supplied by the caller as a function) is independent, so a
// pool of std::threads takes runs off a shared counter; results come back in
// run order whatever the finishing order. A progress bar goes to stderr only
// when stderr is a terminal and the work lasts long enough to need one.
//
//   auto runs = tpt::report::ListRuns("ci-logs/");
//   auto results = tpt::report::AnalyzeInParallel(*runs, /*jobs=*/0,
//       [](const tpt::report::RunInput& in) { return AnalyzeOne(in); });
#pragma once

#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "base/status.h"
#include "report/report.h"

namespace tpt::report {

struct RunInput {
  std::string name;  // the entry's name under DIR
  std::string path;  // DIR/name
};

// The entries of `dir` (subdirectories and regular files; hidden ones
// skipped), sorted by name. Errors name the directory and what to do. A
// symbolic link that loops, leads back to `dir` (or above it) or to another
// entry of `dir` is no run: left out, with why in `skipped` (may be null).
StatusOr<std::vector<RunInput>> ListRuns(const std::string& dir, std::vector<std::string>* skipped = nullptr);

struct BatchOptions {
  int jobs = 0;  // 0 = all cores (std::thread::hardware_concurrency)
  // Progress bar target; nullptr for none. Drawn only when it is a terminal.
  FILE* progress = stderr;
  double progress_after_s = 0.5;  // no bar for work that ends sooner
};

// Runs `analyze` on every input, `jobs` at a time. An exception thrown by
// `analyze` becomes that run's error (exit code 2); the others go on.
std::vector<RunResult> AnalyzeInParallel(const std::vector<RunInput>& inputs, const BatchOptions& options,
                                         const std::function<RunResult(const RunInput&)>& analyze);

}  // namespace tpt::report
