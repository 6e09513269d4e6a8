// values.cc: see values.h.
#include "parser/values.h"

#include "parser/json_reuse.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstring>
#include <ctime>
#include <string>

#include "base/strings.h"
#include "base/units.h"

namespace tpt {
namespace {

std::optional<double> ToDouble(std::string_view s) {
  s = Trim(s);
  std::string buf;
  buf.reserve(s.size());
  for (char c : s) {
    if (c != '_' && c != ',') buf.push_back(c);  // "1,234" and "1_000"
  }
  if (buf.empty()) return std::nullopt;
  double v = 0;
  auto [p, ec] = std::from_chars(buf.data(), buf.data() + buf.size(), v);
  if (ec != std::errc() || p != buf.data() + buf.size()) return std::nullopt;
  return v;
}

std::optional<int64_t> ToInt(std::string_view s) {
  s = Trim(s);
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  int64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec == std::errc() && p == s.data() + s.size()) return v;
  // "1,024" or "2.0" written where an int is expected.
  auto d = ToDouble(s);
  if (d && std::floor(*d) == *d && std::fabs(*d) < 9e18) return static_cast<int64_t>(*d);
  return std::nullopt;
}

bool DaysFromCivil(int y, unsigned m, unsigned d, int64_t* days) {
  if (m < 1 || m > 12 || d < 1 || d > 31) return false;
  // Howard Hinnant's days_from_civil.
  y -= m <= 2;
  const int era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  *days = static_cast<int64_t>(era) * 146097 + static_cast<int64_t>(doe) - 719468;
  return true;
}

// Reads exactly n digits at s[*i].
bool Digits(std::string_view s, size_t* i, int n, int* out) {
  if (*i + n > s.size()) return false;
  int v = 0;
  for (int k = 0; k < n; ++k) {
    char c = s[*i + k];
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  *i += n;
  *out = v;
  return true;
}

// HH:MM:SS[.,fraction] at s[*i]; returns seconds since midnight.
bool TimeOfDay(std::string_view s, size_t* i, double* out) {
  int h, m, sec;
  if (!Digits(s, i, 2, &h) || *i >= s.size() || s[*i] != ':') return false;
  ++*i;
  if (!Digits(s, i, 2, &m) || *i >= s.size() || s[*i] != ':') return false;
  ++*i;
  if (!Digits(s, i, 2, &sec)) return false;
  if (h > 24 || m > 59 || sec > 60) return false;
  double frac = 0;
  if (*i < s.size() && (s[*i] == '.' || s[*i] == ',')) {
    size_t j = *i + 1;
    double scale = 0.1;
    while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]))) {
      frac += (s[j] - '0') * scale;
      scale /= 10;
      ++j;
    }
    if (j == *i + 1) return false;
    *i = j;
  }
  *out = h * 3600.0 + m * 60.0 + sec + frac;
  return true;
}

constexpr const char* kMonths[] = {"jan", "feb", "mar", "apr", "may", "jun",
                                   "jul", "aug", "sep", "oct", "nov", "dec"};

}  // namespace

bool ParsePlainInt(std::string_view s, int64_t* out) {
  if (s.empty() || s.size() > 18) return false;
  int64_t v = 0;
  for (char c : s) {
    unsigned d = static_cast<unsigned char>(c) - unsigned{'0'};
    if (d > 9) return false;
    v = v * 10 + d;
  }
  *out = v;
  return true;
}

bool ParsePlainDecimal(std::string_view s, double* out) {
  // Digits below 2^53 and an exact power of ten: the division is correctly
  // rounded, the double from_chars gives (Clinger's fast path).
  static constexpr double kPow10[] = {1e0, 1e1, 1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                      1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};
  const size_t n = s.size();
  if (n == 0 || n > 16) return false;
  uint64_t m = 0;
  size_t i = 0;
  for (; i < n; ++i) {
    unsigned d = static_cast<unsigned char>(s[i]) - unsigned{'0'};
    if (d > 9) break;
    m = m * 10 + d;
  }
  size_t frac = 0;
  if (i < n) {
    // ".5", "1.": from_chars' to judge; so is anything but one '.' between digits.
    if (s[i] != '.' || i == 0 || i + 1 == n) return false;
    frac = n - i - 1;
    for (++i; i < n; ++i) {
      unsigned d = static_cast<unsigned char>(s[i]) - unsigned{'0'};
      if (d > 9) return false;
      m = m * 10 + d;
    }
  }
  if (n - (frac > 0) > 15) return false;  // digits in all
  *out = frac > 0 ? static_cast<double>(m) / kPow10[frac] : static_cast<double>(m);
  return true;
}

