// fast_layout.cc: see fast_layout.h.
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
#include "parser/fast_layout.h"

#include <re2/re2.h>

#include <bitset>
#include <cstring>

namespace tpt {
namespace {

using Item = FastLayout::Item;

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

// Whether `lit` is at text[pos] (the first byte turns most misses away).
bool LiteralAt(std::string_view text, size_t pos, const std::string& lit) {
  return text.size() - pos >= lit.size() && text[pos] == lit[0] &&
         std::memcmp(text.data() + pos, lit.data(), lit.size()) == 0;
}

// Length of the class run at text[pos] (greedy, or exactly `count`), 0 when none.
size_t RunLength(const Item& it, std::string_view text, size_t pos) {
  if (it.cls == Item::kWords) {
    for (const auto& w : it.words) {
      if (LiteralAt(text, pos, w)) return w.size();
    }
    return 0;
  }
  const char* p = text.data() + pos;
  const char* end = text.data() + text.size();
  if (it.count > 0) {
    if (end - p < it.count) return 0;
    for (int k = 0; k < it.count; ++k) {
      if (!it.set[static_cast<unsigned char>(p[k])]) return 0;
    }
    return static_cast<size_t>(it.count);
  }
  const char* q = p;
  while (q < end && it.set[static_cast<unsigned char>(*q)]) ++q;
  return static_cast<size_t>(q - p);
}

enum class Step { kOk, kFail, kGiveUp };

void ClearGroups(const std::vector<Item>& items, std::vector<std::string_view>* groups) {
  for (const Item& it : items) {
    if ((it.type == Item::kCapture || it.type == Item::kSpanStart) && it.group >= 0) {
      (*groups)[it.group] = std::string_view();
    }
    if (it.type == Item::kOptional) ClearGroups(it.section, groups);
  }
}

Step Run(const std::vector<Item>& items, std::string_view text, size_t* pos, bool* choice,
         std::vector<std::string_view>* groups) {
  for (size_t i = 0; i < items.size(); ++i) {
    const Item& it = items[i];
    switch (it.type) {
      case Item::kLiteral:
        if (!LiteralAt(text, *pos, it.literal)) return Step::kFail;
        *pos += it.literal.size();
        break;
      case Item::kSkip: {
        const std::string& next = items[i + 1].literal;  // Compile checked a literal follows
        size_t at = text.find(next, *pos);
        if (at == std::string_view::npos) return Step::kFail;
        if (text.find(next, at + 1) != std::string_view::npos) *choice = true;
        *pos = at;
        break;
      }
      case Item::kCapture: {
        size_t n = RunLength(it, text, *pos);
        if (it.backoff) {
          // RE2 takes the longest run after which the next literal matches;
          // a shorter one that also fits is a choice it may come back to.
          const std::string& next = items[i + 1].literal;
          size_t k = n + 1;
          bool found = false;
          while (k-- > static_cast<size_t>(it.min)) {
            if ((found = LiteralAt(text, *pos + k, next))) break;
          }
          if (!found) return Step::kFail;
          for (size_t k2 = k; k2-- > static_cast<size_t>(it.min);) {
            if (LiteralAt(text, *pos + k2, next)) {
              *choice = true;
              break;
            }
          }
          n = k;
        }
        if (n == 0 && it.min > 0) return Step::kFail;
        if (it.group >= 0) (*groups)[it.group] = text.substr(*pos, n);
        *pos += n;
        break;
      }
      case Item::kSpanStart:  // where the span starts, made whole at its end
        (*groups)[it.group] = text.substr(*pos, 0);
        break;
      case Item::kSpanEnd: {
        const char* begin = (*groups)[it.group].data();
        (*groups)[it.group] = std::string_view(begin, static_cast<size_t>(text.data() + *pos - begin));
        break;
      }
      case Item::kOptional: {
        size_t save = *pos;
        bool inner = false;
        Step s = Run(it.section, text, pos, &inner, groups);
        if (s == Step::kOk) {
          *choice = true;  // the regex could still leave it out
          break;
        }
        if (s == Step::kGiveUp || inner) return Step::kGiveUp;
        *pos = save;
        ClearGroups(it.section, groups);
        break;
      }
    }
  }
  return Step::kOk;
}

// ---- compiling ----------------------------------------------------------------

// What may come first after a point of the layout.
struct Follow {
  std::bitset<256> chars;
  bool skip = false;  // a lazy skip: anything
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
  Compiler c(layout, re);
  TPT_RETURN_IF_ERROR(c.Parse(&fl.items_, false));
  if (fl.items_.empty()) return InvalidArgumentError("fast layout: empty");
  Follow end;  // nothing is required after the layout: the regex's end is not anchored
  TPT_RETURN_IF_ERROR(c.CheckOrder(fl.items_, end));
  if (!anchored && (fl.items_[0].type != Item::kLiteral || fl.items_[0].literal.compare(0, fl.lead_.size(), fl.lead_) != 0)) {
    return InvalidArgumentError("fast layout: must start with the regex's leading text '" + fl.lead_ + "'");
  }
  fl.num_groups_ = re.NumberOfCapturingGroups();
  return fl;
}

bool FastLayout::Match(std::string_view text, std::vector<std::string_view>* groups) const {
  size_t start = anchored_ ? 0 : text.find(lead_);
  if (start == std::string_view::npos) return false;
  groups->assign(num_groups_ + 1, std::string_view());
  size_t pos = start;
  bool choice = false;
  if (Run(items_, text, &pos, &choice, groups) != Step::kOk) return false;
  (*groups)[0] = text.substr(start, pos - start);
  return true;
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
