// unpaste.cc: see unpaste.h.
#include "parser/unpaste.h"

#include <hs/hs.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <algorithm>
#include <array>
#include <cctype>
#include <cstring>
#include <iterator>
#include <map>
#include <set>
#include <vector>

#include "parser/event.h"
#include "parser/format_set.h"
#include "parser/unpaste_internal.h"

namespace tpt {

using unpaste_internal::StartsWith;
using unpaste_internal::Trim;

namespace {

constexpr size_t kWindow = 8;        // lines of look-ahead for joins
constexpr size_t kMaxJoin = 6;       // continuation lines one line may take
constexpr size_t kLearnBytes = 1 << 20;
constexpr size_t kMaxJoinedBytes = 16 * 1024;
constexpr size_t kMinWrapped = 30;  // a wrapped line was long (terminals and authors wrap at 70+; a long word moves early)

size_t Utf8Length(std::string_view s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

// Utf8Length(s) >= n, without counting when the bytes decide (a character is
// at most 4 bytes).
bool Utf8LengthAtLeast(std::string_view s, size_t n) { return s.size() >= 4 * n || (s.size() >= n && Utf8Length(s) >= n); }

// Which kinds of pasted text a line can hold, from one pass over its bytes.
struct Bytes {
  bool amp = false, esc = false, fence = false, box = false;
  bool high = false;  // a byte of 0x80 and up: not all ASCII
};
enum : uint8_t { kAmp = 1, kEsc = 2, kFence = 4, kBox = 8, kHigh = 16 };
constexpr std::array<uint8_t, 256> kByteKinds = [] {
  std::array<uint8_t, 256> t{};
  t['&'] = kAmp;
  t['^'] = t['\\'] = kEsc;
  t['`'] = t['~'] = kFence;
  for (int c = 0x80; c < 256; ++c) t[c] = kHigh;
  t[0xE2] = kBox | kHigh;  // first byte of │ ╭ ╰ ❱
  return t;
}();
Bytes BytesOf(std::string_view s) {
  uint8_t kinds = 0;  // a table and an OR a byte: no branch per byte
  size_t i = 0;
  int high = 0;
#if defined(__SSE2__)
  // 16 bytes at a time first: most hold none of the six bytes (most lines of
  // a log: none at all) and are passed over without the table, which cost a
  // tenth of `analyze` on a 256 MB serving log (bench/RESULTS.md).
  const __m128i amp = _mm_set1_epi8('&'), caret = _mm_set1_epi8('^'), backslash = _mm_set1_epi8('\\'),
                tick = _mm_set1_epi8('`'), tilde = _mm_set1_epi8('~'), box = _mm_set1_epi8(static_cast<char>(0xE2));
  for (; i + 16 <= s.size(); i += 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s.data() + i));
    const __m128i any = _mm_or_si128(
        _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, amp), _mm_cmpeq_epi8(v, caret)), _mm_cmpeq_epi8(v, backslash)),
        _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, tick), _mm_cmpeq_epi8(v, tilde)), _mm_cmpeq_epi8(v, box)));
    high |= _mm_movemask_epi8(v);
    if (_mm_movemask_epi8(any) == 0) continue;
    for (size_t j = i; j < i + 16; ++j) kinds |= kByteKinds[static_cast<unsigned char>(s[j])];
  }
#endif
  for (; i < s.size(); ++i) kinds |= kByteKinds[static_cast<unsigned char>(s[i])];
  Bytes b;
  b.amp = kinds & kAmp;
  b.esc = kinds & kEsc;
  b.fence = kinds & kFence;
  b.box = kinds & kBox;
  b.high = high != 0 || (kinds & kHigh) != 0;
  return b;
}

// The widths terminals and paste tools cut lines at (a mailer's 72 or 76 is
// too near the lengths log lines have by themselves to be taken alone).
bool IsWrapWidth(size_t n) {
  for (size_t w : {80, 100, 120, 132, 160, 200})
    if (n == w) return true;
  return false;
}

}  // namespace

UnpasteSource::UnpasteSource(std::unique_ptr<ByteSource> inner, const FormatSet* formats)
    : inner_(std::move(inner)), formats_(formats) {
  if (formats_ && formats_->literal_db()) hs_alloc_scratch(const_cast<hs_database_t*>(formats_->literal_db()), &scratch_);
}

