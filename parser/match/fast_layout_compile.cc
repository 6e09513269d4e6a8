// fast_layout_compile.cc: FastLayout::Compile, the layout parsed, checked
// against its regex and flattened into the program fast_layout.cc runs.
//
// Why a layout that matches gives the regex's own groups: the layout mirrors
// the regex item by item and follows RE2's first choice at each point (greedy
// runs take all they can, an optional section is taken when it can be, a skip
// stops at the first occurrence). Where the regex could go back and choose
// otherwise, the layout gives up instead of guessing:
//   - a run class must be followed by a literal starting outside the class
//     (checked here), so no shorter run could ever match;
//   - an optional section that fails after a choice inside it (a skip with a
//     later occurrence) gives up, one that fails without one is skipped;
//   - any failure at top level gives up.
// The layout is tried only at the first occurrence of the literal every
// regex match starts with, so no regex match can start earlier.
#include "parser/match/fast_layout.h"
#include "parser/match/fast_layout_internal.h"

#include <re2/re2.h>

#include <algorithm>
#include <bitset>
#include <cstring>

namespace tpt {

using fast_layout_internal::Head;
using fast_layout_internal::kDigits;
using fast_layout_internal::kLittleEndian;
using fast_layout_internal::kNonSpace;
using fast_layout_internal::kNumber;

namespace {

// The layout as parsed, a tree one level deep (sections do not nest);
// LayoutBuilder flattens it into FastLayout::Op.
struct Item {
  enum Type { kLiteral, kCapture, kSkip, kOptional, kSpanStart, kSpanEnd } type = kLiteral;
  enum Class { kSet, kWords } cls = kSet;
  std::string literal;             // kLiteral
  int group = -1;                  // kCapture, kSpan*: regex group index, -1 = not kept
  std::bitset<256> set;            // kSet: the bytes a run takes
  int min = 1;                     // kSet: 0 for [..]*, 1 otherwise
  int count = 0;                   // kSet: exact count (digits=N), 0 = a greedy run
  bool backoff = false;            // kSet: the literal after it starts inside the set (RE2 backs off)
  std::vector<std::string> words;  // kWords
  std::vector<Item> section;       // kOptional
};

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
// RE2's \s is [\t\n\f\r ] (no \v).
bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r'; }

bool IsWord(char c) { return IsDigit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }

bool InClass(const Item& it, char c) { return it.cls == Item::kSet && it.set[static_cast<unsigned char>(c)]; }

std::bitset<256> SetOf(bool (*pred)(char)) {
  std::bitset<256> out;
  for (int c = 0; c < 256; ++c) out[c] = pred(static_cast<char>(c));
  return out;
}

// ---- compiling ----------------------------------------------------------------

// What may come first after a point of the layout.
struct Follow {
  std::bitset<256> chars;
  bool skip = false;  // a lazy skip: anything
  bool open = false;  // the items may match nothing: what follows them comes first too
};

void AddFirstChars(const Item& it, Follow* f) {
  if (it.type == Item::kLiteral) {
    f->chars.set(static_cast<unsigned char>(it.literal[0]));
  } else if (it.cls == Item::kWords) {
    for (const auto& w : it.words) f->chars.set(static_cast<unsigned char>(w[0]));
  } else {
    f->chars |= it.set;
  }
}

// First characters of items[from...] followed by `after`.
Follow FirstOf(const std::vector<Item>& items, size_t from, const Follow& after) {
  Follow f;
  for (size_t k = from; k < items.size(); ++k) {
    const Item& it = items[k];
    switch (it.type) {
      case Item::kSpanStart:
      case Item::kSpanEnd:
        continue;
      case Item::kLiteral:
        AddFirstChars(it, &f);
        return f;
      case Item::kCapture:
        AddFirstChars(it, &f);
        if (it.cls == Item::kSet && it.min == 0 && it.count == 0) continue;  // may be empty
        return f;
      case Item::kSkip:
        f.skip = true;
        return f;
      case Item::kOptional: {  // its start, or what follows when it is left out
        Follow s = FirstOf(it.section, 0, Follow());
        f.chars |= s.chars;
        f.skip |= s.skip;
        continue;
      }
    }
  }
  f.chars |= after.chars;
  f.skip |= after.skip;
  f.open = true;
  return f;
}

class Compiler {
 public:
  Compiler(std::string_view src, const RE2& re) : src_(src), re_(re) {}

