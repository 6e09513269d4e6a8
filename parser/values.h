// values.h: turning captured text into typed values (the format files' field
// types and units). Timestamps, Python `key=value` reprs and text hygiene
// (ANSI codes, invalid UTF-8) have their own headers, included here for the
// callers that read all four:
//
//   auto bytes = tpt::ConvertField("21.70", "bytes", "GB_as_GiB", false);  // 23300197580.8
//   auto ts = tpt::ParseTimestamp("2025-10-14T10:00:01.5Z");  // timestamps.h: {1760436001.5, false}
//   nlohmann::json args = tpt::ParsePythonKv("tp_size=2, model_path='x'");  // python_repr.h
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "parser/python_repr.h"
#include "parser/text_clean.h"
#include "parser/timestamps.h"

namespace tpt {

// True when `unit` is a unit name the format schema accepts in `unit`.
bool IsSchemaUnit(std::string_view unit);

// True when `type` is a field type the schema accepts.
bool IsSchemaType(std::string_view type);

// Converts captured text to the schema type. `unit` applies to bytes (and
// seconds: "ms", "us", "s", "min"); `percent` divides fractions by 100.
// Returns an InvalidArgument error when the text is not a value of that type.
StatusOr<nlohmann::json> ConvertField(std::string_view text, std::string_view type,
                                      std::string_view unit, bool percent);

// The common shapes of captured numbers, read without std::from_chars'
// generality but to the very same value; false (nothing written) for any
// other text, which from_chars or ConvertField must then judge.
//   ParsePlainInt: 1 to 18 ASCII digits, no sign.
//   ParsePlainDecimal: digits with at most one '.' between digits, at most 15
//   digits in all (exact in a double: one correctly rounded division).
bool ParsePlainInt(std::string_view text, int64_t* out);
bool ParsePlainDecimal(std::string_view text, double* out);

}  // namespace tpt