UnpasteSource::~UnpasteSource() {
  if (scratch_) hs_free_scratch(scratch_);
}

std::string& UnpasteSource::Own(Line& l) const {
  if (!l.own) {
    l.text.assign(raw_.get() + l.off, l.len);
    l.own = true;
  }
  return l.text;
}

Status UnpasteSource::Pull() {
  constexpr size_t kRead = 64 * 1024;
  // Room for a read: the bytes before the first line still needed are let go
  // when they outweigh the rest (then the lines' places move down with them).
  size_t keep = raw_cut_;
  for (size_t i = 0; i < lines_.size(); ++i)
    if (!lines_[i].own) {
      keep = std::min(keep, lines_[i].off);
      break;  // (lines are in order)
    }
  if (keep > 0 && keep >= raw_size_ - keep) {
    std::memmove(raw_.get(), raw_.get() + keep, raw_size_ - keep);
    raw_size_ -= keep;
    raw_cut_ -= keep;
    for (size_t i = 0; i < lines_.size(); ++i)
      if (!lines_[i].own) lines_[i].off -= keep;
  }
  if (raw_cap_ - raw_size_ < kRead) {
    size_t cap = std::max(raw_cap_ * 2, raw_size_ + kRead);
    std::unique_ptr<char[]> bigger(new char[cap]);
    if (raw_size_ > 0) std::memcpy(bigger.get(), raw_.get(), raw_size_);
    raw_ = std::move(bigger);
    raw_cap_ = cap;
  }
  auto n = inner_->Read(raw_.get() + raw_size_, kRead);
  if (!n.ok()) {
    // A cut .gz: the lines before the cut are handed on first, the error after them.
    error_ = n.status();
    inner_done_ = true;
    n = size_t{0};
  }
  if (*n == 0) {
    inner_done_ = true;
  } else {
    raw_size_ += *n;
  }
  const char* raw = raw_.get();
  size_t pos = raw_cut_;
  // Bytes not yet cut that hold none of the bytes a transform starts from
  // (most reads of a clean log): none of their lines is asked again.
  const Bytes unread = BytesOf(std::string_view(raw + pos, raw_size_ - pos));
  const bool clean = !unread.amp && !unread.esc && !unread.fence && !unread.box;
  while (true) {
    const char* found = pos < raw_size_ ? static_cast<const char*>(std::memchr(raw + pos, '\n', raw_size_ - pos)) : nullptr;
    size_t nl = found ? static_cast<size_t>(found - raw) : raw_size_;
    if (!found && (!inner_done_ || pos >= raw_size_)) break;
    const bool newline = nl < raw_size_;
    const size_t begin = pos;
    pos = nl + 1;
    std::string_view view(raw + begin, nl - begin);
    if (!view.empty() && view.back() == '\r') view.remove_suffix(1);
    // A line no transform applies to (the checks below, on the line as read,
    // say the same as each step's own check) stays where it is.
    Bytes b;
    size_t start = 0;
    bool cri_ends = true;
    if (quote_ == 0 && indent_ == 0 && !viewer_lines_ && !glued_ && record_head_.empty() && record_pieces_ == 0 &&
        (view.empty() || (view[0] != '{' && view[0] != '|')) && !CriRecord(view, &start, &cri_ends)) {
      if (clean) {
        b.high = unread.high;  // (a line of all-ASCII bytes: none of them high)
      } else {
        b = BytesOf(view);
      }
      if (!b.amp && !b.esc && !b.box && GutterNumber(view, &start) < 0 &&
          !((b.fence || view.size() <= 8) && IsFenceOrElision(view)) && !(b.fence && IsCodeSpanLine(view))) {
        last_gutter_ = -1;
        Line& l = lines_.PushBack();
        l.own = false;
        l.off = begin;
        l.len = view.size();
        l.ascii = !b.high;
        l.newline = newline;
        continue;
      }
    }
    std::string& text = line_;
    text.assign(view);
    // The quote bars, the block's quote marks and indent first: what they
    // hold is the paste. (A bar's first byte is 0xE2, so a line opening
    // with one never takes the untouched path above.)
    size_t front = 0;
    if (size_t bars = QuoteBarLength(text)) {
      front = Utf8Length(std::string_view(text).substr(0, bars));
      text.erase(0, bars);
    }
    if (quote_ > 0) StripQuote(&text, quote_);
    if (indent_ > 0) StripIndent(&text, indent_, indent_char_);
    // Bars inside the block's quote or indent ('> ▎ ', '    ▎ '): a quoted quote.
    if (quote_ > 0 || indent_ > 0) {
      if (size_t bars = QuoteBarLength(text)) {
        front += Utf8Length(std::string_view(text).substr(0, bars));
        text.erase(0, bars);
      }
    }
    bool ends = true;
    bool record = !text.empty() && text[0] == '{' && UnwrapContainerRecord(&text, &ends);
    size_t cri_text = 0;
    if (!record && CriRecord(text, &cri_text, &ends)) {
      record = true;
      if (record_pieces_ > 0) text.erase(0, cri_text);  // goes on after the first piece's prefix
    }
    if (!record_head_.empty() && !record) FlushRecordHead();  // a cut record that nothing went on with
    if (record && (!ends || record_pieces_ > 0)) {
      // A line the runtime cut: its pieces join into the first one's line,
      // followed by an empty line for each other piece (numbers kept).
      record_head_ += text;
      ++record_pieces_;
      if (!ends && newline && record_head_.size() < line_bytes_limit_) continue;
      text.swap(record_head_);
      record_head_.clear();
    }
    // One pass says which transforms can apply (most lines: none).
    b = BytesOf(text);
    if (b.amp) DecodeHtmlEntities(&text);
    if (b.esc) StripLiteralAnsi(&text);
    start = 0;
    long g = GutterNumber(text, &start);
    if (g >= 0 && !gutter_ && !lines_.empty() && g == last_gutter_ + 1) {
      gutter_ = true;
      size_t s0 = 0;
      if (GutterNumber(Text(lines_.back()), &s0) >= 0) Own(lines_.back()).erase(0, s0);
      lines_.back().continues = -1;
    }
    last_gutter_ = g;
    if (gutter_ && g >= 0) text.erase(0, start);
    if ((b.fence || text.size() <= 8) && IsFenceOrElision(text)) text.clear();
    if (b.fence) StripCodeSpan(&text);
    if (!text.empty() && text[0] == '|') UnwrapTableErrorCell(&text);  // '| x | `RuntimeError: boom` |'
    if (viewer_lines_ && IsViewerRecordLine(text)) text.clear();
    if (b.box) UnboxRichLine(&text);
    if (glued_ && GluedRecords(text, &cuts_)) {
      PushCutGlued(&text, newline, static_cast<uint8_t>(std::min<size_t>(front, 255)));
      for (; record_pieces_ > 1; --record_pieces_) lines_.PushBack();
      record_pieces_ = 0;
      continue;
    }
    Line& l = lines_.PushBack();
    l.newline = newline;
    l.front = static_cast<uint8_t>(std::min<size_t>(front, 255));
    l.text.swap(text);  // the slot's old memory serves the next line
    for (; record_pieces_ > 1; --record_pieces_) lines_.PushBack();
    record_pieces_ = 0;
  }
  raw_cut_ = std::min(pos, raw_size_);
  if (inner_done_ && !record_head_.empty()) FlushRecordHead();
  // A line longer than the parser takes: hand it on in pieces (the reader cuts it).
  if (raw_size_ - raw_cut_ > line_bytes_limit_) {
    Line& l = lines_.PushBack();
    l.newline = false;
    l.text.assign(raw + raw_cut_, raw_size_ - raw_cut_);
    raw_cut_ = raw_size_;
  }
  return OkStatus();
}

