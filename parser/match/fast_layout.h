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

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"

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
  // matched span. False means "not sure": the caller runs the regex, and
  // `groups` is left in no particular state. `text` is valid UTF-8 as the
  // regex sees it (the parser repairs a line first): a layout reads bytes, and
  // RE2's `.` and \S take no invalid byte.
  // Runs the layout's compiled code when the build made some for it (the
  // built-in formats' layouts, fast_layout_emit.cc), the interpreter otherwise.
  bool Match(std::string_view text, std::vector<std::string_view>* groups) const {
    if (groups->size() != static_cast<size_t>(num_groups_) + 1) groups->resize(num_groups_ + 1);
    return code_ != nullptr ? code_(text.data(), text.size(), groups->data()) : Interpret(text, groups->data());
  }
  // The same through the interpreter, whatever the build made (tests compare the two).
  bool MatchInterpreted(std::string_view text, std::vector<std::string_view>* groups) const;

  // A layout's program written as one C++ function `name` with the signature
  // of Code (fast_layout_emit.cc): the same steps as the interpreter, with the
  // literals, classes and groups as constants. The build writes it for every
  // layout of the built-in formats (parser/match/tools/gen_fast_code.cc); Compile
  // takes a compiled function only when its text is exactly what EmitCode
  // writes for the layout being compiled.
  using Code = bool (*)(const char* text, size_t size, std::string_view* groups);
  std::string EmitCode(std::string_view name) const;
  // Whether Match runs compiled code.
  bool compiled() const { return code_ != nullptr; }

  // Checks the layout against the regex on one line: "" when the layout
  // declines (then *taken is false) or yields exactly the regex's groups;
  // otherwise what differs. The loader runs it on every sample and near miss.
  std::string Disagreement(std::string_view text, const re2::RE2& re, bool* taken) const;

  const std::string& source() const { return source_; }

  // The literal every match of `regex` starts with ("" when there is none, e.g.
  // a leading group, class or top-level alternation). Exposed for tests.
  static std::string LeadingLiteral(std::string_view regex);

 private:
  friend class LayoutBuilder;

  bool Interpret(std::string_view text, std::string_view* groups) const;

  // One step of the compiled program (fast_layout.cc says how Match runs it).
  // Steps marked "then text" go on to match the literal pool_[then, then +
  // then_len) right after what they take (none when then_len is 0).
  struct Op {
    enum Kind : uint8_t {
      kByte,        // one literal byte: pool_[off]
      kLiteral,     // literal text: pool_[off, off + len)
      kFixed,       // `len` bytes, byte k one of sets_[shape_[off + k]]; then marks_[first_mark, end_mark)
      kRun,         // a greedy run of sets_[set] bytes, at least `min`; then text
      kWords,       // one of the words words_[off, off + len); then text
      kSkip,        // to just after the first occurrence of pool_[off, off + len)
      kSpanEnd,     // group `group` ends here (a kFixed started it)
      kSection,     // an optional section up to ops_[end - 1], a kSectionEnd; it starts
                    // with the text pool_[off, off + len) when len > 0
      kSectionEnd,
      kEnd,         // the layout matched
    };
    Kind kind = kEnd;
    bool backoff = false;   // kRun: gives back bytes so that the text after it follows
    bool gate = false;      // kSection: entered only when the next byte is in sets_[set]
    uint8_t min = 1;        // kRun: 0 or 1
    uint8_t wide = 0;       // kRun: read 8 bytes at a time (a class of fast_layout.cc's Wide); kFixed: 1 when
                            // chunks_[first_chunk, end_chunk) check it
    int16_t group = -1;     // the regex group it sets, -1 none
    uint16_t set = 0;       // kRun, gated kSection: index into sets_
    uint32_t off = 0, len = 0;
    uint32_t then = 0, then_len = 0;
    // The first 8 bytes of the text at `off` (kLiteral, kSkip, kSection) and of
    // the text after: compared in one load where the line has 8 bytes left.
    uint64_t head = 0, head_mask = 0, then_head = 0, then_mask = 0;
    uint32_t end = 0;       // kSection: index of the op after its kSectionEnd
    uint16_t first_kept = 0, end_kept = 0;  // kSection: the groups it may set, kept_[first_kept, end_kept)
    uint16_t first_mark = 0, end_mark = 0;  // kFixed
    uint16_t first_chunk = 0, end_chunk = 0;  // kFixed when wide
  };
  struct ByteSet {
    bool has[256];
  };
  // Where a kFixed's groups start or end, counted from its start: a group is
  // [begin, end) (a span that goes on past the kFixed starts as [begin, begin)),
  // or a span started earlier ends at `begin`.
  struct Mark {
    bool span_end;
    int16_t group;
    uint16_t begin, end;
  };
  // 8 bytes of a kFixed made only of literal bytes and digits, checked at once.
  struct Chunk {
    uint32_t at;        // from the kFixed's start
    uint64_t lit_mask;  // 0xff on literal bytes
    uint64_t lit;       // their values
    uint64_t digits;    // 0xff on digits
  };

  std::string source_;
  bool anchored_ = false;
  std::string lead_;  // leading literal of the regex (prefix of the layout's first literal)
  uint64_t lead_head_ = 0, lead_mask_ = 0;
  int num_groups_ = 0;
  std::vector<Op> ops_;                                 // ends with kEnd
  std::string pool_;                                    // literal bytes of the ops
  std::vector<ByteSet> sets_;                           // byte classes of the ops
  std::vector<uint16_t> shape_;                         // kFixed: a set per byte
  std::vector<Mark> marks_;                             // kFixed
  std::vector<Chunk> chunks_;
  std::vector<std::pair<uint32_t, uint32_t>> words_;    // kWords: (offset, length) in pool_
  std::vector<int> kept_;                               // the groups the layout sets, in order
  std::vector<int> clear_;                              // groups cleared first: never set, or in a section
  Code code_ = nullptr;                                 // compiled by the build, when it was
};

// The layouts compiled into this binary: a function and the text EmitCode
// wrote for it (with the name "F"). Defined by the generated
// fast_code_data.cc, or by parser/match/tools/no_fast_code.cc (none).
namespace fast_layout_code {
struct Entry {
  std::string_view text;
  FastLayout::Code code;
};
const Entry* Entries(size_t* count);
}  // namespace fast_layout_code

}  // namespace tpt
