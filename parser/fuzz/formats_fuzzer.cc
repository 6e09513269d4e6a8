// formats_fuzzer: libFuzzer entry over the format loader (--formats files).
//   cmake -B build-fuzz -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_COMPILER=clang -DTPT_FUZZ=ON
//   cmake --build build-fuzz --target formats_fuzzer
//   bench/run_fuzzers.sh build-fuzz 600 formats
// Crash inputs go to parser/fuzz/formats_regressions/ (fuzz_regression_test replays them).
#include "parser/fuzz/formats_fuzz_one.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  tpt::fuzz::FuzzFormatsOne(data, size);
  return 0;
}