void UnpasteSource::FlushRecordHead() {
  Line& l = lines_.PushBack();
  l.text.swap(record_head_);
  record_head_.clear();
  for (; record_pieces_ > 1; --record_pieces_) lines_.PushBack();
  record_pieces_ = 0;
}

void UnpasteSource::Learn() {
  learned_ = true;
  // A paste quoted or indented as a block: what every line that is not blank
  // starts with, removed from the lines learned (and from later ones in Pull).
  //  - Quoted (Markdown's '> ' before every line, nested '> > '): as many
  //    quote marks on every line; removed so that hard wraps and frames are
  //    read as printed (the markdown_quote wrapper still takes a quoted line in
  //    a mixed file).
  //  - Indented (a Markdown code block, a mail's quote): the same 4 or more
  //    spaces on every line; frames and code keep their own indentation
  //    beyond it. A log's own lines start at column 0.
  auto least = [&](size_t (*measure)(std::string_view)) {
    size_t least = std::string::npos, nonblank = 0;
    for (size_t i = 0; i < lines_.size(); ++i) {
      std::string_view t = Text(lines_[i]);
      if (t.find_first_not_of(' ') == std::string_view::npos) continue;  // blank
      ++nonblank;
      least = std::min(least, measure(t));
    }
    return nonblank >= 2 ? least : std::string::npos;
  };
  auto rewrite = [&](void (*strip)(std::string*, size_t), size_t n) {
    for (size_t i = 0; i < lines_.size(); ++i) {
      std::string& text = Own(lines_[i]);
      strip(&text, n);
      if (size_t bars = QuoteBarLength(text)) {  // a quoted quote ('> ▎ ')
        lines_[i].front = static_cast<uint8_t>(std::min<size_t>(lines_[i].front + Utf8Length(std::string_view(text).substr(0, bars)), 255));
        text.erase(0, bars);
      }
      if (IsFenceOrElision(text)) text.clear();  // '> ```' fenced the quoted block
      StripCodeSpan(&text);                      // '> `RuntimeError: ...`'
      if (!text.empty() && text[0] == '|') UnwrapTableErrorCell(&text);  // '> | x | `RuntimeError: ...` |'
      lines_[i].continues = -1;
    }
  };
  if (size_t depth = least(QuoteDepth); depth != std::string::npos && depth > 0) rewrite(StripQuote, quote_ = depth);
  size_t indent = least([](std::string_view t) { return t.find_first_not_of(' '); });
  if (indent != std::string::npos && (indent >= 4 || (indent >= 2 && IndentIsAdded(indent)))) {
    rewrite([](std::string* line, size_t n) { StripIndent(line, n, ' '); }, indent_ = indent);
  } else if (size_t tabs = least([](std::string_view t) { return t.find_first_not_of('\t'); });
             tabs != std::string::npos && tabs > 0) {
    // Every line opens with a tab (a mail's or an editor's indented block):
    // no log opens its own lines so.
    indent_char_ = '\t';
    rewrite([](std::string* line, size_t n) { StripIndent(line, n, '\t'); }, indent_ = tabs);
  }
  // Records glued onto one line (their newlines lost): cut apart, here and
  // in every later line.
  CutGluedInQueue();
  // A log viewer's export that follows each record with a line of its own
  // (date, time, pod name): three or more, a third of the lines or more.
  {
    size_t viewer = 0, nonblank = 0;
    for (size_t i = 0; i < lines_.size(); ++i) {
      std::string_view t = Text(lines_[i]);
      if (t.find_first_not_of(' ') == std::string_view::npos) continue;
      ++nonblank;
      viewer += IsViewerRecordLine(t);
    }
    if (viewer >= 3 && viewer * 3 >= nonblank && viewer < nonblank) {
      viewer_lines_ = true;
      for (size_t i = 0; i < lines_.size(); ++i)
        if (IsViewerRecordLine(Text(lines_[i]))) {
          Own(lines_[i]).clear();
          lines_[i].continues = -1;
        }
    }
  }
  // A terminal cuts every long line at one width: several lines of exactly
  // that length, none longer, several different ones.
  std::map<size_t, std::set<std::string_view>> by_len;
  std::map<size_t, size_t> at_len;
  size_t longest = 0, counted = 0;
  for (size_t i = 0; i < lines_.size(); ++i) {
    const Line& l = lines_[i];
    size_t n = Utf8Length(Text(l)) + l.front;  // as the terminal counted it
    if (!l.newline) continue;  // a cut last line says nothing
    longest = std::max(longest, n);
    if (n >= 40 && by_len[n].size() < 8) by_len[n].insert(Text(l));
    ++at_len[n];
    ++counted;
  }
  // A short paste (a line or two of error wrapped) may hold only two lines of
  // that width; both must then go on in a line with no start of its own.
  const size_t needed = counted < 20 && longest >= 60 ? 2 : 3;
  // A few lines with one of them cut (a line or two of error pasted through a
  // terminal or a mail): one line at a width terminals and mailers cut at,
  // going on in a line with no start of its own.
  // (Only where a line's own start can be told: the next line must have none.)
  if (formats_ && counted < 20 && by_len.count(longest) && by_len[longest].size() == 1 && IsWrapWidth(longest)) {
    for (size_t i = 0; i + 1 < lines_.size(); ++i) {
      if (!lines_[i].newline || Utf8Length(Text(lines_[i])) + lines_[i].front != longest) continue;
      if (ContinuesWrapped(Text(lines_[i + 1]))) width_ = longest;
      break;
    }
    return;
  }
  // (An excerpt pasted twice holds the same cut lines twice: two different
  // ones, as many lines as needed.)
  if (longest < 40 || !by_len.count(longest) || by_len[longest].size() < std::min<size_t>(needed, 2) ||
      at_len[longest] < needed) {
    return;
  }
  // And the lines of that length go on in a line with no start of its own
  // (a log whose lines merely share one length, `[time TP0] Decode batch ...`,
  // goes on in its next record).
  size_t with_next = 0, continued = 0;
  for (size_t i = 0; i + 1 < lines_.size() && with_next < 64; ++i) {
    if (!lines_[i].newline || Utf8Length(Text(lines_[i])) + lines_[i].front != longest) continue;
    ++with_next;
    continued += !StartsOwnLine(Text(lines_[i]), Text(lines_[i + 1]));
  }
  if (needed == 2 && continued == 2 && with_next == 2) width_ = longest;
  if (continued >= 3 && continued * 5 >= with_next * 4) width_ = longest;
  if (width_) LearnSecondWidth(needed);
}

