// fast_layout.h: a pattern's fast path, a fixed line layout parsed by hand.
//
// A few patterns (batch statistics, HTTP access lines) match most lines of a
// serving log. Their regexes have several `.*?` and many groups, so RE2 runs
// its backtracking engine on each; a FastLayout reads the same line in one
// left-to-right pass instead. The regex stays the authority: a layout only
// says "these are the regex's groups" when the line has exactly the expected
// shape, and "ask the regex" otherwise (formats/README.md, "fast").
//
// Template language (one string):
//   literal text            matched as is; `\` escapes the next character
//   {name:class}            a run captured into the regex's group `name`;
//   {:class}                  the same, not kept
//       digits    \d+        number   [\d.]+      nonspace  \S+
//       digits=N  \d{N}      word     \w+         A|B|C     one of these words
//       [set]+  [set]*       a character class as in RE2 ([\w./-]+, [0-9;]*)
//   {name=layout}           the span of a sub-layout captured into group `name`
//   [ ... ]                 optional section, taken when it matches (like (?:...)?)
//   *                       skip to the first occurrence of the literal after it (like .*?)
//
//   auto fl = tpt::FastLayout::Compile(
//       "Decode batch. #running-req: {running:digits}, #token: {tokens:digits}", *re);
//   std::vector<std::string_view> groups;   // indexed like the regex's groups
//   if (fl->Match(line, &groups)) UseGroups(groups); else RunTheRegex(line);
#pragma once

#include <bitset>
#include <string>
#include <string_view>
#include <vector>

#include "parser/status.h"

namespace re2 {
class RE2;
}

namespace tpt {

class FastLayout {
 public:
  // Compiles `layout` for the regex `re`: every named capture must be a group
  // of `re`, and the layout must start with the literal every match of `re`
  // starts with (so both look at the same place). Errors say what is wrong.
  // With `anchored` the layout is for a regex run with RE2::ANCHOR_START (a
  // producer prefix): it is matched at the start of the text given, and need
  // not start with a literal.
  static StatusOr<FastLayout> Compile(std::string_view layout, const re2::RE2& re, bool anchored = false);

  // True when the line has the layout at the first occurrence of its leading
  // literal (anchored: at text[0]); `groups` then holds 1 + the regex's group
  // count views (data() == nullptr for a group that took no part), [0] the
  // matched span. False means "not sure": the caller runs the regex.
  bool Match(std::string_view text, std::vector<std::string_view>* groups) const;

  // Checks the layout against the regex on one line: "" when the layout
  // declines (then *taken is false) or yields exactly the regex's groups;
  // otherwise what differs. The loader runs it on every sample and near miss.
  std::string Disagreement(std::string_view text, const re2::RE2& re, bool* taken) const;

  const std::string& source() const { return source_; }

  // The literal every match of `regex` starts with ("" when there is none, e.g.
  // a leading group, class or top-level alternation). Exposed for tests.
  static std::string LeadingLiteral(std::string_view regex);

  struct Item;

 private:
  std::string source_;
  bool anchored_ = false;
  std::string lead_;  // leading literal of the regex (prefix of the layout's first literal)
  int num_groups_ = 0;
  std::vector<Item> items_;
};

struct FastLayout::Item {
  enum Type { kLiteral, kCapture, kSkip, kOptional, kSpanStart, kSpanEnd } type = kLiteral;
  enum Class { kSet, kWords } cls = kSet;
  std::string literal;             // kLiteral
  int group = -1;                  // kCapture, kSpan*: regex group index, -1 = not kept
  std::bitset<256> set;            // kSet: the bytes a run takes
  int min = 1;                     // kSet: 0 for [..]*, 1 otherwise
  int count = 0;                   // kSet: exact count (digits=N), 0 = a greedy run
  bool backoff = false;            // kSet: the literal after it starts inside the set (RE2 backs off)
  std::vector<std::string> words;  // kWords
  std::vector<Item> section;       // kOptional
};

}  // namespace tpt