bool IsSchemaUnit(std::string_view unit) {
  static constexpr std::string_view kUnits[] = {"B",  "KiB", "MiB", "GiB", "TiB",      "KB",
                                                "MB", "GB",  "TB",  "GB_as_GiB", "s", "ms", "us", "min"};
  for (auto u : kUnits) {
    if (u == unit) return true;
  }
  return false;
}

bool IsSchemaType(std::string_view type) {
  static constexpr std::string_view kTypes[] = {"int",      "float",    "string", "bool",
                                                "bytes",    "seconds",  "fraction", "list"};
  for (auto t : kTypes) {
    if (t == type) return true;
  }
  return false;
}

StatusOr<nlohmann::json> ConvertField(std::string_view text, std::string_view type,
                                      std::string_view unit, bool percent) {
  auto bad = [&](const char* what) {
    return InvalidArgumentError("'" + std::string(text.substr(0, 64)) + "' is not " + what);
  };
  if (type == "string") return nlohmann::json(SanitizeUtf8(text));
  if (type == "int") {
    auto v = ToInt(text);
    if (!v) return bad("an int");
    return nlohmann::json(*v);
  }
  if (type == "float" || type == "fraction") {
    auto t = Trim(text);
    bool pct = percent;
    if (!t.empty() && t.back() == '%') {
      t.remove_suffix(1);
      pct = true;
    }
    auto v = ToDouble(t);
    if (!v) return bad("a number");
    return nlohmann::json(type == "fraction" && pct ? *v / 100.0 : *v);
  }
  if (type == "bool") {
    std::string l = Lower(Trim(text));
    if (l == "true" || l == "1" || l == "yes" || l == "on" || l == "enabled") return nlohmann::json(true);
    if (l == "false" || l == "0" || l == "no" || l == "off" || l == "disabled" || l == "none") {
      return nlohmann::json(false);
    }
    return bad("a bool");
  }
  if (type == "bytes") {
    auto v = ToDouble(text);
    if (!v) return bad("a number");
    auto mult = FormatUnitScale(unit);  // base/units.h: the unit the format declares
    if (!mult) return bad("in a known memory unit");
    return nlohmann::json(*v * *mult);
  }
  if (type == "seconds") {
    auto v = ToDouble(text);
    if (!v) return bad("a number");
    std::string u = Lower(Trim(unit));
    double m = 1;
    if (u == "ms") m = 1e-3;
    else if (u == "us" || u == "µs") m = 1e-6;
    else if (u == "min" || u == "m") m = 60;
    else if (u == "h") m = 3600;
    return nlohmann::json(*v * m);
  }
  if (type == "list") {
    nlohmann::json arr = nlohmann::json::array();
    std::string cur;
    auto flush = [&]() -> bool {
      if (cur.empty()) return true;
      auto d = ToDouble(cur);
      if (!d) return false;
      if (std::floor(*d) == *d && std::fabs(*d) < 9e15) arr.push_back(static_cast<int64_t>(*d));
      else arr.push_back(*d);
      cur.clear();
      return true;
    };
    for (char c : text) {
      if (c == '[' || c == ']' || c == '(' || c == ')' || c == ',' || std::isspace(static_cast<unsigned char>(c))) {
        if (!flush()) return bad("a list of numbers");
      } else {
        cur.push_back(c);
      }
    }
    if (!flush()) return bad("a list of numbers");
    return arr;
  }
  return InvalidArgumentError("unknown field type '" + std::string(type) + "'");
}

namespace {
std::optional<double> ParseDateUncached(std::string_view s) {
  size_t i = 0;
  int y, mo, d;
  if (!Digits(s, &i, 4, &y) || i >= s.size() || (s[i] != '-' && s[i] != '/')) return std::nullopt;
  ++i;
  if (!Digits(s, &i, 2, &mo) || i >= s.size() || (s[i] != '-' && s[i] != '/')) return std::nullopt;
  ++i;
  if (!Digits(s, &i, 2, &d)) return std::nullopt;
  int64_t days;
  if (!DaysFromCivil(y, mo, d, &days)) return std::nullopt;
  return static_cast<double>(days) * 86400.0;
}
}  // namespace

