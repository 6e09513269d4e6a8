// fast_layout_emit.cc: FastLayout::EmitCode, a layout's program written out as
// straight-line C++ (one function per layout, compiled into the binary by the
// build: parser/match/tools/gen_fast_code.cc).
//
// The interpreter (fast_layout.cc) pays for being general: each step loads its
// op, dispatches on its kind, and reads literals, classes and group numbers
// from tables. The written function takes the same steps in the same order
// with all of that known: literals are immediates, classes are range tests or
// a table of the function's own, and what the interpreter tracks at run time
// because it does not know where it is (whether a step lies in an optional
// section, which section, how many skips it has passed) is known here and
// written in. Every step's test is the interpreter's own helper
// (fast_layout_internal.h), so the two differ only in bookkeeping; tests run
// both on the same lines (fast_layout_code_test.cc, the fuzz target).
#include <cinttypes>
#include <cstdio>
#include <string>
#include <vector>

#include "parser/match/cxx_literal.h"
#include "parser/match/fast_layout.h"
#include "parser/match/fast_layout_internal.h"

namespace tpt {

namespace {

std::string Hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%016" PRIx64 "ull", v);
  return buf;
}

std::string Num(uint64_t v) { return std::to_string(v); }

}  // namespace

std::string FastLayout::EmitCode(std::string_view name) const {
  std::string out;
  auto line = [&](const std::string& s) {
    out += "  ";
    out += s;
    out += '\n';
  };

  // Byte classes: a test on `c` (an unsigned char expression), as ranges when
  // the class is at most three of them, else a lookup in a table of this function.
  std::vector<int> table_of(sets_.size(), -1);
  std::string tables;
  int num_tables = 0;
  auto in_set = [&](uint16_t set, const std::string& c) -> std::string {
    std::vector<std::pair<int, int>> ranges;
    for (int b = 0; b < 256; ++b) {
      if (!sets_[set].has[b]) continue;
      if (!ranges.empty() && ranges.back().second == b - 1) {
        ranges.back().second = b;
      } else {
        ranges.push_back({b, b});
      }
    }
    if (ranges.empty()) return "false";
    if (ranges.size() <= 3) {
      std::string t;
      for (const auto& [lo, hi] : ranges) {
        if (!t.empty()) t += " || ";
        if (lo == hi) {
          t += "(" + c + ") == " + Num(lo);
        } else {
          t += "static_cast<unsigned char>((" + c + ") - " + Num(lo) + ") <= " + Num(hi - lo);
        }
      }
      return "(" + t + ")";
    }
    if (table_of[set] < 0) {
      table_of[set] = num_tables++;
      tables += "  static constexpr bool kSet" + Num(table_of[set]) + "[256] = {";
      for (int b = 0; b < 256; ++b) tables += sets_[set].has[b] ? (b ? ",1" : "1") : (b ? ",0" : "0");
      tables += "};\n";
    }
    return "kSet" + Num(table_of[set]) + "[" + c + "]";
  };
  auto text_at = [&](const std::string& at, uint32_t off, uint32_t len, uint64_t head, uint64_t mask) {
    return "TextAt(base, size, " + at + ", " + CxxLiteral(std::string_view(pool_).substr(off, len)) + ", " + Num(len) + ", " +
           Hex(head) + ", " + Hex(mask) + ")";
  };
  auto lit = [&](uint32_t off, uint32_t len) { return CxxLiteral(std::string_view(pool_).substr(off, len)) + ", " + Num(len); };
  auto group = [&](int g) { return "g[" + Num(static_cast<unsigned>(g)) + "]"; };

  // Which section each op lies in (-1: none) and each skip's place among its section's skips.
  std::vector<int> section_of(ops_.size(), -1), skip_index(ops_.size(), -1);
  std::vector<std::vector<uint32_t>> skips_in(ops_.size());
  for (uint32_t i = 0; i < ops_.size(); ++i) {
    if (ops_[i].kind != Op::kSection) continue;
    for (uint32_t k = i + 1; k + 1 < ops_[i].end; ++k) {  // up to its kSectionEnd
      section_of[k] = static_cast<int>(i);
      if (ops_[k].kind == Op::kSkip) {
        skip_index[k] = static_cast<int>(skips_in[i].size());
        skips_in[i].push_back(k);
      }
    }
  }
  constexpr int kPending = fast_layout_internal::kPendingSkips;

  std::string body;
  auto add = [&](const std::string& s) {
    body += "  ";
    body += s;
    body += '\n';
  };
  auto label = [&](const std::string& s) { body += s + ":\n"; };
  // The end of a run or a word taken (`n` bytes): its group, then past it and
  // the text after it.
  auto taken = [&](const Op& op) {
    if (op.group >= 0) add("  " + group(op.group) + " = std::string_view(base + pos, n);");
    add("  pos += n + " + Num(op.then_len) + ";");
    add("}");
  };

  if (!anchored_) {
    std::string lead = CxxLiteral(lead_) + ", " + Num(lead_.size()) + ", " + Hex(lead_head_) + ", " + Hex(lead_mask_);
    add("if (!TextAt(base, size, 0, " + lead + ")) {");
    add("  start = Find(base, size, 1, " + lead + ");");
    add("  if (start == kNone) return false;");
    add("}");
  }
  add("pos = start + " + Num(lead_.size()) + ";");
  for (int k : clear_) add(group(k) + " = std::string_view();");

  for (uint32_t i = 0; i < ops_.size(); ++i) {
    const Op& op = ops_[i];
    const int sec = section_of[i];
    const std::string fail = sec >= 0 ? "goto fail_" + Num(static_cast<unsigned>(sec)) + ";" : "return false;";
    label("op_" + Num(i));
    switch (op.kind) {
      case Op::kByte:
        add("if (pos >= size || base[pos] != " + CxxLiteral(std::string_view(pool_).substr(op.off, 1)) + "[0]) " + fail);
        add("++pos;");
        break;
      case Op::kLiteral:
        add("if (!" + text_at("pos", op.off, op.len, op.head, op.head_mask) + ") " + fail);
        add("pos += " + Num(op.len) + ";");
        break;
      case Op::kFixed: {
        add("if (size - pos < " + Num(op.len) + ") " + fail);
        add("{");
        add("  const char* s = base + pos;");
        if (op.wide) {
          for (uint32_t c = op.first_chunk; c < op.end_chunk; ++c) {
            const Chunk& ch = chunks_[c];
            add("  {");
            add("    const uint64_t x = Load<uint64_t>(s + " + Num(ch.at) + ");");
            add("    if ((x & " + Hex(ch.lit_mask) + ") != " + Hex(ch.lit) + " || (NotDigit(x) & " + Hex(ch.digits) + ") != 0) " +
                fail);
            add("  }");
          }
        } else {
          for (uint32_t k = 0; k < op.len; ++k) {
            add("  if (!" + in_set(shape_[op.off + k], "static_cast<unsigned char>(s[" + Num(k) + "])") + ") " + fail);
          }
        }
        for (uint32_t m = op.first_mark; m < op.end_mark; ++m) {
          const Mark& mark = marks_[m];
          const std::string from = mark.span_end ? group(mark.group) + ".data()" : "(s + " + Num(mark.begin) + ")";
          add("  " + group(mark.group) + " = std::string_view(" + from + ", static_cast<size_t>(s + " + Num(mark.end) + " - " +
              from + "));");
        }
        add("}");
        add("pos += " + Num(op.len) + ";");
        break;
      }
      case Op::kRun: {
        add("{");
        add("  size_t q = pos;");
        if (op.wide == fast_layout_internal::kNonSpace) {
          add("  for (; size - q >= 8; q += 8) {");
          add("    const uint64_t x = Load<uint64_t>(base + q);");
          add("    if (((x - 0x21 * kEach) & ~x & kHigh) != 0) break;");
          add("  }");
        } else if (op.wide != fast_layout_internal::kNarrow) {
          add("  for (; size - q >= 8; q += 8) {");
          add("    const uint64_t x = Load<uint64_t>(base + q);");
          add(std::string("    const uint64_t stop = NotDigit(x)") +
              (op.wide == fast_layout_internal::kNumber ? " & NotByte(x, '.');" : ";"));
          add("    if (stop != 0) {");
          add("      q += static_cast<size_t>(std::countr_zero(stop)) / 8;");
          add("      goto run_end_" + Num(i) + ";");
          add("    }");
          add("  }");
        }
        add("  while (q < size && " + in_set(op.set, "static_cast<unsigned char>(base[q])") + ") ++q;");
        if (op.wide != fast_layout_internal::kNarrow && op.wide != fast_layout_internal::kNonSpace) {
          body += "  run_end_" + Num(i) + ":\n";
        }
        add("  size_t n = q - pos;");
        if (op.backoff) {
          // RE2 takes the longest run after which the literal matches; a
          // shorter one that also fits is a choice it may come back to.
          add("  {");
          add("    size_t k = n + 1;");
          add("    bool found = false;");
          add("    while (k-- > " + Num(op.min) + ") {");
          add("      if ((found = LiteralAt(base, size, pos + k, " + lit(op.then, op.then_len) + "))) break;");
          add("    }");
          add("    if (!found) " + fail);
          if (sec >= 0) {
            add("    for (size_t k2 = k; k2-- > " + Num(op.min) + ";) {");
            add("      if (LiteralAt(base, size, pos + k2, " + lit(op.then, op.then_len) + ")) {");
            add("        choice = true;");
            add("        break;");
            add("      }");
            add("    }");
          }
          add("    n = k;");
          add("  }");
        } else {
          if (op.min > 0) add("  if (n < " + Num(op.min) + ") " + fail);
          if (op.then_len > 0) add("  if (!" + text_at("q", op.then, op.then_len, op.then_head, op.then_mask) + ") " + fail);
        }
        taken(op);
        break;
      }
      case Op::kWords: {
        add("{");
        add("  size_t n = 0;");
        for (uint32_t w = op.off; w < op.off + op.len; ++w) {
          add(std::string(w == op.off ? "  if" : "  else if") + " (LiteralAt(base, size, pos, " +
              lit(words_[w].first, words_[w].second) + ")) n = " + Num(words_[w].second) + ";");
        }
        add("  if (n == 0) " + fail);
        if (op.then_len > 0) add("  if (!" + text_at("pos + n", op.then, op.then_len, op.then_head, op.then_mask) + ") " + fail);
        taken(op);
        break;
      }
      case Op::kSkip: {
        // The text is mostly a byte or two on: look there before searching.
        add("{");
        add("  size_t at = kNone;");
        add("  const size_t near = std::min(pos + 2, size);");
        add("  for (size_t k = pos; k < near; ++k) {");
        add("    if (" + text_at("k", op.off, op.len, op.head, op.head_mask) + ") {");
        add("      at = k;");
        add("      break;");
        add("    }");
        add("  }");
        add("  if (at == kNone) at = Find(base, size, near, " + lit(op.off, op.len) + ", " + Hex(op.head) + ", " +
            Hex(op.head_mask) + ");");
        add("  if (at == kNone) " + fail);
        if (sec >= 0) {  // only a section that fails asks whether the literal occurs again
          if (skip_index[i] < kPending) {
            add("  pending[" + Num(static_cast<unsigned>(skip_index[i])) + "] = at;");
            add("  num_pending = " + Num(static_cast<unsigned>(skip_index[i]) + 1) + ";");
          } else {
            add("  if (Find(base, size, at + 1, " + lit(op.off, op.len) + ", " + Hex(op.head) + ", " + Hex(op.head_mask) +
                ") != kNone) choice = true;");
          }
        }
        add("  pos = at + " + Num(op.len) + ";");
        add("}");
        break;
      }
      case Op::kSpanEnd:
        add(group(op.group) + " = std::string_view(" + group(op.group) + ".data(), static_cast<size_t>(base + pos - " +
            group(op.group) + ".data()));");
        break;
      case Op::kSection: {
        // Passed over when it cannot start here, and so are the sections
        // right after it (a prefix's run of optional rank parts).
        uint32_t s = i;
        while (true) {
          const Op& so = ops_[s];
          std::string can_start;
          if (so.len > 0) {
            can_start = text_at("pos", so.off, so.len, so.head, so.head_mask);
          } else if (so.gate) {
            can_start = "pos < size && " + in_set(so.set, "static_cast<unsigned char>(base[pos])");
          } else {
            can_start = "true";
          }
          add("if (" + can_start + ") {");
          add("  section_pos = pos;");
          if (so.len > 0) add("  pos += " + Num(so.len) + ";");
          add("  choice = false;");
          add("  num_pending = 0;");
          add("  goto body_" + Num(s) + ";");
          add("}");
          if (ops_[so.end].kind != Op::kSection) break;
          s = so.end;
        }
        add("goto op_" + Num(ops_[s].end) + ";");
        label("body_" + Num(i));
        break;
      }
      case Op::kSectionEnd:  // taken (the regex could still leave it out, but nothing later fails back into it)
        break;
      case Op::kEnd:
        add("g[0] = std::string_view(base + start, pos - start);");
        add("return true;");
        break;
    }
  }
  // A section that fails is left out, unless a choice in it could be revisited.
  for (uint32_t i = 0; i < ops_.size(); ++i) {
    const Op& op = ops_[i];
    if (op.kind != Op::kSection) continue;
    label("fail_" + Num(i));
    add("if (choice) return false;");
    for (size_t k = 0; k < skips_in[i].size() && k < static_cast<size_t>(kPending); ++k) {
      const Op& skip = ops_[skips_in[i][k]];
      add("if (num_pending > " + Num(k) + " && Find(base, size, pending[" + Num(k) + "] + 1, " + lit(skip.off, skip.len) +
          ", " + Hex(skip.head) + ", " + Hex(skip.head_mask) + ") != kNone) return false;");
    }
    add("pos = section_pos;");
    for (uint32_t k = op.first_kept; k < op.end_kept; ++k) add(group(kept_[k]) + " = std::string_view();");
    add("goto op_" + Num(op.end) + ";");
  }

  out += "// " + std::string(anchored_ ? "anchored " : "") + "layout " + CxxLiteral(source_) + "\n";
  out += "bool " + std::string(name) + "(const char* const base, const size_t size, std::string_view* const g) {\n";
  out += tables;
  line("size_t start = 0, pos = 0, section_pos = 0;");
  line("size_t pending[" + Num(kPending) + "];");
  line("int num_pending = 0;");
  line("bool choice = false;");
  line("(void)section_pos, (void)pending, (void)num_pending, (void)choice;");
  out += body;
  out += "}\n";
  return out;
}

}  // namespace tpt
