// schemas.h: the JSON Schemas of every JSON output, compiled in from
// schemas/*.schema.json (`tptriage schema NAME`).
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace tpt::cli {

// (name, schema text): analyze, analyze-runs, diff, events, plan, repro.
const std::vector<std::pair<std::string, std::string>>& BuiltinSchemas();

}  // namespace tpt::cli
