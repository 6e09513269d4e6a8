// format_set_internal.h: helpers format_set.cc shares with format_check.cc.
// Not an API: only the format_set*.cc and format_check.cc files include it.
#pragma once

#include <re2/re2.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "parser/event.h"
#include "base/status.h"

namespace tpt {
class DeferredDecoder;
struct PrefixSpec;
}

namespace tpt::format_internal {

// Decodes a prefix's kept captures into its metadata object, as ApplyPrefix
// writes it (format_set_strip.cc).
std::shared_ptr<const DeferredDecoder> NewPrefixDecoder(const PrefixSpec& p);

// Error at a JSON path of a file: "file: path: why".
Status At(const std::string& file, const std::string& path, const std::string& why);
// "base[i]".
std::string Idx(const std::string& base, size_t i);
// Runs `re` with all captures from text[pos]; `groups` receives n+1 views
// (data() == nullptr: did not participate). `precheck` first asks the DFA
// whether there is a match at all (most tries fail).
bool RunRe(const re2::RE2& re, std::string_view text, size_t pos, re2::RE2::Anchor anchor,
           std::vector<std::string_view>* groups, bool precheck = true);
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
