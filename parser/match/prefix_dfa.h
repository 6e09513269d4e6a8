// prefix_dfa.h: which of a list of regexes match at the start of a text, the
// answer of RE2::Set(options, RE2::ANCHOR_START) without its per-call cost.
//
// FormatSet::StripLine asks this at every place of a line (its start, then
// after each stripped wrapper or prefix). RE2::Set spends ~600 instructions a
// call on locks, its cache lookup and setup; this automaton spends a few dozen
// plus a few per byte walked. It is a lazy DFA like RE2's: the regexes become
// one byte-level Thompson NFA, whose sets of states become DFA states on
// demand, in a cache of each thread (no lock on the hot path) that is flushed
// when it grows past a bound, so no input can blow up memory or time.
// Each thread's cache also keeps its last short walks (two per group of
// first-byte classes): a walk's answer depends only on the classes of the
// bytes it read, so a text that reads the same classes (the next line of the
// same shape, with other digits) is answered by a vector test of 16 bytes at
// a time instead of the walk's chain of dependent loads.
//
// Only a subset of RE2's syntax is supported (what wrappers and producer
// prefixes use): literals, `^` at the very start, groups, alternation,
// `? * + {n} {n,} {n,m}` (lazy or not), `.`, classes of ASCII items, \d \w \s
// \D \W \S. Build refuses anything else with a message naming the regex; the
// caller then keeps RE2::Set. Build does not repeat every check of RE2's (it
// takes `(?<name>...)`, which this RE2 refuses): compile the regexes with RE2
// first, as FormatSet does.
//
//   auto dfa = tpt::PrefixDfa::Build({R"(\[(?P<ts>\d+)\] )", R"(\w+: )"});
//   if (!dfa.ok()) return dfa.status();
//   std::vector<int> members;
//   if ((*dfa)->Match("[12] rank0: x", &members)) ...  // members == {0}
#pragma once

#include "base/status.h"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace tpt {

class PrefixDfa {
 public:
  // Bounds of a thread's cache of DFA states; past either it is flushed.
  static constexpr int kDefaultMaxStates = 4096;
  static constexpr size_t kMaxCacheBytes = 8 << 20;
  // Bound of the NFA (counted repeats copy their operand).
  static constexpr size_t kMaxInstructions = 1 << 20;
  // Walks of up to kWalkBytes are kept, one for each of kWalkSlots groups of
  // first-byte classes, to answer the next text that reads the same classes.
  static constexpr size_t kWalkBytes = 64;
  static constexpr size_t kWalkSlots = 8;

  // The automaton of `regexes` (RE2 syntax, UTF-8, RE2's default options),
  // each matched anchored at the start of the text and unanchored at its end.
  // An error names the regex (index and text) and the construct when one is
  // outside the supported subset. `max_states` bounds each thread's cache (a
  // small value makes tests flush it often); at least 4.
  static StatusOr<std::shared_ptr<const PrefixDfa>> Build(const std::vector<std::string>& regexes,
                                                         int max_states = kDefaultMaxStates);

  // Clears *members and appends the indexes of the regexes that match at the
  // start of `text`, ascending. Returns !members->empty(). Thread-safe.
  bool Match(std::string_view text, std::vector<int>* members) const;

  size_t num_members() const { return num_members_; }
  int num_byte_classes() const { return num_classes_; }
  // How many times this thread's cache of this automaton was flushed (tests).
  int64_t FlushesOnThisThread() const;
  // How many of this thread's Match calls were answered from a kept walk (tests).
  int64_t WalksReusedOnThisThread() const;

  // One NFA instruction (public for the .cc's helpers; not an API).
  struct Inst {
    enum Op : uint8_t { kByte, kAlt, kMatch } op;
    uint8_t lo = 0, hi = 0;  // kByte: the byte range
    int out = -1;            // kByte, kAlt: next instruction
    int out1 = -1;           // kAlt: the other next instruction
    int member = -1;         // the regex this instruction belongs to
  };
  struct Cache;

  PrefixDfa() = default;

 private:
  Cache* ThreadCache() const;
  // Fills the transition of `row` on byte class `cls` (computing the next
  // state, flushing the cache when full) and returns it (encoded as in the
  // table: see Cache in the .cc).
  int64_t Step(Cache* c, int64_t* row, int cls) const;
  // The closure of `entries` into sorted byte instructions of members that did
  // not match, then the members that matched.
  void Closure(Cache* c, const int* entries, size_t n, std::vector<int>* key) const;

  uint64_t id_ = 0;  // unique over the process: the key of the thread caches
  size_t num_members_ = 0;
  int max_states_ = kDefaultMaxStates;
  int num_classes_ = 0;
  uint8_t byte_class_[256] = {};
  uint8_t class_lo_[256] = {}, class_width_[256] = {};  // class c is the bytes [lo, lo + width]
  std::vector<Inst> prog_;
  std::vector<int> entries_;  // each member's first instruction
};

}  // namespace tpt
