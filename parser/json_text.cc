// json_text.cc: see json_text.h.
#include "parser/json_text.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "base/strings.h"

namespace tpt {

namespace {

// True when none of the 8 bytes of `w` needs a look: no C0 control, no '"',
// no '\\', nothing of 0x80 and up (the "has a byte less than n" tricks;
// exact for "any byte", as needed here).
inline bool PlainWord(uint64_t w) {
  constexpr uint64_t k01 = 0x0101010101010101ull, k80 = 0x8080808080808080ull;
  const uint64_t quote = w ^ (k01 * '"'), backslash = w ^ (k01 * '\\');
  const uint64_t special = ((w - k01 * 0x20) & ~w) | ((quote - k01) & ~quote) | ((backslash - k01) & ~backslash) | w;
  return (special & k80) == 0;
}

constexpr size_t kShort = 64;

// kPlain[c]: byte c is copied as it is (no escape, not part of a UTF-8 sequence).
struct PlainTable {
  bool plain[256];
  constexpr PlainTable() : plain() {
    for (int c = 0; c < 256; ++c) plain[c] = c >= 0x20 && c < 0x80 && c != '"' && c != '\\';
  }
};
constexpr PlainTable kPlain;

// How many bytes `p` starts with that are copied as they are (kPlain):
// 16 at a time where SSE2 is (a control byte, '"', '\\' or any byte of 0x80
// and up ends the run; the signed compare with 0x20 takes both ends), then 8.
[[gnu::always_inline]] inline size_t PlainRun(const char* p, size_t n) {
  size_t i = 0;
#if defined(__SSE2__)
  const __m128i space = _mm_set1_epi8(0x20), quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\');
  for (; i + 16 <= n; i += 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
    const __m128i special =
        _mm_or_si128(_mm_cmplt_epi8(v, space), _mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)));
    if (const int mask = _mm_movemask_epi8(special); mask != 0) return i + static_cast<size_t>(__builtin_ctz(mask));
  }
#endif
  for (uint64_t w; i + 8 <= n; i += 8) {  // (SSE2: 8 of the last 15 bytes)
    std::memcpy(&w, p + i, 8);
    if (!PlainWord(w)) break;
  }
  while (i < n && kPlain.plain[static_cast<unsigned char>(p[i])]) ++i;
  return i;
}

// PlainRun(p, n) == n for n <= 16 (most keys and names): two overlapping
// words (8 or 4 bytes), no loop.
[[gnu::always_inline]] inline bool AllPlainShort(const char* p, size_t n) {
  if (n >= 8) {
    uint64_t a, b;
    std::memcpy(&a, p, 8);
    std::memcpy(&b, p + n - 8, 8);
    return PlainWord(a) && PlainWord(b);
  }
  if (n >= 4) {
    uint32_t lo, hi;
    std::memcpy(&lo, p, 4);
    std::memcpy(&hi, p + n - 4, 4);
    return PlainWord(lo | (uint64_t{hi} << 32));
  }
  for (size_t i = 0; i < n; ++i)
    if (!kPlain.plain[static_cast<unsigned char>(p[i])]) return false;
  return true;
}

[[gnu::always_inline]] inline bool AllPlain(std::string_view s) {
  return s.size() <= 16 ? AllPlainShort(s.data(), s.size()) : PlainRun(s.data(), s.size()) == s.size();
}

}  // namespace

void JsonOut::Grow(size_t n) {
  const size_t used = size();
  const size_t cap = std::max({2 * static_cast<size_t>(cap_ - begin_), used + n, size_t{4096}});
  std::unique_ptr<char[]> bigger(new char[cap]);
  if (used) std::memcpy(bigger.get(), begin_, used);
  storage_ = std::move(bigger);
  begin_ = storage_.get();
  end_ = begin_ + used;
  cap_ = begin_ + cap;
}

