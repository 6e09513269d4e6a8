// generate.h: man page and shell completions from the commands' option tables
// (`tptriage --generate man|complete-bash|complete-zsh|complete-fish`).
#pragma once

#include <string>
#include <vector>

#include "cli/args.h"

namespace tpt::cli {

struct CommandOptions {
  const CommandDoc* doc;
  std::vector<OptionDoc> options;
};

std::string GenerateMan(const std::vector<CommandOptions>& cmds, const std::vector<OptionDoc>& global,
                        const std::string& version);
std::string GenerateBash(const std::vector<CommandOptions>& cmds, const std::vector<OptionDoc>& global);
std::string GenerateZsh(const std::vector<CommandOptions>& cmds, const std::vector<OptionDoc>& global);
std::string GenerateFish(const std::vector<CommandOptions>& cmds, const std::vector<OptionDoc>& global);

}  // namespace tpt::cli
