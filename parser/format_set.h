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
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "parser/event.h"
#include "parser/format_spec.h"
#include "parser/line_strip.h"
#include "parser/match/prefix_matcher.h"

struct hs_database;

namespace re2 {
class RE2;
}
namespace tpt {
class ObjectFiller;      // json_reuse.h
}

namespace tpt {

class FormatSet {
  friend class FormatSetPeer;  // format_set_test.cc

 public:
  FormatSet();
  FormatSet(FormatSet&&) noexcept;
  FormatSet& operator=(FormatSet&&) noexcept;
  ~FormatSet();

  // Loads and checks the given files. A file that fails its checks is left out
  // and described in problems(); with `strict` the first problem is returned
  // as the error instead. Fails when no file could be loaded. Without
  // `check_samples` the samples and near misses are not run (regexes, fast
  // layouts and the structure are still compiled and checked). A
  // `prefilter_blob` (SerializePrefilter) is the literal database when it was
  // made from the same literals, Hyperscan and CPU; else it is compiled.
  static StatusOr<FormatSet> Load(const std::vector<FormatSource>& files, bool strict = false,
                                  bool check_samples = true, std::string_view prefilter_blob = {});
  // The compiled-in files, without running their samples: formats_test runs
  // them (LoadBuiltinChecked) in every build, so a run need not repeat it.
  // Their pattern regexes are compiled on first use (LazyRe); their literal
  // database is the one the build compiled (prefilter_blob.h).
  static StatusOr<FormatSet> LoadBuiltin(bool strict = false);
  static StatusOr<FormatSet> LoadBuiltinChecked(bool strict = false);
  // DIR's *.json files; with `with_builtin`, added to the compiled-in ones, a
  // file of DIR replacing the built-in file of the same name (--formats DIR).
  static StatusOr<FormatSet> LoadDir(const std::string& dir, bool strict = false, bool with_builtin = false);
  static const std::vector<FormatSource>& BuiltinSources();

  const std::vector<std::string>& problems() const { return problems_; }
  // True when our automaton (prefix_dfa.h), not RE2::Set, says which
  // wrappers and prefixes match at a place of a line.
  bool prefixes_by_automaton() const { return prefix_matcher_.by_automaton(); }
  const std::vector<PatternSpec>& patterns() const { return patterns_; }
  const std::vector<PrefixSpec>& wrappers() const { return wrappers_; }
  const std::vector<PrefixSpec>& prefixes() const { return prefixes_; }
  // Every fast layout of the set: patterns', then wrappers', prefixes' and suffixes'.
  std::vector<const FastLayout*> FastLayouts() const;
  const std::vector<BlockSpec>& blocks() const { return blocks_; }
  std::vector<std::string> families() const;

  // Hyperscan literal database; id i -> targets()[i].
  const hs_database* literal_db() const { return db_.get(); }
  const std::vector<LiteralTarget>& targets() const { return targets_; }
  // True when literal_db() came from a prefilter blob, false when compiled.
  bool prefilter_from_blob() const { return prefilter_from_blob_; }
  // literal_db() with the fingerprint of what it was compiled from: a blob
  // for Load (the build embeds the built-in one: parser/match/tools/).
  StatusOr<std::string> SerializePrefilter() const;

  // Strips wrappers (iteratively), a trailing suffix wrapper, then producer
  // prefixes (iteratively) from `line`; fills `meta`. line[wrapped_end, end)
  // is the line without wrappers, line[begin, end) the producer's message.
  // `previous` is the stream's line before this one (for `repeat` wrappers).
  struct Stripped {
    size_t wrapped_end = 0, begin = 0, end = 0;
  };
  // The previous line: given, or found only when a `repeat` wrapper asks
  // (most lines never do, and finding it costs a backward search).
  class PreviousLine {
   public:
    PreviousLine(std::string_view text = {}) : text_(text) {}  // NOLINT: a given line converts
    PreviousLine(const std::string& text) : text_(text) {}     // NOLINT
    PreviousLine(const char* text) : text_(text) {}            // NOLINT
    PreviousLine(std::string_view (*find)(const void*), const void* context) : find_(find), context_(context) {}
    std::string_view Get() const {
      if (find_) {
        text_ = find_(context_);
        find_ = nullptr;
      }
      return text_;
    }

