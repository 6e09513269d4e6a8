// model_config_fuzz_one.cc: see model_config_fuzz_one.h.
#include "memory/fuzz/model_config_fuzz_one.h"

#include <string>

#include <nlohmann/json.hpp>

#include "memory/launch_plan.h"
#include "memory/model_config.h"

namespace tpt::fuzz {

void FuzzModelConfigOne(const uint8_t* data, size_t size) {
  using namespace tpt::memory;
  nlohmann::json j = nlohmann::json::parse(data, data + size, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return;
  auto m = ParseModelConfig(j, "fuzz/config.json");
  if (!m.ok()) return;
  struct Server {
    const char* framework;
    const char* version;
    int tp;
  };
  // Each server's eras the formulas branch on, at TP 1 and 4 on an 80 GiB card.
  for (const Server& s : {Server{"vllm", "0.7.3", 1}, Server{"vllm", "0.8.2", 4}, Server{"vllm", "0.10.1", 1},
                          Server{"vllm", "0.11.0", 4}, Server{"vllm", "0.25.0", 2}, Server{"sglang", "0.4.6", 1},
                          Server{"sglang", "0.5.2", 4}, Server{"tgi", "2.2.0", 1}, Server{"tgi", "3.3.4", 2},
                          Server{"trtllm", "1.2.1", 1}, Server{"lmdeploy", "0.9.2", 2}}) {
    PlanInput in;
    in.framework = s.framework;
    in.version = s.version;
    in.gpu_name = "H100 SXM 80GB";
    in.total_bytes = 79.11 * 1024.0 * 1024.0 * 1024.0;
    in.gpu_arch = "hopper";
    in.gpu_interconnect = "nvlink";
    in.tp = s.tp;
    in.model = *m;
    in.model_path = "fuzz";
    auto plan = MakePlan(in);
    if (!plan.ok()) continue;
    (void)PlanToJson(*plan).dump();  // throws (aborts) on invalid UTF-8
    (void)PlanToText(*plan);
    (void)LaunchCommand(*plan);
  }
}

}  // namespace tpt::fuzz
