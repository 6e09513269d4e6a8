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

#include "parser/event.h"
#include "parser/match/fast_layout.h"
#include "parser/match/prefix_matcher.h"
#include "base/status.h"
#include "parser/values.h"

struct hs_database;

namespace re2 {
class RE2;
}
namespace tpt {
class ObjectFiller;      // json_reuse.h
}

namespace tpt {

struct FormatSource {
  std::string name;  // file name, for messages ("parser/formats/sglang.json")
  std::string text;  // JSON text
};

struct FieldSpec {
  std::string name;        // output field
  std::string group;       // regex group
  int group_index = -1;
  std::string type;        // values.h IsSchemaType
  std::string unit;
  std::string unit_group;
  int unit_group_index = -1;
  bool optional = false;
  bool percent = false;
  // 'i' int, 'f' float, 'r' fraction: plain numbers are converted in place
  // (format_set.cc ConvertFields); anything else goes through ConvertField.
  char number_kind = 0;
};

// A producer prefix or a layer-0 wrapper: an anchored regex stripped from the
// left (suffix wrappers from the right) whose groups describe the producer.
struct PrefixSpec {
  std::string family;
  std::string id;
  std::shared_ptr<re2::RE2> re;
  std::shared_ptr<re2::RE2> then;  // optional: must match what follows (no look-ahead in RE2)
  bool suffix = false;
  // Taken only when the previous line of the stream holds the same matched
  // text at the same place (pdsh's "host: " is any word before ": " alone).
  bool repeat = false;
  std::vector<std::string> literals;  // suffix wrappers: one must occur for the regex to run
  // A named group, what it says about the producer (role), and its capture index.
  struct Group {
    enum Role { kOther, kDate, kTime, kMonthDay, kTs, kHost, kProcess, kRank, kLocalRank, kPid, kDp, kPp, kTp, kEp };
    std::string name;
    int index = 0;
    Role role = kOther;
    bool after_id = false;  // name sorts after "id" (the metadata object's key order)
  };
  std::vector<Group> groups;
  // Fast paths for the capture, tried in order before the regex (fast_layout.h, anchored).
  std::vector<std::shared_ptr<const FastLayout>> fast;
  std::string full_id;  // "family.id", kept in the metadata of a stripped producer prefix
  // Fills the metadata object from captures kept for later (Event::Deferred); set at load.
  std::shared_ptr<const DeferredDecoder> decoder;
  // Range of the first byte any match can start with (RE2::PossibleMatchRange):
  // most lines are turned away by one comparison instead of a regex run.
  unsigned char first_min = 0, first_max = 255;
};

// A pattern's regex, dereferenced like the shared_ptr<RE2> it stands for:
// compiled at load, or (the compiled-in formats, which formats_test compiles
// and checks in every build) on first use: most of ~230 patterns never meet
// a line of a given log, and compiling them all was a third of the load.
class LazyRe {
 public:
  LazyRe() = default;
  LazyRe(std::shared_ptr<re2::RE2> compiled);  // NOLINT: as the shared_ptr it replaces
  LazyRe(std::string pattern, bool caseless);  // compiled on first use
  const re2::RE2& operator*() const { return *get(); }
  const re2::RE2* operator->() const { return get(); }
  explicit operator bool() const { return state_ != nullptr; }
  bool compiled() const;  // false until first use of a deferred one

 private:
  const re2::RE2* get() const;
  struct State;
  std::shared_ptr<State> state_;
};

struct PatternSpec {
  std::string family;
  std::string id;
  std::string kind;
  std::vector<std::string> literals;
  bool caseless = false;
  LazyRe re;
  std::vector<FieldSpec> fields;
  int kv_group_index = -1;
  nlohmann::json set = nlohmann::json::object();
  bool consequence = false;
  // Fast paths for high-volume lines, tried in order before the regex (fast_layout.h).
  std::vector<std::shared_ptr<const FastLayout>> fast;
  // Fills `fields` from captures kept for later (Event::Deferred); set at
  // load, null for server args (kv_group_index), which are decoded at once.
  std::shared_ptr<const DeferredDecoder> decoder;
};

// A multi-line record (Python traceback): starts at a line matching `start`,
// takes `continuation` lines into Event::extra_lines, ends at `end` whose
// groups become the event's fields.
struct BlockSpec {
  std::string family;
  std::string id;
  std::string kind;
  std::vector<std::string> literals;  // of the start line
  std::shared_ptr<re2::RE2> start, continuation, end;
  std::vector<FieldSpec> fields;  // groups of `end`
  size_t max_lines = 500;
  // The start line is a frame of a traceback pasted without its header: it opens a
  // record only when its producer has none open (inside one it is a frame).
  bool headerless = false;
  nlohmann::json set = nlohmann::json::object();
};

// What the wrappers and prefixes of one line said.
struct LineMeta {
  int rank = -1, local_rank = -1, pid = -1;
  int dp_rank = -1, pp_rank = -1, tp_rank = -1, ep_rank = -1;
  std::string host, process;
  std::optional<Timestamp> ts;           // best absolute, else time of day
  nlohmann::json wrapper = nlohmann::json::object();
  // With a defer_limit (the stream parser's), a producer prefix's metadata is
  // not written into wrapper["prefix"] but kept in `prefix` as places relative
  // to defer_base (the end of the wrappers, where an Event's text starts; set
  // by StripLine), when they lie within defer_limit bytes of it.
  size_t defer_limit = 0;
  const char* defer_base = nullptr;
  Event::Deferred prefix;
  bool HasProducer() const { return rank >= 0 || local_rank >= 0 || tp_rank >= 0 || !host.empty() || pid >= 0; }
  std::string Key() const;               // identifies the printing process (traceback state)
  // Sets e's producer members and wrapper to this line's (a recycled Event's
  // wrapper keeps its nodes where keys repeat; ts cleared when none).
  void ApplyTo(Event* e) const;
  // ApplyTo by swapping strings and the wrapper with e's: this meta is left
  // with e's old ones (Reset() and StripLine refill them, reusing their memory).
  void SwapInto(Event* e);
  // Forgets the last line's producer for the next StripLine (the wrapper
  // object is kept: StripLine refills it in place).
  void Reset();

 private:
  void ApplyScalars(Event* e) const;
};

// Literal-prefilter hit target.
struct LiteralTarget {
  // kSuffix: a wrapper suffix's literal (the line may end with that suffix).
  enum Type { kPattern, kBlockStart, kSuffix, kRescan } type;
  int index;
};

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