// A line of glued records becomes a line a record. Unlike a join (its
// pieces keep their numbers), the cut adds lines: the numbers after it move
// on by as many (a paste that lost its newlines has no numbers to keep).
void UnpasteSource::PushCutGlued(std::string* text, bool newline, uint8_t front) {
  size_t from = 0;
  for (size_t k = 0; k <= cuts_.size(); ++k) {
    const size_t to = k < cuts_.size() ? cuts_[k] : text->size();
    Line& l = lines_.PushBack();
    l.text.assign(*text, from, to - from);
    l.newline = k < cuts_.size() || newline;
    if (k == 0) l.front = front;
    from = to;
  }
}

void UnpasteSource::CutGluedInQueue() {
  bool any = false;
  for (size_t i = 0; i < lines_.size() && !any; ++i) any = GluedRecords(Text(lines_[i]), &cuts_);
  if (!any) return;
  glued_ = true;
  std::vector<Line> held;
  held.reserve(lines_.size());
  while (!lines_.empty()) {
    Line& l = lines_.front();
    if (!l.own) {  // (its bytes stay in raw_ until the next Pull: copied now)
      l.text.assign(Text(l));
      l.own = true;
    }
    held.push_back(std::move(l));
    lines_.pop_front();
  }
  for (Line& l : held) {
    if (GluedRecords(l.text, &cuts_)) {
      PushCutGlued(&l.text, l.newline, l.front);
      continue;
    }
    Line& kept = lines_.PushBack();
    kept.text.swap(l.text);
    kept.newline = l.newline;
    kept.front = l.front;
  }
}