  // Parses up to the end, a ']' (in a section) or a '}' (in a span).
  Status Parse(std::vector<Item>* out, bool in_section, bool in_span = false) {
    std::string lit;
    auto flush = [&] {
      if (!lit.empty()) {
        Item it;
        it.type = Item::kLiteral;
        it.literal = std::move(lit);
        out->push_back(std::move(it));
        lit.clear();
      }
    };
    while (pos_ < src_.size()) {
      char c = src_[pos_];
      if (c == '\\') {
        if (pos_ + 1 >= src_.size()) return Error("a '\\' at the end escapes nothing");
        lit += src_[pos_ + 1];
        pos_ += 2;
      } else if (c == '{') {
        flush();
        size_t mark = src_.find_first_of(":=}", pos_);
        if (mark != std::string_view::npos && src_[mark] == '=') {
          TPT_RETURN_IF_ERROR(ParseSpan(out, in_section, mark));
          continue;
        }
        Item it;
        TPT_RETURN_IF_ERROR(ParseCapture(&it));
        out->push_back(std::move(it));
      } else if (in_span && c == '}') {
        break;
      } else if (c == '[') {
        if (in_section) return Error("optional sections do not nest");
        flush();
        ++pos_;
        Item it;
        it.type = Item::kOptional;
        TPT_RETURN_IF_ERROR(Parse(&it.section, true));
        if (pos_ >= src_.size() || src_[pos_] != ']') return Error("'[' without its ']'");
        ++pos_;
        if (it.section.empty()) return Error("empty optional section");
        out->push_back(std::move(it));
      } else if (c == ']') {
        if (!in_section) return Error("']' without its '['");
        break;
      } else if (c == '*') {
        flush();
        ++pos_;
        Item it;
        it.type = Item::kSkip;
        out->push_back(std::move(it));
      } else if (c == '}') {
        return Error("'}' without its '{' (write \\} for the character)");
      } else {
        lit += c;
        ++pos_;
      }
    }
    flush();
    return OkStatus();
  }

  // A run must end where the regex's would: what may follow it (`after` for
  // what follows the list) must not start with a character the run can take.
  Status CheckOrder(std::vector<Item>& items, const Follow& after) const {
    for (size_t i = 0; i < items.size(); ++i) {
      Item& it = items[i];
      if (it.type == Item::kSkip && (i + 1 >= items.size() || items[i + 1].type != Item::kLiteral)) {
        return Error("'*' must be followed by literal text (it skips to that text)");
      }
      if (it.type == Item::kOptional) TPT_RETURN_IF_ERROR(CheckOrder(it.section, FirstOf(items, i + 1, after)));
      if (it.type != Item::kCapture || it.cls == Item::kWords || it.count > 0) continue;
      if (i + 1 < items.size() && items[i + 1].type == Item::kLiteral && InClass(it, items[i + 1].literal[0])) {
        it.backoff = true;  // [\w./-]+\.py: the run gives back what the literal needs
        continue;
      }
      Follow f = FirstOf(items, i + 1, after);
      // A greedy run then a lazy skip, or a run ending the layout: RE2's first choice too.
      if (f.skip) continue;
      for (int c = 0; c < 256; ++c) {
        if (f.chars[c] && InClass(it, static_cast<char>(c))) {
          return Error("a run class must be followed by literal text starting with a character outside the class "
                       "(here '" + std::string(1, static_cast<char>(c)) + "' may follow)");
        }
      }
    }
    return OkStatus();
  }

 private:
  Status Error(const std::string& why) const {
    return InvalidArgumentError("fast layout, at character " + std::to_string(pos_) + ": " + why);
  }

