// unpaste_lines.cc: the paste layer's line transforms, one line at a time
// (unpaste.h); the window that calls them is unpaste.cc.
#include <algorithm>
#include <cctype>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>

#include <nlohmann/json.hpp>

#include "parser/unpaste.h"
#include "parser/unpaste_internal.h"

namespace tpt {

using unpaste_internal::StartsWith;
using unpaste_internal::Trim;

namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

const char kBar[] = "\xE2\x94\x82";       // │
const char kTopLeft[] = "\xE2\x95\xAD";   // ╭
const char kBotLeft[] = "\xE2\x95\xB0";   // ╰
const char kArrow[] = "\xE2\x9D\xB1";     // ❱

}  // namespace

bool DecodeHtmlEntities(std::string* line) {
  if (line->find('&') == std::string::npos) return false;
  static const std::pair<const char*, const char*> kEntities[] = {
      {"&lt;", "<"}, {"&gt;", ">"}, {"&quot;", "\""}, {"&#39;", "'"}, {"&#x27;", "'"}, {"&apos;", "'"},
      {"&#34;", "\""}, {"&nbsp;", " "}, {"&#47;", "/"}, {"&amp;", "&"}};
  std::string out;
  out.reserve(line->size());
  bool changed = false;
  for (size_t i = 0; i < line->size();) {
    if ((*line)[i] == '&') {
      bool hit = false;
      for (const auto& [from, to] : kEntities) {
        size_t n = std::strlen(from);
        if (line->compare(i, n, from) == 0) {
          out += to;
          i += n;
          hit = changed = true;
          break;
        }
      }
      if (hit) continue;
    }
    out += (*line)[i++];
  }
  if (changed) line->swap(out);
  return changed;
}

bool UnwrapContainerRecord(std::string* line, bool* ends_line) {
  *ends_line = true;
  // `{"log":` first (Docker's writer puts it first: moby daemon/logger/
  // jsonfilelog/jsonlog/jsonlogbytes.go; forwarders may add spaces).
  size_t i = 0;
  auto skip = [&] { while (i < line->size() && ((*line)[i] == ' ' || (*line)[i] == '\t')) ++i; };
  if (line->empty() || (*line)[0] != '{') return false;
  ++i;
  skip();
  if (line->compare(i, 5, "\"log\"") != 0) return false;
  i += 5;
  skip();
  if (i >= line->size() || (*line)[i] != ':') return false;
  nlohmann::json j = nlohmann::json::parse(*line, nullptr, /*allow_exceptions=*/false);
  // The runtime's own keys beside "log": an application's JSON log that merely
  // has a "log" field stays as it is.
  if (!j.is_object() || !j["log"].is_string() || !(j.contains("stream") || j.contains("time"))) return false;
  std::string text = j["log"].get<std::string>();
  if (!text.empty() && text.back() == '\n') {
    text.pop_back();
  } else {
    *ends_line = false;
  }
  if (!text.empty() && text.back() == '\r') text.pop_back();
  line->swap(text);
  return true;
}

bool CriRecord(std::string_view line, size_t* text_start, bool* ends_line) {
  // TIME (RFC 3339, Z or an offset) STREAM TAG text; the wrapper `cri`
  // (formats/wrappers.json) strips the prefix and keeps the time.
  if (line.size() < 31 || !IsDigit(line[0]) || line[4] != '-' || line[10] != 'T') return false;
  size_t sp = line.find(' ', 19);
  if (sp == std::string_view::npos || sp > 40) return false;
  std::string_view rest = line.substr(sp + 1);
  if (!StartsWith(rest, "stdout ") && !StartsWith(rest, "stderr ")) return false;
  if (rest.size() < 9 || (rest[7] != 'F' && rest[7] != 'P') || rest[8] != ' ') return false;
  *ends_line = rest[7] == 'F';
  *text_start = sp + 1 + 9;
  return true;
}