void AppendJsonString(std::string_view s, JsonOut* out) {
  if (AllPlain(s)) {  // nothing to escape (most strings): one copy between quotes
    char* p = out->Reserve(s.size() + 2);
    *p++ = '"';
    JsonOut::Copy(p, s.data(), s.size());
    p += s.size();
    *p++ = '"';
    out->Commit(p);
    return;
  }
  static const char* kHex = "0123456789abcdef";
  const size_t start = out->size();
  out->push_back('"');
  for (size_t i = 0; i < s.size(); ++i) {
    // A run of plain ASCII is copied at once.
    if (const size_t run = PlainRun(s.data() + i, s.size() - i); run > 0) {
      out->append(s.data() + i, run);
      i += run;
      if (i == s.size()) break;
    }
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      const size_t len = Utf8SequenceLength(s, i);
      if (len == 0) {  // invalid: nlohmann's replacement rules, exactly
        out->resize(start);
        out->append(nlohmann::json(std::string(s)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
        return;
      }
      out->append(s.data() + i, len);
      i += len - 1;
      continue;
    }
    out->push_back('\\');
    switch (c) {
      case '"': out->push_back('"'); break;
      case '\\': out->push_back('\\'); break;
      case '\b': out->push_back('b'); break;
      case '\f': out->push_back('f'); break;
      case '\n': out->push_back('n'); break;
      case '\r': out->push_back('r'); break;
      case '\t': out->push_back('t'); break;
      default:
        out->Lit("u00");
        out->push_back(kHex[c >> 4]);
        out->push_back(kHex[c & 15]);
    }
  }
  out->push_back('"');
}

void AppendJsonInt(int64_t v, JsonOut* out) {
  char* p = out->Reserve(24);
  out->Commit(std::to_chars(p, p + 24, v).ptr);
}

void AppendJsonUint(uint64_t v, JsonOut* out) {
  char* p = out->Reserve(24);
  out->Commit(std::to_chars(p, p + 24, v).ptr);
}

void AppendJsonDouble(double v, JsonOut* out) {
  if (!std::isfinite(v)) {
    out->Lit("null");
    return;
  }
  // nlohmann's shortest digits (Grisu2) cost more than the rest of a record's
  // numbers, and a log's values repeat (a second's timestamp on every rank, a
  // usage fraction): the text of the last doubles seen, by their bits, is
  // written again (the same bits give the same text).
  struct Slot {
    uint64_t bits = 0;
    uint8_t len = 0;  // 0: empty
    char text[31];
  };
  thread_local std::array<Slot, 1024> seen;
  uint64_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  Slot& slot = seen[(bits ^ (bits >> 29) ^ (bits >> 47)) % seen.size()];
  if (slot.len == 0 || slot.bits != bits) {
    char* end = nlohmann::detail::to_chars(slot.text, slot.text + sizeof slot.text, v);
    slot.bits = bits;
    slot.len = static_cast<uint8_t>(end - slot.text);
  }
  out->append(slot.text, slot.len);
}

void AppendJsonValue(const nlohmann::json& j, JsonOut* out) {
  using V = nlohmann::json::value_t;
  switch (j.type()) {
    case V::null: out->Lit("null"); return;
    case V::boolean:
      if (j.get<bool>()) {
        out->Lit("true");
      } else {
        out->Lit("false");
      }
      return;
    case V::number_integer: AppendJsonInt(j.get<int64_t>(), out); return;
    case V::number_unsigned: AppendJsonUint(j.get<uint64_t>(), out); return;
    case V::number_float: AppendJsonDouble(j.get<double>(), out); return;
    case V::string: AppendJsonString(j.get_ref<const std::string&>(), out); return;
    case V::array: {
      out->push_back('[');
      bool first = true;
      for (const auto& v : j) {
        if (!first) out->push_back(',');
        first = false;
        AppendJsonValue(v, out);
      }
      out->push_back(']');
      return;
    }
    case V::object: {
      out->push_back('{');
      bool first = true;
      for (const auto& [k, v] : j.items()) {
        if (!first) out->push_back(',');
        first = false;
        AppendJsonString(k, out);
        out->push_back(':');
        AppendJsonValue(v, out);
      }
      out->push_back('}');
      return;
    }
    default: out->append(j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)); return;
  }
}

// ---- JsonObjectText ------------------------------------------------------------

void JsonObjectText::Begin(JsonOut* out, bool keys_in_order) {
  out_ = out;
  start_ = out->size();
  in_order_ = true;
  known_order_ = keys_in_order;
  any_ = false;
  members_.clear();
  out->push_back('{');
}

JsonOut* JsonObjectText::Key(std::string_view name) {
  const bool first = Note(name);
  const size_t n = name.size();
  if (n <= kShort && AllPlain(name)) {  // most keys: `,"name":` in place
    char* p = out_->Reserve(n + 4);
    if (!first) *p++ = ',';
    *p++ = '"';
    JsonOut::Copy(p, name.data(), n);
    p += n;
    p[0] = '"';
    p[1] = ':';
    out_->Commit(p + 2);
    return out_;
  }
  if (!first) out_->push_back(',');
  AppendJsonString(name, out_);
  out_->push_back(':');
  return out_;
}

std::string JsonKeyText(std::string_view name) {
  JsonOut out;
  out.push_back(',');
  AppendJsonString(name, &out);
  out.push_back(':');
  return std::string(out.view());
}

void JsonObjectText::End() {
  if (!in_order_) {
    // Each member's text runs to the comma before the next one.
    struct Text {
      std::string_view key;
      size_t order, begin, end;
    };
    std::vector<Text> texts;
    texts.reserve(members_.size());
    for (size_t i = 0; i < members_.size(); ++i) {
      size_t end = i + 1 < members_.size() ? members_[i + 1].begin - 1 : out_->size();
      texts.push_back({members_[i].key, i, members_[i].begin, end});
    }
    // Key order; of equal keys the last set wins (it overwrote the value).
    std::sort(texts.begin(), texts.end(),
              [](const Text& a, const Text& b) { return a.key != b.key ? a.key < b.key : a.order > b.order; });
    scratch_.assign(out_->data() + start_ + 1, out_->size() - start_ - 1);
    out_->resize(start_ + 1);
    std::string_view prev;
    bool first = true;
    for (const Text& t : texts) {
      if (!first && t.key == prev) continue;
      if (!first) out_->push_back(',');
      out_->append(scratch_.data() + t.begin - start_ - 1, t.end - t.begin);
      prev = t.key;
      first = false;
    }
  }
  out_->push_back('}');
  members_.clear();
}

}  // namespace tpt
