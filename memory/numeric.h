// numeric.h (internal to memory/): how the servers round and print numbers.
//
// PyFloat(0.5) == "0.5" (Python str(float)), CeilHundredths(0.7691) == 0.77.
#pragma once

#include <charconv>
#include <cmath>
#include <string>

namespace tpt::memory::internal {

// Python's str(float): the shortest repr that round-trips, "0.5", "0.55", "1.0".
inline std::string PyFloat(double v) {
  char buf[32];
  auto res = std::to_chars(buf, buf + sizeof(buf), v);
  std::string s(buf, res.ptr);
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return s;
}

// Fractions rounded to 2 decimals; the tolerance keeps 0.77000000001 at 0.77.
inline double CeilHundredths(double x) { return std::ceil(x * 100.0 - 1e-9) / 100.0; }
inline double FloorHundredths(double x) { return std::floor(x * 100.0 + 1e-9) / 100.0; }

}  // namespace tpt::memory::internal
