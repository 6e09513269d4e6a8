// vllm_model_test.cc: vLLM KV budget by era, blocks/tokens, the startup check, the
// max-model-len check and the minimum viable gpu_memory_utilization.
#include <cmath>

#include <gtest/gtest.h>

#include "memory/memory_model.h"

namespace tpt::memory {
namespace {

KvDims Gqa(int layers, int kv_heads, int head_dim, double elem = 2) {
  KvDims d;
  d.layers = layers;
  d.kv_heads = kv_heads;
  d.head_dim = head_dim;
  d.dtype_bytes = elem;
  return d;
}

TEST(VllmBytesPerTokenTest, GqaMlaAndReplication) {
  // Qwen2.5-7B: 28 layers x 2 x 4 heads x 128 x 2 B = 57,344 B (vllm-source.md §1.5 example).
  EXPECT_EQ(*VllmBytesPerToken(Gqa(28, 4, 128), 1), 57344);
  // 8 KV heads on TP 16: each rank keeps one head.
  EXPECT_EQ(*VllmBytesPerToken(Gqa(80, 8, 128), 16), 80 * 2 * 1 * 128 * 2);
  KvDims mla;
  mla.layers = 61;
  mla.kv_lora_rank = 512;
  mla.qk_rope_head_dim = 64;
  mla.dtype_bytes = 2;
  EXPECT_EQ(*VllmBytesPerToken(mla, 8), 61 * 576 * 2);  // independent of TP
  EXPECT_EQ(*VllmBytesPerToken(mla, 1), 61 * 576 * 2);
  EXPECT_FALSE(VllmBytesPerToken(Gqa(0, 8, 128), 1).ok());
}

// §1.5: 149,712 tokens x 57,344 B = 7.996 GiB, logged "Available KV cache memory: 8.0 GiB".
TEST(VllmKvPoolTest, TokensFromAvailableMemoryMatchKnowledgeExample) {
  VllmKvInput in;
  in.era = VllmEra::kV1StartupCheck;
  in.total_bytes = 20 * kGiB;
  in.free_at_init_bytes = 19 * kGiB;
  in.gpu_memory_utilization = 0.9;
  in.bytes_per_token = 57344;
  in.weights_bytes = in.total_bytes * 0.9 - 149712.0 * 57344;  // leaves exactly 9,357 blocks
  auto r = VllmKvPool(in);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->num_blocks, 9357);
  EXPECT_EQ(r->kv_tokens, 149712);
  EXPECT_NEAR(r->kv_bytes / kGiB, 7.996, 0.001);
  EXPECT_FALSE(r->fails);
}

// Anchored to a logged launch (samples/logs/vllm-v1-tp2-healthy.log, vLLM V1,
// Qwen3-32B at TP 2: 64 layers, 8 KV heads x 128, bf16): "Available KV cache
// memory: 37.73 GiB" on each worker, then "GPU KV cache size: 309,072 tokens".
// The bytes per token come from the model's shape, not from the answer.
TEST(VllmKvPoolTest, TokensOfALoggedLaunch) {
  auto per_token = VllmBytesPerToken(Gqa(64, 8, 128), 2);
  ASSERT_TRUE(per_token.ok());
  VllmKvInput in;
  in.era = VllmEra::kV1StartupCheck;
  in.total_bytes = 79.19 * kGiB;  // H100 80GB's cudaMemGetInfo total
  in.free_at_init_bytes = 78.6 * kGiB;
  in.gpu_memory_utilization = 0.9;  // the log's non-default args
  in.bytes_per_token = *per_token;
  // What the budget leaves for KV is the logged figure: the rest of the budget is non-KV use.
  in.weights_bytes = in.total_bytes * 0.9 - 37.73 * kGiB;
  auto r = VllmKvPool(in);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->kv_tokens, 309072) << "the log's GPU KV cache size";
  EXPECT_FALSE(r->fails);
}