  // {name=sub-layout}: span markers around the sub-layout's items.
  Status ParseSpan(std::vector<Item>* out, bool in_section, size_t eq) {
    std::string name(src_.substr(pos_ + 1, eq - pos_ - 1));
    if (name.empty()) return Error("a span needs a group name: {name=...}");
    Item open;
    open.type = Item::kSpanStart;
    TPT_RETURN_IF_ERROR(GroupOf(name, &open.group));
    Item close = open;
    close.type = Item::kSpanEnd;
    pos_ = eq + 1;
    out->push_back(open);
    size_t first = out->size();
    TPT_RETURN_IF_ERROR(Parse(out, in_section, /*in_span=*/true));
    if (pos_ >= src_.size() || src_[pos_] != '}') return Error("span '" + name + "' without its '}'");
    if (out->size() == first) return Error("empty span '" + name + "'");
    ++pos_;
    out->push_back(close);
    return OkStatus();
  }

  // "[...]+" or "[...]*": bytes, ranges a-z, \d \w \s and escaped punctuation.
  Status ParseSet(std::string_view cls, Item* it) const {
    char q = cls.size() >= 3 ? cls.back() : '\0';
    if ((q != '+' && q != '*') || cls[cls.size() - 2] != ']') {
      return Error("a class is [...]+ or [...]*, e.g. [\\w./-]+");
    }
    it->min = q == '+' ? 1 : 0;
    std::string_view body = cls.substr(1, cls.size() - 3);
    if (body.empty() || body[0] == '^') return Error("an empty or negated class is not supported");
    for (size_t i = 0; i < body.size(); ++i) {
      unsigned char c = static_cast<unsigned char>(body[i]);
      if (c == '\\') {
        if (i + 1 >= body.size()) return Error("a class ends with '\\'");
        char e = body[++i];
        if (e == 'd') it->set |= SetOf(IsDigit);
        else if (e == 'w') it->set |= SetOf(IsWord);
        else if (e == 's') it->set |= SetOf(IsSpace);
        else if (IsWord(e)) return Error(std::string("unknown escape \\") + e + " in a class");
        else it->set.set(static_cast<unsigned char>(e));
      } else if (i + 2 < body.size() && body[i + 1] == '-') {
        unsigned char hi = static_cast<unsigned char>(body[i + 2]);
        if (hi < c) return Error("a range runs backwards in a class");
        for (int x = c; x <= hi; ++x) it->set.set(x);
        i += 2;
      } else {
        it->set.set(c);
      }
    }
    return OkStatus();
  }

  Status GroupOf(const std::string& name, int* group) const {
    const auto& named = re_.NamedCapturingGroups();
    auto g = named.find(name);
    if (g == named.end()) return Error("group '" + name + "' is not captured by the regex");
    *group = g->second;
    return OkStatus();
  }

