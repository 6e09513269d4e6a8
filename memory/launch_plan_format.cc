// launch_plan_format.cc: the words and numbers every part of `plan` writes (launch_plan_internal.h):
// "0.78", "1,310", a remedy. A leaf: the plan core, the servers' plans, the remedies and the
// output call it, it calls none of them.
#include <cstdio>
#include <string>

#include "memory/launch_plan_internal.h"

namespace tpt::memory {

namespace internal {

std::string Fixed2(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.2f", v);
  return buf;
}

std::string WithCommas(int64_t v) {
  std::string digits = std::to_string(v < 0 ? -v : v);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out.push_back(',');
    out.push_back(digits[i]);
  }
  return (v < 0 ? "-" : "") + out;
}

Remedy MakeRemedy(std::string flag, std::string value, std::string direction, std::string why) {
  Remedy r;
  r.flag = std::move(flag);
  r.value = std::move(value);
  r.direction = std::move(direction);
  r.why = std::move(why);
  return r;
}

}  // namespace internal

}  // namespace tpt::memory