// A paste cut at one width that was already cut at a wider one (a log wrapped
// by the terminal it was copied from, then by a mailer or a narrower window):
// the lines as joined at the first width show the second the same way, several
// of exactly that length, none longer, going on in a line with no start.
void UnpasteSource::LearnSecondWidth(size_t needed) {
  struct Logical {
    size_t chars;
    size_t next;  // index of its next logical line's first piece
    bool newline;
  };
  std::vector<Logical> logical;
  for (size_t i = 0; i < lines_.size();) {
    size_t n = Utf8Length(Text(lines_[i])) + lines_[i].front, j = i, pieces = 1;
    while (j + 1 < lines_.size() && lines_[j].newline && n == width_ * pieces &&
           !StartsOwnLine(Text(lines_[j]), Text(lines_[j + 1]))) {
      ++j;
      ++pieces;
      n += Utf8Length(Text(lines_[j]));
    }
    logical.push_back({n, j + 1, lines_[j].newline});
    i = j + 1;
  }
  size_t longest = 0;
  for (const Logical& l : logical)
    if (l.newline) longest = std::max(longest, l.chars);
  if (longest <= width_) return;
  size_t with_next = 0, continued = 0;
  for (const Logical& l : logical) {
    if (!l.newline || l.chars != longest || l.next >= lines_.size()) continue;
    ++with_next;
    continued += !HasOwnStart(Text(lines_[l.next]));
  }
  if (with_next >= needed && continued >= needed && continued * 5 >= with_next * 4) width2_ = longest;
}

