// html_parts.h: the pieces of the HTML page that live in their own files
// (html.cc writes the page and calls them).
#pragma once

#include <ostream>
#include <string>

#include "rules/analysis.h"

namespace tpt::report {

// "12.3": an SVG coordinate or length, one decimal.
std::string HtmlNum(double v);

// The memory ledger chart (with the table folded under it).
void WriteLedgerSvg(const Analysis& a, std::ostream& out);
// A ledger with nothing to draw: the figures the log gave, in a sentence.
void WriteLedgerKnown(const Analysis& a, std::ostream& out);

}  // namespace tpt::report