// Corpus-style V0 case (v0.6.6, 8xL40S): 44.39 GiB x 0.92 = 40.84; weights 21.67, non-torch
// 0.36, activation 15.73 -> 3.09 GiB; 40,960 B/token (80 layers, 1 head per rank) -> 5,06x blocks.
TEST(VllmKvPoolTest, V0ProfilingArithmetic) {
  VllmKvInput in;
  in.era = VllmEra::kV0Profiling;
  in.total_bytes = 44.39 * kGiB;
  in.gpu_memory_utilization = 0.92;
  in.weights_bytes = 21.67 * kGiB;
  in.non_torch_bytes = 0.36 * kGiB;
  in.activation_peak_bytes = 15.73 * kGiB;
  in.bytes_per_token = *VllmBytesPerToken(Gqa(80, 8, 128), 8);
  in.max_model_len = 8192;
  auto r = VllmKvPool(in);
  ASSERT_TRUE(r.ok());
  EXPECT_NEAR(r->requested_bytes / kGiB, 40.84, 0.005);
  EXPECT_NEAR(r->kv_bytes / kGiB, 3.09, 0.02);  // four inputs each rounded to 0.005
  EXPECT_NEAR(static_cast<double>(r->num_blocks), 5065, 5065 * 0.01);  // the log: "# GPU blocks: 5065"
  EXPECT_FALSE(r->fails);
  EXPECT_EQ(r->estimated_max_model_len, r->num_blocks * 16);
}

TEST(VllmKvPoolTest, NegativeRestIsNoCacheBlocks) {
  VllmKvInput in;
  in.era = VllmEra::kV0Profiling;
  in.total_bytes = 79.11 * kGiB;
  in.gpu_memory_utilization = 0.9;
  in.weights_bytes = 70 * kGiB;
  in.activation_peak_bytes = 8 * kGiB;
  in.non_torch_bytes = 1 * kGiB;
  in.bytes_per_token = 131072;
  auto r = VllmKvPool(in);
  ASSERT_TRUE(r.ok());
  EXPECT_LT(r->kv_bytes, 0);
  EXPECT_EQ(r->num_blocks, 0);
  EXPECT_TRUE(r->no_cache_blocks);
  EXPECT_TRUE(r->fails);
  EXPECT_EQ(r->error.rfind("No available memory for the cache blocks.", 0), 0u);
  // (79 GiB of non-KV + one 2 MiB block) / 79.11 GiB -> 0.9987 -> 1.0: no util rescues it.
  EXPECT_DOUBLE_EQ(r->min_util_one_block, 1.0);
  in.weights_bytes = 60 * kGiB;  // now 69 GiB non-KV: 0.8722 -> 0.88
  auto fixed = VllmKvPool(in);
  EXPECT_DOUBLE_EQ(fixed->min_util_one_block, 0.88);
  in.gpu_memory_utilization = 0.88;
  EXPECT_FALSE(VllmKvPool(in)->fails);
  in.gpu_memory_utilization = 0.87;
  EXPECT_TRUE(VllmKvPool(in)->fails);
}

// V1 >= 0.9.1 startup check, with the exact text of corpus lines
// "Free memory on device (31.44/47.38 GiB) ... (0.95, 45.01 GiB)".
TEST(VllmKvPoolTest, StartupFreeMemoryCheck) {
  VllmKvInput in;
  in.era = VllmEra::kV1StartupCheck;
  in.total_bytes = 47.38 * kGiB;
  in.free_at_init_bytes = 31.44 * kGiB;
  in.gpu_memory_utilization = 0.95;
  in.weights_bytes = 10 * kGiB;
  in.bytes_per_token = 131072;
  auto r = VllmKvPool(in);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->startup_check_fails);
  EXPECT_TRUE(r->fails);
  EXPECT_EQ(r->error,
            "Free memory on device (31.44/47.38 GiB) on startup is less than desired GPU memory utilization "
            "(0.95, 45.01 GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.");
  EXPECT_DOUBLE_EQ(r->max_util_startup, 0.66);  // 31.44 / 47.38 = 0.6636
  // "(3.22/4.0 GiB) ... (0.9, 3.6 GiB)": Python prints 4.0, not 4.00.
  in.total_bytes = 4.0 * kGiB;
  in.free_at_init_bytes = 3.22 * kGiB;
  in.gpu_memory_utilization = 0.9;
  in.weights_bytes = 1 * kGiB;
  EXPECT_EQ(VllmKvPool(in)->error,
            "Free memory on device (3.22/4.0 GiB) on startup is less than desired GPU memory utilization "
            "(0.9, 3.6 GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.");
  // V0 has no such check: the same numbers only fail if the budget does.
  in.era = VllmEra::kV0Profiling;
  EXPECT_FALSE(VllmKvPool(in)->startup_check_fails);
}

