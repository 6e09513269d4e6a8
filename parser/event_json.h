// event_json.h: Event <-> JSON (the `tptriage events` JSON Lines record).
//
// Every Event field is written; unset optional ones (rank -1, no ts) are
// written as null so consumers see a fixed shape. Strings are valid UTF-8
// (the parser replaces invalid bytes).
//
//   std::puts(tpt::EventToJson(e).dump().c_str());
#pragma once

#include <nlohmann/json.hpp>

#include "parser/event.h"

namespace tpt {

inline constexpr int kEventsSchemaVersion = 1;

nlohmann::json EventToJson(const Event& e);
Event EventFromJson(const nlohmann::json& j);

}  // namespace tpt
