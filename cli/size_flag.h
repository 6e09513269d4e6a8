// size_flag.h: byte-size flags (--max-line-bytes, --buffer-bytes): one syntax
// and one range check for every command.
//
// Declare the flag with a ByteSize and Boost parses it through
// base/units.h ParseWholeBytes (4096, 64K, 1.5M, 2G, 1MiB, ...: the size grammar
// of every size input, plan's and repro's included); a bad value is
// a Boost error naming the flag and the text, printed by ParseCommandLine
// (cli/args.h) like any other bad flag:
//
//   ByteSize max_line{1 << 20};
//   desc.add_options()("max-line-bytes", po::value(&max_line)->default_value(max_line, "1M"), "...");
//
// The range is the same for every byte flag: at least 1 byte (0 and -1 are
// refused, not wrapped) and at most kMaxByteFlag, which keeps a single line
// or buffer from taking more memory than a log could need.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <boost/any.hpp>
#include <boost/program_options/errors.hpp>
#include <boost/program_options/value_semantic.hpp>

#include "base/units.h"

namespace tpt::cli {

inline constexpr uint64_t kMaxByteFlag = uint64_t{1} << 30;  // 1 GiB

struct ByteSize {
  uint64_t bytes = 0;
};

// A byte flag that bounds a whole run, not one buffer (--max-input-bytes):
// the same syntax, up to kMaxRunByteFlag.
inline constexpr uint64_t kMaxRunByteFlag = uint64_t{1} << 50;  // 1 PiB
struct RunByteSize {
  uint64_t bytes = 0;
};

// A bad byte-size flag; Boost fills in the option's name.
class ByteSizeError : public boost::program_options::error_with_option_name {
 public:
  ByteSizeError(const std::string& text, const std::string& why)
      : error_with_option_name("the argument ('%value%') for option '%canonical_option%' is invalid: " + why) {
    set_substitute("value", text);
  }
};

// Text -> ByteSize in the flags' range; the error says what to write.
inline StatusOr<uint64_t> ParseByteFlag(const std::string& text, uint64_t max = kMaxByteFlag) {
  auto n = ParseWholeBytes(text);
  if (!n.ok()) return n.status();
  if (*n == 0) return InvalidArgumentError("a size of 0 bytes; give at least 1 (e.g. 1M)");
  if (*n > max) return InvalidArgumentError(max == kMaxByteFlag ? "more than the 1G this flag allows"
                                                                 : "more than the 1P this flag allows");
  return *n;
}

// Boost.ProgramOptions' hook for ByteSize (found by argument-dependent lookup).
inline uint64_t ValidateByteFlag(boost::any& v, const std::vector<std::string>& values, uint64_t max) {
  boost::program_options::validators::check_first_occurrence(v);
  const std::string& text = boost::program_options::validators::get_single_string(values);
  auto n = ParseByteFlag(text, max);
  if (!n.ok()) {
    std::string why = n.status().message();
    // ParseWholeBytes' message starts by quoting the text; the template quotes it already.
    const std::string quoted = "'" + text + "' ";
    if (why.rfind(quoted, 0) == 0) why = why.substr(quoted.size());
    if (why.rfind("is ", 0) == 0) why = why.substr(3);  // "... is invalid: not a size; ..."
    throw ByteSizeError(text, why);
  }
  return *n;
}
inline void validate(boost::any& v, const std::vector<std::string>& values, ByteSize*, int) {
  const uint64_t n = ValidateByteFlag(v, values, kMaxByteFlag);
  v = boost::any(ByteSize{n});
}
inline void validate(boost::any& v, const std::vector<std::string>& values, RunByteSize*, int) {
  const uint64_t n = ValidateByteFlag(v, values, kMaxRunByteFlag);
  v = boost::any(RunByteSize{n});
}

}  // namespace tpt::cli
