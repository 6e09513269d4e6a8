// args.h: the command-line machinery every subcommand shares.
//
// Flags go through a Boost.ProgramOptions description into the command's
// plain struct; every positional argument (logs, runs) lands in one vector.
// ParseCommandLine also answers --help (usage line, options with named
// placeholders, examples, exit codes: cli/help.cc) and turns a bad flag into
// one line with a "did you mean" hint, never a dump of the whole help:
//
//   std::vector<std::string> logs;
//   if (auto code = tpt::cli::ParseCommandLine(args, desc, "events", &logs)) return *code;
//
// The same descriptions feed the man page and the shell completions
// (`tptriage --generate man|complete-bash|complete-zsh|complete-fish`), so the
// docs cannot drift from the flags.
#pragma once

#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/program_options.hpp>

#include "cli/commands.h"
#include "parser/format_set.h"

namespace tpt::cli {

// One option as the help, man page and completions show it.
struct OptionDoc {
  std::string long_name;         // "output"
  std::string short_name;        // "o" or ""
  std::string placeholder;       // "FILE"; "" for a switch
  std::string description;
  std::string default_value;     // as shown, "" when none
  std::vector<std::string> choices;  // "text | json | ..." in the description
};

// The text of one subcommand's help beside its options (cli/help.cc).
struct CommandDoc {
  const char* name;
  const char* summary;      // one line, for `tptriage --help`
  const char* usage;        // lines after "usage: ", '\n'-separated
  const char* description;  // a paragraph or two
  const char* examples;     // command lines, '\n'-separated ("# ..." lines are comments)
  const char* exit_codes;   // "0 ...\n1 ...\n"
};

// Every subcommand's doc, in the order `tptriage --help` lists them.
const std::vector<CommandDoc>& CommandDocs();
const CommandDoc* FindCommandDoc(std::string_view name);

// The options of `desc` with their placeholders resolved (never "arg").
std::vector<OptionDoc> DescribeOptions(const boost::program_options::options_description& desc);

// Full help of `cmd` for these options.
std::string FormatHelp(const CommandDoc& doc, const std::vector<OptionDoc>& options);

// The closest of `candidates` to `word` (edit distance, or a unique prefix),
// "" when none is close enough to be a useful guess.
std::string ClosestMatch(std::string_view word, const std::vector<std::string>& candidates);

// Parses `args` into the variables bound in `desc` and `positional`.
// Returns nullopt to go on; otherwise the exit code to return at once: 0
// after printing the help for -h/--help, `usage_code` after printing one
// line "tptriage CMD: why; did you mean ...?" on stderr. `vm` receives the
// parsed map when the command needs to know which flags were given.
std::optional<int> ParseCommandLine(const Args& args, const boost::program_options::options_description& desc,
                                    const char* cmd, std::vector<std::string>* positional,
                                    boost::program_options::variables_map* vm = nullptr, int usage_code = 2);

// True when stdin is a pipe, a socket or a redirected file: then a command
// given no LOG reads it. A terminal or /dev/null is not read.
bool StdinIsPiped();

// A one-line usage error with the pointer to the help: returns `code`.
int UsageError(const char* cmd, const std::string& message, int code = 2);

// Describe mode: `tptriage --generate ...` runs each subcommand with no
// arguments while a sink is installed; ParseCommandLine then records the
// command's options here and returns 0 before the command does anything.
struct OptionSink {
  std::vector<OptionDoc> options;
  bool seen = false;
};
void SetOptionSink(OptionSink* sink);  // nullptr to end describe mode

// The first name of `kinds` that is neither in parser/events.json nor given by
// a pattern of `formats`, with the closest known name and the list, as a
// one-line message for `CMD: --kinds ...`; "" when every name is known.
std::string UnknownKinds(const std::vector<std::string>& kinds, const FormatSet& formats);

}  // namespace tpt::cli
