// regex_subset.h: the subset of RE2's syntax that PrefixDfa supports
// (listed in prefix_dfa.h), parsed into a small tree: the automaton's first
// stage, as RE2's parse.cc is its own.
#pragma once

#include <bitset>
#include <string>
#include <string_view>
#include <vector>

namespace tpt::prefix_dfa {

struct Node {
  enum Kind { kEmpty, kBytes, kClass, kConcat, kAlt, kRepeat } kind = kEmpty;
  std::string bytes;            // kBytes: a literal's UTF-8
  std::bitset<128> ascii;       // kClass: the ASCII characters
  bool non_ascii = false;       // kClass: and every non-ASCII character
  std::vector<Node> kids;       // kConcat, kAlt; kRepeat: one
  int min = 0, max = 0;         // kRepeat; max -1: unbounded
};

// The tree of `re`; false with *error set ("what at offset N") when `re` is
// outside the subset.
bool ParseRegexSubset(std::string_view re, Node* out, std::string* error);

}  // namespace tpt::prefix_dfa
