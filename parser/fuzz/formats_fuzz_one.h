// formats_fuzz_one.h: one fuzz iteration over the format loader (a format
// file's JSON, its regexes, fast layouts, samples) and the parser built from
// what it loads (libFuzzer target and the regression test share it).
//
// The first input byte says whether samples are checked at load; the rest is
// one format file (--formats DIR). Bad input must be a Status, never a crash.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tpt::fuzz {

void FuzzFormatsOne(const uint8_t* data, size_t size);

}  // namespace tpt::fuzz
