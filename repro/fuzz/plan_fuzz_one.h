// plan_fuzz_one.h: one fuzz iteration over what `tptriage repro` reads: a
// plan or an analysis (diagnosis) JSON, then the plan's checks and, for a
// plan that passes them, a replay on the simulated backend (libFuzzer target
// and the regression test share it). Bad input must be a Status.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tpt::fuzz {

void FuzzPlanOne(const uint8_t* data, size_t size);

}  // namespace tpt::fuzz
