// rules_fuzz_one.h: one fuzz iteration over the rule and finding loaders
// (JSON and expressions) and what a loaded rule does to a run (libFuzzer
// target and the regression test share it).
//
// The first input byte picks what the rest is: a rule file (loaded, then run
// over a small founding-like run), a finding file (the same), or one
// expression (parsed, then evaluated in a run's scope and as a template).
// Nothing may crash, hang or throw past the loaders: bad input is a Status.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tpt::fuzz {

void FuzzRulesOne(const uint8_t* data, size_t size);

}  // namespace tpt::fuzz
