// model_config_fuzz_one.h: one iteration of the model-config fuzzer: a config.json's bytes
// through ParseModelConfig, then, when it parses, plan for each server at a few sizes
// (MakePlan, LaunchCommand, PlanToJson, PlanToText). Shared by the libFuzzer target and
// the regression test that replays memory/fuzz/regressions/.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tpt::fuzz {

void FuzzModelConfigOne(const uint8_t* data, size_t size);

}  // namespace tpt::fuzz
