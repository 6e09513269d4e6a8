// timestamps.cc: ParseTimestamp and ParseDate (timestamps.h).
#include "parser/timestamps.h"

#include <cstring>
#include <ctime>
#include <string>

#include "base/strings.h"
#include "parser/json_reuse.h"

namespace tpt {
namespace {

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

}  // namespace tpt