bool StripLiteralAnsi(std::string* line) {
  // `^[[0;36m` (caret notation of ESC), `\033[0m`, `\x1b[1m`, `\e[0m`, `\u001b[32m`.
  static const char* kIntro[] = {"^[[", "\\033[", "\\x1b[", "\\e[", "\\u001b[", "\\x1B["};
  bool changed = false;
  for (const char* intro : kIntro) {
    size_t n = std::strlen(intro);
    for (size_t p = line->find(intro); p != std::string::npos; p = line->find(intro, p)) {
      size_t q = p + n;
      while (q < line->size() && (IsDigit((*line)[q]) || (*line)[q] == ';')) ++q;
      if (q < line->size() && (*line)[q] == 'm') {
        line->erase(p, q + 1 - p);
        changed = true;
      } else {
        p = q;
      }
    }
  }
  return changed;
}

size_t QuoteBarLength(std::string_view line) {
  // U+2588..U+258F (the left blocks, full to one eighth: E2 96 88..8F) and
  // U+2502/U+2503 (box drawings' light and heavy vertical: E2 94 82/83).
  auto bar = [](std::string_view t) {
    return t.size() >= 3 && t[0] == '\xE2' &&
           ((t[1] == '\x96' && static_cast<unsigned char>(t[2]) >= 0x88 && static_cast<unsigned char>(t[2]) <= 0x8F) ||
            (t[1] == '\x94' && (t[2] == '\x82' || t[2] == '\x83')));
  };
  if (!bar(line)) return 0;
  // A row that also ends in its vertical (`│ x.py:12 in f │`, `┃ Name ┃`) is
  // a box or a table the program drew, not a quote.
  std::string_view t = Trim(line);
  if (line[1] == '\x94' && t.size() >= 6 && t.substr(t.size() - 3) == line.substr(0, 3)) return 0;
  size_t i = 0;
  while (bar(line.substr(i))) {
    i += 3;
    if (i < line.size() && line[i] == ' ') ++i;
  }
  return i;
}

// One quote mark at line[i]: its length with the space after it (0: none).
static size_t QuoteMark(std::string_view line, size_t i) {
  if (i >= line.size()) return 0;
  size_t n = 0;
  if (line[i] == '>') {
    n = 1;
  } else if (QuoteBarLength(line.substr(i)) > 0) {
    n = 3;
  } else {
    return 0;
  }
  if (i + n < line.size() && line[i + n] == ' ') ++n;
  return n;
}

size_t QuoteDepth(std::string_view line) {
  size_t depth = 0;
  for (size_t i = 0, n; (n = QuoteMark(line, i)) > 0; i += n) ++depth;
  return depth;
}

void StripQuote(std::string* line, size_t depth) {
  size_t i = 0;
  for (size_t d = 0, n; d < depth && (n = QuoteMark(*line, i)) > 0; ++d) i += n;
  line->erase(0, i);
}

void StripIndent(std::string* line, size_t indent, char ch) {
  size_t n = 0;
  while (n < indent && n < line->size() && (*line)[n] == ch) ++n;
  if (n == indent) line->erase(0, n);
}

bool IsFenceOrElision(std::string_view line) {
  std::string_view t = Trim(line);
  if (t.empty()) return false;
  if (StartsWith(t, "```") || StartsWith(t, "~~~")) {
    // ```text, ```log, ``` : a fence, not code holding backticks.
    for (char c : t.substr(3))
      if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '+' || c == '_')) return false;
    return true;
  }
  if (t == "[...]" || t == "(...)" || t == "<snip>" || t == "[snip]" || t == "\xE2\x80\xA6" /* … */) return true;
  if (t.size() >= 3 && t.find_first_not_of('.') == std::string_view::npos) return true;
  return false;
}

