// model_config_fuzz_one.cc: see model_config_fuzz_one.h.
#include "memory/fuzz/model_config_fuzz_one.h"

#include <string>

#include <nlohmann/json.hpp>

#include "memory/launch_plan.h"
#include "memory/model_config.h"

namespace tpt::fuzz {

namespace {

struct Era {
  const char* framework;
  const char* version;
  int tp;
};
// Each server's eras the formulas branch on, at TP 1 to 4 on an 80 GiB card.
constexpr Era kEras[] = {{"vllm", "0.7.3", 1},   {"vllm", "0.8.2", 4},   {"vllm", "0.10.1", 1}, {"vllm", "0.11.0", 4},
                         {"vllm", "0.25.0", 2},  {"sglang", "0.4.6", 1}, {"sglang", "0.5.2", 4}, {"tgi", "2.2.0", 1},
                         {"tgi", "3.3.4", 2},    {"trtllm", "1.2.1", 1}, {"lmdeploy", "0.9.2", 2}};
constexpr size_t kNumEras = sizeof(kEras) / sizeof(kEras[0]);

void PlanEra(const tpt::memory::ModelConfig& m, const Era& e) {
  using namespace tpt::memory;
  PlanInput in;
  in.framework = e.framework;
  in.version = e.version;
  in.gpu_name = "H100 SXM 80GB";
  in.total_bytes = 79.11 * 1024.0 * 1024.0 * 1024.0;
  in.gpu_arch = "hopper";
  in.gpu_interconnect = "nvlink";
  in.tp = e.tp;
  in.model = m;
  in.model_path = "fuzz";
  auto plan = MakePlan(in);
  if (!plan.ok()) return;
  (void)PlanToJson(*plan).dump();  // throws (aborts) on invalid UTF-8
  (void)PlanToText(*plan);
  (void)LaunchCommand(*plan);
}

void Run(const uint8_t* data, size_t size, bool all_eras) {
  nlohmann::json j = nlohmann::json::parse(data, data + size, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return;
  auto m = tpt::memory::ParseModelConfig(j, "fuzz/config.json");
  if (!m.ok()) return;
  if (all_eras) {
    for (const Era& e : kEras) PlanEra(*m, e);
    return;
  }
  size_t h = size;
  for (size_t i = 0; i < size; ++i) h = h * 31 + data[i];
  PlanEra(*m, kEras[h % kNumEras]);
}

}  // namespace

void FuzzModelConfigOne(const uint8_t* data, size_t size) { Run(data, size, /*all_eras=*/false); }
void FuzzModelConfigAllEras(const uint8_t* data, size_t size) { Run(data, size, /*all_eras=*/true); }

}  // namespace tpt::fuzz