// Where the budget counts this instance alone (V0 0.3.1 on; V1 has its startup check from
// 0.9.1), another process on the card leaves the budget's KV cache no physical room: the
// profiling run or the cache allocation runs out of memory. vllm#17431: Qwen3-8B at 0.4 on an
// 80 GB card; the whole-GPU eras charge the other process to the budget and size a smaller pool.
TEST(VllmKvPoolTest, AnotherProcessOnTheCardLeavesTheBudgetNoRoom) {
  VllmKvInput in;
  in.era = VllmEra::kV0Profiling;
  in.total_bytes = 79.15 * kGiB;
  in.gpu_memory_utilization = 0.4;
  in.weights_bytes = 15.27 * kGiB;
  in.non_torch_bytes = 0.06 * kGiB;
  in.activation_peak_bytes = 1.39 * kGiB;
  in.bytes_per_token = 147456;
  in.free_at_init_bytes = 40 * kGiB;  // 39 GiB held by another process: room for it all
  auto r = VllmKvPool(in);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->fails) << r->error;
  in.free_at_init_bytes = 20 * kGiB;  // 4.67 GiB after the weights, 14.94 asked
  r = VllmKvPool(in);
  EXPECT_TRUE(r->kv_alloc_oom);
  EXPECT_TRUE(r->fails);
  EXPECT_FALSE(r->no_cache_blocks);
  EXPECT_EQ(r->error.rfind("CUDA out of memory allocating the KV cache (14.94 GiB a rank)", 0), 0u) << r->error;
  // The largest utilization whose cache fits: (20 - 15.33 + 16.72) / 79.15 = 0.2702 -> 0.27.
  EXPECT_DOUBLE_EQ(r->max_util_physical, 0.27);
  in.gpu_memory_utilization = 0.27;
  EXPECT_FALSE(VllmKvPool(in)->kv_alloc_oom);
  // Less than the weights and the profiling peak: the profile itself runs out of memory first.
  in.free_at_init_bytes = 16 * kGiB;
  r = VllmKvPool(in);
  EXPECT_TRUE(r->profile_oom);
  EXPECT_FALSE(r->kv_alloc_oom);
  EXPECT_EQ(r->error.rfind("CUDA out of memory in the memory profiling run", 0), 0u) << r->error;
  // V1 before 0.9.1 charges the other process to the budget: no pool, not an allocation OOM.
  in.era = VllmEra::kV0NonTorchWholeGpu;
  in.free_at_init_bytes = 20 * kGiB;
  r = VllmKvPool(in);
  EXPECT_FALSE(r->kv_alloc_oom);
  EXPECT_TRUE(r->no_cache_blocks);
}

// V1 from 0.8.0 warms the sampler up after the KV cache and the graphs, from what they
// leave: free - weights - non-torch - KV - graphs; the profiling peak is released by then.
TEST(VllmKvPoolTest, SamplerWarmupAfterTheCache) {
  VllmKvInput in;
  in.era = VllmEra::kV1StartupCheck;
  in.total_bytes = 80 * kGiB;
  in.free_at_init_bytes = 79.5 * kGiB;
  in.gpu_memory_utilization = 0.99;  // 79.2 GiB asked
  in.weights_bytes = 60 * kGiB;
  in.activation_peak_bytes = 5 * kGiB;
  in.bytes_per_token = 262144;
  in.cuda_graph_bytes = 1 * kGiB;
  in.sampler_warmup_bytes = 4.9 * kGiB;
  in.sampler_warmup_requests = 1024;
  auto r = VllmKvPool(in);
  ASSERT_TRUE(r.ok());
  // KV = 79.2 - 65 = 14.2 GiB (floored to blocks); left = 79.5 - 60 - 14.2 - 1 = 4.3 GiB < 4.9.
  EXPECT_NEAR(r->left_for_sampler_bytes / kGiB, 79.5 - 60 - r->kv_bytes / kGiB - 1, 1e-9);
  EXPECT_TRUE(r->sampler_warmup_fails);
  EXPECT_TRUE(r->fails);
  EXPECT_EQ(r->error.rfind("CUDA out of memory occurred when warming up sampler with 1024 dummy requests.", 0), 0u);
  in.sampler_warmup_bytes = 4.2 * kGiB;
  EXPECT_FALSE(VllmKvPool(in)->fails);
  EXPECT_FALSE(VllmKvPool(in)->sampler_warmup_may_fail);
  // Where the warm-up may hold more than it was priced at (0.8.x FlashInfer's fallback,
  // vllm_sampler_warmup.h): 4.2 fits the 4.3 left, 4.8 would not; not a failure, not vouched for.
  in.sampler_warmup_high_bytes = 4.8 * kGiB;
  r = VllmKvPool(in);
  EXPECT_FALSE(r->fails);
  EXPECT_TRUE(r->sampler_warmup_may_fail);
  in.sampler_warmup_high_bytes = 0;
  in.sampler_warmup_bytes = 0;  // not checked (analyze's figures from a log)
  in.cuda_graph_bytes = 0;
  EXPECT_FALSE(VllmKvPool(in)->sampler_warmup_fails);
}

