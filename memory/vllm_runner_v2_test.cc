// vllm_runner_v2_test.cc: which runner vLLM takes by default (vllm_runner_v2.h), as
// VllmConfig.use_v2_model_runner decides it in the 0.25.0-0.28.0 sdists.
#include "memory/vllm_runner_v2.h"

#include <gtest/gtest.h>

#include <string>

#include "memory/memory_model.h"

namespace tpt::memory {
namespace {

PlanInput VllmWith(const std::string& sample, const std::string& version) {
  PlanInput in;
  in.framework = "vllm";
  in.version = version;
  auto m = LoadModel(std::string(TPT_SOURCE_DIR) + "/samples/models/" + sample);
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  if (m.ok()) in.model = *m;
  return in;
}

TEST(VllmRunnerV2Test, OracleFollowsTheConfigSource) {
  // Dense: MRV2 from 0.25.0 whatever the quantization (the predicate never reads it), and
  // Qwen3 dense from 0.22.0 (release notes); before that the legacy runner.
  EXPECT_TRUE(VllmRunnerV2Default(VllmWith("qwen3-14b-awq", "0.28.0")));
  EXPECT_TRUE(VllmRunnerV2Default(VllmWith("qwen3-32b", "0.22.0")));
  EXPECT_FALSE(VllmRunnerV2Default(VllmWith("qwen3-32b", "0.21.0")));
  // A MoE model keeps the legacy runner unless its architecture is listed, by version.
  PlanInput moe = VllmWith("qwen3-30b-a3b", "0.28.0");
  EXPECT_FALSE(VllmRunnerV2Default(moe));
  moe.model->architecture = "Qwen2MoeForCausalLM";  // in the list from 0.25.0
  EXPECT_TRUE(VllmRunnerV2Default(moe));
  moe.version = "0.24.0";
  EXPECT_FALSE(VllmRunnerV2Default(moe));
  moe.version = "0.27.0";
  moe.model->architecture = "DeepseekV4ForCausalLM";  // listed from 0.28.0
  EXPECT_FALSE(VllmRunnerV2Default(moe));
  // A hybrid (linear/mamba layers) is not a default-V2 model unless listed (0.27 on).
  PlanInput hybrid = VllmWith("qwen3-32b", "0.28.0");
  hybrid.model->layer_kind.assign(static_cast<size_t>(hybrid.model->layers), "full");
  hybrid.model->layer_kind[0] = "linear";
  hybrid.max_num_seqs = 256;
  EXPECT_FALSE(VllmRunnerV2Default(hybrid));
  EXPECT_EQ(VllmRunnerV2PersistentBytes(hybrid), 0.0);
}

}  // namespace
}  // namespace tpt::memory
