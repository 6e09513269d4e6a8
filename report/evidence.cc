// evidence.cc: how text, markdown and HTML show a diagnosis' evidence lines.
#include "report/evidence.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "report/common.h"

namespace tpt::report {

namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsKeyChar(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || IsDigit(c) || c == '_' || c == '.'; }
bool IsQuote(char c) { return c == '\'' || c == '"'; }

// A token of a line's leading prefix: a bracketed group ("[2025-11-20
// 09:14:14 TP0]"), a level word or code ("INFO", "E304"), a date or time.
bool PrefixToken(std::string_view t) {
  if (t.size() >= 2 && t.front() == '[' && t.back() == ']') return true;
  bool upper = !t.empty() && t.size() <= 8, stamp = !t.empty(), digit = false;
  for (char c : t) {
    upper &= (c >= 'A' && c <= 'Z') || IsDigit(c);
    stamp &= IsDigit(c) || c == '-' || c == ':' || c == '.' || c == '/' || c == 'T' || c == ',';
    digit |= IsDigit(c);
  }
  return upper || (stamp && digit);
}

// Walks `s` from `from` (at most up to `to`) outside quotes, calling
// at(i, c, depth) at each bracket and comma with the bracket depth before it;
// returns the first i where at() says stop, else min(to, size).
template <typename At>
size_t ScanStructure(std::string_view s, size_t from, size_t to, At at) {
  int depth = 0;
  char quote = 0;
  size_t end = std::min(to, s.size());
  for (size_t i = from; i < end; ++i) {
    char c = s[i];
    if (quote) {
      if (c == '\\') ++i;
      else if (c == quote) quote = 0;
    } else if (IsQuote(c)) {
      quote = c;
    } else if (c == '(' || c == '[' || c == '{' || c == ')' || c == ']' || c == '}' || c == ',') {
      if (at(i, c, depth)) return i;
      if (c == '(' || c == '[' || c == '{') ++depth;
      else if (c != ',') depth = std::max(0, depth - 1);
    }
  }
  return end;
}

// Where the value that starts at `v` ends: at a ',' or a closing bracket
// outside quotes and nested brackets, or the end.
size_t ValueEnd(std::string_view s, size_t v) {
  size_t i = ScanStructure(s, v, s.size(), [](size_t, char c, int depth) {
    return depth == 0 && (c == ',' || c == ')' || c == ']' || c == '}');
  });
  while (i > v && s[i - 1] == ' ') --i;
  return i;
}

// A `key=value`, `key: value`, `'key': value` of an argument list: the key
// comes after "(", "{", ", " (a quote allowed); returns [begin, end) of the
// pair, or nothing.
std::optional<std::pair<size_t, size_t>> PairAt(std::string_view s, size_t key, size_t key_len) {
  size_t b = key;
  char quote = 0;
  if (b > 0 && IsQuote(s[b - 1])) quote = s[--b];
  bool listed = b == 0 || s[b - 1] == '(' || s[b - 1] == '{' || (b >= 2 && s[b - 1] == ' ' && (s[b - 2] == ',' || s[b - 2] == '{' || s[b - 2] == '('));
  if (!listed) return std::nullopt;
  size_t i = key + key_len;
  if (i < s.size() && IsKeyChar(s[i])) return std::nullopt;
  if (quote) {
    if (i >= s.size() || s[i] != quote) return std::nullopt;
    ++i;
  }
  if (i >= s.size() || (s[i] != '=' && s[i] != ':')) return std::nullopt;
  if (s[i] == '=' && i + 1 < s.size() && s[i + 1] == '=') return std::nullopt;
  ++i;
  while (i < s.size() && s[i] == ' ') ++i;
  size_t end = ValueEnd(s, i);
  if (end <= i) return std::nullopt;
  return std::make_pair(b, end);
}

std::optional<std::pair<size_t, size_t>> FindPair(std::string_view s, std::string_view key) {
  for (size_t p = s.find(key); p != std::string_view::npos; p = s.find(key, p + 1)) {
    if (p > 0 && IsKeyChar(s[p - 1])) continue;
    if (auto pair = PairAt(s, p, key.size())) return pair;
  }
  return std::nullopt;
}

// How many pairs of an argument list the line holds (lower-case keys).
size_t CountPairs(std::string_view s) {
  size_t n = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (!(s[i] >= 'a' && s[i] <= 'z') && s[i] != '_') continue;
    if (i > 0 && (IsKeyChar(s[i - 1]))) continue;
    size_t j = i;
    while (j < s.size() && IsKeyChar(s[j])) ++j;
    if (PairAt(s, i, j - i)) ++n;
    i = j;
  }
  return n;
}

// The start of a dump: whole pairs up to about `want` bytes.
size_t HeadEnd(std::string_view s, size_t want) {
  size_t i = ScanStructure(s, 0, 3 * want, [&](size_t at, char c, int depth) {
    return c == ',' && depth <= 1 && at >= want;
  });
  if (i < std::min(3 * want, s.size())) return i;
  size_t cut = std::min(want, s.size());
  while (cut > 0 && cut < s.size() && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
  return cut;
}

}  // namespace

