// units.cc: the size grammar of units.h.
#include "base/units.h"

#include <cmath>
#include <cstdlib>

#include "base/strings.h"

namespace tpt {
namespace {

constexpr double kKiB = 1024.0;

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

}  // namespace

std::optional<NumberAndUnit> SplitNumberUnit(std::string_view text) {
  text = Trim(text);
  size_t i = 0;
  bool digits = false, dot = false;
  for (; i < text.size(); ++i) {
    if (IsDigit(text[i])) {
      digits = true;
    } else if (text[i] == '.' && !dot) {
      dot = true;
    } else {
      break;
    }
  }
  if (!digits) return std::nullopt;
  NumberAndUnit out;
  out.number = std::strtod(std::string(text.substr(0, i)).c_str(), nullptr);  // no throw; huge -> inf
  if (!std::isfinite(out.number)) return std::nullopt;
  for (char c : text.substr(i)) {
    if (!IsAsciiSpace(c)) out.unit.push_back(c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c);
  }
  return out;
}

std::optional<double> SizeUnitScale(std::string_view unit) {
  static constexpr struct {
    std::string_view unit;
    double scale;
  } kUnits[] = {
      {"", 1},
      {"b", 1},
      {"k", kKiB},
      {"kb", kKiB},
      {"kib", kKiB},
      {"m", kKiB * kKiB},
      {"mb", kKiB * kKiB},
      {"mib", kKiB * kKiB},
      {"g", kKiB * kKiB * kKiB},
      {"gb", kKiB * kKiB * kKiB},
      {"gib", kKiB * kKiB * kKiB},
      {"t", kKiB * kKiB * kKiB * kKiB},
      {"tb", kKiB * kKiB * kKiB * kKiB},
      {"tib", kKiB * kKiB * kKiB * kKiB},
  };
  const std::string u = Lower(Trim(unit));
  for (const auto& k : kUnits) {
    if (u == k.unit) return k.scale;
  }
  return std::nullopt;
}

StatusOr<double> ParseSize(std::string_view text, BareNumber bare) {
  const std::string quoted = "'" + std::string(text) + "'";
  auto nu = SplitNumberUnit(text);
  if (!nu) {
    return InvalidArgumentError(quoted + " is not a size; write a number and a unit, e.g. 96GiB, 9.3G, 512MiB or 4096");
  }
  if (nu->unit.empty() && bare == BareNumber::kNeedsUnit) {
    const std::string n(Trim(text));
    return InvalidArgumentError("a size needs a unit, e.g. " + n + "GiB (the servers' \"GB\" is GiB) or " + n + "MiB");
  }
  auto scale = SizeUnitScale(nu->unit);
  if (!scale) {
    return InvalidArgumentError(quoted + " has an unknown size unit '" + nu->unit +
                                "'; use B, K/KiB, M/MiB, G/GiB or T/TiB (all 1024-based, like the servers' \"GB\")");
  }
  const double bytes = nu->number * *scale;
  if (!std::isfinite(bytes)) return InvalidArgumentError(quoted + " is too large a size");
  return bytes;
}

StatusOr<uint64_t> ParseWholeBytes(std::string_view text, BareNumber bare) {
  auto b = ParseSize(text, bare);
  if (!b.ok()) return b.status();
  const std::string quoted = "'" + std::string(text) + "'";
  const double rounded = std::round(*b);  // "72.3GiB" is a size to the byte
  if (rounded >= 18446744073709551616.0) return InvalidArgumentError(quoted + " is too large a size");
  if (rounded != *b && SplitNumberUnit(text)->unit.empty()) {
    return InvalidArgumentError(quoted + " is not a whole number of bytes; write e.g. 1536 or 1.5K");
  }
  return static_cast<uint64_t>(rounded);
}

std::optional<double> FormatUnitScale(std::string_view unit) {
  if (unit == "GB_as_GiB") return kKiB * kKiB * kKiB;
  const std::string u = Lower(Trim(unit));
  if (u == "b" || u == "bytes" || u == "byte" || u.empty()) return 1.0;
  if (u == "kib" || u == "k" || u == "kb_as_kib") return kKiB;
  if (u == "mib" || u == "m") return kKiB * kKiB;
  if (u == "gib" || u == "g") return kKiB * kKiB * kKiB;
  if (u == "tib" || u == "t") return kKiB * kKiB * kKiB * kKiB;
  if (u == "kb") return 1e3;
  if (u == "mb") return 1e6;
  if (u == "gb") return 1e9;
  if (u == "tb") return 1e12;
  return std::nullopt;
}

}  // namespace tpt
