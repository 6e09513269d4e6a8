// remedy.h: a change that fixes a diagnosed run: a server flag and the value
// to give it, or a command to run. The memory model's plans propose them
// (launch_plan.h) and rules/analysis.h's diagnoses carry them; the JSON keys are
// the field names.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace tpt {

struct Remedy {
  std::string flag;       // "--mem-fraction-static"
  std::string value;      // "0.78"
  std::string direction;  // "increase" | "decrease" | "set" | "unset"
  std::string why;
  std::string command;    // a line to copy when the remedy is not a flag: "dmesg -T | grep -i xid"
};

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Remedy, flag, value, direction, why, command)

}  // namespace tpt
