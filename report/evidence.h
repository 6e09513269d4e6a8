// evidence.h: how text, markdown and HTML show a diagnosis' evidence lines.
//
// JSON keeps every line whole; the person-facing formats show
//  - each line whole (wrapped at spaces by the renderer), except a long
//    argument dump (SGLang `server_args=ServerArgs(...)`, vLLM's engine
//    config, TGI `Args { ... }` past kDumpBytes), shown as its start plus the
//    key=value pairs the diagnosis read (Evidence::read), with a note saying
//    more was left out and where the whole line is;
//  - a line printed the same by several ranks (identical but for a leading
//    time/level/rank prefix) once, with the other ranks and their lines.
//
//   for (const EvidenceRow& row : EvidenceRows(d.evidence, 8)) {
//     ShownEvidence s = ShowEvidence(*row.line);
//     out << EvidenceHead(*row.line) << s.text << " " << s.note << " " << SameLineNote(row);
//   }
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "rules/analysis.h"

namespace tpt::report {

// A line longer than this that reads as an argument dump is shortened.
inline constexpr size_t kDumpBytes = 600;

// One shown line and the same line on other ranks (each rank once, never the
// shown line's own rank; rank-less lines are never merged).
struct EvidenceRow {
  const Evidence* line = nullptr;
  std::vector<const Evidence*> same;
};

// The evidence as rows, in order, at most `max_rows`; *left_out (when given)
// gets the number of evidence lines not in any row.
std::vector<EvidenceRow> EvidenceRows(const std::vector<Evidence>& evidence, size_t max_rows,
                                      size_t* left_out = nullptr);

// What two lines are compared by: the text with the digits of its leading
// prefix (bracketed groups, level words, dates and times) masked.
std::string SameLineKey(std::string_view text);

// "file:line rank N: " (no rank when the line has none).
std::string EvidenceHead(const Evidence& e);

// "(same line on ranks 1-7: lines 68, 83, 98)", or "" when the row has one line.
std::string SameLineNote(const EvidenceRow& row);

struct ShownEvidence {
  std::string text;  // the line, or for a long dump its start and the pairs read
  std::string note;  // "" when whole; else what was left out and where the whole line is
};
ShownEvidence ShowEvidence(const Evidence& e);

}  // namespace tpt::report