TEST(VllmKvPoolTest, MaxModelLenV1AndV0) {
  VllmKvInput in;
  in.era = VllmEra::kV1StartupCheck;
  in.total_bytes = 22.05 * kGiB;
  in.gpu_memory_utilization = 0.9;
  in.weights_bytes = 15 * kGiB;
  in.activation_peak_bytes = 1 * kGiB;
  in.bytes_per_token = 131072;  // 2 MiB blocks
  in.max_model_len = 32768;     // needs 4 GiB
  auto r = VllmKvPool(in);
  ASSERT_TRUE(r.ok());
  // kv = 19.845 - 16 = 3.845 GiB < 4 GiB.
  EXPECT_TRUE(r->max_len_too_long);
  EXPECT_TRUE(r->fails);
  EXPECT_EQ(r->estimated_max_model_len, r->num_blocks * 16);
  EXPECT_LT(r->estimated_max_model_len, 32768);
  EXPECT_NE(r->error.find("To serve at least one request with the models's max seq len (32768), (4.00 GiB KV cache"),
            std::string::npos);
  EXPECT_NE(r->error.find("the estimated maximum model length is " + std::to_string(r->estimated_max_model_len)),
            std::string::npos);
  ASSERT_TRUE(r->min_util_max_model_len.has_value());
  EXPECT_DOUBLE_EQ(*r->min_util_max_model_len, 0.91);  // (16 + 4) / 22.05 = 0.907
  in.gpu_memory_utilization = 0.91;
  EXPECT_FALSE(VllmKvPool(in)->fails);
  // V0: max_seq_len = block_size x (blocks // pp); with pp 2 only half the blocks count.
  in.era = VllmEra::kV0Profiling;
  in.pp = 2;
  auto v0 = VllmKvPool(in);
  EXPECT_TRUE(v0->max_len_too_long);
  EXPECT_EQ(v0->estimated_max_model_len, 16 * (v0->num_blocks / 2));
  EXPECT_EQ(v0->error.rfind("The model's max seq len (32768) is larger than the maximum number of tokens", 0), 0u);
}

// §1.3(g): from 0.21 the CUDA-graph estimate is inside the budget; before, graphs come
// out of what is left after the KV cache and can overflow it.
TEST(VllmKvPoolTest, CudaGraphsInsideOrOutsideBudget) {
  VllmKvInput in;
  in.total_bytes = 44.53 * kGiB;
  in.free_at_init_bytes = 44.0 * kGiB;
  in.gpu_memory_utilization = 0.98;
  in.weights_bytes = 20.64 * kGiB;
  in.non_torch_bytes = 0.28 * kGiB;
  in.activation_peak_bytes = 1.52 * kGiB;
  in.cuda_graph_bytes = 2.5 * kGiB;
  in.bytes_per_token = 65536;
  in.era = VllmEra::kV0Profiling;
  auto before = VllmKvPool(in);
  ASSERT_TRUE(before.ok());
  EXPECT_NEAR(before->kv_bytes / kGiB, 21.20, 0.01);  // corpus vllm-15598's "rest ... 21.20GiB"
  EXPECT_TRUE(before->graphs_overflow);  // 44 - 20.64 - 0.28 - 21.20 = 1.88 GiB < 2.5
  in.era = VllmEra::kV1GraphsInBudget;
  auto after = VllmKvPool(in);
  EXPECT_NEAR((before->kv_bytes - after->kv_bytes) / kGiB, 2.5, 1e-6);
  EXPECT_FALSE(after->graphs_overflow);
  EXPECT_DOUBLE_EQ(after->graphs_in_budget_bytes, in.cuda_graph_bytes);
}