std::optional<double> ParseDate(std::string_view s) {
  // The date is read from its first 10 bytes: lines of one day share them.
  if (s.size() < 10) return ParseDateUncached(s);
  struct Last {
    char text[10];
    bool valid = false;
    std::optional<double> result;
  };
  thread_local Last last;
  if (last.valid && std::memcmp(s.data(), last.text, 10) == 0) return last.result;
  std::optional<double> result = ParseDateUncached(s.substr(0, 10));
  std::memcpy(last.text, s.data(), 10);
  last.valid = true;
  last.result = result;
  return result;
}

namespace {

std::optional<Timestamp> ParseTimestampUncached(std::string_view s) {
  s = Trim(s);
  if (s.size() >= 8 && std::isdigit(static_cast<unsigned char>(s[0])) && s[2] == ':') {
    size_t i = 0;
    double tod;
    if (TimeOfDay(s, &i, &tod)) return Timestamp{tod, true};
    return std::nullopt;
  }
  if (s.size() >= 15 && std::isalpha(static_cast<unsigned char>(s[0]))) {  // "Nov 29 08:31:24"
    std::string mon = Lower(s.substr(0, 3));
    bool known = false;
    for (auto m : kMonths) known |= mon == m;
    if (!known) return std::nullopt;
    size_t i = 3;
    while (i < s.size() && s[i] == ' ') ++i;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
    while (i < s.size() && s[i] == ' ') ++i;
    double tod;
    if (TimeOfDay(s, &i, &tod)) return Timestamp{tod, true};
    return std::nullopt;
  }
  auto date = ParseDate(s);
  if (!date) return std::nullopt;
  size_t i = 10;
  if (i >= s.size()) return Timestamp{*date, false};
  if (s[i] != 'T' && s[i] != ' ' && s[i] != '_') return std::nullopt;
  ++i;
  double tod;
  if (!TimeOfDay(s, &i, &tod)) return std::nullopt;
  double value = *date + tod;
  // Zone: Z, +hh:mm, +hhmm, " UTC".
  while (i < s.size() && s[i] == ' ') ++i;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) {
    int sign = s[i] == '+' ? 1 : -1;
    ++i;
    int hh = 0, mm = 0;
    if (Digits(s, &i, 2, &hh)) {
      if (i < s.size() && s[i] == ':') ++i;
      Digits(s, &i, 2, &mm);
      value -= sign * (hh * 3600.0 + mm * 60.0);
    }
  }
  return Timestamp{value, false};
}

}  // namespace

namespace {

// Consecutive log lines mostly print the same second: the last texts parsed
// and their results are kept (per thread; two, as two producers' lines may
// alternate), and an equal text costs a compare.
struct LastTimestamp {
  char text[48];
  size_t size = sizeof text + 1;  // nothing kept yet
  std::optional<Timestamp> result;
};
thread_local LastTimestamp last_timestamps[2];
thread_local unsigned next_timestamp = 0;

}  // namespace

std::optional<Timestamp> ParseTimestamp(std::string_view s) {
  for (const LastTimestamp& l : last_timestamps) {
    if (s.size() == l.size && SameBytes(s.data(), l.text, s.size())) return l.result;
  }
  std::optional<Timestamp> result = ParseTimestampUncached(s);
  if (s.size() <= sizeof last_timestamps[0].text) {
    LastTimestamp& l = last_timestamps[next_timestamp];
    next_timestamp ^= 1;
    std::memcpy(l.text, s.data(), s.size());
    l.size = s.size();
    l.result = result;
  }
  return result;
}

std::optional<Timestamp> ParseTimestamp(std::string_view date, std::string_view time) {
  const size_t n = date.size() + 1 + time.size();
  for (const LastTimestamp& l : last_timestamps) {
    if (n == l.size && l.text[date.size()] == ' ' && SameBytes(date.data(), l.text, date.size()) &&
        SameBytes(time.data(), l.text + date.size() + 1, time.size())) {
      return l.result;
    }
  }
  char buf[64];
  if (n > sizeof buf) {
    std::string joined;
    joined.reserve(n);
    joined.append(date).append(1, ' ').append(time);
    return ParseTimestamp(joined);
  }
  std::memcpy(buf, date.data(), date.size());
  buf[date.size()] = ' ';
  std::memcpy(buf + date.size() + 1, time.data(), time.size());
  return ParseTimestamp(std::string_view(buf, n));
}