std::string SameLineKey(std::string_view text) {
  std::string key(text);
  size_t i = 0;
  while (i < key.size()) {
    while (i < key.size() && key[i] == ' ') ++i;
    if (i >= key.size()) break;
    size_t end = key[i] == '[' ? key.find(']', i) : key.find(' ', i);
    if (end == std::string::npos) break;  // the token runs to the end: it is the message
    if (key[i] == '[') ++end;
    if (end - i > 80 || !PrefixToken(std::string_view(key).substr(i, end - i))) break;
    for (size_t k = i; k < end; ++k) {
      if (IsDigit(key[k])) key[k] = '#';
    }
    i = end;
  }
  return key;
}

std::vector<EvidenceRow> EvidenceRows(const std::vector<Evidence>& evidence, size_t max_rows, size_t* left_out) {
  std::vector<std::string> keys;
  keys.reserve(evidence.size());
  for (const Evidence& e : evidence) keys.push_back(SameLineKey(e.text));
  std::vector<bool> taken(evidence.size(), false);
  std::vector<EvidenceRow> rows;
  size_t shown = 0;
  for (size_t i = 0; i < evidence.size() && rows.size() < max_rows; ++i) {
    if (taken[i]) continue;
    taken[i] = true;
    EvidenceRow row{&evidence[i], {}};
    if (evidence[i].rank >= 0) {
      std::set<int> ranks = {evidence[i].rank};
      for (size_t j = i + 1; j < evidence.size(); ++j) {
        const Evidence& o = evidence[j];
        if (taken[j] || o.rank < 0 || ranks.count(o.rank) || keys[j] != keys[i]) continue;
        taken[j] = true;
        ranks.insert(o.rank);
        row.same.push_back(&o);
      }
    }
    shown += 1 + row.same.size();
    rows.push_back(std::move(row));
  }
  if (left_out) *left_out = evidence.size() - shown;
  return rows;
}

std::string EvidenceHead(const Evidence& e) {
  return EvidenceLocation(e) + (e.rank >= 0 ? " rank " + std::to_string(e.rank) : "") + ": ";
}

std::string SameLineNote(const EvidenceRow& row) {
  if (row.same.empty()) return "";
  std::vector<const Evidence*> same = row.same;
  std::stable_sort(same.begin(), same.end(), [](const Evidence* x, const Evidence* y) { return x->rank < y->rank; });
  std::vector<int> ranks;
  bool one_file = true;
  for (const Evidence* e : same) {
    ranks.push_back(e->rank);
    one_file &= e->file == row.line->file;
  }
  std::string out = "(same line on rank" + std::string(ranks.size() > 1 ? "s " : " ") + RankRanges(ranks) + ": ";
  if (one_file) out += same.size() > 1 ? "lines " : "line ";
  for (size_t i = 0; i < same.size(); ++i) {
    if (i) out += ", ";
    out += one_file ? std::to_string(same[i]->line) : EvidenceLocation(*same[i]);
  }
  return out + ")";
}

ShownEvidence ShowEvidence(const Evidence& e) {
  std::string_view s = e.text;
  if (s.size() <= kDumpBytes || CountPairs(s) < 8) return {e.text, ""};
  std::vector<std::pair<size_t, size_t>> pairs;
  for (const std::string& k : e.read) {
    auto p = FindPair(s, k);
    if (!p) return {e.text, ""};  // a value read but not found as a pair: never hide it
    pairs.push_back(*p);
  }
  std::sort(pairs.begin(), pairs.end());
  pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
  size_t head = HeadEnd(s, 120);
  std::string out(s.substr(0, head));
  size_t last = head;
  for (const auto& [b, end] : pairs) {
    if (end <= last) continue;  // already in the head
    out += ", … ";
    out.append(s.substr(b, end - b));
    last = end;
  }
  // The list's closing bracket, when the line ends with it.
  size_t tail = s.find_last_not_of(' ');
  char close = tail != std::string_view::npos && (s[tail] == ')' || s[tail] == '}') ? s[tail] : 0;
  size_t rest = s.find_first_not_of(' ', last);
  bool more = close ? rest != tail : rest != std::string_view::npos;
  if (more) out += ", …";
  if (close) out += close == '}' && tail > 0 && s[tail - 1] == ' ' ? " }" : std::string(1, close);
  std::string note = "[shortened from " + std::to_string(s.size()) + " bytes" +
                     (e.read.empty() ? std::string() : " to the values the diagnosis read") + "; whole line: " +
                     (e.line > 0 ? "line " + std::to_string(e.line) + " of the file, or " : std::string()) +
                     "--format json]";
  return {out, note};
}

std::string ShownLine(const Evidence& e) {
  ShownEvidence s = ShowEvidence(e);
  return s.note.empty() ? s.text : s.text + " " + s.note;
}

}  // namespace tpt::report
