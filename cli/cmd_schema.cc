// cmd_schema.cc: `tptriage schema NAME`: the JSON Schema of a JSON output, as
// compiled into the binary (the same files as schemas/ in the repository).
#include <cstdio>
#include <string>
#include <vector>

#include <boost/program_options.hpp>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/schemas.h"

namespace tpt::cli {

int RunSchema(const Args& args) {
  namespace po = boost::program_options;
  bool list = false;
  std::vector<std::string> names;
  po::options_description desc("options");
  desc.add_options()
      ("help,h", "show this help")
      ("list", po::bool_switch(&list), "list the schema names");
  if (auto code = ParseCommandLine(args, desc, "schema", &names)) return *code;
  std::vector<std::string> known;
  for (const auto& [name, text] : BuiltinSchemas()) known.push_back(name);
  if (list) {
    for (const auto& n : known) std::printf("%s\n", n.c_str());
    return 0;
  }
  if (names.size() != 1) return UsageError("schema", "give one NAME: analyze, analyze-runs, plan, diff, events or repro");
  for (const auto& [name, text] : BuiltinSchemas()) {
    if (name == names[0]) {
      std::fputs(text.c_str(), stdout);
      return 0;
    }
  }
  std::string msg = "unknown schema '" + names[0] + "'";
  if (std::string guess = ClosestMatch(names[0], known); !guess.empty()) msg += "; did you mean '" + guess + "'?";
  return UsageError("schema", msg);
}

}  // namespace tpt::cli
