// commands.h: one entry point per subcommand; cli/main.cc dispatches.
//
// Each Run* takes the arguments after the subcommand name and returns the
// process exit code (README "Exit codes"). Each lives in cli/cmd_<name>.cc,
// parses its flags with Boost.ProgramOptions into a plain struct, validates it,
// and calls the libraries; no other module sees a variables_map.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace tpt::cli {

using Args = std::vector<std::string>;

int RunAnalyze(const Args& args);  // logs -> diagnosis
int RunEvents(const Args& args);   // logs -> events as JSON Lines
int RunPlan(const Args& args);     // what-if memory plan before a launch
int RunRepro(const Args& args);    // reproduce a diagnosis on GPUs
int RunDiff(const Args& args);     // compare a good and a bad run
int RunLog(const Args& args);      // the run's lines merged by time, tagged by rank
int RunSchema(const Args& args);   // the JSON Schema of a JSON output

// (topic, text) of the file-language references compiled in (tpt_embed in
// cli/CMakeLists.txt): format-files, rule-files, finding-files.
const std::vector<std::pair<std::string, std::string>>& BuiltinDocs();

}  // namespace tpt::cli
