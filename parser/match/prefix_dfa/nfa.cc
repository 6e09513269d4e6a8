// nfa.cc: Compiler (nfa.h).
#include "parser/match/prefix_dfa/nfa.h"

namespace tpt::prefix_dfa {

int Compiler::Byte(int lo, int hi, int out) {
  Inst i;
  i.op = Inst::kByte;
  i.lo = static_cast<uint8_t>(lo);
  i.hi = static_cast<uint8_t>(hi);
  i.out = out;
  return Add(i);
}

int Compiler::Alt(int out, int out1) {
  Inst i;
  i.op = Inst::kAlt;
  i.out = out;
  i.out1 = out1;
  return Add(i);
}

int Compiler::Match() {
  Inst i;
  i.op = Inst::kMatch;
  return Add(i);
}

int Compiler::Emit(const Node& n, int next) {
  if (overflow_) return next;
  switch (n.kind) {
    case Node::kEmpty:
      return next;
    case Node::kBytes:
      for (size_t i = n.bytes.size(); i-- > 0;) {
        int b = static_cast<unsigned char>(n.bytes[i]);
        next = Byte(b, b, next);
      }
      return next;
    case Node::kClass: {
      std::vector<int> alts;
      for (int c = 0; c < 128;) {
        if (!n.ascii[static_cast<size_t>(c)]) {
          ++c;
          continue;
        }
        int lo = c;
        while (c < 128 && n.ascii[static_cast<size_t>(c)]) ++c;
        alts.push_back(Byte(lo, c - 1, next));
      }
      if (n.non_ascii) {  // as RE2 compiles U+0080-U+10FFFF: any lead byte, its continuation bytes
        int cont1 = Byte(0x80, 0xbf, next);
        alts.push_back(Byte(0xc2, 0xdf, cont1));
        int cont2 = Byte(0x80, 0xbf, cont1);
        alts.push_back(Byte(0xe0, 0xef, cont2));
        int cont3 = Byte(0x80, 0xbf, cont2);
        alts.push_back(Byte(0xf0, 0xf4, cont3));
      }
      if (alts.empty()) return Byte(1, 0, next);  // an empty class: matches nothing
      return AltOf(alts);
    }
    case Node::kConcat:
      for (size_t i = n.kids.size(); i-- > 0;) next = Emit(n.kids[i], next);
      return next;
    case Node::kAlt: {
      std::vector<int> alts;
      for (const Node& k : n.kids) alts.push_back(Emit(k, next));
      return AltOf(alts);
    }
    case Node::kRepeat: {
      const Node& k = n.kids[0];
      int entry = next;
      if (n.max == -1) {
        int loop = Alt(-1, next);
        int body = Emit(k, loop);
        if (!overflow_) (*prog_)[static_cast<size_t>(loop)].out = body;
        entry = loop;
      } else {
        for (int i = n.min; i < n.max && !overflow_; ++i) entry = Alt(Emit(k, entry), next);
      }
      for (int i = 0; i < n.min && !overflow_; ++i) entry = Emit(k, entry);
      return entry;
    }
  }
  return next;
}

int Compiler::Add(Inst i) {
  if (prog_->size() >= PrefixDfa::kMaxInstructions) {
    overflow_ = true;
    return 0;
  }
  i.member = member;
  prog_->push_back(i);
  return static_cast<int>(prog_->size() - 1);
}

int Compiler::AltOf(const std::vector<int>& alts) {
  int entry = alts.back();
  for (size_t i = alts.size() - 1; i-- > 0;) entry = Alt(alts[i], entry);
  return entry;
}

}  // namespace tpt::prefix_dfa
