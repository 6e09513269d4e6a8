// format_spec.h: what a format file (parser/formats/README.md) becomes once
// loaded: its producer prefixes and wrappers, patterns and multi-line
// blocks, each with its regex and, where it has them, its fast layouts
// (parser/match/). Made by format_load.cc, read by line_strip.cc,
// pattern_match.cc and the stream parser.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "parser/event.h"
#include "parser/match/capture.h"
#include "parser/match/fast_layout.h"

namespace re2 {
class RE2;
}

namespace tpt {

struct FormatSource {
  std::string name;  // file name, for messages ("parser/formats/sglang.json")
  std::string text;  // JSON text
};

struct FieldSpec {
  std::string name;        // output field
  std::string json_key;    // `,"name":` (json_text.h JsonKey), made at load
  std::string group;       // regex group
  int group_index = -1;
  // Groups read, in order, when `group` did not take part in the match: one
  // field from alternative places in the line (a path before or after the
  // message), since RE2 allows a name once.
  std::vector<int> or_group_indexes;
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
    std::string json_key;   // `,"name":` (json_text.h JsonKey), made at load
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

// A pattern's regex: LazyRe (parser/match/capture.h).
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
  std::shared_ptr<re2::RE2> start, continuation, end;  // end null: the record ends where its producer moves on
  std::vector<FieldSpec> fields;  // groups of `end`
  size_t max_lines = 500;
  // The start line is a frame of a traceback pasted without its header: it opens a
  // record only when its producer has none open (inside one it is a frame).
  bool headerless = false;
  nlohmann::json set = nlohmann::json::object();
};

// Literal-prefilter hit target.
struct LiteralTarget {
  // kSuffix: a wrapper suffix's literal (the line may end with that suffix).
  enum Type { kPattern, kBlockStart, kSuffix, kRescan } type;
  int index;
};

}  // namespace tpt
