// values.cc: captured text into the format schema's typed values (values.h).
#include "parser/values.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstring>
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

}  // namespace tpt