TEST(VllmKvPoolTest, WholeGpuErasChargeOtherProcesses) {
  VllmKvInput in;
  in.total_bytes = 80 * kGiB;
  in.free_at_init_bytes = 60 * kGiB;  // 20 GiB held by another process
  in.gpu_memory_utilization = 0.9;
  in.weights_bytes = 30 * kGiB;
  in.bytes_per_token = 65536;
  in.era = VllmEra::kV0InstancePeak;
  double instance = VllmKvPool(in)->kv_bytes;
  in.era = VllmEra::kV0PeakWholeGpu;
  double whole = VllmKvPool(in)->kv_bytes;
  EXPECT_NEAR((instance - whole) / kGiB, 20, 1e-9);
}

TEST(VllmEraTest, VersionsMapToEras) {
  EXPECT_EQ(*VllmEraForVersion("0.2.7"), VllmEra::kV0PeakWholeGpu);
  EXPECT_EQ(*VllmEraForVersion("0.5.0.post1"), VllmEra::kV0InstancePeak);
  EXPECT_EQ(*VllmEraForVersion("0.6.4"), VllmEra::kV0NonTorchWholeGpu);
  EXPECT_EQ(*VllmEraForVersion("0.6.6"), VllmEra::kV0Profiling);
  EXPECT_EQ(*VllmEraForVersion("0.7.3"), VllmEra::kV0Profiling);
  EXPECT_EQ(*VllmEraForVersion("0.8.5"), VllmEra::kV0NonTorchWholeGpu);  // V1 default, before 0.9.1
  EXPECT_EQ(*VllmEraForVersion("0.8.5", "v0"), VllmEra::kV0Profiling);
  EXPECT_EQ(*VllmEraForVersion("0.11.0+582e4e37.nv25.11"), VllmEra::kV1StartupCheck);
  EXPECT_EQ(*VllmEraForVersion("0.23.1rc1"), VllmEra::kV1GraphsInBudget);
  EXPECT_FALSE(VllmEraForVersion("0.12.0", "v0").ok());
  EXPECT_FALSE(VllmEraForVersion("0.5.0", "v1").ok());
  EXPECT_FALSE(VllmEraForVersion("0.9.0", "v2").ok());
}

TEST(VllmKvPoolTest, RejectsBadInputs) {
  VllmKvInput in;
  in.total_bytes = 10 * kGiB;
  in.bytes_per_token = 1024;
  in.gpu_memory_utilization = 1.2;
  auto r = VllmKvPool(in);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("gpu_memory_utilization"), std::string::npos);
  in.gpu_memory_utilization = 0.9;
  in.free_at_init_bytes = 11 * kGiB;
  EXPECT_FALSE(VllmKvPool(in).ok());
}

