// color.h: --color auto|never|always for the text report on a terminal.
//
// Only a few things are coloured, and only where a person reads them: the
// verdict (red for a failure, green when healthy), SHORT in the memory ledger,
// the row of the rank that failed first, ERROR lines. auto colours when stdout
// is a terminal, NO_COLOR is unset (https://no-color.org) and TERM is not
// "dumb"; always and never override all of that.
#pragma once

#include <string>

namespace tpt::cli {

// True when `when` ("auto", "always", "never") asks for colour on stdout.
bool UseColor(const std::string& when);

// The text report with ANSI colours added; `failed`: the run(s) did not pass.
std::string ColorizeText(const std::string& text, bool failed);

}  // namespace tpt::cli