  Status ParseCapture(Item* it) {
    size_t close = src_.find('}', pos_);
    if (close == std::string_view::npos) return Error("'{' without its '}'");
    std::string_view body = src_.substr(pos_ + 1, close - pos_ - 1);
    size_t colon = body.find(':');
    if (colon == std::string_view::npos) return Error("a capture is {name:class} or {:class}");
    std::string name(body.substr(0, colon));
    std::string_view cls = body.substr(colon + 1);
    it->type = Item::kCapture;
    it->cls = Item::kSet;
    if (cls == "digits") {
      it->set = SetOf(IsDigit);
    } else if (cls.substr(0, 7) == "digits=") {
      it->set = SetOf(IsDigit);
      std::string n(cls.substr(7));
      if (n.empty() || n.size() > 2 || n.find_first_not_of("0123456789") != std::string::npos || std::stoi(n) == 0) {
        return Error("digits=N needs a count from 1 to 99");
      }
      it->count = std::stoi(n);
    } else if (cls == "number") {
      it->set = SetOf([](char c) { return IsDigit(c) || c == '.'; });
    } else if (cls == "nonspace") {
      it->set = SetOf([](char c) { return !IsSpace(c); });
    } else if (cls == "word") {
      it->set = SetOf(IsWord);
    } else if (!cls.empty() && cls.front() == '[') {
      TPT_RETURN_IF_ERROR(ParseSet(cls, it));
    } else if (cls.find('|') != std::string_view::npos) {
      it->cls = Item::kWords;
      size_t start = 0;
      while (start <= cls.size()) {
        size_t bar = cls.find('|', start);
        if (bar == std::string_view::npos) bar = cls.size();
        if (bar == start) return Error("empty word in '" + std::string(cls) + "'");
        it->words.emplace_back(cls.substr(start, bar - start));
        start = bar + 1;
      }
      // Two words where one begins the other would be a choice the regex may revisit.
      for (size_t a = 0; a < it->words.size(); ++a) {
        for (size_t b = 0; b < it->words.size(); ++b) {
          if (a != b && it->words[b].compare(0, it->words[a].size(), it->words[a]) == 0) {
            return Error("word '" + it->words[a] + "' begins '" + it->words[b] + "'");
          }
        }
      }
    } else {
      return Error("unknown class '" + std::string(cls) + "' (digits, digits=N, number, nonspace, word, [set]+, [set]*, A|B)");
    }
    if (!name.empty()) TPT_RETURN_IF_ERROR(GroupOf(name, &it->group));
    pos_ = close + 1;
    return OkStatus();
  }

  std::string_view src_;
  const RE2& re_;
  size_t pos_ = 0;
};

}  // namespace

// Flattens the parsed layout into FastLayout's program: literals into one
// pool, classes into 256-entry tables, a stretch of fixed width (literal text,
// digits=N, span ends) into one kFixed, the literal after a run or a word
// list into that step.
class LayoutBuilder {
 public:
  using Op = FastLayout::Op;
  using Mark = FastLayout::Mark;

  LayoutBuilder(FastLayout* fl, const RE2& re) : fl_(fl), kept_(re.NumberOfCapturingGroups() + 1, false) {}

