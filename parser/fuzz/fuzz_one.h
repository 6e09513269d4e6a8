// fuzz_one.h: one fuzz iteration over reader + parser (libFuzzer target and
// the regression test share it).
//
// The first input byte picks the read buffer and the long-line cap, the rest is
// the log (gzip or text). Every event must serialise to valid JSON.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tpt::fuzz {

void FuzzOne(const uint8_t* data, size_t size);

}  // namespace tpt::fuzz
