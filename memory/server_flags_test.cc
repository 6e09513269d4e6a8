// server_flags_test.cc: a remedy's flag worded for the server that will read it.
#include "memory/server_flags.h"

#include <string>

#include <gtest/gtest.h>

namespace tpt::memory {
namespace {

struct Said {
  Spelling how;
  std::string flag, value;
};

Said For(const std::string& framework, std::string flag, std::string value) {
  Spelling how = SpellForServer(framework, &flag, &value);
  return {how, flag, value};
}

TEST(ServerFlags, TensorParallelIsEachServersOwnFlag) {
  EXPECT_EQ(For("tgi", "--tensor-parallel-size", "4").flag, "--num-shard");
  EXPECT_EQ(For("tgi", "--tensor-parallel-size", "4").value, "4");
  EXPECT_EQ(For("trtllm", "--tensor-parallel-size", "4").flag, "--tp_size");
  EXPECT_EQ(For("lmdeploy", "--tp-size", "2").flag, "--tp");
  EXPECT_EQ(For("vllm", "--tp-size", "2").flag, "--tensor-parallel-size");
  // SGLang takes --tp-size and --tp alike: a rule's --tp-size stays.
  EXPECT_EQ(For("sglang", "--tp-size", "2").how, Spelling::kKept);
  EXPECT_EQ(For("sglang", "--tensor-parallel-size", "2").flag, "--tp");
}

TEST(ServerFlags, Fp8WeightsWhereTheServerHasAFlagAndNoneWhereItHasNot) {
  Said tgi = For("tgi", "--quantization", "fp8");
  EXPECT_EQ(tgi.how, Spelling::kRespelled);
  EXPECT_EQ(tgi.flag, "--quantize");
  EXPECT_EQ(tgi.value, "fp8");
  // trtllm-serve and LMDeploy take FP8 weights only as a quantized checkpoint.
  EXPECT_EQ(For("trtllm", "--quantization", "fp8").how, Spelling::kNoSuchFlag);
  EXPECT_EQ(For("lmdeploy", "--quantization", "fp8").how, Spelling::kNoSuchFlag);
  EXPECT_EQ(For("vllm", "--quantization", "fp8").how, Spelling::kKept);
}

TEST(ServerFlags, NoCudaGraphsAndContextAndKvCache) {
  EXPECT_EQ(For("vllm", "--disable-cuda-graph", "").flag, "--enforce-eager");
  Said tgi = For("tgi", "--disable-cuda-graph", "");
  EXPECT_EQ(tgi.flag, "--cuda-graphs");
  EXPECT_EQ(tgi.value, "0");
  // A rule that already speaks the server's flag keeps its own value.
  EXPECT_EQ(For("tgi", "--cuda-graphs", "").how, Spelling::kKept);
  EXPECT_EQ(For("lmdeploy", "--enforce-eager", "").flag, "--eager-mode");
  EXPECT_EQ(For("trtllm", "--enforce-eager", "").how, Spelling::kNoSuchFlag);
  EXPECT_EQ(For("sglang", "--max-model-len", "8192").flag, "--context-length");
  EXPECT_EQ(For("lmdeploy", "--max-model-len", "8192").flag, "--session-len");
  Said kv = For("lmdeploy", "--kv-cache-dtype", "fp8");
  EXPECT_EQ(kv.flag, "--quant-policy");
  EXPECT_EQ(kv.value, "8");
  EXPECT_EQ(For("trtllm", "--kv-cache-dtype", "fp8").how, Spelling::kNoSuchFlag);
  // 'auto' is no 8-bit cache: never LMDeploy's --quant-policy 8.
  EXPECT_EQ(For("lmdeploy", "--kv-cache-dtype", "auto").how, Spelling::kNoSuchFlag);
  EXPECT_EQ(For("sglang", "--kv-cache-dtype", "auto").how, Spelling::kKept);
  // SGLang has no bare 'fp8' value.
  Said sg = For("sglang", "--kv-cache-dtype", "fp8");
  EXPECT_EQ(sg.how, Spelling::kRespelled);
  EXPECT_EQ(sg.value, "fp8_e4m3");
  EXPECT_EQ(For("vllm", "--kv-cache-dtype", "fp8").how, Spelling::kKept);
}

TEST(ServerFlags, AMemoryFractionIsTheServersFlagWithoutTheValue) {
  // The fractions measure different things on each server: the flag, not the value.
  Said trt = For("trtllm", "--gpu-memory-utilization", "0.95");
  EXPECT_EQ(trt.how, Spelling::kRespelled);
  EXPECT_EQ(trt.flag, "--kv_cache_free_gpu_memory_fraction");
  EXPECT_EQ(trt.value, "");
  EXPECT_EQ(For("sglang", "--gpu-memory-utilization", "").flag, "--mem-fraction-static");
  EXPECT_EQ(For("vllm", "--gpu-memory-utilization", "0.95").how, Spelling::kKept);
}

TEST(ServerFlags, OtherFlagsAreKept) {
  // SGLang's own --max-total-tokens (its pool's cap) is not TGI's context flag.
  EXPECT_EQ(For("sglang", "--max-total-tokens", "32768").how, Spelling::kKept);
  EXPECT_EQ(For("vllm", "--max-total-tokens", "32768").flag, "--max-model-len");
  EXPECT_EQ(For("vllm", "--disable-custom-all-reduce", "").how, Spelling::kKept);
  EXPECT_EQ(For("generic", "--disable-custom-all-reduce", "").how, Spelling::kKept);
}

// A run whose server the log does not name: a flag several servers spell alike
// is kept, one only a single server spells so is nobody's to give (vLLM's
// --enforce-eager to what may be a TensorRT-LLM run).
TEST(ServerFlags, UnknownServersGetOnlyFlagsSeveralServersSpellAlike) {
  EXPECT_EQ(For("", "--quantization", "fp8").how, Spelling::kKept);           // vLLM, SGLang
  EXPECT_EQ(For("cuda", "--kv-cache-dtype", "fp8_e4m3").how, Spelling::kKept);  // vLLM, SGLang, TGI
  EXPECT_EQ(For("cuda", "--enforce-eager", "").how, Spelling::kNoSuchFlag);
  EXPECT_EQ(For("torch", "--disable-cuda-graph", "").how, Spelling::kNoSuchFlag);
  EXPECT_EQ(For("generic", "--tensor-parallel-size", "2").how, Spelling::kNoSuchFlag);
  EXPECT_EQ(For("", "--gpu-memory-utilization", "0.8").how, Spelling::kNoSuchFlag);
  // The same flags for a server that has them stay.
  EXPECT_EQ(For("vllm", "--enforce-eager", "").how, Spelling::kKept);
  EXPECT_EQ(For("sglang", "--enforce-eager", "").flag, "--disable-cuda-graph");
  EXPECT_EQ(For("trtllm", "--enforce-eager", "").how, Spelling::kNoSuchFlag);
}

}  // namespace
}  // namespace tpt::memory
