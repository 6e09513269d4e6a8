// main.cc: `tptriage <command> ...` dispatch.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>

#include "cli/commands.h"

namespace {

struct Command {
  const char* name;
  int (*run)(const tpt::cli::Args&);
  const char* help;
};

constexpr Command kCommands[] = {
    {"analyze", tpt::cli::RunAnalyze, "diagnose why a run died: LOG... (files, dirs, .gz, -)"},
    {"events", tpt::cli::RunEvents, "print the typed events of LOG... as JSON Lines"},
    {"plan", tpt::cli::RunPlan, "predict the memory ledger and KV pool of a launch"},
    {"repro", tpt::cli::RunRepro, "reproduce a diagnosis on this box's GPUs"},
    {"diff", tpt::cli::RunDiff, "compare a working run with a failing one"},
    {"log", tpt::cli::RunLog, "read LOG... as one view: merged by time, tagged by rank"},
};

void PrintUsage(FILE* out) {
  std::fprintf(out, "usage: tptriage <command> [options] [args]\n\ncommands:\n");
  for (const auto& c : kCommands) std::fprintf(out, "  %-8s %s\n", c.name, c.help);
  std::fprintf(out, "\n`tptriage <command> --help` shows a command's options.\n");
}

// Output that did not reach stdout (a full disk, /dev/full, a closed file)
// is an error like a failed -o: a message and exit 2, never a silent 0.
int CheckStdout(const char* cmd, int code) {
  std::cout.flush();
  errno = 0;
  const bool flushed = std::fflush(stdout) == 0;
  const int err = errno;
  if (flushed && !std::ferror(stdout) && std::cout.good()) return code;
  std::fprintf(stderr, "tptriage %s: writing to stdout failed (%s); the output is incomplete\n", cmd,
               err != 0 ? std::strerror(err) : "write error");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    PrintUsage(stderr);
    return 2;
  }
  std::string name = argv[1];
  if (name == "-h" || name == "--help" || name == "help") {
    PrintUsage(stdout);
    return CheckStdout("help", 0);
  }
  if (name == "--version" || name == "version") {
    std::printf("tptriage %s\n", TPT_VERSION);
    return CheckStdout("version", 0);
  }
  for (const auto& c : kCommands) {
    if (name == c.name) return CheckStdout(c.name, c.run(tpt::cli::Args(argv + 2, argv + argc)));
  }
  std::fprintf(stderr, "tptriage: unknown command '%s'\n\n", name.c_str());
  PrintUsage(stderr);
  return 2;
}
