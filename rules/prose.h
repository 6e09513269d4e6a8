// prose.h: a document that quotes log lines is not a log.
//
// Programs mark the lines they write: a timestamp, a level, a producer or
// wrapper prefix, a traceback, an exception type in front of the message. A
// README or a design note quotes the same messages inside a sentence, in an
// inline code span or between quotation marks ("the server dies with \"Not
// enough memory...\" at 0.55"). A file with such a mention reads as a
// document: its mentions and its other unmarked lines that do not start with
// the message are not evidence; lines pasted into it with their marks (a
// fenced log, a traceback) still are. A file without any mention is a log
// and is left whole, however it was pasted (quoted, indented, wrapped). So is
// a bug report (a GitHub issue form: its headings or checklist, the kind
// bug_report): its prose is its author's account of their own failure.
//
//   size_t dropped = 0;
//   std::vector<std::string> docs = DropProse(formats, &run->events, &run->totals, &dropped);
#pragma once

#include <string>
#include <vector>

#include "parser/event.h"
#include "parser/parser.h"

namespace tpt {

class FormatSet;

// Removes the events of prose from the files that read as documents; returns
// those files' names (empty when every file is a log). `dropped` counts the
// events removed.
// `totals` (may be null) is kept consistent with the events left.
std::vector<std::string> DropProse(const FormatSet& formats, std::vector<Event>* events, RunTotals* totals,
                                   size_t* dropped);

// For tests: does the line tell its author's own run: a first-person word
// ("I", "I'm", "me", "my") outside its inline code spans?
bool FirstPersonAccount(std::string_view text);

// For tests: is the matched message at `match_begin` of `text` inside an
// inline code span or a prose quotation?
bool QuotedInProse(std::string_view text, size_t match_begin);

// A message written inside a sentence of a file that is a log (an issue body
// that says "..., a CUDA error: an illegal memory access was encountered
// appears" above the lines it pasted): a person's words, not a line a program
// printed at a point of the run. Its place in the file is no time, so the
// lines after it do not show its process went on after it. Sets the event
// field kProseMention on such events (no mark, and in front of the message
// words and no producer syntax: see SentenceBefore). Returns how many.
inline constexpr const char* kProseMention = "prose_mention";
// The most a diagnosis anchored on such a mention is sure of.
inline constexpr double kProseMentionConfidence = 0.5;
size_t MarkSentenceMentions(const FormatSet& formats, std::vector<Event>* events);

// For tests: is `pre`, the text in front of a message, a person's sentence
// (it starts with four plain words, and holds none of the brackets, '=' or
// '|' a program's prefix is made of)?
bool SentenceBefore(std::string_view pre);

}  // namespace tpt
