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
  // "" or "fix": it changes what failed; "next_step": it gathers what would
  // settle the cause and changes nothing (a debug variable, dmesg, py-spy);
  // "action": an operator's action on the machine (drain, reset, reboot).
  std::string kind;
};

// What the reports call a remedy: "Fix", "Next step" or "Action" (one word
// for every format).
inline const char* RemedyLabel(const Remedy& r) {
  if (r.kind == "next_step") return "Next step";
  if (r.kind == "action") return "Action";
  return "Fix";
}

// A flag remedy as one setting: `--flag value` for a command line, `name=value` for a Python
// keyword (a plan of vLLM's LLM(...) class names EngineArgs' fields, no leading dash).
inline std::string RemedySetting(const Remedy& r) {
  if (r.value.empty()) return r.flag;
  const bool keyword = !r.flag.empty() && r.flag[0] != '-';
  return r.flag + (keyword ? "=" : " ") + r.value;
}

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Remedy, flag, value, direction, why, command, kind)

}  // namespace tpt