// Two or three spaces before every line: a paste indented as a block (a list
// item's code, a form's field) when a line at that indent is not a traceback
// frame ('  File "...'), which is where an excerpt of frames alone starts.
bool UnpasteSource::IndentIsAdded(size_t indent) const {
  for (size_t i = 0; i < lines_.size(); ++i) {
    std::string_view t = Text(lines_[i]);
    if (t.size() <= indent || t.find_first_not_of(' ') != indent) continue;
    if (!StartsWith(t.substr(indent), "File \"")) return true;
  }
  return false;
}

// The last line of a cut log (with or without its newline) may end inside a
// record: a value that runs into
// the end inside an unclosed parenthesis (`WorkNCCL(SeqNum=40`, `OpType=ALLRED`)
// is partial and never evidence (it would differ from another rank's whole
// value). It is dropped; a complete value before the cut stays.
void TrimPartialTail(std::string* t) {
  size_t i = t->size();
  while (i > 0 && (std::isalnum(static_cast<unsigned char>((*t)[i - 1])) || (*t)[i - 1] == '.' || (*t)[i - 1] == '_')) --i;
  if (i == t->size() || i == 0 || ((*t)[i - 1] != '=' && (*t)[i - 1] != ':')) return;
  if (std::count(t->begin(), t->end(), '(') <= std::count(t->begin(), t->end(), ')')) return;
  t->resize(i);
}

UnpasteSource::Line& UnpasteSource::LineQueue::PushBack() {
  if (size_ == slots_.size()) {
    // Full: lay the slots out first to last, then add room.
    std::rotate(slots_.begin(), slots_.begin() + static_cast<std::ptrdiff_t>(head_), slots_.end());
    head_ = 0;
    slots_.resize(std::max<size_t>(16, slots_.size() * 2));
  }
  Line& l = slots_[(head_ + size_) % slots_.size()];
  ++size_;
  l.text.clear();
  l.own = true;
  l.newline = true;
  l.continues = -1;
  l.front = 0;
  return l;
}

