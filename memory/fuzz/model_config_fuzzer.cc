// model_config_fuzzer: libFuzzer entry over the config.json `plan --model` reads, through
// every server's memory formulas.
//   cmake -B build-fuzz -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_COMPILER=clang -DTPT_FUZZ=ON
//   cmake --build build-fuzz --target model_config_fuzzer
//   bench/run_fuzzers.sh build-fuzz 600 model_config
// Crash inputs go to memory/fuzz/regressions/ (model_config_fuzz_regression_test replays them).
#include "memory/fuzz/model_config_fuzz_one.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  tpt::fuzz::FuzzModelConfigOne(data, size);
  return 0;
}