bool CodeSpanMarks(std::string_view line, size_t* front, size_t* back) {
  *front = *back = 0;
  size_t ticks = 0;
  for (char c : line) ticks += c == '`';
  if (ticks == 0 || ticks > 3) return false;
  if (line == "`") {  // the span's closing mark alone on its line
    *front = 1;
    return true;
  }
  const size_t n = line.size();
  // A mark opens a span at the first byte only when text follows it at once,
  // and closes one at the last byte only when text precedes it.
  const bool opens = n >= 2 && line[0] == '`' && line[1] != '`' && line[1] != ' ';
  const bool closes = n >= 2 && line[n - 1] == '`' && line[n - 2] != '`' && line[n - 2] != ' ';
  if (ticks == 2 && opens && closes && n > 2) {
    *front = *back = 1;  // `...`: one span, the whole line
  } else if (ticks % 2 == 1 && opens) {
    *front = 1;  // `... (and a pair inside): the span closes on a later line
  } else if (ticks == 1 && closes) {
    *back = 1;  // ...`: the span opened on an earlier line
  }
  return *front + *back > 0;
}

bool IsCodeSpanLine(std::string_view line) {
  size_t front = 0, back = 0;
  return CodeSpanMarks(line, &front, &back);
}

bool StripCodeSpan(std::string* line) {
  size_t front = 0, back = 0;
  if (!CodeSpanMarks(*line, &front, &back)) return false;
  line->erase(line->size() - back);
  line->erase(0, front);
  return true;
}

bool IsViewerRecordLine(std::string_view line) {
  // YYYY-MM-DD HH:MM:SS[.fff]  NAME  : the date and time, two spaces or more,
  // one name (a pod's or container's: letters, digits, . _ -), then only spaces.
  std::string_view t = line;
  while (!t.empty() && (t.back() == ' ' || t.back() == '\t')) t.remove_suffix(1);
  static constexpr std::string_view kShape = "dddd-dd-dd dd:dd:dd";
  if (t.size() < kShape.size() + 3) return false;
  for (size_t i = 0; i < kShape.size(); ++i) {
    char c = t[i];
    if (kShape[i] == 'd' ? !IsDigit(c) : (i == 10 ? (c != ' ' && c != 'T') : c != kShape[i])) return false;
  }
  size_t i = kShape.size();
  if (i < t.size() && t[i] == '.') {
    ++i;
    while (i < t.size() && IsDigit(t[i])) ++i;
  }
  size_t spaces = i;
  while (i < t.size() && t[i] == ' ') ++i;
  if (i - spaces < 2 || i >= t.size()) return false;
  for (; i < t.size(); ++i) {
    char c = t[i];
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-')) return false;
  }
  return true;
}

namespace {
// The length of a process prefix that starts at `at` ('('), 0 when there is
// none: vLLM's `(APIServer pid=2960)`, `(EngineCore_DP0 pid=7)`, `(VllmWorker
// TP0 pid=9)`, `(VllmWorker rank=1 pid=813)` (vllm/utils _add_prefix:
// "(NAME pid=PID)"), Ray's `(pid=12)` and `(RayWorkerWrapper pid=12, ip=10.0.0.2)`.
size_t ProcessPrefixLength(std::string_view line, size_t at) {
  size_t i = at + 1;
  if (line.substr(i, 4) != "pid=") {  // a name first: a letter, then letters, digits, '_' and spaces
    if (!std::isalpha(static_cast<unsigned char>(line[i]))) return 0;
    const size_t name = i;
    while (i < line.size() && i - name < 48 && !(line[i - 1] == ' ' && line.substr(i, 4) == "pid=") &&
           (std::isalnum(static_cast<unsigned char>(line[i])) || line[i] == '_' || line[i] == ' ' || line[i] == '=' ||
            line[i] == '-'))
      ++i;
    if (i == name || line[i - 1] != ' ') return 0;
  }
  if (line.substr(i, 4) != "pid=") return 0;
  i += 4;
  const size_t digits = i;
  while (i < line.size() && IsDigit(line[i])) ++i;
  if (i == digits) return 0;
  if (line.substr(i, 5) == ", ip=") {
    i += 5;
    while (i < line.size() && (IsDigit(line[i]) || line[i] == '.' || line[i] == ':')) ++i;
  }
  return i < line.size() && line[i] == ')' ? i + 1 - at : 0;
}
}  // namespace