// V1's hybrid KV cache groups (kv_cache_utils.py): gpt-oss (18 full + 18 sliding) is
// two groups of 18; Gemma-3-27B (10 full + 52 sliding) groups of 10, 1 + 6 groups. The
// logged pool is num_blocks // groups x block, num_blocks = available // page // 10.
TEST(VllmKvPoolTest, HybridGroupsAndTheWindowedMaxLenCheck) {
  VllmKvInput in;
  in.era = VllmEra::kV1StartupCheck;
  in.total_bytes = 80 * kGiB;
  in.gpu_memory_utilization = 0.9;
  in.weights_bytes = 60 * kGiB;
  in.bytes_per_token = 36 * 2048;
  in.full_layers = 18;
  in.sliding_layers = 18;
  in.sliding_window = 128;
  in.max_num_batched_tokens = 8192;
  in.max_model_len = 131072;
  auto r = VllmKvPool(in);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const double kv = 72 * kGiB - 60 * kGiB;
  EXPECT_EQ(r->kv_cache_groups, 2);
  EXPECT_EQ(r->group_size, 18);
  const int64_t blocks = static_cast<int64_t>(kv / (2048.0 * 16 * 18));
  EXPECT_EQ(r->num_blocks, blocks);
  EXPECT_EQ(r->kv_tokens, blocks / 2 * 16);
  // 131072 tokens need 18 x 131072 x 2048 B for the full layers and only
  // (cdiv(127 + 8192, 16) + 1) blocks per sliding layer: 4.8 GiB, not 9 GiB: it fits.
  EXPECT_FALSE(r->max_len_too_long);
  EXPECT_GT(r->estimated_max_model_len, 131072);
  // Every layer priced as full (V1 before the hybrid manager) would not hold it.
  in.full_layers = in.sliding_layers = 0;
  in.weights_bytes = 64 * kGiB;
  auto full = VllmKvPool(in);
  ASSERT_TRUE(full.ok());
  EXPECT_TRUE(full->max_len_too_long);
  in.full_layers = in.sliding_layers = 18;
  auto hybrid = VllmKvPool(in);
  ASSERT_TRUE(hybrid.ok());
  EXPECT_FALSE(hybrid->max_len_too_long);
  EXPECT_EQ(hybrid->kv_tokens, full->kv_tokens);  // two groups of 18 report what 36 full layers would

  VllmKvInput g = in;
  g.weights_bytes = 60 * kGiB;
  g.bytes_per_token = 62 * 8192;
  g.full_layers = 10;
  g.sliding_layers = 52;
  g.sliding_window = 1024;
  auto gr = VllmKvPool(g);
  ASSERT_TRUE(gr.ok());
  EXPECT_EQ(gr->group_size, 10);
  EXPECT_EQ(gr->kv_cache_groups, 7);
  EXPECT_EQ(gr->kv_tokens, static_cast<int64_t>(kv / (8192.0 * 16 * 10)) / 7 * 16);
}

// Mamba hybrids: the attention block grows until one page holds a layer's state.
TEST(VllmKvPoolTest, MambaLayersWidenTheAttentionBlock) {
  VllmKvInput in;
  in.era = VllmEra::kV1StartupCheck;
  in.total_bytes = 80 * kGiB;
  in.gpu_memory_utilization = 0.9;
  in.weights_bytes = 40 * kGiB;
  in.bytes_per_token = 12 * 1024;  // 12 full layers, 1 KV head x 256 x 2 x 2 B
  in.full_layers = 12;
  in.mamba_layers = 36;
  in.mamba_bytes_per_request = 36 * 0.55 * kMiB;
  auto r = VllmKvPool(in);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const int bs = static_cast<int>(16 * std::ceil(0.55 * kMiB / (16 * 1024.0)));
  EXPECT_EQ(r->hybrid_block_size, bs);
  EXPECT_EQ(r->group_size, 12);
  EXPECT_EQ(r->kv_cache_groups, 4);
  EXPECT_EQ(r->kv_tokens, static_cast<int64_t>(32 * kGiB / (1024.0 * bs * 12)) / 4 * bs);
}

