// model_config_fuzz_one.h: one iteration of the model-config fuzzer: a config.json's bytes
// through ParseModelConfig, then, when it parses, plan for a server era at a TP size
// (MakePlan, LaunchCommand, PlanToJson, PlanToText). Shared by the libFuzzer target and
// the regression test that replays memory/fuzz/regressions/.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tpt::fuzz {

// The fuzzer's iteration plans one server era, picked by the input's bytes (so the
// fuzzer runs eleven times as many inputs); the regression replay plans every era.
void FuzzModelConfigOne(const uint8_t* data, size_t size);
void FuzzModelConfigAllEras(const uint8_t* data, size_t size);

}  // namespace tpt::fuzz
