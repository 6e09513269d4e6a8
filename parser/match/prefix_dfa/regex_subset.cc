// regex_subset.cc: ParseRegexSubset (regex_subset.h), a recursive-descent
// parser of the supported RE2 subset into prefix_dfa::Node trees.
#include "parser/match/prefix_dfa/regex_subset.h"

#include <cctype>

namespace tpt::prefix_dfa {

namespace {

// RE2's limit on a counted repeat.
constexpr int kMaxRepeat = 1000;
constexpr int kMaxDepth = 200;

std::bitset<128> AsciiRange(int lo, int hi) {
  std::bitset<128> b;
  for (int c = lo; c <= hi; ++c) b.set(static_cast<size_t>(c));
  return b;
}

// \d \w \s and their negations, as RE2 defines them (ASCII only; \s has no \v).
Node PerlClass(char c) {
  Node n;
  n.kind = Node::kClass;
  switch (c) {
    case 'd': case 'D': n.ascii = AsciiRange('0', '9'); break;
    case 'w': case 'W': n.ascii = AsciiRange('0', '9') | AsciiRange('A', 'Z') | AsciiRange('a', 'z') | AsciiRange('_', '_'); break;
    default: n.ascii = AsciiRange('\t', '\n') | AsciiRange('\f', '\r') | AsciiRange(' ', ' '); break;
  }
  if (c >= 'A' && c <= 'Z') {
    n.ascii.flip();
    n.non_ascii = true;
  }
  return n;
}

void AppendUtf8(int cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xc0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3f)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xe0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3f)));
  } else {
    out->push_back(static_cast<char>(0xf0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3f)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3f)));
  }
}

class Parser {
 public:
  explicit Parser(std::string_view re) : re_(re) {}

  // The tree, or false with error() set.
  bool Parse(Node* out) {
    if (!ParseAlt(out, 0)) return false;
    if (pos_ < re_.size()) return Fail("unmatched )");
    return true;
  }
  const std::string& error() const { return error_; }

 private:
  bool Fail(const std::string& what) {
    if (error_.empty()) error_ = what + " at offset " + std::to_string(pos_);
    return false;
  }
  bool Eof() const { return pos_ >= re_.size(); }
  char Peek() const { return re_[pos_]; }

  bool ParseAlt(Node* out, int depth) {
    if (depth > kMaxDepth) return Fail("groups nested too deeply");
    Node first;
    if (!ParseConcat(&first, depth)) return false;
    if (Eof() || Peek() != '|') {
      *out = std::move(first);
      return true;
    }
    out->kind = Node::kAlt;
    out->kids.push_back(std::move(first));
    while (!Eof() && Peek() == '|') {
      ++pos_;
      Node next;
      if (!ParseConcat(&next, depth)) return false;
      out->kids.push_back(std::move(next));
    }
    return true;
  }

  bool ParseConcat(Node* out, int depth) {
    out->kind = Node::kConcat;
    while (!Eof() && Peek() != '|' && Peek() != ')') {
      Node atom;
      if (!ParseAtom(&atom, depth)) return false;
      bool repeated = false;
      while (!Eof()) {
        int min = 0, max = 0;
        size_t at = pos_;
        char c = Peek();
        if (c == '*' || c == '+' || c == '?') {
          ++pos_;
          min = c == '+' ? 1 : 0;
          max = c == '?' ? 1 : -1;
        } else if (c != '{' || !ParseCount(&min, &max)) {
          break;
        }
        if (!error_.empty()) return false;
        if (repeated) {
          pos_ = at;
          return Fail("stacked repetition operator");
        }
        repeated = true;
        if (!Eof() && Peek() == '?') ++pos_;  // lazy: the same yes/no answer
        Node rep;
        rep.kind = Node::kRepeat;
        rep.min = min;
        rep.max = max;
        rep.kids.push_back(std::move(atom));
        atom = std::move(rep);
      }
      out->kids.push_back(std::move(atom));
    }
    return true;
  }