// ---- Python repr -----------------------------------------------------------

namespace {

class PyReprParser {
 public:
  explicit PyReprParser(std::string_view s) : s_(s) {}

  nlohmann::json ParseTop() {
    SkipSpace();
    if (Peek() == '{') {
      ++i_;
      return ParseDictBody('}');
    }
    // A dict body whose opening brace the pattern left out ("'model': 'm', ...}"):
    // a quoted key followed by a colon.
    if (Peek() == '\'' || Peek() == '"') {
      size_t save = i_;
      nlohmann::json key;
      bool dict = ParseValue(&key, ":") && (SkipSpace(), Peek() == ':');
      i_ = save;
      if (dict) return ParseDictBody('}');
    }
    // Name(...) around kwargs: "ServerArgs(a=1, ...)" or "Namespace(a=1)".
    size_t save = i_;
    while (i_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[i_])) || s_[i_] == '_')) ++i_;
    if (i_ < s_.size() && s_[i_] == '(' && i_ > save) {
      ++i_;
    } else {
      i_ = save;
    }
    return ParseKwargs();
  }

 private:
  char Peek() const { return i_ < s_.size() ? s_[i_] : '\0'; }
  void SkipSpace() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  bool Done() const { return i_ >= s_.size() || depth_ > 64; }

  nlohmann::json ParseKwargs() {
    nlohmann::json out = nlohmann::json::object();
    while (!Done()) {
      SkipSpace();
      size_t k0 = i_;
      while (i_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[i_])) || s_[i_] == '_' || s_[i_] == '.' ||
                                s_[i_] == '-')) {
        ++i_;
      }
      std::string key(s_.substr(k0, i_ - k0));
      SkipSpace();
      if (key.empty() || Peek() != '=') {
        // Not a pair (e.g. "..." abbreviation): skip to the next top-level comma.
        if (!SkipToComma()) break;
        continue;
      }
      ++i_;
      nlohmann::json value;
      if (!ParseValue(&value, ",)")) break;
      out[key] = std::move(value);
      SkipSpace();
      if (Peek() == ',') {
        ++i_;
      } else {
        break;
      }
    }
    return out;
  }

  nlohmann::json ParseDictBody(char close) {
    nlohmann::json out = nlohmann::json::object();
    ++depth_;
    while (!Done()) {
      SkipSpace();
      if (Peek() == close) {
        ++i_;
        break;
      }
      size_t before = i_;
      nlohmann::json key;
      if (!ParseValue(&key, ":")) break;
      SkipSpace();
      if (Peek() != ':') {
        if (!SkipToComma()) break;
        continue;
      }
      ++i_;
      nlohmann::json value;
      if (!ParseValue(&value, std::string(",") + close)) break;
      out[key.is_string() ? key.get<std::string>() : key.dump()] = std::move(value);
      SkipSpace();
      if (Peek() == ',') ++i_;
      if (i_ == before) break;
    }
    --depth_;
    return out;
  }

  bool SkipToComma() {
    int nest = 0;
    while (i_ < s_.size()) {
      char c = s_[i_++];
      if (c == '(' || c == '[' || c == '{') ++nest;
      if (c == ')' || c == ']' || c == '}') {
        if (nest == 0) return false;
        --nest;
      }
      if (c == ',' && nest == 0) return true;
    }
    return false;
  }

  bool ParseValue(nlohmann::json* out, std::string_view stops) {
    SkipSpace();
    if (Done()) return false;
    char c = Peek();
    if (c == '\'' || c == '"') {
      ++i_;
      std::string v;
      while (i_ < s_.size() && s_[i_] != c) {
        if (s_[i_] == '\\' && i_ + 1 < s_.size()) ++i_;
        v.push_back(s_[i_++]);
      }
      if (i_ >= s_.size()) return false;  // cut string
      ++i_;
      *out = SanitizeUtf8(v);
      return true;
    }
    if (c == '[' || c == '(') {
      char close = c == '[' ? ']' : ')';
      ++i_;
      ++depth_;
      nlohmann::json arr = nlohmann::json::array();
      while (!Done()) {
        SkipSpace();
        if (Peek() == close) {
          ++i_;
          --depth_;
          *out = std::move(arr);
          return true;
        }
        size_t before = i_;
        nlohmann::json v;
        if (!ParseValue(&v, std::string(",") + close)) return false;
        arr.push_back(std::move(v));
        SkipSpace();
        if (Peek() == ',') {
          ++i_;
        } else if (i_ == before || Peek() != close) {
          return false;  // "[1 2]", "[)": not a list we can read (fuzzer: no progress looped forever)
        }
      }
      return false;
    }
    if (c == '{') {
      ++i_;
      *out = ParseDictBody('}');
      return true;
    }
    // Bare token up to a stop char at nesting 0 (handles "Foo(a=1)" and enum reprs).
    size_t v0 = i_;
    int nest = 0;
    while (i_ < s_.size()) {
      char d = s_[i_];
      if (nest == 0 && stops.find(d) != std::string_view::npos) break;
      if (d == '(' || d == '[' || d == '{' || d == '<') ++nest;
      if (d == ')' || d == ']' || d == '}' || d == '>') {
        if (nest == 0) break;
        --nest;
      }
      ++i_;
    }
    std::string_view tok = Trim(s_.substr(v0, i_ - v0));
    if (tok == "None") *out = nullptr;
    else if (tok == "True") *out = true;
    else if (tok == "False") *out = false;
    else if (auto iv = ToIntStrict(tok)) *out = *iv;
    else if (auto dv = ToDoubleStrict(tok)) *out = *dv;
    else *out = SanitizeUtf8(tok);
    return true;
  }

  static std::optional<int64_t> ToIntStrict(std::string_view s) {
    int64_t v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec == std::errc() && p == s.data() + s.size() && !s.empty()) return v;
    return std::nullopt;
  }
  static std::optional<double> ToDoubleStrict(std::string_view s) {
    double v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec == std::errc() && p == s.data() + s.size() && !s.empty()) return v;
    return std::nullopt;
  }

  std::string_view s_;
  size_t i_ = 0;
  int depth_ = 0;
};

}  // namespace

