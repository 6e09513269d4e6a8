// pickle_reader.h: a safe reader of the data a pickle holds, nothing more.
//
// PyTorch writes its flight-recorder dumps with its own pickler
// (torch/csrc/jit/serialization/pickler.cpp, protocol 2): dicts, lists,
// tuples, strings, ints, floats, None and bools, with memo references. This
// reader understands exactly those data opcodes and builds JSON from them. It
// never constructs an object: GLOBAL, STACK_GLOBAL, REDUCE, BUILD, INST, OBJ,
// NEWOBJ, PERSID and the other opcodes that would import or call code are
// refused with an error naming the opcode and its byte offset. Depth, size and
// memo are bounded. A pickle cut before its STOP gives what was read (open
// containers closed as they stood) and a warning saying where it stopped.
//
//   std::string warning;
//   auto v = tpt::ReadPickle(bytes, "nccl_trace_rank_0", &warning);
//   if (v.ok()) Use((*v)["entries"]);
//
// A large pickle of which only parts are wanted (a dump's newest records out
// of thousands) is read as a PickleDoc, and only those parts become JSON:
//
//   auto doc = tpt::ReadPickleDoc(bytes, "nccl_trace_rank_0", &warning);
//   tpt::PickleRef last = doc->root()["entries"][n - 1];
//   auto record = last.ToJson();
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "base/status.h"

namespace tpt {

struct PickleLimits {
  size_t max_depth = 64;            // containers inside containers
  size_t max_nodes = size_t{8} << 20;  // values built, memo references counted again
  size_t max_memo = size_t{1} << 22;   // memo slots
};

// The value the pickle holds, as JSON: tuples become arrays, dict keys that
// are ints become their decimal string. `name` names the input in messages.
// `warning` (may be null) is set when the pickle ended before its STOP.
StatusOr<nlohmann::json> ReadPickle(std::string_view bytes, const std::string& name, std::string* warning,
                                    const PickleLimits& limits = {});

struct PickleNode;
struct PickleArena;

// A value of a PickleDoc, or none (a key not there, an index past the end);
// valid while its document lives.
class PickleRef {
 public:
  PickleRef() = default;
  explicit operator bool() const { return node_ != nullptr; }
  bool is_dict() const;
  bool is_list() const;  // a list or a tuple
  size_t size() const;   // a list's items, a dict's keys; 0 otherwise
  PickleRef operator[](size_t i) const;          // a list's item
  PickleRef operator[](std::string_view key) const;  // a dict's value at a string key
  // As JSON (tuples as arrays, int keys as their decimal string). Every
  // conversion of one document draws on one budget of limits.max_nodes
  // values, as ReadPickle's one conversion does: memo references cannot
  // expand a small pickle into a huge value, whatever is asked of it.
  StatusOr<nlohmann::json> ToJson() const;

 private:
  friend class PickleDoc;
  friend StatusOr<class PickleDoc> ReadPickleDoc(std::string_view, const std::string&, std::string*, const PickleLimits&);
  PickleRef(PickleNode* n, PickleArena* a) : node_(n), arena_(a) {}
  PickleNode* node_ = nullptr;
  PickleArena* arena_ = nullptr;
};

// What a pickle holds, read but not converted. Its strings view `bytes`:
// the bytes must outlive the document.
class PickleDoc {
 public:
  PickleDoc();
  ~PickleDoc();
  PickleDoc(PickleDoc&&) noexcept;
  PickleDoc& operator=(PickleDoc&&) noexcept;
  PickleRef root() const { return PickleRef(root_, arena_.get()); }

 private:
  friend StatusOr<PickleDoc> ReadPickleDoc(std::string_view, const std::string&, std::string*, const PickleLimits&);
  std::unique_ptr<PickleArena> arena_;
  PickleNode* root_ = nullptr;
};

// ReadPickle's reading, without the conversion: the same opcodes, limits,
// refusals, cut handling and warning.
StatusOr<PickleDoc> ReadPickleDoc(std::string_view bytes, const std::string& name, std::string* warning,
                                  const PickleLimits& limits = {});

// True when `head` (a file's first bytes) starts like a pickle of protocol 2 to 5.
bool LooksLikePickle(std::string_view head);

}  // namespace tpt
