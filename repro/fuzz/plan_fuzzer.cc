// plan_fuzzer: libFuzzer entry over the plan / diagnosis JSON `repro` reads.
//   cmake -B build-fuzz -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_COMPILER=clang -DTPT_FUZZ=ON
//   cmake --build build-fuzz --target plan_fuzzer
//   bench/run_fuzzers.sh build-fuzz 600 plan
// Crash inputs go to repro/fuzz/regressions/ (plan_fuzz_regression_test replays them).
#include "repro/fuzz/plan_fuzz_one.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  tpt::fuzz::FuzzPlanOne(data, size);
  return 0;
}