nlohmann::json ParsePythonKv(std::string_view text) { return PyReprParser(text).ParseTop(); }

void CopyKnownServerArgs(const nlohmann::json& args, nlohmann::json* fields) {
  // key in the repr -> canonical field name (parser/EVENTS.md server_args).
  static const std::pair<const char*, const char*> kKeys[] = {
      {"model", "model"},
      {"model_path", "model"},
      {"tp_size", "tp_size"},
      {"tensor_parallel_size", "tp_size"},
      {"pp_size", "pp_size"},
      {"pipeline_parallel_size", "pp_size"},
      {"dp_size", "dp_size"},
      {"data_parallel_size", "dp_size"},
      {"ep_size", "ep_size"},
      {"expert_parallel_size", "ep_size"},
      {"mem_fraction_static", "mem_fraction_static"},
      {"gpu_memory_utilization", "gpu_memory_utilization"},
      {"cuda_graph_max_bs", "cuda_graph_max_bs"},
      {"cuda_graph_bs", "cuda_graph_bs"},
      {"disable_cuda_graph", "disable_cuda_graph"},
      {"disable_custom_all_reduce", "disable_custom_all_reduce"},
      {"enable_custom_all_reduce", "enable_custom_all_reduce"},
      {"kv_cache_dtype", "kv_cache_dtype"},
      {"context_length", "context_length"},
      {"max_model_len", "max_model_len"},
      {"max_num_seqs", "max_num_seqs"},
      {"max_num_batched_tokens", "max_num_batched_tokens"},
      {"speculative_algorithm", "speculative_algorithm"},
      {"quantization", "quantization"},
      {"dtype", "dtype"},
      {"enforce_eager", "enforce_eager"},
      {"chunked_prefill_size", "chunked_prefill_size"},
      {"max_running_requests", "max_running_requests"},
      {"attention_backend", "attention_backend"},
      {"max_total_tokens", "max_total_tokens"},
      {"enable_dp_attention", "enable_dp_attention"},
  };
  if (!args.is_object()) return;
  for (const auto& [from, to] : kKeys) {
    auto it = args.find(from);
    if (it == args.end() || it->is_null()) continue;
    if (!fields->contains(to)) (*fields)[to] = *it;
  }
}