  // Appends `items`; the first `lead` bytes of the first literal are matched
  // before the program runs (by Match's search for the leading literal, or by
  // the section op).
  Status Add(const std::vector<Item>& items, size_t lead) {
    auto text_of = [&](size_t k) {
      std::string_view lit = items[k].literal;
      if (k == 0) lit.remove_prefix(lead);
      return lit;
    };
    for (size_t i = 0; i < items.size(); ++i) {
      const Item& it = items[i];
      if (Fixed(it)) {
        size_t j = i;
        while (j < items.size() && Fixed(items[j])) ++j;
        if (j - i == 1 && it.type == Item::kLiteral) {  // plain text
          std::string_view lit = text_of(i);
          if (lit.empty()) continue;
          Op op;
          op.kind = lit.size() == 1 ? Op::kByte : Op::kLiteral;
          Text(lit, &op.off, &op.len);
          Head(lit, &op.head, &op.head_mask);
          fl_->ops_.push_back(op);
          continue;
        }
        Op op;
        if (j - i == 1 && it.type == Item::kSpanEnd) {
          op.kind = Op::kSpanEnd;
          op.group = static_cast<int16_t>(it.group);
          fl_->ops_.push_back(op);
          continue;
        }
        op.kind = Op::kFixed;
        op.off = static_cast<uint32_t>(fl_->shape_.size());
        op.first_mark = static_cast<uint16_t>(fl_->marks_.size());
        for (size_t k = i; k < j; ++k) {
          const Item& f = items[k];
          uint32_t at = static_cast<uint32_t>(fl_->shape_.size()) - op.off;
          if (at > 60000) return InvalidArgumentError("fast layout: a stretch of fixed width is too long");
          Mark mark{false, static_cast<int16_t>(f.group), static_cast<uint16_t>(at), static_cast<uint16_t>(at)};
          switch (f.type) {
            case Item::kLiteral:
              for (char c : text_of(k)) {
                std::bitset<256> one;
                one.set(static_cast<unsigned char>(c));
                fl_->shape_.push_back(Set(one));
              }
              continue;
            case Item::kCapture:
              for (int n = 0; n < f.count; ++n) fl_->shape_.push_back(Set(f.set));
              mark.end = static_cast<uint16_t>(at + f.count);
              if (f.group < 0) continue;
              break;
            case Item::kSpanStart:
              break;
            default: {  // kSpanEnd: of a span started in this kFixed, or before it
              bool here = false;
              for (size_t m = op.first_mark; m < fl_->marks_.size(); ++m) {
                if (fl_->marks_[m].group == f.group) {
                  fl_->marks_[m].end = mark.begin;
                  here = true;
                }
              }
              mark.span_end = true;
              if (!here) fl_->marks_.push_back(mark);
              continue;
            }
          }
          TPT_RETURN_IF_ERROR(Keep(f.group));
          fl_->marks_.push_back(mark);
        }
        op.len = static_cast<uint32_t>(fl_->shape_.size()) - op.off;
        op.end_mark = static_cast<uint16_t>(fl_->marks_.size());
        Chunks(&op);
        fl_->ops_.push_back(op);
        i = j - 1;
        continue;
      }
      Op op;
      // The literal after it, when it takes it too.
      auto then = [&] {
        if (i + 1 < items.size() && items[i + 1].type == Item::kLiteral) {
          Text(items[++i].literal, &op.then, &op.then_len);
          Head(items[i].literal, &op.then_head, &op.then_mask);
        }
      };
      switch (it.type) {
        case Item::kSkip:  // takes the literal after it too (CheckOrder made sure there is one)
          op.kind = Op::kSkip;
          Text(items[++i].literal, &op.off, &op.len);
          Head(items[i].literal, &op.head, &op.head_mask);
          break;
        case Item::kCapture:
          op.group = static_cast<int16_t>(it.group);
          TPT_RETURN_IF_ERROR(Keep(it.group));
          if (it.cls == Item::kWords) {
            op.kind = Op::kWords;
            op.off = static_cast<uint32_t>(fl_->words_.size());
            op.len = static_cast<uint32_t>(it.words.size());
            for (const auto& w : it.words) {
              uint32_t off, len;
              Text(w, &off, &len);
              fl_->words_.emplace_back(off, len);
            }
          } else {
            op.kind = Op::kRun;
            op.set = Set(it.set);
            op.min = static_cast<uint8_t>(it.min);
            op.backoff = it.backoff;  // then the literal after it is there (CheckOrder)
            if (kLittleEndian && it.set == SetOf(IsDigit)) op.wide = kDigits;
            if (kLittleEndian && it.set == SetOf([](char c) { return IsDigit(c) || c == '.'; })) op.wide = kNumber;
            if (kLittleEndian && it.set == SetOf([](char c) { return !IsSpace(c); })) op.wide = kNonSpace;
          }
          then();
          break;
        case Item::kOptional: {
          // A section that starts with literal text is passed over when the
          // text is not there, one that must start with one of a few bytes
          // when the next byte is not one of them: either way it would fail
          // at its first step, before any choice, exactly as when it is run.
          op.kind = Op::kSection;
          size_t lead_len = 0;
          if (it.section[0].type == Item::kLiteral) {
            Text(it.section[0].literal, &op.off, &op.len);
            Head(it.section[0].literal, &op.head, &op.head_mask);
            lead_len = it.section[0].literal.size();
          } else {
            Follow first = FirstOf(it.section, 0, Follow());
            op.gate = !first.skip && !first.open;
            if (op.gate) op.set = Set(first.chars);
          }
          op.first_kept = static_cast<uint16_t>(fl_->kept_.size());
          size_t at = fl_->ops_.size();
          fl_->ops_.push_back(op);
          TPT_RETURN_IF_ERROR(Add(it.section, lead_len));
          Op close;
          close.kind = Op::kSectionEnd;
          fl_->ops_.push_back(close);
          fl_->ops_[at].end = static_cast<uint32_t>(fl_->ops_.size());
          fl_->ops_[at].end_kept = static_cast<uint16_t>(fl_->kept_.size());
          continue;
        }
        default:
          return InternalError("fast layout: unexpected item");
      }
      fl_->ops_.push_back(op);
    }
    return OkStatus();
  }

