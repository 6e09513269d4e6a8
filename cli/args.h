// args.h: the command-line parsing every subcommand shares.
//
// Flags go through a Boost.ProgramOptions description into the command's
// plain struct; every positional argument (logs, runs) lands in one vector.
//
//   std::vector<std::string> logs;
//   if (!tpt::cli::ParseCommandLine(args, desc, "events", &logs)) return Usage(desc, stderr, 2);
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include <boost/program_options.hpp>

#include "cli/commands.h"

namespace tpt::cli {

// Fills the variables bound in `desc` and `positional`. On a bad flag prints
// "tptriage CMD: why" on stderr and returns false.
inline bool ParseCommandLine(const Args& args, const boost::program_options::options_description& desc,
                             const char* cmd, std::vector<std::string>* positional) {
  namespace po = boost::program_options;
  po::options_description hidden;
  hidden.add_options()("positional-args", po::value(positional));
  po::options_description all;
  all.add(desc).add(hidden);
  po::positional_options_description pos;
  pos.add("positional-args", -1);
  try {
    po::variables_map vm;
    po::store(po::command_line_parser(args).options(all).positional(pos).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::fprintf(stderr, "tptriage %s: %s\n\n", cmd, e.what());
    return false;
  }
  return true;
}

}  // namespace tpt::cli
