// capture.h: "the regex's groups, or decline": what a pattern or a prefix
// runs to capture. A spec's FastLayouts (fast_layout.h) are tried first and
// may decline; then its regex runs (RunRe), compiled at load or, for the
// compiled-in formats, on first use (LazyRe, groups read from the regex
// text: regex_groups.h).
#pragma once

#include <re2/re2.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "parser/match/fast_layout.h"

namespace tpt {

// RE2 with the formats' options (case-insensitive when asked, 64 MiB); null
// with *error set when the pattern does not compile.
std::shared_ptr<re2::RE2> CompileRegex(const std::string& pattern, bool caseless, std::string* error);

// Runs `re` with all captures from text[pos]; `groups` receives n+1 views
// (data() == nullptr: did not participate). `precheck` first asks the DFA
// whether there is a match at all (most tries fail).
bool RunRe(const re2::RE2& re, std::string_view text, size_t pos, re2::RE2::Anchor anchor,
           std::vector<std::string_view>* groups, bool precheck = true);

// A pattern's regex, dereferenced like the shared_ptr<RE2> it stands for:
// compiled at load, or (the compiled-in formats, which formats_test compiles
// and checks in every build) on first use: most of ~230 patterns never meet
// a line of a given log, and compiling them all was a third of the load.
class LazyRe {
 public:
  LazyRe() = default;
  LazyRe(std::shared_ptr<re2::RE2> compiled);  // NOLINT: as the shared_ptr it replaces
  LazyRe(std::string pattern, bool caseless);  // compiled on first use
  const re2::RE2& operator*() const { return *get(); }
  const re2::RE2* operator->() const { return get(); }
  explicit operator bool() const { return state_ != nullptr; }
  bool compiled() const;  // false until first use of a deferred one

 private:
  const re2::RE2* get() const;
  struct State;
  std::shared_ptr<State> state_;
};

// "The regex's groups, or decline", the one question a pattern or a prefix
// asks: the first of `fast` that reads text[pos..] gives the groups, else the
// regex runs from `pos` (`re`, a LazyRe or a shared_ptr<RE2>, is dereferenced
// only then, so a lazy regex is not compiled for lines its layouts read).
template <class Re>
inline bool Capture(const std::vector<std::shared_ptr<const FastLayout>>& fast, const Re& re, std::string_view text,
                    size_t pos, re2::RE2::Anchor anchor, std::vector<std::string_view>* groups, bool precheck) {
  for (const auto& fl : fast) {
    if (fl->Match(text.substr(pos), groups)) return true;
  }
  return RunRe(*re, text, pos, anchor, groups, precheck);
}

}  // namespace tpt