void UnpasteSource::EmitFront(char* buf, size_t cap, size_t* filled) {
  Line& first = first_;
  {
    Line& front = lines_.front();
    first.own = front.own;
    first.off = front.off;
    first.len = front.len;
    first.ascii = front.ascii;
    if (front.own) first.text.swap(front.text);
    first.newline = front.newline;
    first.front = front.front;
  }
  lines_.pop_front();
  size_t took = 0;
  auto take = [&](const char* sep) {
    const Line& next = lines_.front();
    std::string& text = Own(first);
    text += sep;
    text += Text(next);
    first.newline = next.newline;
    lines_.pop_front();
    ++took;
  };
  // (A line read as it was, all ASCII: as many characters as bytes.)
  auto chars = [](const Line& l, std::string_view t) { return !l.own && l.ascii ? t.size() : Utf8Length(t); };
  // 1. A terminal's wrap: a line of exactly the width goes on in the next.
  //    Cut again at a narrower width (width_ inside width2_): a run of pieces
  //    at width_ makes a line of exactly width2_, which goes on in the next run.
  for (size_t run_begin = 0, run_pieces = 1, groups = 1;
       width_ && took < 64 && !lines_.empty() && Text(first).size() < kMaxJoinedBytes;) {
    const size_t total = chars(first, Text(first)) + first.front;
    const bool cut = total - run_begin == width_ * run_pieces;
    const bool cut2 = !cut && width2_ && total == width2_ * groups;
    if (!(cut || cut2) || StartsOwnLine(Text(first), Text(lines_.front()))) break;
    if (cut) {
      ++run_pieces;
    } else {
      ++groups;
      run_begin = total;
      run_pieces = 1;
    }
    take("");
  }
  // 2. A traceback frame cut before its function name, or inside it: Python
  //    follows a frame with its indented source line or the next frame, never
  //    with a bare lower-case word, so `..., in run` then `_scheduler_process`
  //    is one name cut in two (an exception named alone, `KeyboardInterrupt`,
  //    starts upper-case and stays a line).
  if (took == 0 && !lines_.empty()) {
    std::string_view t = Text(first), next = Text(lines_.front());
    size_t f = t.find("File \"");
    if (f != std::string_view::npos && Trim(t.substr(0, f)).empty() && !next.empty() && next[0] != ' ') {
      const size_t in = t.find(", in ", f);
      if (in == std::string_view::npos) {
        bool in_quotes = t.find('"', f + 6) == std::string_view::npos;
        take(in_quotes ? "" : " ");
      } else if (in + 5 < t.size() && t.back() != ' ' && (next[0] == '_' || (next[0] >= 'a' && next[0] <= 'z')) &&
                 next.size() <= 64 && std::all_of(next.begin(), next.end(), [](char c) {
                   return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '>';
                 })) {
        take("");
      }
    }
  }
  // 3. A long line followed by lines with no start of their own: joined when
  //    the joined text matches a pattern better than any of its lines does
  //    alone (a pattern's literal on the first line whose regex fails there,
  //    or a prefix whose message went on to the next lines). A later line's
  //    own complete match never pulls it in: it scores as well alone.
  // (A next line that starts as this one does, `[2025-`, `(Worker`, `INFO `, is
  // a line of its own: most lines of a prefixed log stop there, unscanned.)
  auto same_start = [](std::string_view a, std::string_view b) { return a.size() >= 3 && b.size() >= 3 && a.substr(0, 3) == b.substr(0, 3); };
  auto cat = [](std::string_view a, std::string_view sep, std::string_view b) {
    std::string s;
    s.reserve(a.size() + sep.size() + b.size());
    s.append(a).append(sep).append(b);
    return s;
  };
  std::vector<int> hit;
  // (Also after a terminal's wrap was joined: a paste wrapped by its author
  // between words, then cut again at a width, needs both; a piece cut at the
  // width goes on with no space.)
  auto cut_at_width = [&](const Line& l, size_t pieces) {
    return width_ && chars(l, Text(l)) + l.front == width_ * pieces;
  };
  // (Where no width was learned, a word cut in two by a wrap at a width the
  // log shows too few times to learn, 'an illega' + 'l memory access', is
  // probed joined with no space as well; the scoring below tries both.)
  auto literal_hits = [&](std::string_view sep, std::vector<int>* out) {
    return LiteralHits(cat(cat(Text(first), sep, Text(lines_.front())),
                           lines_.size() < 2 ? "" : cut_at_width(lines_[0], 1) ? "" : " ",
                           lines_.size() > 1 ? Text(lines_[1]) : std::string_view()),
                       out);
  };
  const bool first_cut = cut_at_width(first, took + 1);
  // Both probes' patterns, sorted and unique as LiteralHits gives them.
  auto any_hits = [&] {
    bool spaced = literal_hits(first_cut ? "" : " ", &hit);
    if (first_cut) return spaced;
    std::vector<int> glued;
    if (!literal_hits("", &glued)) return spaced;
    std::vector<int> both;
    std::set_union(hit.begin(), hit.end(), glued.begin(), glued.end(), std::back_inserter(both));
    hit = std::move(both);
    return true;
  };
  if (!lines_.empty() && Text(first).size() >= kMinWrapped &&
      !same_start(Text(first), Text(lines_.front())) && ((!first.own && first.ascii) || Utf8LengthAtLeast(Text(first), kMinWrapped)) &&
      ContinuesWrapped(lines_.front()) && any_hits()) {
    // The patterns whose literal is on the first three lines (a literal only on a
    // later line belongs to a line of its own) and the lines that could go on.
    size_t n = 0;
    std::string all(Text(first));
    while (n < std::min(kMaxJoin, lines_.size()) && (n == 0 || ContinuesWrapped(lines_[n])) &&
           all.size() + Text(lines_[n]).size() < kMaxJoinedBytes) {
      all += ' ';
      all += Text(lines_[n]);
      ++n;
    }
    {
      // Per pattern: its best score on any one line of the window alone.
      // (A line cut at the width is scored as it is and with the pieces it goes on in.)
      std::vector<int> alone = Scores(Text(first), hit);
      auto keep_best = [&](std::string_view line) {
        std::vector<int> v = Scores(line, hit);
        for (size_t p = 0; p < v.size(); ++p) alone[p] = std::max(alone[p], v[p]);
      };
      for (size_t k = 0; k < n; ++k) {
        keep_best(Text(lines_[k]));
        std::string line(Text(lines_[k]));
        size_t pieces = 1;
        for (size_t j = k + 1; j < n && width_ && Utf8Length(line) + lines_[k].front == width_ * pieces; ++j, ++pieces) {
          line += Text(lines_[j]);
        }
        if (pieces > 1) keep_best(line);
      }
      std::string best, joined(Text(first));
      size_t best_took = 0;
      int best_gain = 0;
      bool prev_cut = cut_at_width(first, took + 1);
      for (size_t k = 0; k < n; ++k) {
        for (const char* sep : {" ", ""}) {
          std::string cand = cat(joined, sep, Text(lines_[k]));
          std::vector<int> v = Scores(cand, hit);
          int gain = 0;
          for (size_t p = 0; p < v.size(); ++p) gain = std::max(gain, v[p] - alone[p]);
          if (gain > best_gain) {
            best_gain = gain;
            best = cand;
            best_took = k + 1;
          }
        }
        // (After a piece the terminal cut at its width the next goes on with no space.)
        if (!prev_cut) joined += ' ';
        joined += Text(lines_[k]);
        prev_cut = cut_at_width(lines_[k], 1);
      }
      if (best_took > 0) {
        first.newline = lines_[best_took - 1].newline;
        for (size_t k = 0; k < best_took; ++k) lines_.pop_front();
        first.text = std::move(best);
        first.own = true;
        took += best_took;
      }
    }
  }
  // A table row the joins made whole again (a terminal cut it at its width):
  // its exception cell, as Pull does for a row read whole.
  if (took > 0 && !Trim(Text(first)).empty() && Trim(Text(first))[0] == '|') UnwrapTableErrorCell(&Own(first));
  // The input's last line: cut by the log's end, or by whoever pasted the
  // excerpt (a newline after the cut is no sign it is whole).
  // (Lines after it that hold nothing, once a block quote or indent is taken
  // off, do not make it whole: '> ' after the last line of a quoted paste.)
  auto rest_blank = [&] {
    for (size_t i = 0; i < lines_.size(); ++i)
      if (Text(lines_[i]).find_first_not_of(" \t") != std::string_view::npos) return false;
    return true;
  };
  if (!first.newline || (inner_done_ && rest_blank())) TrimPartialTail(&Own(first));
  // The line, then a newline for itself (when it had one) and one for each
  // line it took (their numbers kept; a cut log's last line stays unterminated).
  const std::string_view text = Text(first);
  const size_t newlines = took + (first.newline ? 1 : 0);
  if (text.size() + newlines <= cap - *filled) {
    if (!text.empty()) std::memcpy(buf + *filled, text.data(), text.size());
    std::memset(buf + *filled + text.size(), '\n', newlines);
    *filled += text.size() + newlines;
    return;
  }
  out_.assign(text);
  out_.append(newlines, '\n');
  const size_t part = cap - *filled;
  std::memcpy(buf + *filled, out_.data(), part);
  *filled += part;
  out_pos_ = part;
}

StatusOr<size_t> UnpasteSource::Read(char* buf, size_t n) {
  size_t k = 0;
  if (out_pos_ < out_.size()) {  // the rest of a line that did not fit
    k = std::min(n, out_.size() - out_pos_);
    std::memcpy(buf, out_.data() + out_pos_, k);
    out_pos_ += k;
  }
  while (k < n) {
    if (!inner_done_ && (!learned_ || lines_.size() <= kWindow)) {
      size_t before = lines_.size();
      Status s = Pull();
      if (!s.ok()) return s;
      for (size_t i = before; i < lines_.size(); ++i) held_ += Text(lines_[i]).size() + 1;
      if (!learned_ && (held_ >= kLearnBytes || inner_done_)) Learn();
      continue;
    }
    if (!learned_) Learn();
    if (lines_.empty()) break;
    EmitFront(buf, n, &k);
  }
  if (k == 0 && !error_.ok()) return error_;
  return k;
}

}  // namespace tpt
