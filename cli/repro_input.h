// repro_input.h: what `tptriage repro` was given, read once: analyze's JSON
// or a plan file, or LOG files run through the analyzer (with the events a
// box check reads its figures from, repro/box_plan.h). A file that begins as
// JSON but does not parse is read as a log (JSON Lines, a container's
// json-file log) and named "not valid JSON" only when nothing in it is
// understood.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"

namespace tpt::cli {

struct ReproInput {
  nlohmann::json doc;                              // the analysis or the plan
  nlohmann::json events = nlohmann::json::array();  // the logs' box-check events
  std::string name;                                // how the input is named in messages
  bool flags_only = false;                         // no input: the plan comes from flags
};

StatusOr<ReproInput> LoadReproInput(const std::vector<std::string>& inputs);

}  // namespace tpt::cli