 private:
  static bool Fixed(const Item& it) {
    return it.type == Item::kLiteral || it.type == Item::kSpanStart || it.type == Item::kSpanEnd ||
           (it.type == Item::kCapture && it.cls == Item::kSet && it.count > 0);
  }

  // A kFixed of literal bytes and digits only, 8 bytes or more, is checked
  // 8 bytes at a time (the last chunk overlapping the one before).
  void Chunks(Op* op) {
    if (!kLittleEndian || op->len < 8) return;
    const std::bitset<256> digits = SetOf(IsDigit);
    std::vector<int> byte(op->len);  // the literal byte, -1 for a digit
    for (uint32_t k = 0; k < op->len; ++k) {
      const bool* has = fl_->sets_[fl_->shape_[op->off + k]].has;
      std::bitset<256> set;
      for (int c = 0; c < 256; ++c) set[c] = has[c];
      if (set == digits) {
        byte[k] = -1;
      } else if (set.count() == 1) {
        int only = 0;  // the one byte of the set (std::bitset has no portable find)
        while (!set[only]) ++only;
        byte[k] = only;
      } else {
        return;
      }
    }
    op->wide = 1;
    op->first_chunk = static_cast<uint16_t>(fl_->chunks_.size());
    for (uint32_t at = 0;; at += 8) {
      if (at + 8 > op->len) at = op->len - 8;
      FastLayout::Chunk chunk{at, 0, 0, 0};
      for (uint32_t k = 0; k < 8; ++k) {
        int b = byte[at + k];
        if (b < 0) {
          chunk.digits |= uint64_t{0xff} << (8 * k);
        } else {
          chunk.lit_mask |= uint64_t{0xff} << (8 * k);
          chunk.lit |= static_cast<uint64_t>(b) << (8 * k);
        }
      }
      fl_->chunks_.push_back(chunk);
      if (at + 8 == op->len) break;
    }
    op->end_chunk = static_cast<uint16_t>(fl_->chunks_.size());
  }

  void Text(std::string_view lit, uint32_t* off, uint32_t* len) {
    *off = static_cast<uint32_t>(fl_->pool_.size());
    *len = static_cast<uint32_t>(lit.size());
    fl_->pool_.append(lit);
  }

  uint16_t Set(const std::bitset<256>& bits) {
    FastLayout::ByteSet set;
    for (int c = 0; c < 256; ++c) set.has[c] = bits[c];
    for (size_t k = 0; k < fl_->sets_.size(); ++k) {
      if (std::memcmp(fl_->sets_[k].has, set.has, sizeof set.has) == 0) return static_cast<uint16_t>(k);
    }
    fl_->sets_.push_back(set);
    return static_cast<uint16_t>(fl_->sets_.size() - 1);
  }

  // Notes that the layout sets `group` (-1: nothing).
  Status Keep(int group) {
    if (group < 0) return OkStatus();
    if (kept_[group]) return InvalidArgumentError("fast layout: group " + std::to_string(group) + " is captured twice");
    kept_[group] = true;
    fl_->kept_.push_back(group);
    return OkStatus();
  }

