// prose.cc: see prose.h.
#include "rules/prose.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <utility>

#include <re2/re2.h>

#include "parser/format_set.h"

namespace tpt {

namespace {

// A mark a program leaves on its lines: time, producer, traceback, wrapper.
bool Marked(const Event& e) {
  if (e.ts || e.rank >= 0 || e.local_rank >= 0 || e.pid >= 0 || e.tp_rank >= 0 || e.dp_rank >= 0 ||
      e.pp_rank >= 0 || !e.host.empty() || !e.process.empty() || !e.extra_lines.empty() || e.kind == "exception")
    return true;
  bool wrapped = false;
  e.ForEachWrapper([&](std::string_view, const FieldValue&) { wrapped = true; });
  return wrapped;
}

// What a program writes in front of its message: nothing, one token (a
// path:line, a logger name), an exception type, a level, a glog or bracketed
// prefix.
bool LogStart(std::string_view pre) {
  while (!pre.empty() && (pre.front() == ' ' || pre.front() == '\t')) pre.remove_prefix(1);
  while (!pre.empty() && (pre.back() == ' ' || pre.back() == '\t')) pre.remove_suffix(1);
  if (pre.find_first_of(" \t") == std::string_view::npos) return true;
  static const re2::RE2 kStart(
      "^(?:[\\w.]*(?:Error|Exception|Warning|Failure|Interrupt)\\w*:"
      "|(?i:error|warning|warn|info|critical|fatal|debug|notice)\\b"
      "|[EWIFD]\\d{4}\\b|\\[|\\(|\\S+\\.\\w+:\\d+\\b)");
  return re2::RE2::PartialMatch(pre, kStart);
}

// The pattern that made `e`, to find where its message starts.
const PatternSpec* PatternOf(const FormatSet& formats, const Event& e,
                             std::map<std::pair<std::string, std::string>, const PatternSpec*>* index) {
  if (index->empty()) {
    for (const PatternSpec& p : formats.patterns()) index->emplace(std::make_pair(p.family, p.id), &p);
  }
  auto it = index->find({e.family, e.pattern_id});
  return it == index->end() ? nullptr : it->second;
}

// Where the message of `e` starts in its text: its pattern's first literal
// (the fixed words of the message; a pattern's regex may begin with `^.*?`),
// else where the regex matches; npos when it cannot be told.
size_t MatchBegin(const PatternSpec* p, const Event& e) {
  if (p == nullptr) return std::string_view::npos;
  size_t best = std::string_view::npos;
  std::string lower;
  for (const std::string& lit : p->literals) {
    if (lit.empty()) continue;
    size_t at;
    if (p->caseless) {
      if (lower.empty()) {
        lower = e.text;
        for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      }
      std::string l = lit;
      for (char& c : l) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      at = lower.find(l);
    } else {
      at = e.text.find(lit);
    }
    best = std::min(best, at);
  }
  if (best != std::string_view::npos || !p->re) return best;
  re2::StringPiece m;
  if (!p->re->Match(e.text, 0, e.text.size(), re2::RE2::UNANCHORED, &m, 1)) return std::string_view::npos;
  return static_cast<size_t>(m.data() - e.text.data());
}

// Lines a document holds that no program prints: a quotation left open from
// the line before (an odd number of straight quotes), a regular expression.
bool DocumentOnly(std::string_view text) {
  size_t quotes = 0;
  for (char c : text) quotes += c == '"';
  if (quotes % 2 == 1) return true;
  for (std::string_view re : {"\\.", "\\d", "\\s", "(?:", "(?P<"})
    if (text.find(re) != std::string_view::npos) return true;
  return false;
}

}  // namespace

bool FirstPersonAccount(std::string_view text) {
  // The words outside inline code: what the person wrote, not what they quote.
  std::string words;
  bool code = false;
  for (char c : text) {
    if (c == '`') {
      code = !code;
      words += ' ';
    } else if (!code) {
      words += c;
    }
  }
  // "I", "I'm", "I've", "me", "my": the author telling their own run. A
  // README or a design note speaks to the reader ("if you see `...`") or of
  // the program, not of itself.
  // "I/O" and "I-beam" are not the pronoun.
  static const re2::RE2 kFirstPerson("(?:^|[^\\w'/-])(?:I|I'm|I've|I'd|[Mm]e|[Mm]y)(?:$|[^\\w'/-])");
  return re2::RE2::PartialMatch(words, kFirstPerson);
}

bool QuotedInProse(std::string_view text, size_t match_begin) {
  if (match_begin == std::string_view::npos || match_begin > text.size()) return false;
  std::string_view pre = text.substr(0, match_begin);
  // Inside an inline code span: an odd number of backticks before it. A span
  // opened at the line's start (after blanks or a '>' quote) and left open
  // past its end is a paste in inline code, the message's own lines (the
  // span closes lines later); a span closed on its line ("`...` (-> cause)",
  // "  `Not enough memory ...`.") is a document quoting the message.
  size_t ticks = 0, lead = pre.find_first_not_of(" \t>");
  for (char c : pre) ticks += c == '`';
  if (ticks % 2 == 1) {
    bool leading = ticks == 1 && lead != std::string_view::npos && pre[lead] == '`';
    bool open_past_end = text.find('`', match_begin) == std::string_view::npos;
    if (!(leading && open_past_end)) return true;
  }
  // Inside a typographic quotation (opened, not closed before the message).
  size_t open = pre.rfind("\xe2\x80\x9c"), close = pre.rfind("\xe2\x80\x9d");
  if (open != std::string_view::npos && (close == std::string_view::npos || close < open)) return true;
  // Inside a straight quotation that prose opened: the quote follows a space
  // or begins the line. A program quotes in code: `Warmup(Generation("...`,
  // `RuntimeError("...")`, `key="..."` are log lines, not prose.
  size_t quotes = 0, last = std::string_view::npos;
  for (size_t i = 0; i < pre.size(); ++i)
    if (pre[i] == '"') ++quotes, last = i;
  if (quotes % 2 == 1) {
    if (last == 0) return true;
    char before = pre[last - 1];
    return before == ' ' || before == '\t' || before == '*' || before == '_';
  }
  return false;
}

// Where the message begins, for the prose test: the first literal of its
// pattern, moved back to where the pattern's regex starts matching when the
// literal alone looks quoted (uvicorn's access line `- "POST /v1/... HTTP/1.1"
// 200` quotes its request line itself: the quote is part of the message).
size_t QuoteCheckedBegin(const PatternSpec* p, const Event& e) {
  size_t begin = MatchBegin(p, e);
  if (begin == std::string_view::npos || p == nullptr || !p->re || !QuotedInProse(e.text, begin)) return begin;
  re2::StringPiece m;
  if (!p->re->Match(e.text, 0, e.text.size(), re2::RE2::UNANCHORED, &m, 1)) return begin;
  // Only a match that begins with the quote itself owns it (a regex that
  // begins with `^.*?` matches from the line's start and owns nothing).
  size_t at = static_cast<size_t>(m.data() - e.text.data());
  if (at < begin && e.text[at] == '"') return at;
  // A regex that spells a quote itself owns the quote its match covers:
  // Triton's glog has quoted its messages since the 24.x releases
  // (`I0410 ... model_lifecycle.cc:849] "successfully loaded 'tensorrt_llm'"`),
  // and its pattern reads the file:line in front of the quote.
  size_t q = at < begin ? e.text.rfind('"', begin - 1) : std::string_view::npos;
  if (q != std::string_view::npos && q >= at && p->re->pattern().find('"') != std::string::npos) return at;
  return begin;
}

namespace {

// Where the message of `e` begins: its pattern's (QuoteCheckedBegin), else, for a
// multi-line record whose start line is a message (vllm.json attn_backend_none_valid, not a
// traceback's header), the first literal of its start line; npos when neither tells.
size_t MessageBegin(const FormatSet& formats, const Event& e,
                    std::map<std::pair<std::string, std::string>, const PatternSpec*>* index) {
  if (const PatternSpec* p = PatternOf(formats, e, index)) return QuoteCheckedBegin(p, e);
  for (const BlockSpec& b : formats.blocks()) {
    if (b.family != e.family || b.id != e.pattern_id) continue;
    size_t best = std::string_view::npos;
    for (const std::string& lit : b.literals) {
      size_t at = lit.empty() ? std::string_view::npos : e.text.find(lit);
      best = std::min(best, at);
    }
    return best;
  }
  return std::string_view::npos;
}

}  // namespace

bool SentenceBefore(std::string_view pre) {
  // A program's prefix: brackets, parentheses, braces, '=' or '|' (a level,
  // a rank, a pid, key=value, a table) anywhere before the message; unless the
  // message is inside markdown's inline code opened before it (an odd number
  // of backticks), which a person writes and a program does not: then an aside
  // in parentheses ('(in my case 512 concurrent requests) leads to `CUDA error:
  // uncorrectable ECC ...`') is the sentence's own.
  const bool inline_code = std::count(pre.begin(), pre.end(), '`') % 2 == 1;
  if (!inline_code && pre.find_first_of("[](){}<>=|") != std::string_view::npos) return false;
  // A person's sentence starts with words: the first four tokens are letters
  // only (an apostrophe or hyphen inside, a comma after); "CUDA error:" later
  // in it is the message's own start.
  size_t words = 0, i = 0;
  while (words < 4) {
    while (i < pre.size() && (pre[i] == ' ' || pre[i] == '\t')) ++i;
    if (i >= pre.size()) return false;
    size_t start = i;
    while (i < pre.size() && pre[i] != ' ' && pre[i] != '\t') ++i;
    std::string_view w = pre.substr(start, i - start);
    if (!w.empty() && w.back() == ',') w.remove_suffix(1);
    if (w.empty()) return false;
    for (char c : w) {
      unsigned char u = static_cast<unsigned char>(c);
      if (!std::isalpha(u) && c != '\'' && c != '-') return false;
    }
    ++words;
  }
  return true;
}

size_t MarkSentenceMentions(const FormatSet& formats, std::vector<Event>* events) {
  std::map<std::pair<std::string, std::string>, const PatternSpec*> index;
  std::set<std::pair<int, uint64_t>> marked_lines;
  for (const Event& e : *events)
    if (Marked(e)) marked_lines.insert({e.source, e.line});
  size_t n = 0;
  for (Event& e : *events) {
    if (marked_lines.count({e.source, e.line})) continue;
    size_t begin = MessageBegin(formats, e, &index);
    if (begin == std::string_view::npos || begin > e.text.size()) continue;
    if (!SentenceBefore(std::string_view(e.text).substr(0, begin))) continue;
    e.Set(kProseMention, true);
    ++n;
  }
  return n;
}

std::vector<std::string> DropProse(const FormatSet& formats, std::vector<Event>* events, RunTotals* totals,
                                   size_t* dropped) {
  std::map<std::pair<std::string, std::string>, const PatternSpec*> index;
  // A line with one marked event is program output (a traceback's exception
  // line also read by a message pattern): all its events are.
  std::set<std::pair<int, uint64_t>> marked_lines;
  for (const Event& e : *events)
    if (Marked(e)) marked_lines.insert({e.source, e.line});
  auto marked = [&](const Event& e) { return marked_lines.count({e.source, e.line}) > 0; };
  // A bug report (a GitHub issue form's headings or checklist: parser/formats/
  // generic.json bug_report_heading) quotes its author's own failure in its
  // prose ('--tp 2 fails with `RuntimeError: ...`'): not a document.
  std::set<int> reports;
  for (const Event& e : *events)
    if (e.kind == "bug_report") reports.insert(e.source);
  // Pass 1: the files that quote a message in prose. A sentence that tells
  // its author's own run ('It almost worked except for the `Error while
  // creating shared memory segment ...` when I tried it') is a person's
  // report, as a bug report's prose is: it does not make its file a document
  // (MarkSentenceMentions caps what it supports at kProseMentionConfidence).
  // In a file that is a document for another line, it is dropped with the rest.
  std::set<int> documents;
  std::vector<std::string> names;
  for (const Event& e : *events) {
    if (documents.count(e.source) || reports.count(e.source) || marked(e) || FirstPersonAccount(e.text)) continue;
    if (QuotedInProse(e.text, MessageBegin(formats, e, &index))) {
      documents.insert(e.source);
      names.push_back(e.file);
    }
  }
  if (documents.empty()) return names;
  // Pass 2: in those files, keep what was pasted with its marks and bare
  // lines that start with their message.
  size_t kept = 0;
  std::vector<size_t> new_index(events->size() + 1);
  for (size_t i = 0; i < events->size(); ++i) {
    new_index[i] = kept;
    Event& e = (*events)[i];
    bool keep = true;
    if (documents.count(e.source)) {
      size_t begin = MessageBegin(formats, e, &index);
      bool quoted = QuotedInProse(e.text, begin);
      keep = !quoted && !DocumentOnly(e.text) && (marked(e) || begin == std::string_view::npos || LogStart(std::string_view(e.text).substr(0, begin)));
    }
    if (!keep) {
      ++*dropped;
      continue;
    }
    if (kept != i) (*events)[kept] = std::move(e);
    ++kept;
  }
  new_index[events->size()] = kept;
  events->resize(kept);
  if (totals != nullptr) {
    totals->events -= std::min<uint64_t>(totals->events, *dropped);
    for (RunTotals::Dropped& d : totals->dropped) d.before = new_index[std::min(d.before, new_index.size() - 1)];
  }
  return names;
}

}  // namespace tpt
