// launch_command_test.cc: the launch line of each server (flag names from each server's
// source, launch_command.h) and the defaults it leaves in place, said once.
#include "memory/launch_command.h"

#include <algorithm>

#include <gtest/gtest.h>

namespace tpt::memory {
namespace {

LaunchSpec Spec(const std::string& fw) {
  LaunchSpec s;
  s.framework = fw;
  s.model = "/models/Llama-3.1-70B-Instruct";
  s.tp = 4;
  s.context_length = 32768;
  s.fraction = 0.85;
  return s;
}

// Each default is said once, and none of them names a flag the command sets.
void SaidOnce(const LaunchLine& l) {
  for (size_t i = 0; i < l.defaults.size(); ++i) {
    const std::string flag = l.defaults[i].substr(0, l.defaults[i].find(':'));
    for (size_t k = i + 1; k < l.defaults.size(); ++k) EXPECT_NE(l.defaults[k].rfind(flag, 0), 0u) << flag;
    if (flag.rfind("--", 0) == 0) EXPECT_EQ(l.command.find(flag + " "), std::string::npos) << flag << " in " << l.command;
  }
}

TEST(LaunchCommandTest, TgiShardsAndLimits) {
  auto l = RenderLaunch(Spec("tgi"));
  ASSERT_TRUE(l.ok()) << l.status().ToString();
  EXPECT_EQ(l->command,
            "text-generation-launcher --model-id /models/Llama-3.1-70B-Instruct --num-shard 4 --max-input-tokens 32767 "
            "--max-total-tokens 32768 --cuda-memory-fraction 0.85");
  ASSERT_EQ(l->defaults.size(), 1u);
  EXPECT_NE(l->defaults[0].find("--max-batch-prefill-tokens: TGI's default (v3: the launcher's by card"), std::string::npos);
  SaidOnce(*l);
  LaunchSpec s = Spec("tgi");
  s.fraction.reset();
  s.kv_cache_dtype = "fp8";
  s.tp = 1;
  l = RenderLaunch(s);
  ASSERT_TRUE(l.ok());
  EXPECT_NE(l->command.find("--kv-cache-dtype fp8_e4m3"), std::string::npos) << l->command;
  EXPECT_EQ(l->command.find("--num-shard"), std::string::npos);
  EXPECT_EQ(l->defaults.size(), 3u);  // num-shard 1, prefill tokens, memory fraction 1.0
  SaidOnce(*l);
  s.pp = 2;
  auto no = RenderLaunch(s);
  ASSERT_FALSE(no.ok());
  EXPECT_NE(no.status().message().find("TGI"), std::string::npos);
}

// vLLM's offline class: the same values as LLM(...)'s keywords (EngineArgs' field names), the
// multimodal limits as a dict, and the class said once among the defaults.
TEST(LaunchCommandTest, VllmOfflineClassCall) {
  LaunchSpec s = Spec("vllm");
  s.vllm_llm_class = true;
  s.max_batch_tokens = 8192;
  s.kv_cache_dtype = "fp8";
  s.mm_limits_images = 2;
  s.mm_limits_videos = 0;
  auto l = RenderLaunch(s);
  ASSERT_TRUE(l.ok()) << l.status().ToString();
  EXPECT_EQ(l->command,
            "LLM(model=\"/models/Llama-3.1-70B-Instruct\", tensor_parallel_size=4, gpu_memory_utilization=0.85, "
            "max_model_len=32768, kv_cache_dtype=\"fp8\", max_num_batched_tokens=8192, "
            "limit_mm_per_prompt={\"image\": 2, \"video\": 0})");
  ASSERT_EQ(l->defaults.size(), 1u);
  EXPECT_EQ(l->defaults[0].rfind("LLM(...):", 0), 0u);
  s.vllm_llm_class = false;
  l = RenderLaunch(s);
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l->command.rfind("vllm serve /models/Llama-3.1-70B-Instruct --tensor-parallel-size 4", 0), 0u) << l->command;
}

TEST(LaunchCommandTest, TensorRtLlmServe) {
  LaunchSpec s = Spec("trtllm");
  s.max_batch_size = 64;
  auto l = RenderLaunch(s);
  ASSERT_TRUE(l.ok()) << l.status().ToString();
  EXPECT_EQ(l->command,
            "trtllm-serve /models/Llama-3.1-70B-Instruct --backend pytorch --tp_size 4 --max_seq_len 32768 "
            "--max_batch_size 64 --kv_cache_free_gpu_memory_fraction 0.85");
  ASSERT_EQ(l->defaults.size(), 1u);
  EXPECT_EQ(l->defaults[0], "--max_num_tokens: 8192 (BuildConfig's default)");
  s.kv_cache_dtype = "fp8_e4m3";
  s.fraction.reset();
  l = RenderLaunch(s);
  ASSERT_TRUE(l.ok());
  EXPECT_NE(l->command.find("--extra_llm_api_options kv_cache_fp8.yaml"), std::string::npos);
  EXPECT_TRUE(std::any_of(l->defaults.begin(), l->defaults.end(),
                          [](const std::string& d) { return d.find("kv_cache_config: {dtype: fp8}") != std::string::npos; }));
  EXPECT_TRUE(std::any_of(l->defaults.begin(), l->defaults.end(), [](const std::string& d) {
    return d.rfind("--kv_cache_free_gpu_memory_fraction: 0.9", 0) == 0;
  }));
  SaidOnce(*l);
}

TEST(LaunchCommandTest, LmdeployApiServer) {
  LaunchSpec s = Spec("lmdeploy");
  s.kv_cache_dtype = "int8";
  auto l = RenderLaunch(s);
  ASSERT_TRUE(l.ok()) << l.status().ToString();
  EXPECT_EQ(l->command,
            "lmdeploy serve api_server /models/Llama-3.1-70B-Instruct --tp 4 --session-len 32768 "
            "--cache-max-entry-count 0.85 --quant-policy 8");
  EXPECT_EQ(l->defaults.size(), 2u);  // max batch size, prefill tokens
  SaidOnce(*l);
  s.kv_cache_dtype = "fp8";
  l = RenderLaunch(s);
  ASSERT_TRUE(l.ok());
  EXPECT_TRUE(std::any_of(l->defaults.begin(), l->defaults.end(),
                          [](const std::string& d) { return d.find("int8, not fp8") != std::string::npos; }));
  s.kv_cache_dtype = "fp4";
  EXPECT_FALSE(RenderLaunch(s).ok());
}

// A plan priced with --dtype fp8 on a 16-bit checkpoint (weights quantized at load) puts
// the server's own switch on the line: SGLang's and vLLM's --quantization fp8, TGI's
// --quantize fp8; trtllm-serve and LMDeploy quantize nothing at load, which is said
// (launches14: a Grok-2 SGLang plan with --dtype fp8 printed a line without it).
TEST(LaunchCommandTest, WeightsQuantizedAtLoadAreOnTheLineOrSaid) {
  for (const char* fw : {"sglang", "vllm"}) {
    LaunchSpec s = Spec(fw);
    s.quantize_fp8 = true;
    auto l = RenderLaunch(s);
    ASSERT_TRUE(l.ok()) << fw;
    EXPECT_NE(l->command.find(" --quantization fp8"), std::string::npos) << l->command;
    s.quantize_fp8 = false;
    EXPECT_EQ(RenderLaunch(s)->command.find("--quantization"), std::string::npos) << fw;
  }
  LaunchSpec t = Spec("tgi");
  t.quantize_fp8 = true;
  EXPECT_NE(RenderLaunch(t)->command.find(" --quantize fp8"), std::string::npos);
  for (const char* fw : {"trtllm", "lmdeploy"}) {
    LaunchSpec s = Spec(fw);
    s.quantize_fp8 = true;
    auto l = RenderLaunch(s);
    ASSERT_TRUE(l.ok()) << fw;
    EXPECT_EQ(l->command.find("fp8"), std::string::npos) << l->command;
    EXPECT_TRUE(std::any_of(l->defaults.begin(), l->defaults.end(),
                            [](const std::string& d) { return d.rfind("weights: ", 0) == 0 && d.find("FP8") != std::string::npos; }))
        << fw;
    SaidOnce(*l);
  }
}

TEST(LaunchCommandTest, SglangAndVllmKeepTheirFlagsAndUnknownServersAreNamed) {
  auto sg = RenderLaunch(Spec("sglang"));
  ASSERT_TRUE(sg.ok());
  EXPECT_EQ(sg->command, "python -m sglang.launch_server --model-path /models/Llama-3.1-70B-Instruct --tp-size 4 "
                         "--mem-fraction-static 0.85 --context-length 32768");
  auto vl = RenderLaunch(Spec("vllm"));
  ASSERT_TRUE(vl.ok());
  EXPECT_EQ(vl->command, "vllm serve /models/Llama-3.1-70B-Instruct --tensor-parallel-size 4 "
                         "--gpu-memory-utilization 0.85 --max-model-len 32768");
  auto x = RenderLaunch(Spec("ollama"));
  ASSERT_FALSE(x.ok());
  EXPECT_NE(x.status().message().find("'ollama'"), std::string::npos);
}

}  // namespace
}  // namespace tpt::memory
