// read_whole.h: all of a small input in memory, bounded (the dump readers:
// flight_recorder.h, stack_dump.h).
//
//   std::string bytes;
//   Status s = tpt::ReadWhole(source.get(), 256 << 20, &bytes);
#pragma once

#include <cstddef>
#include <string>

#include "base/status.h"
#include "parser/reader.h"

namespace tpt {

// Reads all of `source` into `out`, at most `max_bytes`: a larger input stops
// with an error as soon as it passes the limit (out then holds more than
// max_bytes), a read error is returned with what was read before it.
Status ReadWhole(ByteSource* source, size_t max_bytes, std::string* out);

}  // namespace tpt
