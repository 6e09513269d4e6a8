// values.h: turning captured text into typed values (the format files' field
// types), timestamps, Python `key=value` reprs, and text hygiene (ANSI codes,
// invalid UTF-8).
//
//   auto bytes = tpt::ConvertBytes("21.70", "GB_as_GiB");   // 23300197580.8
//   auto ts = tpt::ParseTimestamp("2025-10-14T10:00:01.5Z"); // {1760436001.5, false}
//   nlohmann::json args = tpt::ParsePythonKv("tp_size=2, model_path='x'");
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "base/status.h"

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

struct Timestamp {
  double value = 0;          // seconds since the epoch (UTC), or since midnight
  bool time_of_day = false;  // only a time of day was printed
};

// ISO 8601 ("2025-10-14T10:00:01.123Z", "+02:00" offsets), "2025-10-14 10:00:01[,.]fff",
// "2025/10/14 10:00:01", "10:00:01[.fff]" (time of day), "Nov 29 08:31:24" (time of day).
std::optional<Timestamp> ParseTimestamp(std::string_view text);
// ParseTimestamp(date + " " + time), without joining them when the last
// stamps parsed on this thread already hold the answer.
std::optional<Timestamp> ParseTimestamp(std::string_view date, std::string_view time);

// Seconds since the epoch of a YYYY-MM-DD date at midnight UTC.
std::optional<double> ParseDate(std::string_view date);

// Parses a Python repr of keyword arguments or a dict into a JSON object:
//   "tp_size=2, model_path='m', cuda_graph_bs=[1, 2], x=None"      (ServerArgs / Namespace)
//   "{'model': 'm', 'tensor_parallel_size': 2}"                      (vLLM non-default args)
//   "'model': 'm', 'tensor_parallel_size': 2}"                       (the same, brace left out)
// Values: None -> null, True/False -> bool, numbers, quoted strings, lists and
// dicts recursively; anything else is kept as its text. Never fails; a cut
// (abbreviated "...") repr yields the pairs that were complete.
nlohmann::json ParsePythonKv(std::string_view text);

// Copies the known server_args keys of `args` (parser/EVENTS.md) into `fields`
// under their canonical names (tensor_parallel_size -> tp_size, model_path -> model, ...).
void CopyKnownServerArgs(const nlohmann::json& args, nlohmann::json* fields);

// Removes ANSI escape sequences (CSI "\x1b[...m" and friends). Returns true if any.
bool StripAnsi(std::string* text);

// Replaces invalid UTF-8 sequences with U+FFFD so the text is valid JSON.
std::string SanitizeUtf8(std::string_view text);
bool IsValidUtf8Slow(std::string_view text);
// Short ASCII texts (a field's value, a date) answer in a few instructions.
inline bool IsValidUtf8(std::string_view text) {
  const size_t n = text.size();
  if (n >= 8 && n <= 16) {
    uint64_t a, b;
    std::memcpy(&a, text.data(), 8);
    std::memcpy(&b, text.data() + n - 8, 8);
    if (((a | b) & 0x8080808080808080ULL) == 0) return true;
  }
  return IsValidUtf8Slow(text);
}
// True when `text` holds no '\r', no ESC and no byte >= 0x80: a line with
// nothing to split, strip of colour codes or repair (most log lines). One
// pass of 16 bytes at a time instead of three searches.
bool IsPlainLine(std::string_view text);

}  // namespace tpt