bool StripAnsi(std::string* text) {
  if (text->find('\x1b') == std::string::npos) return false;
  std::string out;
  out.reserve(text->size());
  const std::string& s = *text;
  for (size_t i = 0; i < s.size();) {
    if (s[i] != '\x1b') {
      out.push_back(s[i++]);
      continue;
    }
    ++i;
    if (i < s.size() && s[i] == '[') {  // CSI: parameters, then a final byte 0x40..0x7e
      ++i;
      while (i < s.size() && !(s[i] >= 0x40 && s[i] <= 0x7e)) ++i;
      if (i < s.size()) ++i;
    } else if (i < s.size() && s[i] == ']') {  // OSC: up to BEL or ESC '\'
      ++i;
      while (i < s.size() && s[i] != '\x07' && !(s[i] == '\x1b' && i + 1 < s.size() && s[i + 1] == '\\')) ++i;
      if (i < s.size()) i += s[i] == '\x07' ? 1 : 2;
    } else if (i < s.size()) {
      ++i;  // two-byte escape
    }
  }
  *text = std::move(out);
  return true;
}

namespace {
// Length of the valid UTF-8 sequence at s[i], or 0.
size_t Utf8SeqLen(std::string_view s, size_t i) {
  unsigned char c = static_cast<unsigned char>(s[i]);
  if (c < 0x80) return 1;
  size_t n;
  unsigned cp;
  if ((c & 0xe0) == 0xc0) {
    n = 2;
    cp = c & 0x1f;
  } else if ((c & 0xf0) == 0xe0) {
    n = 3;
    cp = c & 0x0f;
  } else if ((c & 0xf8) == 0xf0) {
    n = 4;
    cp = c & 0x07;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    unsigned char d = static_cast<unsigned char>(s[i + k]);
    if ((d & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (d & 0x3f);
  }
  if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
      (cp >= 0xd800 && cp <= 0xdfff)) {
    return 0;
  }
  return n;
}
}  // namespace

bool IsValidUtf8Slow(std::string_view s) {
  size_t i = 0;
  // Log lines are mostly ASCII: 32, then 8 bytes at a time while no high bit is set.
  for (uint64_t w[4]; i + 32 <= s.size(); i += 32) {
    std::memcpy(w, s.data() + i, 32);
    if ((w[0] | w[1] | w[2] | w[3]) & 0x8080808080808080ULL) break;
  }
  for (uint64_t w; i + 8 <= s.size(); i += 8) {
    std::memcpy(&w, s.data() + i, 8);
    if (w & 0x8080808080808080ULL) break;
  }
  while (i < s.size()) {
    if (static_cast<unsigned char>(s[i]) < 0x80) {
      ++i;
      continue;
    }
    size_t n = Utf8SeqLen(s, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

bool IsPlainLine(std::string_view s) {
  auto plain_byte = [](unsigned char c) { return c != '\r' && c != 0x1b && c < 0x80; };
#if defined(__SSE2__)
  if (s.size() >= 16) {
    const __m128i cr = _mm_set1_epi8('\r'), esc = _mm_set1_epi8(0x1b);
    // A byte is flagged when it is '\r' or ESC (all ones) or >= 0x80 (its own high bit).
    auto flagged = [&](size_t at) {
      __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s.data() + at));
      return _mm_movemask_epi8(_mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, cr), _mm_cmpeq_epi8(v, esc)), v)) != 0;
    };
    size_t i = 0;
    for (; i + 16 <= s.size(); i += 16) {
      if (flagged(i)) return false;
    }
    return i == s.size() || !flagged(s.size() - 16);  // the last bytes, overlapping
  }
#endif
  for (char c : s) {
    if (!plain_byte(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

std::string SanitizeUtf8(std::string_view s) {
  if (IsValidUtf8(s)) return std::string(s);
  std::string out;
  out.reserve(s.size() + 8);
  for (size_t i = 0; i < s.size();) {
    size_t n = Utf8SeqLen(s, i);
    if (n == 0) {
      out += "\xef\xbf\xbd";
      ++i;
    } else {
      out.append(s.substr(i, n));
      i += n;
    }
  }
  return out;
}

}  // namespace tpt
