// rules_fuzzer: libFuzzer entry over the rule and finding loaders (JSON and
// expressions) and the evaluation of what they load.
//   cmake -B build-fuzz -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_COMPILER=clang -DTPT_FUZZ=ON
//   cmake --build build-fuzz --target rules_fuzzer
//   bench/run_fuzzers.sh build-fuzz 600 rules
// Crash inputs go to rules/fuzz/regressions/ (rules_fuzz_regression_test replays them).
#include "rules/fuzz/rules_fuzz_one.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  tpt::fuzz::FuzzRulesOne(data, size);
  return 0;
}