bool GluedRecords(std::string_view line, std::vector<size_t>* cuts) {
  cuts->clear();
  size_t prefixes = 0;
  for (size_t at = line.find("pid="); at != std::string_view::npos; at = line.find("pid=", at + 4)) {
    // The '(' that opens it: right before (`(pid=`), or before a name of a few words.
    size_t open = line.rfind('(', at);
    if (open == std::string_view::npos || at - open > 49) continue;
    if (ProcessPrefixLength(line, open) == 0) continue;
    ++prefixes;
    if (open > 0) cuts->push_back(open);
  }
  if (prefixes < 2) cuts->clear();
  return !cuts->empty();
}

long GutterNumber(std::string_view line, size_t* text_start) {
  size_t i = 0;
  while (i < line.size() && i < 8 && line[i] == ' ') ++i;
  size_t d = i;
  while (i < line.size() && IsDigit(line[i]) && i - d < 7) ++i;
  if (i == d || i - d > 6) return -1;
  long n = std::strtol(std::string(line.substr(d, i - d)).c_str(), nullptr, 10);
  if (i < line.size() && line[i] == '\t') {
    *text_start = i + 1;
    return n;
  }
  size_t j = i;
  while (j < line.size() && line[j] == ' ') ++j;
  if (j < line.size() && line[j] == '|') {
    ++j;
  } else if (line.substr(j, 3) == kBar) {
    j += 3;
  } else {
    return -1;
  }
  if (j < line.size() && line[j] == ' ') ++j;
  *text_start = j;
  return n;
}

bool IsDrawnTableRow(std::string_view line) {
  line = Trim(line);
  if (line.size() < 3) return false;
  const char a = line.front(), z = line.back();
  if ((a != '|' && a != '+') || (z != '|' && z != '+')) return false;
  // A border is dashes (and '+', '='); a row has a second bar inside.
  if (a == '+') return line.find_first_not_of("+-=") == std::string_view::npos;
  return line.find('|', 1) < line.size() - 1;
}

namespace {
// `Type: ` (or `Type:` at the end) at the start of `s`: a dotted Python type
// name whose last part ends in Error or Exception (tvm.error.InternalError,
// torch.OutOfMemoryError, RuntimeError). Its length to the colon, else 0.
size_t ExceptionTypeLength(std::string_view s) {
  size_t i = 0, part = 0;
  while (i < s.size() && (std::isalnum(static_cast<unsigned char>(s[i])) || s[i] == '_' || s[i] == '.')) {
    if (s[i] == '.') part = i + 1;
    ++i;
  }
  if (i == 0 || i >= s.size() || s[i] != ':' || (i + 1 < s.size() && s[i + 1] != ' ')) return 0;
  if (std::isdigit(static_cast<unsigned char>(s[0]))) return 0;
  std::string_view last = s.substr(part, i - part);
  auto ends = [&](std::string_view suffix) {
    return last.size() > suffix.size() && last.substr(last.size() - suffix.size()) == suffix;
  };
  return ends("Error") || ends("Exception") ? i : 0;
}
}  // namespace

