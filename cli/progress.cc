// progress.cc: see progress.h.
#include "cli/progress.h"

#include <unistd.h>

#include <cstdio>

#include "report/common.h"

namespace tpt::cli {

std::optional<ProgressLine::When> ProgressLine::ParseWhen(const std::string& s) {
  if (s == "auto") return kAuto;
  if (s == "always") return kAlways;
  if (s == "never") return kNever;
  return std::nullopt;
}

ProgressLine::ProgressLine(std::string command, std::string what, When when)
    : command_(std::move(command)),
      what_(std::move(what)),
      on_(when == kAlways || (when == kAuto && isatty(STDERR_FILENO) == 1)),
      start_(Clock::now()),
      next_(when == kAlways ? start_ : start_ + kFirstAfter) {}

void ProgressLine::OnRead(const std::string& input, uint64_t bytes) {
  bytes_ += bytes;
  if (!on_) return;
  const Clock::time_point now = Clock::now();
  if (now < next_) return;
  next_ = now + kEvery;
  const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(now - start_).count();
  // stderr is the neutralising filter (safe_stderr.h): the name is shown safely.
  std::fprintf(stderr, "tptriage %s: %s%s%s read, now %s, %lld s\n", command_.c_str(), what_.c_str(),
               what_.empty() ? "" : ": ", report::FormatBytes(static_cast<double>(bytes_)).c_str(), input.c_str(),
               static_cast<long long>(seconds));
  std::fflush(stderr);
}

}  // namespace tpt::cli
