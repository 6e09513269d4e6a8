// unpaste_internal.h: what the paste layer's line transforms
// (unpaste_lines.cc) and its window (unpaste.cc) both use. Not an API.
#pragma once

#include <string_view>

namespace tpt::unpaste_internal {

inline bool StartsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// Spaces and tabs off both ends, and a CR off the end.
inline std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

}  // namespace tpt::unpaste_internal