  FastLayout* fl_;
  std::vector<bool> kept_;  // by group
};

std::string FastLayout::LeadingLiteral(std::string_view regex) {
  // A top-level alternation means no common leading literal.
  int depth = 0;
  bool in_class = false;
  for (size_t i = 0; i < regex.size(); ++i) {
    char c = regex[i];
    if (c == '\\') {
      ++i;
    } else if (in_class) {
      if (c == ']') in_class = false;
    } else if (c == '[') {
      in_class = true;
      if (i + 1 < regex.size() && regex[i + 1] == ']') ++i;
    } else if (c == '(') {
      ++depth;
    } else if (c == ')') {
      --depth;
    } else if (c == '|' && depth == 0) {
      return "";
    }
  }
  std::string lit;
  size_t i = 0;
  while (i < regex.size()) {
    char c = regex[i];
    if (c == '\0' || std::strchr(".^$|?*+()[]{}", c) != nullptr) break;
    if (c == '\\') {
      if (i + 1 >= regex.size()) break;
      char d = regex[i + 1];
      if ((d >= '0' && d <= '9') || (d >= 'a' && d <= 'z') || (d >= 'A' && d <= 'Z') ||
          static_cast<unsigned char>(d) >= 0x80) {
        break;  // \d, \S, \x41, ...: a class or a code, not a plain character
      }
      lit += d;
      i += 2;
      continue;
    }
    lit += c;
    ++i;
  }
  // A quantifier binds the last character: it is not certain.
  if (i < regex.size() && !lit.empty() && std::strchr("?*+{", regex[i]) != nullptr) {
    lit.pop_back();
    // A multi-byte character quantified as a whole: drop its leading bytes too.
    while (!lit.empty() && (static_cast<unsigned char>(lit.back()) & 0xc0) == 0x80) lit.pop_back();
    if (!lit.empty() && static_cast<unsigned char>(lit.back()) >= 0xc0) lit.pop_back();
  }
  return lit;
}

StatusOr<FastLayout> FastLayout::Compile(std::string_view layout, const RE2& re, bool anchored) {
  FastLayout fl;
  fl.source_ = std::string(layout);
  fl.anchored_ = anchored;
  if (re.options().case_sensitive() == false) {
    return InvalidArgumentError("fast layout: not for a caseless pattern");
  }
  if (!anchored) {
    fl.lead_ = LeadingLiteral(re.pattern());
    if (fl.lead_.empty()) {
      return InvalidArgumentError(
          "fast layout: the regex does not start with literal text, so the layout cannot know where a match starts");
    }
  }
  std::vector<Item> items;
  Compiler c(layout, re);
  TPT_RETURN_IF_ERROR(c.Parse(&items, false));
  if (items.empty()) return InvalidArgumentError("fast layout: empty");
  Follow end;  // nothing is required after the layout: the regex's end is not anchored
  TPT_RETURN_IF_ERROR(c.CheckOrder(items, end));
  if (!anchored && (items[0].type != Item::kLiteral || items[0].literal.compare(0, fl.lead_.size(), fl.lead_) != 0)) {
    return InvalidArgumentError("fast layout: must start with the regex's leading text '" + fl.lead_ + "'");
  }
  fl.num_groups_ = re.NumberOfCapturingGroups();
  Head(fl.lead_, &fl.lead_head_, &fl.lead_mask_);
  LayoutBuilder builder(&fl, re);
  TPT_RETURN_IF_ERROR(builder.Add(items, fl.lead_.size()));
  fl.ops_.emplace_back();  // kEnd
  // The groups Match clears first: those it sets only in a section, and those
  // it never sets. The rest it always sets on the way to a match.
  std::vector<bool> always(fl.num_groups_ + 1, false);
  for (int g : fl.kept_) always[g] = true;
  for (const Op& op : fl.ops_) {
    if (op.kind != Op::kSection) continue;
    for (uint32_t k = op.first_kept; k < op.end_kept; ++k) always[fl.kept_[k]] = false;
  }
  for (int g = 1; g <= fl.num_groups_; ++g) {
    if (!always[g]) fl.clear_.push_back(g);
  }
  // The build's compiled code for this very program, if it made any.
  size_t n = 0;
  const fast_layout_code::Entry* compiled = fast_layout_code::Entries(&n);
  if (n > 0) {
    const std::string text = fl.EmitCode("F");
    for (size_t k = 0; k < n; ++k) {
      if (compiled[k].text == text) {
        fl.code_ = compiled[k].code;
        break;
      }
    }
  }
  return fl;
}

}  // namespace tpt
