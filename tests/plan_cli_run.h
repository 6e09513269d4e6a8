// plan_cli_run.h: the built tptriage's `plan ARGS --format json`, parsed (a discarded value
// when the output is not JSON), for the plan CLI tests registered with tpt_cli_test.
//
//   nlohmann::json j = tpt::test::PlanJson("--model " + SampleModel("qwen3-8b") + " --gpu L4");
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "tests/cli_run.h"

namespace tpt::test {

#ifdef TPTRIAGE_BIN
inline nlohmann::json PlanJson(const std::string& args) {
  CmdResult r = Tptriage("plan " + args + " --format json", false);
  return nlohmann::json::parse(r.out, nullptr, false);
}
#endif

}  // namespace tpt::test
