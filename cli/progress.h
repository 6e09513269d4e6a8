// progress.h: a progress line on stderr while a command reads a long run.
//
// A 9 MB .zst can expand to 100 GiB: `analyze`, and `log`'s first pass (the
// analysis that finds the evidence lines), then read for minutes with nothing
// to show (hostile-inputs-2026-12-05.md D5). The line says how much was read,
// which input is being read and for how long:
//
//   tptriage log: first pass: 12.40 GiB read, now b.log.zst, 75 s
//
// When (`--progress`): auto prints only when stderr is a terminal, and only
// once a run has read for 2 s (most runs end before and print nothing), then
// every 10 s: a pipe or a CI log is left as it was (its stderr is read by
// people and programs that compare it). always prints from the first read on,
// every 10 s (for tests and for logs of long jobs); never prints nothing.
// Whole lines, not one line redrawn with '\r': stderr is neutralised
// (safe_stderr.h shows control bytes as \xNN), and a file name in the line is
// the user's text.
//
//   ProgressLine progress("log", "first pass", ProgressLine::kAuto);
//   options.parse.progress = &progress;
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "parser/reader.h"

namespace tpt::cli {

class ProgressLine : public ReadObserver {
 public:
  enum When { kAuto, kAlways, kNever };
  // "auto", "always", "never"; nullopt otherwise.
  static std::optional<When> ParseWhen(const std::string& s);
  // `command` ("log"), `what` ("first pass"; empty for none).
  ProgressLine(std::string command, std::string what, When when);
  void OnRead(const std::string& input, uint64_t bytes) override;

  static constexpr std::chrono::seconds kFirstAfter{2}, kEvery{10};

 private:
  using Clock = std::chrono::steady_clock;
  std::string command_, what_;
  bool on_;
  Clock::time_point start_, next_;
  uint64_t bytes_ = 0;
};

}  // namespace tpt::cli