// From 0.20.1 (vllm#41069, _report_kv_cache_config) "GPU KV cache size" is
// int(max_concurrency x max_model_len); before, num_blocks // groups x block. Two logged
// launches, from the pool their logs state:
// - Qwen3.5-4B on vLLM 0.23.0 (datawhalechina/self-llm, RTX 4090 D, max_model_len 4096):
//   8 full + 24 gated-delta-net layers, the recurrent state in float32 (the config's
//   mamba_ssm_dtype): 2,146,304 B a layer -> blocks of 528 tokens, groups of 8 (1 + 3);
//   "Available KV cache memory: 10.21 GiB" = 633 blocks; a request: 8 + 3 = 11
//   blocks at 4,096 -> 57.55x, "GPU KV cache size: 235,706 tokens".
// - MedGemma-27B (Gemma-3) on vLLM 0.26.0, FP8 KV, L40S, max_model_len 65,536: 10 full +
//   52 sliding (1024) layers, groups of 10 (1 + 6); 17,307 blocks ("10.56 GiB"); a request
//   4,096 + 6 x (cdiv(1023 + 4,096, 16) + 1) = 6,022 blocks -> 2.87x, "188,347 tokens".
TEST(VllmKvPoolTest, LoggedSizeIsConcurrencyTimesLenFrom0201) {
  EXPECT_FALSE(VllmKvSizeFromConcurrency("0.20.0"));
  EXPECT_TRUE(VllmKvSizeFromConcurrency("0.20.1"));
  EXPECT_TRUE(VllmKvSizeFromConcurrency("0.23.0"));
  EXPECT_FALSE(VllmKvSizeFromConcurrency("not a version"));
  EXPECT_EQ(VllmSlidingReserveTokens("0.25.1", 2048), 2048);
  EXPECT_EQ(VllmSlidingReserveTokens("0.26.0", 2048), 4096);

  VllmKvInput q;
  q.era = VllmEra::kV1StartupCheck;
  q.total_bytes = 24 * kGiB;
  q.gpu_memory_utilization = 0.9;
  q.weights_bytes = 21.6 * kGiB - 10.21 * kGiB;
  q.bytes_per_token = 8 * 2 * 4 * 256 * 2;
  q.full_layers = 8;
  q.mamba_layers = 24;
  q.mamba_bytes_per_request = 24.0 * ((2 * 16 * 128 + 32 * 128) * 3 * 2 + 32 * 128 * 128 * 4);
  q.max_model_len = 4096;
  q.max_num_batched_tokens = 2048;
  q.kv_size_from_concurrency = true;
  auto r = VllmKvPool(q);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->hybrid_block_size, 528);
  EXPECT_EQ(r->kv_cache_groups, 4);
  EXPECT_EQ(r->num_blocks, 633);
  EXPECT_EQ(r->kv_tokens, 235706);
  EXPECT_EQ(r->pool_tokens, 633 / 4 * 528);
  EXPECT_NEAR(r->max_concurrency, 57.55, 0.005);
  q.kv_size_from_concurrency = false;  // 0.20.0 and before
  r = VllmKvPool(q);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->kv_tokens, 633 / 4 * 528);

  VllmKvInput g;
  g.era = VllmEra::kV1GraphsInBudget;
  g.total_bytes = 44 * kGiB;
  g.gpu_memory_utilization = 1.0;
  const double page10 = 16.0 * 2 * 16 * 128 * 10;  // one block of a group of 10 fp8 layers
  g.weights_bytes = 44 * kGiB - 17307.5 * page10;
  g.bytes_per_token = 62 * 2 * 16 * 128;
  g.full_layers = 10;
  g.sliding_layers = 52;
  g.sliding_window = 1024;
  g.max_model_len = 65536;
  g.max_num_batched_tokens = VllmSlidingReserveTokens("0.26.0", 2048);
  g.kv_size_from_concurrency = true;
  r = VllmKvPool(g);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->num_blocks, 17307);
  EXPECT_EQ(r->kv_tokens, 188347);
  EXPECT_NEAR(r->max_concurrency, 2.87, 0.005);
  EXPECT_EQ(r->pool_tokens, 17307 / 7 * 16);
  // At 0.25 a sliding group holds the window and one batch: 5,254 blocks a request.
  g.max_num_batched_tokens = VllmSlidingReserveTokens("0.25.0", 2048);
  r = VllmKvPool(g);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->kv_tokens, static_cast<int64_t>(17307.0 / 5254 * 65536));

  // One group: the same figure as blocks x block unless max_model_len ends inside a block.
  VllmKvInput d;
  d.era = VllmEra::kV1GraphsInBudget;
  d.total_bytes = 80 * kGiB;
  d.weights_bytes = 60 * kGiB;
  d.bytes_per_token = 131072;
  d.max_model_len = 32768;
  d.kv_size_from_concurrency = true;
  r = VllmKvPool(d);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->kv_tokens, r->num_blocks * 16);
  d.max_model_len = 29000;  // 1,813 blocks hold 29,008 tokens
  r = VllmKvPool(d);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->kv_tokens, static_cast<int64_t>(static_cast<double>(r->num_blocks) / 1813 * 29000));
  EXPECT_LT(r->kv_tokens, r->pool_tokens);
}

}  // namespace
}  // namespace tpt::memory
