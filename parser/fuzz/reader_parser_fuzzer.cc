// reader_parser_fuzzer: libFuzzer entry over reader + parser.
//   cmake -B build-fuzz -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_COMPILER=clang -DTPT_FUZZ=ON
//   make -C build-fuzz reader_parser_fuzzer
//   build-fuzz/parser/fuzz/reader_parser_fuzzer -max_total_time=300 parser/fuzz/regressions
// Crash inputs go to parser/fuzz/regressions/ (fuzz_regression_test replays them).
#include "parser/fuzz/fuzz_one.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  tpt::fuzz::FuzzOne(data, size);
  return 0;
}
