// signature.h: a stable id for "the same failure", for grouping many runs.
//
// Like ClusterFuzz crash state, Sentry fingerprints and syzbot titles, a
// failure's signature keeps what identifies the bug and masks what varies
// between repeats: numbers, hex, paths, addresses, ranks, timestamps, UUIDs.
// The canonical string joins framework and version (major.minor), the phase
// the first failing rank reached, the root-cause id, that rank's error class
// and the masked message template (of the primary diagnosis' anchor line, or
// without a diagnosis of that rank's first error line); the id is the first 12 hex digits of its
// 64-bit FNV-1a hash. Nothing in it depends on file paths, times or rank
// numbers, so the same failure gets the same id on any machine and day.
//
//   tpt::report::Signature s = tpt::report::ComputeSignature(analysis);
//   s.id         // "3f9a0c71d2e4"
//   s.canonical  // "v1|sglang 0.4|kv_pool|kv_pool_no_room|not_enough_memory|..."
#pragma once

#include <string>
#include <string_view>

#include "rules/analysis.h"

namespace tpt::report {

// The message with variable parts masked: UUIDs -> <uuid>, timestamps -> <ts>,
// paths -> <path>, IP addresses -> <ip>, hex -> <hex>, other numbers -> <n>;
// whitespace collapsed; at most 200 bytes.
std::string MessageTemplate(std::string_view message);

// "0.4" from "v0.4.6.post1"; the input when it has no dot.
std::string MajorMinor(std::string_view version);

struct Signature {
  std::string id;         // 12 lower-case hex digits; empty for a healthy run
  std::string canonical;  // what was hashed
  std::string phase, error_class, message;  // parts, for explain output
};

Signature ComputeSignature(const Analysis& analysis);

// 64-bit FNV-1a of `s`, as 16 lower-case hex digits.
std::string Fnv1a64Hex(std::string_view s);

}  // namespace tpt::report
