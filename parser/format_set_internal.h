// format_set_internal.h: helpers the format_*.cc, line_strip.cc and
// pattern_match.cc files share. Not an API.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "parser/event.h"
#include "base/status.h"

namespace tpt::format_internal {

// Error at a JSON path of a file: "file: path: why".
Status At(const std::string& file, const std::string& path, const std::string& why);
// "base[i]".
std::string Idx(const std::string& base, size_t i);
// A string or an array of strings as a list (other values are left out).
std::vector<std::string> StringList(const nlohmann::json& j);

// Keeps `groups` as places (Event::Deferred::spans) relative to `base`; false,
// with `spans` unspecified, when a taken group does not lie in [base, base + limit).
inline bool RecordSpans(const std::vector<std::string_view>& groups, const char* base, size_t limit,
                        std::vector<uint32_t>* spans) {
  spans->resize(2 * groups.size());
  uint32_t* out = spans->data();
  for (std::string_view g : groups) {
    if (g.data() == nullptr) {
      out[0] = Event::Deferred::kNoGroup;
      out[1] = 0;
    } else {
      if (g.data() < base || static_cast<size_t>(g.data() - base) + g.size() > limit) return false;
      out[0] = static_cast<uint32_t>(g.data() - base);
      out[1] = static_cast<uint32_t>(g.size());
    }
    out += 2;
  }
  return true;
}

// The places of RecordSpans back as views of `text`.
inline void SpansToGroups(std::string_view text, const std::vector<uint32_t>& spans,
                          std::vector<std::string_view>* groups) {
  groups->resize(spans.size() / 2);
  for (size_t i = 0; i < groups->size(); ++i) {
    uint32_t begin = spans[2 * i], len = spans[2 * i + 1];
    (*groups)[i] = begin == Event::Deferred::kNoGroup || begin + static_cast<size_t>(len) > text.size()
                       ? std::string_view()
                       : std::string_view(text.data() + begin, len);
  }
}

}  // namespace tpt::format_internal
