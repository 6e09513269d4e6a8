// format_load.h: FormatSet::Loader, the steps of FormatSet::Load over the set
// being built (format_set.cc runs them). Not an API.
//
// Pass 1 reads each file into specs (AddFile, format_load.cc); then the
// prefix matcher and the deferred-capture decoders are built; pass 2 checks
// every file's samples and near misses against the whole set (CheckSamples,
// format_check.cc; a pattern's sample may carry another family's prefix);
// last the literal prefilter (BuildPrefilter). A file failing either pass is
// dropped and the set rebuilt without it.
#pragma once

#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "parser/format_set.h"

namespace tpt {

struct FormatSet::Loader {
  FormatSet& set_;

  static StatusOr<FormatSet> Load(const std::vector<FormatSource>& files, bool strict, bool check_samples,
                                  bool defer_regexes, std::string_view prefilter_blob);
  // One file's JSON (kept in *doc for the checks) into specs (format_load.cc).
  Status AddFile(const FormatSource& file, nlohmann::json* doc);
  // The file's samples and near misses, its specs starting at the given
  // indexes (format_check.cc).
  Status CheckSamples(const FormatSource& file, const nlohmann::json& doc, size_t first_pattern, size_t first_block,
                      size_t first_wrapper, size_t first_prefix) const;
  // The wrappers' and prefixes' PrefixMatcher.
  Status BuildPrefixSets();
  // The decoders of deferred captures (PatternSpec::decoder, PrefixSpec::decoder).
  void BuildDecoders();
  // With the automaton: asks it and an RE2::Set of the same members at every
  // place of every sample and near miss of `docs` (the line's start and after
  // each space); on any disagreement the set answers instead, and the line is
  // named in problems(). Errors only when the set cannot be built.
  Status CheckPrefixAutomaton(const std::vector<nlohmann::json>& docs);
  Status BuildPrefilter(std::string_view blob);
};

}  // namespace tpt
