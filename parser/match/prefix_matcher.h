// prefix_matcher.h: which of a list of anchored regexes (the wrappers, then
// the producer prefixes) match at the start of a place of a line.
//
// Two implementations answer the same question: our lazy DFA (prefix_dfa.h,
// a few dozen instructions a call) when it can read every member, else an
// anchored RE2::Set (~600 instructions a call). A checked load compares both
// on every sample (CheckAgainstSet) and keeps the set on any disagreement.
//
//   auto m = tpt::PrefixMatcher::Build({{"wrappers.srun", R"((?P<rank>\d+): )"}});
//   std::vector<int> found;
//   m->MembersAt("3: hello", &found);  // found == {0}
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace tpt {

class PrefixDfa;

class PrefixMatcher {
 public:
  struct Member {
    std::string name;   // for messages: "family.id"
    std::string regex;  // RE2 syntax, compiled by RE2 before (as FormatSet does)
  };

  // The automaton when it reads every member, else the set. Errors only when
  // the set is needed and cannot be built (naming the member).
  static StatusOr<PrefixMatcher> Build(const std::vector<Member>& members);

  PrefixMatcher();
  PrefixMatcher(const PrefixMatcher&);
  PrefixMatcher(PrefixMatcher&&) noexcept;
  PrefixMatcher& operator=(const PrefixMatcher&);
  PrefixMatcher& operator=(PrefixMatcher&&) noexcept;
  ~PrefixMatcher();

  // Clears *found and appends the indexes of the members that match at the
  // start of `place`, ascending. Thread-safe.
  void MembersAt(std::string_view place, std::vector<int>* found) const;

  // True when the automaton answers, false when RE2::Set does.
  bool by_automaton() const { return dfa_ != nullptr; }

  // With the automaton: asks it and an RE2::Set of the same members at every
  // place of each line (its start and after each space). On the first
  // disagreement the set answers from then on and *disagreeing names the
  // line; else *disagreeing is left empty. Errors only when the set cannot be
  // built.
  Status CheckAgainstSet(const std::vector<std::string>& lines, std::string* disagreeing);

  // Tests: plant another automaton (to check that a wrong one is caught).
  void SetAutomatonForTest(std::shared_ptr<const PrefixDfa> dfa);

 private:
  struct Set;
  static StatusOr<std::shared_ptr<const Set>> BuildSet(const std::vector<Member>& members);

  std::vector<Member> members_;
  std::shared_ptr<const PrefixDfa> dfa_;
  std::shared_ptr<const Set> set_;
};

}  // namespace tpt
