// event_json.h: Event <-> JSON (the `tptriage events` JSON Lines record).
//
// Every Event field is written; unset optional ones (rank -1, no ts) are
// written as null so consumers see a fixed shape. Strings are valid UTF-8
// (the parser replaces invalid bytes).
//
//   std::puts(tpt::EventToJson(e).dump().c_str());
//   tpt::JsonOut out;  tpt::AppendEventJsonLine(e, &out);  // the same bytes and '\n'
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "parser/event.h"
#include "parser/json_text.h"

namespace tpt {

inline constexpr int kEventsSchemaVersion = 1;

nlohmann::json EventToJson(const Event& e);
// Appends the JSON Lines record of `e` and a '\n' to `out`: byte for byte
// EventToJson(e).dump(-1, ' ', false, error_handler_t::replace), without
// building an object and without decoding `e` (`tptriage events` writes
// millions): fields still to decode are written from their captures by the
// pattern's own decoder (json_text.h). Both walk one list of members.
void AppendEventJsonLine(const Event& e, JsonOut* out);
void AppendEventJsonLine(const Event& e, std::string* out);  // the same, through a JsonOut
Event EventFromJson(const nlohmann::json& j);

}  // namespace tpt
