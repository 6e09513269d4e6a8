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
#pragma once

#include <cstddef>
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

// True when `head` (a file's first bytes) starts like a pickle of protocol 2 to 5.
bool LooksLikePickle(std::string_view head);

}  // namespace tpt
