// safe_stderr.h: everything tptriage writes on stderr goes through one filter.
// Messages quote file names, archive member names and log text, which an
// attacker controls (a zip of someone else's logs): raw, an ESC sequence
// retitles or clears the terminal, and a newline followed by "::add-mask::"
// is a workflow command to GitHub's runner, which parses stderr too. The
// filter shows control bytes as \xNN (\n ends a line, \t stays) and puts a
// backslash before a line that starts with "::" or "##[".
//
//   int main(...) { tpt::cli::NeutraliseStderr(); ... std::fprintf(stderr, ...); }
#pragma once

#include <string>
#include <string_view>

namespace tpt::cli {

// Replaces the C stream `stderr` with the filter over file descriptor 2.
void NeutraliseStderr();

// The filter on one complete line (no '\n'): what reaches the terminal.
std::string SafeStderrLine(std::string_view line);

}  // namespace tpt::cli
