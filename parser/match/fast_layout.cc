// fast_layout.cc: FastLayout::Match, the compiled program run on a line
// (fast_layout_compile.cc builds it; fast_layout.h has the contract).
#include "parser/match/fast_layout.h"
#include "parser/match/fast_layout_internal.h"

#include <re2/re2.h>

#include <algorithm>
#include <bit>
#include <cstring>

namespace tpt {

using fast_layout_internal::kEach;
using fast_layout_internal::kHigh;
using fast_layout_internal::kNarrow;
using fast_layout_internal::kNonSpace;
using fast_layout_internal::kNumber;
using fast_layout_internal::Find;
using fast_layout_internal::LiteralAt;
using fast_layout_internal::Load;
using fast_layout_internal::kNone;
using fast_layout_internal::NotByte;
using fast_layout_internal::NotDigit;
using fast_layout_internal::TextAt;

bool FastLayout::MatchInterpreted(std::string_view text, std::vector<std::string_view>* groups) const {
  if (groups->size() != static_cast<size_t>(num_groups_) + 1) groups->resize(num_groups_ + 1);
  return Interpret(text, groups->data());
}

// Runs the program once, left to right, with no recursion and no allocation
// (but for `groups` the first time). Inside a section, a failure leaves the
// section out (its groups cleared) unless a choice was made in it that the
// regex could revisit: a skip whose literal occurs again later (looked up only
// then), or a run that could have backed off further. Any other failure
// declines: a choice outside sections never matters. fast_layout_emit.cc
// writes the same steps as straight-line C++ (keep the two in step).
bool FastLayout::Interpret(std::string_view text, std::string_view* const g) const {
  const char* const base = text.data();
  const size_t size = text.size();
  size_t start = 0;
  if (!anchored_) {
    // Mostly the text starts with it: no search then.
    if (!TextAt(base, size, 0, lead_.data(), lead_.size(), lead_head_, lead_mask_)) {
      start = Find(base, size, 1, lead_.data(), lead_.size(), lead_head_, lead_mask_);
      if (start == kNone) return false;
    }
  }
  size_t pos = start + lead_.size();
  // A group is cleared here or set by its step on every way to a match.
  for (int k : clear_) g[k] = std::string_view();

  const char* const pool = pool_.data();
  const ByteSet* const sets = sets_.data();
  const Op* const ops = ops_.data();
  const Op* section = nullptr;  // the section being tried
  size_t section_pos = 0;       // where it started
  bool choice = false;          // a run in it could have backed off
  struct Pending {              // skips in it: did their literal occur again?
    size_t at;
    const Op* op;
  } pending[fast_layout_internal::kPendingSkips];
  int num_pending = 0;

  // Direct threading: each step jumps to the next step's code from its own
  // indirect branch (one per kind), which the branch predictor learns far
  // better than the one shared jump of a switch.
  static const void* const kDispatch[] = {&&k_byte, &&k_literal, &&k_fixed, &&k_run, &&k_words,
                                          &&k_skip, &&k_span_end, &&k_section, &&k_section_end, &&k_end};
  static_assert(Op::kByte == 0 && Op::kLiteral == 1 && Op::kFixed == 2 && Op::kRun == 3 && Op::kWords == 4 &&
                Op::kSkip == 5 && Op::kSpanEnd == 6 && Op::kSection == 7 && Op::kSectionEnd == 8 && Op::kEnd == 9);
#define TPT_NEXT_OP() \
  do {                 \
    op = next++;       \
    goto* kDispatch[op->kind]; \
  } while (0)
  const Op* next = ops;
  const Op* op;
  TPT_NEXT_OP();
  {
    {
      k_byte:
        if (pos >= size || base[pos] != pool[op->off]) goto fail;
        ++pos;
        TPT_NEXT_OP();
      k_literal:
        if (!TextAt(base, size, pos, pool + op->off, op->len, op->head, op->head_mask)) goto fail;
        pos += op->len;
        TPT_NEXT_OP();
      k_fixed: {
        if (size - pos < op->len) goto fail;
        const char* s = base + pos;
        if (op->wide) {
          for (uint32_t c = op->first_chunk; c < op->end_chunk; ++c) {
            const Chunk& chunk = chunks_[c];
            uint64_t x = Load<uint64_t>(s + chunk.at);
            if ((x & chunk.lit_mask) != chunk.lit || (NotDigit(x) & chunk.digits) != 0) goto fail;
          }
        } else {
          const uint16_t* shape = shape_.data() + op->off;
          for (uint32_t k = 0; k < op->len; ++k) {
            if (!sets[shape[k]].has[static_cast<unsigned char>(s[k])]) goto fail;
          }
        }
        for (uint32_t m = op->first_mark; m < op->end_mark; ++m) {
          const Mark& mark = marks_[m];
          const char* from = mark.span_end ? g[mark.group].data() : s + mark.begin;
          g[mark.group] = std::string_view(from, static_cast<size_t>(s + mark.end - from));
        }
        pos += op->len;
        TPT_NEXT_OP();
      }
      k_run: {
        size_t q = pos;
        if (op->wide == kNonSpace) {
          // Bytes from '!' up are never space: skip words with none below it.
          for (; size - q >= 8; q += 8) {
            uint64_t x = Load<uint64_t>(base + q);
            if (((x - 0x21 * kEach) & ~x & kHigh) != 0) break;
          }
        } else if (op->wide != kNarrow) {
          for (; size - q >= 8; q += 8) {
            uint64_t x = Load<uint64_t>(base + q);
            uint64_t stop = NotDigit(x);
            if (op->wide == kNumber) stop &= NotByte(x, '.');
            if (stop != 0) {
              q += static_cast<size_t>(std::countr_zero(stop)) / 8;
              goto run_end;
            }
          }
        }
        {
          const bool* has = sets[op->set].has;
          while (q < size && has[static_cast<unsigned char>(base[q])]) ++q;
        }
      run_end:
        size_t n = q - pos;
        const char* lit = pool + op->then;
        if (op->backoff) {
          // RE2 takes the longest run after which the literal matches; a
          // shorter one that also fits is a choice it may come back to.
          size_t k = n + 1;
          bool found = false;
          while (k-- > op->min) {
            if ((found = LiteralAt(base, size, pos + k, lit, op->then_len))) break;
          }
          if (!found) goto fail;
          if (section != nullptr) {
            for (size_t k2 = k; k2-- > op->min;) {
              if (LiteralAt(base, size, pos + k2, lit, op->then_len)) {
                choice = true;
                break;
              }
            }
          }
          n = k;
        } else {
          if (n < op->min) goto fail;
          if (op->then_len > 0 && !TextAt(base, size, q, lit, op->then_len, op->then_head, op->then_mask)) goto fail;
        }
        if (op->group >= 0) g[op->group] = std::string_view(base + pos, n);
        pos += n + op->then_len;
        TPT_NEXT_OP();
      }
      k_words: {
        size_t n = 0;
        for (uint32_t w = op->off; w < op->off + op->len; ++w) {
          if (LiteralAt(base, size, pos, pool + words_[w].first, words_[w].second)) {
            n = words_[w].second;
            break;
          }
        }
        if (n == 0) goto fail;
        if (op->then_len > 0 && !TextAt(base, size, pos + n, pool + op->then, op->then_len, op->then_head, op->then_mask)) goto fail;
        if (op->group >= 0) g[op->group] = std::string_view(base + pos, n);
        pos += n + op->then_len;
        TPT_NEXT_OP();
      }
      k_skip: {
        // The text is mostly a byte or two on: look there before searching.
        size_t at = kNone;
        const size_t near = std::min(pos + 2, size);
        for (size_t k = pos; k < near; ++k) {
          if (TextAt(base, size, k, pool + op->off, op->len, op->head, op->head_mask)) {
            at = k;
            break;
          }
        }
        if (at == kNone) at = Find(base, size, near, pool + op->off, op->len, op->head, op->head_mask);
        if (at == kNone) goto fail;
        // Only a section that fails asks whether the literal occurs again.
        if (section != nullptr) {
          if (num_pending < fast_layout_internal::kPendingSkips) {
            pending[num_pending++] = {at, op};
          } else if (Find(base, size, at + 1, pool + op->off, op->len, op->head, op->head_mask) != kNone) {
            choice = true;
          }
        }
        pos = at + op->len;
        TPT_NEXT_OP();
      }
      k_span_end:
        g[op->group] = std::string_view(g[op->group].data(), static_cast<size_t>(base + pos - g[op->group].data()));
        TPT_NEXT_OP();
      k_section: {
        // Passed over when it cannot start here, and so are the sections
        // right after it (a prefix's run of optional rank parts).
        auto can_start = [&](const Op& sec) {
          return sec.len > 0 ? TextAt(base, size, pos, pool + sec.off, sec.len, sec.head, sec.head_mask)
                             : !sec.gate || (pos < size && sets[sec.set].has[static_cast<unsigned char>(base[pos])]);
        };
        const Op* sec = op;
        bool start;
        while (!(start = can_start(*sec)) && ops[sec->end].kind == Op::kSection) sec = ops + sec->end;
        if (!start) {
          next = ops + sec->end;
          TPT_NEXT_OP();
        }
        next = sec + 1;
        section = sec;
        section_pos = pos;
        pos += sec->len;
        choice = false;
        num_pending = 0;
        TPT_NEXT_OP();
      }
      k_section_end:  // taken (the regex could still leave it out, but nothing later fails back into it)
        section = nullptr;
        TPT_NEXT_OP();
      k_end:
        g[0] = std::string_view(base + start, pos - start);
        return true;
    }
  fail:
    if (section == nullptr || choice) return false;
    for (int k = 0; k < num_pending; ++k) {
      const Op& skip = *pending[k].op;
      if (Find(base, size, pending[k].at + 1, pool + skip.off, skip.len, skip.head, skip.head_mask) != kNone) return false;
    }
    pos = section_pos;
    for (size_t k = section->first_kept; k < section->end_kept; ++k) g[kept_[k]] = std::string_view();
    next = ops + section->end;
    section = nullptr;
    TPT_NEXT_OP();
  }
#undef TPT_NEXT_OP
}

std::string FastLayout::Disagreement(std::string_view text, const RE2& re, bool* taken) const {
  std::vector<std::string_view> fast;
  *taken = Match(text, &fast);
  if (!*taken) return "";
  std::vector<re2::StringPiece> sp(re.NumberOfCapturingGroups() + 1);
  if (!re.Match(re2::StringPiece(text.data(), text.size()), 0, text.size(), anchored_ ? RE2::ANCHOR_START : RE2::UNANCHORED, sp.data(),
                static_cast<int>(sp.size()))) {
    return "the fast layout matches but the regex does not";
  }
  auto show = [&](std::string_view v) {
    if (v.data() == nullptr) return std::string("(none)");
    std::string out = "'";
    out.append(v);
    out += "' at ";
    out += std::to_string(v.data() - text.data());
    return out;
  };
  for (size_t g = 0; g < sp.size(); ++g) {
    std::string_view want(sp[g].data(), sp[g].size());
    bool same = (want.data() == nullptr) == (fast[g].data() == nullptr) &&
                (want.data() == nullptr || (want.data() == fast[g].data() && want.size() == fast[g].size()));
    if (!same) {
      return "group " + std::to_string(g) + ": the regex captures " + show(want) + ", the fast layout " + show(fast[g]);
    }
  }
  return "";
}

}  // namespace tpt