   private:
    mutable std::string_view text_;
    mutable std::string_view (*find_)(const void*) = nullptr;
    const void* context_ = nullptr;
  };
  // `suffix_literals` false says the line holds no suffix's literal (the
  // prefilter found none): suffixes that have literals are not tried.
  Stripped StripLine(std::string_view line, LineMeta* meta, const PreviousLine& previous = {},
                     bool suffix_literals = true) const;

  // Runs one pattern on the (stripped) text; on a match fills e->fields (and
  // kind, family, pattern_id, consequence). `error` receives conversion problems.
  // A recycled `e` keeps its fields' nodes where keys repeat; keys the match
  // does not set are erased. On no match `e` is untouched.
  // With `defer_base`, captures lying in [defer_base, defer_base + defer_limit)
  // (the Event's text) are kept as places and decoded on first read of
  // fields() (Event::Deferred); conversion problems then go unreported.
  bool MatchPattern(const PatternSpec& p, std::string_view text, Event* e, std::string* error,
                    const char* defer_base = nullptr, size_t defer_limit = 0) const;

  // Fields of a block's end line; false when `end` does not match.
  bool MatchBlockEnd(const BlockSpec& b, std::string_view text, nlohmann::json* fields) const;

 private:
  struct HsDeleter {
    void operator()(hs_database* db) const;
  };
  static StatusOr<FormatSet> LoadImpl(const std::vector<FormatSource>& files, bool strict, bool check_samples,
                                      bool defer_regexes, std::string_view prefilter_blob);
  Status AddFile(const FormatSource& file, nlohmann::json* doc);
  Status CheckSamples(const FormatSource& file, const nlohmann::json& doc, size_t first_pattern,
                      size_t first_block, size_t first_wrapper, size_t first_prefix) const;
  Status BuildPrefilter(std::string_view blob);
  // Set by Load for the compiled-in files loaded unchecked: pattern regexes
  // are compiled on first use (LazyRe), their groups read from the text.
  bool defer_pattern_regexes_ = false;
  // The wrappers' and prefixes' PrefixMatcher (prefix_matcher_).
  Status BuildPrefixSets();
  // The decoders of deferred captures (PatternSpec::decoder, PrefixSpec::decoder).
  void BuildDecoders();
  // With the automaton: asks it and an RE2::Set of the same members at every
  // place of every sample and near miss of `docs` (the line's start and after
  // each space); on any disagreement the set answers instead, and the line is
  // named in problems(). Errors only when the set cannot be built.
  Status CheckPrefixAutomaton(const std::vector<nlohmann::json>& docs);
  // `top` (may be null) tracks the wrapper keys set on this line (StripLine).
  void ApplyPrefix(const PrefixSpec& p, const std::vector<std::string_view>& groups, LineMeta* meta,
                   bool is_wrapper, ObjectFiller* top = nullptr) const;

  std::vector<PatternSpec> patterns_;
  std::vector<PrefixSpec> wrappers_;
  std::vector<PrefixSpec> suffixes_;
  std::vector<PrefixSpec> prefixes_;
  std::vector<BlockSpec> blocks_;
  std::vector<std::string> problems_;
  std::vector<std::string> families_;
  std::vector<LiteralTarget> targets_;
  std::unique_ptr<hs_database, HsDeleter> db_;
  bool prefilter_from_blob_ = false;
  // Which wrappers and prefixes match at a place (members: the wrappers,
  // then the prefixes): our automaton, or RE2::Set when a member's syntax is
  // outside what it reads or a checked load caught a disagreement.
  PrefixMatcher prefix_matcher_;
};

}  // namespace tpt
