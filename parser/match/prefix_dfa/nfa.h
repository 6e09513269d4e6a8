// nfa.h: prefix_dfa::Node trees compiled into one byte-level Thompson NFA,
// an RE2-like program of byte ranges, splits and matches (PrefixDfa::Inst):
// the automaton's second stage, as RE2's compile.cc is its own.
#pragma once

#include <vector>

#include "parser/match/prefix_dfa.h"
#include "parser/match/prefix_dfa/regex_subset.h"

namespace tpt::prefix_dfa {

class Compiler {
 public:
  using Inst = PrefixDfa::Inst;
  // Appends to *prog; past PrefixDfa::kMaxInstructions it stops and says overflow().
  explicit Compiler(std::vector<Inst>* prog) : prog_(prog) {}
  bool overflow() const { return overflow_; }
  int member = 0;  // the regex the next instructions belong to

  int Byte(int lo, int hi, int out);
  int Alt(int out, int out1);
  int Match();
  // A fragment for n leading to `next`; returns its entry.
  int Emit(const Node& n, int next);

 private:
  int Add(Inst i);
  int AltOf(const std::vector<int>& alts);

  std::vector<Inst>* prog_;
  bool overflow_ = false;
};

}  // namespace tpt::prefix_dfa
