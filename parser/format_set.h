// format_set.h: the compiled format files (parser/formats/*.json, README there).
//
// A FormatSet holds every family's producer prefixes and patterns, the layer-0
// wrappers (wrappers.json) and multi-line block specs (python.json), compiled
// to RE2, plus one Hyperscan literal database used as the prefilter. Loading
// checks each file against its own samples and near misses; a bad file is
// left out and named in problems() ("file: $.patterns[3].regex: reason").
//
//   auto formats = tpt::FormatSet::LoadBuiltin();   // compiled into the binary
//   if (!formats.ok()) Die(formats.status());
//   for (const auto& p : formats->problems()) Warn(p);
//   auto st = formats->StripLine(line, &meta);       // line_strip.h
//   formats->MatchPattern(formats->patterns()[i], line.substr(st.begin), &event, &error);
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "parser/format_spec.h"                // the specs: FormatSource, PatternSpec, ...
#include "parser/line_strip.h"                 // LineMeta, StrippedLine, PreviousLine
#include "parser/match/prefix_matcher.h"

struct hs_database;

namespace tpt {

class FormatSet {
 public:
  // Loading (format_set.cc): a file failing its checks is left out and named
  // in problems() (with `strict`, the error). No `check_samples`: samples and
  // near misses not run. A `prefilter_blob` (SerializePrefilter) is taken when
  // made from the same literals, Hyperscan and CPU. LoadBuiltin: no samples
  // (formats_test runs them), regexes compiled on first use, the build's blob.
  static StatusOr<FormatSet> Load(const std::vector<FormatSource>& files, bool strict = false,
                                  bool check_samples = true, std::string_view prefilter_blob = {});
  static StatusOr<FormatSet> LoadBuiltin(bool strict = false);
  static StatusOr<FormatSet> LoadBuiltinChecked(bool strict = false);
  // --formats DIR: its *.json; `with_builtin`: over the built-in files, same name replacing.
  static StatusOr<FormatSet> LoadDir(const std::string& dir, bool strict = false, bool with_builtin = false);
  static const std::vector<FormatSource>& BuiltinSources();
  FormatSet();
  FormatSet(FormatSet&&) noexcept;
  FormatSet& operator=(FormatSet&&) noexcept;
  ~FormatSet();

  const std::vector<std::string>& problems() const { return problems_; }
  const std::vector<PatternSpec>& patterns() const { return patterns_; }
  const std::vector<PrefixSpec>& wrappers() const { return wrappers_; }
  const std::vector<PrefixSpec>& prefixes() const { return prefixes_; }
  const std::vector<BlockSpec>& blocks() const { return blocks_; }
  std::vector<std::string> families() const;
  // Every fast layout: patterns', then wrappers', prefixes' and suffixes'.
  std::vector<const FastLayout*> FastLayouts() const;
  // True when our automaton, not RE2::Set, says which wrappers and prefixes match.
  bool prefixes_by_automaton() const { return prefix_matcher_.by_automaton(); }
  // Hyperscan literal database (id i -> targets()[i]), from a blob or compiled.
  const hs_database* literal_db() const { return db_.get(); }
  const std::vector<LiteralTarget>& targets() const { return targets_; }
  bool prefilter_from_blob() const { return prefilter_from_blob_; }
  StatusOr<std::string> SerializePrefilter() const;  // the blob: literal_db() and its fingerprint

  // The line's journey. StripLine: wrappers, a suffix, producer prefixes
  // (line_strip.h says how); MatchPattern, MatchBlockEnd: a pattern's or a
  // block end's fields from the stripped text (pattern_match.h).
  using Stripped = StrippedLine;
  using PreviousLine = tpt::PreviousLine;
  Stripped StripLine(std::string_view line, LineMeta* meta, const PreviousLine& previous = {},
                     bool suffix_literals = true) const;
  // True when the line has a start of its own: StripLine would strip a
  // wrapper or prefix at its start, or find a producer (the same answer,
  // without reading the prefix's fields when one matches at the start).
  bool HasLineStart(std::string_view line) const;
  bool MatchPattern(const PatternSpec& p, std::string_view text, Event* e, std::string* error,
                    const char* defer_base = nullptr, size_t defer_limit = 0) const;
  bool MatchBlockEnd(const BlockSpec& b, std::string_view text, nlohmann::json* fields) const;

 private:
  friend class FormatSetPeer;  // format_set_test.cc
  const PrefixSpec* FirstAt(const std::vector<PrefixSpec>& specs, int base, const std::vector<int>& found,
                            std::string_view text, size_t pos, const PreviousLine& previous,
                            std::vector<std::string_view>* groups) const;
  struct Loader;               // the load's steps (format_load.h)
  struct HsDeleter { void operator()(hs_database* db) const; };
  bool defer_pattern_regexes_ = false;  // LazyRe for the patterns (LoadBuiltin)
  std::vector<PatternSpec> patterns_;
  std::vector<PrefixSpec> wrappers_, suffixes_, prefixes_;
  std::vector<BlockSpec> blocks_;
  std::vector<std::string> problems_, families_;
  std::vector<LiteralTarget> targets_;
  std::unique_ptr<hs_database, HsDeleter> db_;
  bool prefilter_from_blob_ = false;
  PrefixMatcher prefix_matcher_;  // members: the wrappers, then the prefixes
};

}  // namespace tpt