bool UnwrapTableErrorCell(std::string* line) {
  std::string_view row = Trim(*line);
  if (row.size() < 5 || row.front() != '|' || row.back() != '|') return false;
  size_t at = 1;
  while (at < row.size()) {
    // The cell runs to the next bar that is not escaped (GitHub's tables: `\|`).
    size_t end = at;
    while (end < row.size() && !(row[end] == '|' && row[end - 1] != '\\')) ++end;
    if (end >= row.size()) break;
    std::string_view cell = Trim(row.substr(at, end - at));
    at = end + 1;
    if (ExceptionTypeLength(!cell.empty() && cell[0] == '`' ? cell.substr(1) : cell) == 0) continue;
    // The cell as written: a span and the author's words after it stay, so that
    // a quotation reads as one (rules/prose.cc: a message in a span closed on
    // its line is quoted, evidence only in a bug report).
    std::string out;
    out.reserve(cell.size());
    for (size_t k = 0; k < cell.size(); ++k) {
      if (cell[k] == '\\' && k + 1 < cell.size() && cell[k + 1] == '|') continue;
      out += cell[k];
    }
    *line = std::move(out);
    return true;
  }
  return false;
}

bool UnboxRichLine(std::string* line) {
  size_t top = line->find(kTopLeft), bot = line->find(kBotLeft), bar = line->find(kBar);
  size_t first = std::min({top, bot, bar});
  if (first == std::string::npos) return false;
  std::string prefix = line->substr(0, first);
  // The prefix before a box is a wrapper's (docker compose) or nothing.
  if (first == top) {
    if (line->find("Traceback", top) == std::string::npos) return false;
    *line = prefix + "Traceback (most recent call last):";
    return true;
  }
  if (first == bot) {
    *line = prefix;
    return true;
  }
  std::string_view rest = Trim(std::string_view(*line).substr(bar + 3));
  if (rest.size() < 3 || rest.substr(rest.size() - 3) != kBar) return false;  // not a box row
  std::string_view inner = Trim(rest.substr(0, rest.size() - 3));
  std::string out = prefix;
  if (StartsWith(inner, kArrow)) {
    // `❱ 312 │   │   raise RuntimeError(`: the raising line's code.
    std::string_view c = Trim(inner.substr(3));
    size_t d = 0;
    while (d < c.size() && IsDigit(c[d])) ++d;
    c = Trim(c.substr(d));
    while (StartsWith(c, kBar)) c = Trim(c.substr(3));
    out += "    " + std::string(c);
  } else if (!inner.empty() && !StartsWith(inner, kBar)) {
    // `/path/file.py:312 in init_memory_pool`
    bool frame = false;
    size_t in = IsDigit(inner[0]) ? std::string_view::npos : inner.rfind(" in ");
    size_t colon = in == std::string_view::npos ? in : inner.rfind(':', in);
    if (in != std::string_view::npos && colon != std::string_view::npos && colon > 0) {
      std::string_view num = inner.substr(colon + 1, in - colon - 1);
      bool digits = !num.empty() && std::all_of(num.begin(), num.end(), IsDigit);
      std::string_view fn = Trim(inner.substr(in + 4));
      if (digits && !fn.empty() && fn.find(' ') == std::string_view::npos) {
        out += "  File \"" + std::string(inner.substr(0, colon)) + "\", line " + std::string(num) + ", in " + std::string(fn);
        frame = true;
      }
    }
    // Any other row is a line a terminal UI drew a box around (k9s' or
    // lazydocker's log pane: `│ INFO 03-21 20:15:44 [worker.py:267] ... │`,
    // padded to the pane's width): its text, with its own leading spaces,
    // without the borders and the padding. Not rich's code rows (`309 │ ...`),
    // whose number and bar start them.
    size_t d = 0;
    while (d < inner.size() && IsDigit(inner[d])) ++d;
    const bool code_row = d > 0 && StartsWith(Trim(inner.substr(d)), kBar);
    if (!frame && !code_row) {
      std::string_view row = std::string_view(*line).substr(bar + 3);
      if (!row.empty() && row[0] == ' ') row.remove_prefix(1);
      row = row.substr(0, row.rfind(kBar));
      while (!row.empty() && row.back() == ' ') row.remove_suffix(1);
      out += std::string(row);
    }
  }
  *line = out;
  return true;
}

}  // namespace tpt