  // At '{': a counted repeat {n} {n,} {n,m} consumed, or false (and pos_
  // unchanged) when the brace is a literal. Sets error_ on a bad count.
  bool ParseCount(int* min, int* max) {
    size_t p = pos_ + 1;
    auto number = [&](int* v) {
      size_t start = p;
      long n = 0;
      while (p < re_.size() && re_[p] >= '0' && re_[p] <= '9') {
        n = std::min<long>(n * 10 + (re_[p] - '0'), 100000);
        ++p;
      }
      *v = static_cast<int>(n);
      return p > start;
    };
    if (!number(min)) return false;
    *max = *min;
    if (p < re_.size() && re_[p] == ',') {
      ++p;
      if (p < re_.size() && re_[p] == '}') {
        *max = -1;
      } else if (!number(max)) {
        return false;
      }
    }
    if (p >= re_.size() || re_[p] != '}') return false;
    if (*min > kMaxRepeat || *max > kMaxRepeat) {
      Fail("repeat count above " + std::to_string(kMaxRepeat));
      return true;
    }
    if (*max != -1 && *max < *min) {
      Fail("bad repeat range {n,m} with m < n");
      return true;
    }
    pos_ = p + 1;
    return true;
  }

  // One UTF-8 character of the regex as a code point, or -1.
  int DecodeChar() {
    auto b = [&](size_t i) { return static_cast<unsigned char>(re_[i]); };
    unsigned char c = b(pos_);
    int len = c < 0x80 ? 1 : c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
    if (len == 0 || pos_ + static_cast<size_t>(len) > re_.size()) return -1;
    int cp = len == 1 ? c : len == 2 ? (c & 0x1f) : len == 3 ? (c & 0x0f) : (c & 0x07);
    for (int i = 1; i < len; ++i) {
      if ((b(pos_ + static_cast<size_t>(i)) & 0xc0) != 0x80) return -1;
      cp = (cp << 6) | (b(pos_ + static_cast<size_t>(i)) & 0x3f);
    }
    static constexpr int kMin[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMin[len] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return -1;
    pos_ += static_cast<size_t>(len);
    return cp;
  }

  // After a backslash: a Perl class into *cls (returns -2) or a character's
  // code point; -1 on error.
  int ParseEscape(Node* cls) {
    if (Eof()) return Fail("trailing \\"), -1;
    char c = Peek();
    ++pos_;
    switch (c) {
      case 'd': case 'D': case 'w': case 'W': case 's': case 'S':
        *cls = PerlClass(c);
        return -2;
      case 't': return '\t';
      case 'n': return '\n';
      case 'r': return '\r';
      case 'f': return '\f';
      case 'v': return '\v';
      case 'a': return '\a';
      case 'x': {
        auto hex = [](char h) {
          return h >= '0' && h <= '9' ? h - '0' : h >= 'a' && h <= 'f' ? h - 'a' + 10 : h >= 'A' && h <= 'F' ? h - 'A' + 10 : -1;
        };
        long v = 0;
        if (!Eof() && Peek() == '{') {
          ++pos_;
          int digits = 0;
          while (!Eof() && hex(Peek()) >= 0) {
            v = std::min<long>(v * 16 + hex(Peek()), 0x110000);
            ++pos_;
            ++digits;
          }
          if (Eof() || Peek() != '}' || digits == 0) return Fail("bad \\x{...} escape"), -1;
          ++pos_;
        } else {
          for (int i = 0; i < 2; ++i) {
            if (Eof() || hex(Peek()) < 0) return Fail("bad \\x escape"), -1;
            v = v * 16 + hex(Peek());
            ++pos_;
          }
        }
        if (v > 0x10ffff) return Fail("\\x escape past U+10FFFF"), -1;
        return static_cast<int>(v);
      }
      default:
        break;
    }
    unsigned char u = static_cast<unsigned char>(c);
    if (u < 0x80 && !std::isalnum(u) && c != '_') return c;  // an escaped punctuation character
    --pos_;
    return Fail(std::string("unsupported escape \\") + (u < 0x80 ? std::string(1, c) : std::string("<non-ASCII>")) +
                " (\\b \\B \\A \\z \\p \\Q \\C, octal and back-references are not supported)"),
           -1;
  }

  bool ParseAtom(Node* out, int depth) {
    size_t at = pos_;
    char c = Peek();
    switch (c) {
      case '(': {
        ++pos_;
        if (!Eof() && Peek() == '?') {
          if (re_.compare(pos_, 3, "?P<") == 0 || re_.compare(pos_, 2, "?<") == 0) {
            pos_ += re_[pos_ + 1] == 'P' ? 3 : 2;
            size_t name = pos_;
            while (!Eof() && (std::isalnum(static_cast<unsigned char>(Peek())) || Peek() == '_')) ++pos_;
            if (pos_ == name || Eof() || Peek() != '>') return Fail("bad group name");
            ++pos_;
          } else if (re_.compare(pos_, 2, "?:") == 0) {
            pos_ += 2;
          } else {
            return Fail("unsupported group or flags (?...) (flags such as (?i) are not supported)");
          }
        }
        if (!ParseAlt(out, depth + 1)) return false;
        if (Eof() || Peek() != ')') {
          pos_ = at;
          return Fail("missing )");
        }
        ++pos_;
        return true;
      }
      case '[':
        ++pos_;
        return ParseClass(out);
      case '.':
        ++pos_;
        out->kind = Node::kClass;
        out->ascii = AsciiRange(0, 127);
        out->ascii.reset('\n');
        out->non_ascii = true;
        return true;
      case '^':
        if (pos_ != 0) return Fail("^ not at the start of the regex");
        ++pos_;
        out->kind = Node::kEmpty;
        return true;
      case '$':
        return Fail("unsupported $");
      case '*': case '+': case '?':
        return Fail("missing argument to repetition operator");
      case '{': {
        int min, max;
        if (ParseCount(&min, &max)) {
          pos_ = at;
          return Fail("missing argument to repetition operator");
        }
        break;
      }
      case '\\': {
        ++pos_;
        int cp = ParseEscape(out);
        if (cp == -1) return false;
        if (cp == -2) return true;
        out->kind = Node::kBytes;
        AppendUtf8(cp, &out->bytes);
        return true;
      }
      default:
        break;
    }
    int cp = DecodeChar();
    if (cp < 0) return Fail("invalid UTF-8");
    out->kind = Node::kBytes;
    AppendUtf8(cp, &out->bytes);
    return true;
  }

  // After '['.
  bool ParseClass(Node* out) {
    size_t open = pos_ - 1;
    out->kind = Node::kClass;
    bool negated = !Eof() && Peek() == '^';
    if (negated) ++pos_;
    bool first = true;
    // One item's character: a code point, -2 for a Perl class merged into
    // *out, -1 on error.
    auto item = [&]() -> int {
      if (Peek() == '\\') {
        ++pos_;
        Node cls;
        int cp = ParseEscape(&cls);
        if (cp == -2) {
          out->ascii |= cls.ascii;
          out->non_ascii |= cls.non_ascii;
        }
        return cp;
      }
      return DecodeChar();
    };
    while (true) {
      if (Eof()) {
        pos_ = open;
        return Fail("missing ]");
      }
      if (Peek() == ']' && !first) break;
      first = false;
      if (re_.compare(pos_, 2, "[:") == 0) return Fail("unsupported POSIX class [:...:]");
      size_t at = pos_;
      int lo = item();
      if (lo == -1) return Fail("invalid UTF-8");
      if (lo == -2) continue;
      int hi = lo;
      if (pos_ + 1 < re_.size() && Peek() == '-' && re_[pos_ + 1] != ']') {
        ++pos_;
        if (Eof()) continue;
        hi = item();
        if (hi == -1) return Fail("invalid UTF-8");
        if (hi == -2) return Fail("bad class range");
        if (hi < lo) {
          pos_ = at;
          return Fail("bad class range (end before start)");
        }
      }
      if (hi >= 0x80) {
        pos_ = at;
        return Fail("non-ASCII item in a class");
      }
      out->ascii |= AsciiRange(lo, hi);
    }
    ++pos_;
    if (negated) {
      out->ascii.flip();
      out->non_ascii = !out->non_ascii;
    }
    return true;
  }

  std::string_view re_;
  size_t pos_ = 0;
  std::string error_;
};

}  // namespace

bool ParseRegexSubset(std::string_view re, Node* out, std::string* error) {
  Parser parser(re);
  if (parser.Parse(out)) return true;
  *error = parser.error();
  return false;
}

}  // namespace tpt::prefix_dfa
