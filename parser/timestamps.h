// timestamps.h: the times log lines print, as seconds.
#pragma once

#include <optional>
#include <string_view>

namespace tpt {

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

}  // namespace tpt
