// launch_plan_test.cc: MakePlan end to end on the library level (the CLI test runs the binary).
#include <gtest/gtest.h>

#include "memory/launch_plan.h"
#include "memory/vllm_cold_compile.h"
#include "memory/vllm_fi_allreduce.h"
#include "memory/vllm_nccl_connect.h"
#include "memory/vllm_runner_v2.h"

namespace tpt::memory {
namespace {

PlanInput FoundingSglang(double f) {
  PlanInput in;
  in.framework = "sglang";
  in.version = "0.5.3";
  in.total_bytes = 95 * kGiB;
  in.free_at_init_bytes = 94 * kGiB;
  in.avail_after_weights_bytes = 21.7 * kGiB;
  in.cell_bytes = 65536;
  in.mem_fraction_static = f;
  in.tp = 8;  // the founding run: TP 8 (the figures are a rank's)
  return in;
}

TEST(PlanTest, FoundingCasePredictsNoRoomWithRemedy) {
  auto p = MakePlan(FoundingSglang(0.5));
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_FALSE(p->fits);
  EXPECT_EQ(p->failure, "kv_pool_no_room");
  EXPECT_NEAR(p->row.left_bytes / kGiB, -25.3, 1e-6);
  EXPECT_NEAR(p->row.weights_bytes / kGiB, 72.3, 1e-6);
  EXPECT_NEAR(p->row.reserved_bytes / kGiB, 47.0, 1e-6);
  ASSERT_GE(p->remedies.size(), 2u);
  // The value that serves first: SGLang's own headroom at TP 8 on a 95 GiB card
  // (512 + 1.5 x 8192 + 2 x 512 + 1024 MB = 14.5 GiB of 94) gives 0.84; then the floor
  // 0.77, which starts the server with about 81 MiB of KV (1,310 tokens).
  EXPECT_EQ(p->remedies[0].flag, "--mem-fraction-static");
  EXPECT_EQ(p->remedies[0].value, "0.84");
  EXPECT_NE(p->remedies[0].why.find("each +0.01 adds 0.94 GiB a rank"), std::string::npos) << p->remedies[0].why;
  EXPECT_EQ(p->remedies[0].direction, "increase");
  EXPECT_EQ(p->remedies[1].value, "0.77");
  EXPECT_NE(p->remedies[1].why.find("1,310 tokens"), std::string::npos) << p->remedies[1].why;
  nlohmann::json j = PlanToJson(*p);
  EXPECT_EQ(j["failure"], "kv_pool_no_room");
  // Byte counts are whole bytes in JSON.
  EXPECT_TRUE(j["ledger"][0]["left_bytes"].is_number_integer());
  EXPECT_NEAR(j["ledger"][0]["left_bytes"].get<double>(), p->row.left_bytes, 0.5);
  EXPECT_DOUBLE_EQ(j["figures"]["min_viable_mem_fraction_static"].get<double>(), 0.77);
  EXPECT_NE(PlanToText(*p).find("(shortfall)"), std::string::npos);
}

TEST(PlanTest, SglangFitsAndLedgerBalances) {
  auto p = MakePlan(FoundingSglang(0.85));
  ASSERT_TRUE(p.ok());
  EXPECT_TRUE(p->fits);
  EXPECT_GT(p->kv_tokens, 0);
  // Everything free at init is weights + reserved + KV (+ < one cell of rounding).
  EXPECT_NEAR(p->row.left_bytes, 0, 65536);
}

TEST(PlanTest, SglangDefaultFractionAndModelDims) {
  PlanInput in;
  in.framework = "sglang";
  in.version = "0.4.3.post4";
  in.total_bytes = 22.05 * kGiB;  // L4
  in.tp = 4;
  in.weights_bytes = 15.54 * kGiB;
  in.dims.layers = 64;
  in.dims.kv_heads = 8;
  in.dims.head_dim = 128;
  auto p = MakePlan(in);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->cell_bytes, 65536);
  EXPECT_DOUBLE_EQ(p->fraction, 0.85);  // tp>=4 row of the table
  EXPECT_NE(p->fraction_source.find("default"), std::string::npos);
  EXPECT_FALSE(p->assumptions.empty());  // free at init was derived
  EXPECT_LT(p->free_at_init_bytes, in.total_bytes);
}

// A launch without --mem-fraction-static runs at SGLang's default, and the plan says what that
// choice is worth: v0.2-v0.4's pool is the free memory after the weights less (1 - fraction) x
// the free memory at init (profile_max_num_token), so 0.01 of the flag moves it by 0.01 x the
// free memory at init. Given, the flag is the launch's and nothing is said.
TEST(PlanTest, SglangDefaultFractionSaysWhatEachHundredthMoves) {
  PlanInput in;
  in.framework = "sglang";
  in.version = "0.4.3.post2";
  in.total_bytes = 79.11 * kGiB;
  in.free_at_init_bytes = 77.0 * kGiB;
  in.tp = 16;
  in.weights_bytes = 40.61 * kGiB;
  in.dims.layers = 61;
  in.dims.kv_lora_rank = 512;
  in.dims.qk_rope_head_dim = 64;
  auto p = MakePlan(in);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_DOUBLE_EQ(p->fraction, 0.79);
  std::string said;
  for (const auto& a : p->assumptions) {
    if (a.rfind("--mem-fraction-static not in the launch", 0) == 0) said = a;
  }
  EXPECT_NE(said.find("default 0.79 is taken; each 0.01 less takes 0.77 GiB"), std::string::npos) << said;
  in.mem_fraction_static = 0.79;
  auto given = MakePlan(in);
  ASSERT_TRUE(given.ok());
  EXPECT_EQ(given->kv_tokens, p->kv_tokens);
  for (const auto& a : given->assumptions) EXPECT_NE(a.rfind("--mem-fraction-static not in the launch", 0), 0u) << a;
}

TEST(PlanTest, SglangContextTooLong) {
  auto in = FoundingSglang(0.8);
  in.context_length = 131072;
  auto p = MakePlan(in);
  ASSERT_TRUE(p.ok());
  EXPECT_FALSE(p->fits);
  EXPECT_EQ(p->failure, "kv_pool_too_small");
  ASSERT_GE(p->remedies.size(), 3u);
  EXPECT_EQ(p->remedies[0].value, "0.86");  // useful: holds one 131072-token request
  EXPECT_EQ(p->remedies[1].value, "0.77");  // the floor
  EXPECT_EQ(p->remedies[2].flag, "--context-length");
  EXPECT_EQ(p->remedies[2].value, std::to_string(p->kv_tokens));
  // Applying the useful remedy fits.
  in.mem_fraction_static = 0.86;
  auto fixed = MakePlan(in);
  ASSERT_TRUE(fixed.ok());
  EXPECT_TRUE(fixed->fits);
  EXPECT_GE(fixed->kv_tokens, 131072);
}

TEST(PlanTest, SglangGraphsLargerThanReservedSlice) {
  auto in = FoundingSglang(0.9);  // reserved 9.4 GiB
  in.cuda_graph_max_bs = 512;
  in.cuda_graph_bytes = 12 * kGiB;
  auto p = MakePlan(in);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->failure, "cuda_graph_capture_oom");
  bool bs_remedy = false;
  for (const auto& r : p->remedies) {
    if (r.flag == "--cuda-graph-max-bs") {
      bs_remedy = true;
      EXPECT_EQ(r.value, "401");  // 9.4 / (12/512) = 401.07
    }
  }
  EXPECT_TRUE(bs_remedy);
}

TEST(PlanTest, VllmStartupCheckOnACardOfUnknownFamilyIsNoConfidentFailure) {
  // LMCache/LMCache#3430: an RTX A5000 given by its size (23.56 GiB), vLLM 0.21.0 at
  // --gpu-memory-utilization 0.9764: the check needs 23.00 GiB free. Hopper's context
  // figure (0.61 GiB) fails it, an Ampere card's (0.29) passes; the server started with a
  // 46,368-token pool. The plan sizes the pool and says the check is not certain.
  PlanInput in;
  in.framework = "vllm";
  in.version = "0.21.0";
  in.total_bytes = 23.56 * kGiB;
  in.gpu_memory_utilization = 0.9764;
  in.weights_bytes = 15.27 * kGiB;
  in.activation_peak_bytes = 0.6 * kGiB;
  in.dims.layers = 36;
  in.dims.kv_heads = 8;
  in.dims.head_dim = 128;
  in.context_length = 16384;
  auto p = MakePlan(in);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_TRUE(p->fits) << p->failure;
  EXPECT_FALSE(p->outcome_certain);
  EXPECT_GT(p->kv_tokens, 40000);
  bool said = false;
  for (const auto& u : p->unknowns) said |= u.find("startup check needs 23.00 GiB") != std::string::npos;
  EXPECT_TRUE(said);
  // A card whose family is known keeps its figure, and a measured free memory decides.
  in.gpu_arch = "hopper";
  auto hopper = MakePlan(in);
  ASSERT_TRUE(hopper.ok());
  EXPECT_EQ(hopper->failure, "startup_free_memory_short");
  in.gpu_arch.clear();
  in.free_at_init_bytes = 22.9 * kGiB;
  auto measured = MakePlan(in);
  ASSERT_TRUE(measured.ok());
  EXPECT_EQ(measured->failure, "startup_free_memory_short");
  EXPECT_TRUE(measured->outcome_certain);
}

TEST(PlanTest, VllmStartupCheckAndRemedy) {
  PlanInput in;
  in.framework = "vllm";
  in.version = "0.10.1";
  in.total_bytes = 47.38 * kGiB;
  in.free_at_init_bytes = 31.44 * kGiB;
  in.gpu_memory_utilization = 0.95;
  in.weights_bytes = 10 * kGiB;
  in.dims.layers = 32;
  in.dims.kv_heads = 8;
  in.dims.head_dim = 128;
  auto p = MakePlan(in);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->failure, "startup_free_memory_short");
  EXPECT_NEAR(p->row.left_bytes / kGiB, 31.44 - 47.38 * 0.95, 1e-6);
  ASSERT_FALSE(p->remedies.empty());
  EXPECT_EQ(p->remedies[0].flag, "--gpu-memory-utilization");
  // 0.66 passes the startup check but leaves 0.17 GiB outside the budget for the CUDA
  // graphs V1 captures afterwards (0.25 GiB estimated): 0.65 is the value that starts.
  EXPECT_EQ(p->remedies[0].value, "0.65");
  EXPECT_EQ(p->remedies[0].direction, "decrease");
  in.gpu_memory_utilization = 0.65;
  auto fixed = MakePlan(in);
  EXPECT_TRUE(fixed->fits) << fixed->error;
  in.gpu_memory_utilization = 0.66;
  EXPECT_EQ(MakePlan(in)->failure, "cuda_graph_capture_oom");
}

// A capture OOM's remedies are planned again: the largest utilization whose smaller pool
// leaves the graphs room, and --enforce-eager; the graphs' room is what the KV cache leaves
// physically free, which before 0.9.1 (whole-GPU non-torch) is larger than the budget's
// remainder by what was in use before the launch.
TEST(PlanTest, VllmCaptureOomRemediesArePlannedAgain) {
  PlanInput in;
  in.framework = "vllm";
  in.version = "0.8.5";
  in.total_bytes = 24 * kGiB;
  in.free_at_init_bytes = 23 * kGiB;  // 1 GiB in use before
  in.gpu_memory_utilization = 0.9;
  in.weights_bytes = 14 * kGiB;
  in.activation_peak_bytes = 1 * kGiB;
  in.non_torch_bytes = 0.3 * kGiB;
  in.cuda_graph_bytes = 4 * kGiB;
  in.cell_bytes = 24576;
  auto p = MakePlan(in);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  ASSERT_EQ(p->failure, "cuda_graph_capture_oom");
  // KV = 21.6 - (14 + 1 + 0.3 + 1) = 5.3 GiB; left = 23 - 14 - 0.3 - 5.3 = 3.4 GiB (the
  // budget's remainder, 23 - 21.6 + 1 = 2.4 GiB, is not what the capture sees).
  EXPECT_NE(p->error.find("from the 3.40 GiB left"), std::string::npos) << p->error;
  bool eager = false;
  for (const auto& r : p->remedies) {
    PlanInput t = in;
    if (r.flag == "--gpu-memory-utilization") {
      t.gpu_memory_utilization = std::stod(r.value);
      EXPECT_TRUE(MakePlan(t)->fits) << r.value;
      t.gpu_memory_utilization = std::stod(r.value) + 0.01;
      EXPECT_FALSE(MakePlan(t)->fits) << "the largest that fits";
    } else if (r.flag == "--enforce-eager") {
      eager = true;
      t.enforce_eager = true;
      t.cuda_graph_bytes.reset();
      EXPECT_TRUE(MakePlan(t)->fits);
    }
  }
  EXPECT_TRUE(eager);
  ASSERT_FALSE(p->remedies.empty());
  EXPECT_EQ(p->remedies[0].flag, "--gpu-memory-utilization");
  EXPECT_EQ(p->remedies[0].value, "0.87");  // 0.6 GiB more outside: 24 x 0.03 = 0.72
}

// Before 0.9.1 V1 (and 0.6.4-0.6.5 V0) count the whole GPU's non-torch memory once
// (gpu_worker.py 0.8.5: total - free - torch's allocated); the plan adds what was in use
// at init to the increase, so a default free-at-init, which holds PyNccl's communicator
// (InitOverheadBytes), leaves it out of the increase. From 0.9.1 the increase is counted
// from a snapshot before the distributed init: PyNccl's communicator is in it.
TEST(PlanTest, VllmWholeGpuNonTorchCountsEachCommunicatorOnce) {
  PlanInput in;
  in.framework = "vllm";
  in.total_bytes = 22.19 * kGiB;
  in.gpu_arch = "ampere";
  in.gpu_interconnect = "pcie";
  in.tp = 4;
  in.weights_bytes = 14 * kGiB;
  in.activation_peak_bytes = 0.5 * kGiB;
  in.cell_bytes = 24576;
  auto non_torch = [&](const std::string& version, std::optional<double> free_at_init) {
    PlanInput t = in;
    t.version = version;
    t.free_at_init_bytes = free_at_init;
    auto p = MakePlan(t);
    EXPECT_TRUE(p.ok()) << p.status().ToString();
    return p.ok() ? p->non_torch_bytes : 0.0;
  };
  const double comm = NcclCommBytes("ampere", "pcie");
  EXPECT_NEAR(non_torch("0.8.5", std::nullopt) + comm, non_torch("0.9.2", std::nullopt), 1);
  // A measured free memory is read before the launch: the increase holds the communicator.
  EXPECT_NEAR(non_torch("0.8.5", 21.9 * kGiB), non_torch("0.9.2", std::nullopt), 1);
}

TEST(PlanTest, VllmGraphsOutsideBudgetBefore021) {
  PlanInput in;
  in.framework = "vllm";
  in.version = "0.10.1";
  in.total_bytes = 80 * kGiB;
  in.free_at_init_bytes = 79 * kGiB;
  in.gpu_memory_utilization = 0.98;
  in.weights_bytes = 40 * kGiB;
  in.activation_peak_bytes = 1 * kGiB;
  in.non_torch_bytes = 0.5 * kGiB;
  in.cuda_graph_bytes = 3 * kGiB;
  in.cuda_graph_max_bs = 256;
  in.cell_bytes = 131072;
  auto p = MakePlan(in);
  ASSERT_TRUE(p.ok());
  // After KV: 79 - 78.4 + 1 = 1.6 GiB left for 3 GiB of graphs.
  EXPECT_EQ(p->failure, "cuda_graph_capture_oom");
  EXPECT_NEAR(p->row.left_bytes / kGiB, 1.6 - 3, 1e-6);
  // From 0.21 the estimate is inside the budget: the same launch fits with a smaller pool.
  in.version = "0.21.0";
  auto in_budget = MakePlan(in);
  EXPECT_TRUE(in_budget->fits);
  EXPECT_NEAR(in_budget->row.left_bytes, 0, 1);
}

TEST(PlanTest, ErrorsNameWhatIsMissing) {
  PlanInput in = FoundingSglang(0.5);
  in.cell_bytes.reset();
  auto p = MakePlan(in);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("--cell-bytes"), std::string::npos);
  in = FoundingSglang(0.5);
  in.avail_after_weights_bytes.reset();
  EXPECT_NE(MakePlan(in).status().message().find("--weights-per-rank"), std::string::npos);
  in = FoundingSglang(0.5);
  in.free_at_init_bytes = 100 * kGiB;
  EXPECT_NE(MakePlan(in).status().message().find("--free-at-init"), std::string::npos);
  in = FoundingSglang(0.5);
  in.framework = "tgi";
  EXPECT_FALSE(MakePlan(in).ok());
}

}  // namespace
}  // namespace tpt::memory

namespace tpt::memory {
namespace {

ModelConfig SampleModel(const std::string& name) {
  auto m = LoadModel(std::string(TPT_SOURCE_DIR) + "/samples/models/" + name);
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  return m.ok() ? *m : ModelConfig();
}

TEST(PlanModelTest, SglangVisionTowerLowersTheDefaultFraction) {
  PlanInput in;
  in.framework = "sglang";
  in.version = "0.5.3";
  in.total_bytes = 22.05 * kGiB;
  in.model = SampleModel("qwen2.5-vl-7b-instruct-awq");
  auto with = MakePlan(in);
  ASSERT_TRUE(with.ok()) << with.status().ToString();
  PlanInput text = in;
  text.model->vision_params = 0;
  text.model->top.vision_config = false;  // adjust_mem_fraction_for_vlm reads the config's vision_config
  auto without = MakePlan(text);
  ASSERT_TRUE(without.ok());
  // ViT 24 (num_hidden_layers absent) x 1280^2 over 24 x 1024^2: 0.95 x (1 - 0.1 x 0.5625).
  EXPECT_NEAR(with->fraction / without->fraction, 0.95 * (1 - 0.1 * 0.5625), 1e-9);
  EXPECT_NE(with->fraction_source.find("for a multimodal model"), std::string::npos);
}

TEST(PlanModelTest, Sglang2026EaglePricesTheDraftKv) {
  PlanInput in;
  in.framework = "sglang";
  in.version = "0.5.9";
  in.total_bytes = 139.8 * kGiB;
  in.tp = 2;
  in.mem_fraction_static = 0.85;
  in.model = SampleModel("qwen3-32b");
  auto base = MakePlan(in);
  in.speculative_algorithm = "EAGLE3";
  auto eagle = MakePlan(in);
  ASSERT_TRUE(base.ok() && eagle.ok());
  EXPECT_EQ(eagle->cell_bytes, base->cell_bytes * 65 / 64);  // one draft layer over 64
}

// vLLM V0 encodes Qwen-VL's dummy image and video inside the profiling forward, after the
// prompt's embeddings (qwen2_5_vl.py 0.7.3 get_input_embeddings_v0): with a narrow language
// model (Qwen2.5-VL-3B's 2,048 x 11,008) the vision transformer's layer over 65,536 patches
// is the peak: 16X (X = 65,536 x 1,280 x 2 B) + the cast pixels + 32,768 prompt embeddings
// + what is held (the items' embeddings and both items' float32 pixels).
TEST(PlanModelTest, VllmV0QwenVlEncoderCanBeThePeak) {
  PlanInput in;
  in.framework = "vllm";
  in.version = "0.7.3";
  in.vllm_engine = "v0";
  in.total_bytes = 79.11 * kGiB;
  in.gpu_arch = "hopper";
  in.model = SampleModel("qwen2.5-vl-7b-instruct");
  in.model->hidden = 2048;
  in.model->intermediate = 11008;
  in.model->heads = 16;
  in.model->kv_heads = 2;
  in.model->head_dim = 128;
  in.model->layers = 36;
  in.context_length = 4096;
  auto p = MakePlan(in);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  const double X = 65536.0 * 1280 * 2, patch = 65536.0 * 1176;
  const double held = 32768.0 * 2048 * 2 + 2 * patch * 4;
  const double encoder = 16 * X + patch * 2 + 32768.0 * 2048 * 2 + held;
  ASSERT_TRUE(p->figures.contains("activation_peak_bytes")) << p->figures.dump();
  EXPECT_NEAR(p->figures["activation_peak_bytes"].get<double>() / kGiB, encoder / kGiB, 1e-6);
  bool said = false;
  for (const auto& a : p->assumptions) said = said || a.find("the peak is the encoder's") != std::string::npos;
  EXPECT_TRUE(said);
}

// vLLM 0.5.x-0.6.4 cannot run Gemma-2's interleaved sliding window: it disables the window and
// caps max_model_len at it (config.py ModelConfig, 0.5.4:163-176); 0.6.5 keeps the model's
// 8,192. A --max-model-len above the cap is refused by vLLM, and so by the plan.
TEST(PlanModelTest, VllmBefore065CapsGemma2AtItsSlidingWindow) {
  PlanInput in;
  in.framework = "vllm";
  in.version = "0.5.4";
  in.total_bytes = 22.05 * kGiB;
  in.model = SampleModel("gemma-2b-it");
  in.model->model_type = "gemma2";
  in.model->sliding_window = 4096;
  ASSERT_EQ(in.model->max_position, 8192);
  auto capped = MakePlan(in);
  ASSERT_TRUE(capped.ok()) << capped.status().ToString();
  ASSERT_GT(capped->kv_tokens, 0);
  EXPECT_NEAR(capped->max_concurrency, static_cast<double>(capped->kv_tokens) / 4096, 1e-6);
  bool said = false;
  for (const auto& a : capped->assumptions) said = said || a.find("caps gemma2's max_model_len") != std::string::npos;
  EXPECT_TRUE(said);

  PlanInput asked = in;
  asked.context_length = 8192;
  auto refused = MakePlan(asked);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("--max-model-len 4096"), std::string::npos) << refused.status().message();

  in.version = "0.6.5";
  auto later = MakePlan(in);
  ASSERT_TRUE(later.ok()) << later.status().ToString();
  ASSERT_GT(later->kv_tokens, 0);
  EXPECT_NEAR(later->max_concurrency, static_cast<double>(later->kv_tokens) / 8192, 1e-6);
}

TEST(PlanModelTest, WeightsOomAndTheSmallestTpThatFits) {
  PlanInput in;
  in.framework = "vllm";
  in.version = "0.11.0";
  in.total_bytes = 79.11 * kGiB;
  in.gpu_arch = "hopper";
  in.model = SampleModel("llama-3.1-70b-instruct");
  in.context_length = 32768;
  auto p = MakePlan(in);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->failure, "weights_oom");
  ASSERT_FALSE(p->remedies.empty());
  EXPECT_EQ(p->remedies[0].flag, "--tensor-parallel-size");
  // TP 2 (65.8 GiB per rank) leaves too little at 0.9 for a 32K request; TP 4 is the
  // smallest that fits as it is.
  EXPECT_EQ(p->remedies[0].value, "4") << p->remedies[0].why;
  in.tp = 4;
  auto fixed = MakePlan(in);
  ASSERT_TRUE(fixed.ok());
  EXPECT_TRUE(fixed->fits) << fixed->error;
  EXPECT_GE(fixed->kv_tokens, 32768);
}


// vLLM V1's profiling sampler by version (model_weights.cc): PyTorch's sort, 38 bytes a
// logit, through 0.15; the Triton top-k/top-p kernel (vllm#33538) from 0.16 for 8 rows or
// more, 14 bytes and its float32 scratch (128 rows priced); FlashInfer's top-k/top-p kernel,
// on by default from 0.22 (vllm#40376), 14 bytes. Qwen3-32B at 256 sequences x 151,936 on
// an L40S: the sampler is the profile's peak in all three.
TEST(PlanModelTest, VllmSamplerSortTritonFlashInferByVersion) {
  PlanInput in;
  in.framework = "vllm";
  in.version = "0.15.1";
  in.total_bytes = 44.39 * kGiB;
  in.gpu_arch = "ada";
  in.gpu_interconnect = "pcie";
  in.tp = 2;
  in.model = SampleModel("qwen3-32b");
  auto sort = MakePlan(in);
  in.version = "0.21.0";
  auto triton = MakePlan(in);
  in.version = "0.22.0";
  auto flashinfer = MakePlan(in);
  ASSERT_TRUE(sort.ok() && triton.ok() && flashinfer.ok())
      << sort.status().ToString() << triton.status().ToString() << flashinfer.status().ToString();
  const double logits = 256.0 * 151936;
  const double scratch = 128.0 * 151936 * 4;
  auto peak = [](const StatusOr<Plan>& p, const char* key) { return p->figures[key].get<double>(); };
  EXPECT_NEAR(peak(sort, "activation_peak_bytes") - peak(flashinfer, "activation_peak_bytes"), 24 * logits, 1.0);
  EXPECT_NEAR(peak(triton, "activation_peak_bytes") - peak(flashinfer, "activation_peak_bytes"), scratch, 1.0);
  // The sampler's warm-up after the cache prices the same kernel.
  EXPECT_NEAR(peak(sort, "sampler_warmup_bytes") - peak(flashinfer, "sampler_warmup_bytes"), 24 * logits, 1.0);
  EXPECT_NEAR(peak(triton, "sampler_warmup_bytes") - peak(flashinfer, "sampler_warmup_bytes"), scratch, 1.0);
  bool said = false, said_triton = false;
  for (const auto& a : flashinfer->assumptions) said = said || a.find("vllm#40376") != std::string::npos;
  for (const auto& a : triton->assumptions) said_triton = said_triton || a.find("vllm#33538") != std::string::npos;
  EXPECT_TRUE(said);
  EXPECT_TRUE(said_triton);
  // FlashInfer's sampler needs compute capability 7.5 and more than 16 SMs: a V100 and a
  // Jetson AGX Orin (16 SMs) take the native path, whose top-k/top-p is the Triton kernel.
  in.gpu_arch = "volta";
  auto v100 = MakePlan(in);
  in.gpu_arch = "ampere";
  in.gpu_name = "Jetson AGX Orin 64GB";
  auto orin = MakePlan(in);
  ASSERT_TRUE(v100.ok() && orin.ok());
  EXPECT_EQ(v100->figures["activation_peak_bytes"], triton->figures["activation_peak_bytes"]);
  EXPECT_EQ(orin->figures["activation_peak_bytes"], triton->figures["activation_peak_bytes"]);
}

// vLLM 0.16 on at TP > 1 creates FlashInfer's all-reduce fusion workspace (the -O2
// all-reduce + RMSNorm fusion, vllm_fi_allreduce.h) on Hopper and datacenter Blackwell
// where multicast (NVSwitch) is there: at TP 2 three buffers of up to 64 MiB of hidden
// states each rounded to a multicast granule. Not before 0.16, not on PCIe or NVLink-bridge
// cards, not with --enforce-eager, not at TP 1.
TEST(PlanModelTest, VllmFlashInferAllReduceWorkspaceFrom016) {
  PlanInput in;
  in.framework = "vllm";
  in.version = "0.15.1";
  in.total_bytes = 79.11 * kGiB;
  in.gpu_name = "H100 SXM 80GB";
  in.gpu_arch = "hopper";
  in.gpu_sm = 90;
  in.gpu_interconnect = "nvlink";
  in.tp = 2;
  in.model = SampleModel("qwen3-32b");
  in.context_length = 8192;
  auto before = MakePlan(in);
  in.version = "0.16.0";
  auto with = MakePlan(in);
  ASSERT_TRUE(before.ok() && with.ok()) << before.status().ToString() << with.status().ToString();
  EXPECT_NEAR(with->non_torch_bytes - before->non_torch_bytes, 3 * kVllmMulticastGranularityBytes, 1.0);
  EXPECT_TRUE(with->figures.contains("fi_allreduce_workspace_bytes"));
  bool unknown = false;
  for (const auto& u : with->unknowns) unknown = unknown || u.find("multicast granularity") != std::string::npos;
  EXPECT_TRUE(unknown);
  // hidden 5,120 in bf16: 64 MiB // 10,240 B = 6,553 tokens; at the 2 MiB minimum the
  // buffer 2 x 6,553 x 5,120 x 2 B (128 MiB), the flags (2 KiB) and the lamport buffers
  // (384 MiB) each take 2 MiB more for the signal pad.
  VllmFiArWorkspaceInput w;
  w.version = "0.19.0";
  w.tp = 2;
  w.gpu_sm = 90;
  w.gpu_name = "H100 SXM 80GB";
  w.gpu_interconnect = "nvlink";
  w.hidden = 5120;
  w.max_num_batched_tokens = 8192;
  auto ws = VllmFlashInferAllReduceWorkspace(w);
  EXPECT_EQ(ws.max_token_num, 6553);
  const double mib = 1024.0 * 1024;
  EXPECT_NEAR(ws.bytes_min, (130 + 4 + 386) * mib, 1.0);
  EXPECT_NEAR(ws.bytes, 3 * kVllmMulticastGranularityBytes, 1.0);
  for (auto change : {+[](VllmFiArWorkspaceInput& x) { x.version = "0.15.1"; },
                      +[](VllmFiArWorkspaceInput& x) { x.gpu_interconnect = "pcie"; },
                      +[](VllmFiArWorkspaceInput& x) { x.gpu_name = "H100 NVL 94GB"; },
                      +[](VllmFiArWorkspaceInput& x) { x.enforce_eager = true; },
                      +[](VllmFiArWorkspaceInput& x) { x.tp = 1; }, +[](VllmFiArWorkspaceInput& x) { x.tp = 3; },
                      +[](VllmFiArWorkspaceInput& x) { x.gpu_sm = 80; }, +[](VllmFiArWorkspaceInput& x) { x.pp = 2; }}) {
    VllmFiArWorkspaceInput x = w;
    change(x);
    EXPECT_FALSE(VllmFlashInferAllReduceWorkspace(x).created) << x.version << " " << x.gpu_name << " tp " << x.tp;
  }
}

// vLLM's non-torch memory at TP on PCIe: the custom all-reduce is off on more than two
// PCIe GPUs (custom_all_reduce.py), and a communicator on a PCIe card is 0.13 GiB, not
// NVLink Hopper's 558 MiB. 0.10.2 counts PyNccl's and torch's gather communicators (the
// snapshot precedes distributed init), 0.28 only torch's.
PlanInput VllmAtTp(const std::string& version, double total_gib, const std::string& arch, const std::string& link,
                   int tp, const std::string& model) {
  PlanInput in;
  in.framework = "vllm";
  in.version = version;
  in.total_bytes = total_gib * kGiB;
  in.gpu_arch = arch;
  in.gpu_interconnect = link;
  in.tp = tp;
  in.model = SampleModel(model);
  return in;
}

TEST(PlanModelTest, VllmNonTorchAtTpOnPcie) {
  PlanInput in = VllmAtTp("0.10.2", 44.39, "ada", "pcie", 8, "qwen3-235b-a22b-fp8");
  auto tp8 = MakePlan(in);
  ASSERT_TRUE(tp8.ok()) << tp8.status().ToString();
  const double cublas = 66.0 * kMiB, comm = 0.13 * kGiB;
  EXPECT_NEAR(tp8->non_torch_bytes, cublas + 2 * comm, 1.0);
  bool said = false;
  for (const auto& a : tp8->assumptions) said = said || a.find("no custom all-reduce") != std::string::npos;
  EXPECT_TRUE(said);
  // Two PCIe GPUs keep the custom all-reduce; from 0.11 PyNccl's communicator is in the baseline.
  in.version = "0.28.0";
  in.tp = 2;
  in.total_bytes = 22.05 * kGiB;
  in.model = SampleModel("qwen3-8b-awq");
  auto tp2 = MakePlan(in);
  ASSERT_TRUE(tp2.ok()) << tp2.status().ToString();
  // (plus Model Runner V2's sampling state from 0.27: 256 rows x (vocab + two vocab/32 masks) int32)
  EXPECT_NEAR(tp2->non_torch_bytes, cublas + kCustomAllReduceBytes + comm + 4.0 * 256 * (151936 + 2 * 4748), 1.0);
  // NVLink Hopper keeps its measured communicator and the all-reduce at TP 8.
  in.version = "0.10.2";
  in.tp = 8;
  in.total_bytes = 79.11 * kGiB;
  in.gpu_arch = "hopper";
  in.gpu_interconnect = "nvlink";
  in.model = SampleModel("qwen3-235b-a22b-fp8");
  auto h100 = MakePlan(in);
  ASSERT_TRUE(h100.ok()) << h100.status().ToString();
  EXPECT_NEAR(h100->non_torch_bytes, cublas + kCustomAllReduceBytes + 2 * kNcclCommBytes, 1.0);
}

// Before 0.10.2 vLLM sets NCCL_CUMEM_ENABLE=0, so NCCL connects every channel's ring and tree
// when a communicator is created (vllm_nccl_connect.h): on an H100 SXM, 24 channels of 24 MiB
// on a middle rank of the chain (12 MiB at TP 2), in each communicator of the profile window.
// Qwen3-235B-A22B-FP8 at TP 4 on vLLM 0.9.2 (vllm#21348, samples/models) logged 178,880 tokens.
TEST(PlanModelTest, VllmNcclBuffersConnectedAtCreationBefore0102) {
  EXPECT_NEAR(VllmNcclConnectBytes({"0.9.2", 4, "H100 SXM 80GB"}), 576.0 * kMiB, 1.0);
  EXPECT_NEAR(VllmNcclConnectBytes({"0.9.2", 2, "H200 141GB"}), 288.0 * kMiB, 1.0);
  EXPECT_EQ(VllmNcclConnectBytes({"0.10.2", 4, "H100 SXM 80GB"}), 0.0);  // runtime connect; NVLS possible
  EXPECT_EQ(VllmNcclConnectBytes({"0.9.2", 4, "H100 NVL 94GB"}), 0.0);   // bridges: not derived
  EXPECT_EQ(VllmNcclConnectBytes({"0.9.2", 1, "H100 SXM 80GB"}), 0.0);
  PlanInput in = VllmAtTp("0.9.2", 79.11, "hopper", "nvlink", 4, "qwen3-235b-a22b-fp8");
  in.gpu_name = "H100 SXM 80GB [assumed: H100 SXM 80GB (H100 NVL has 94 GB: --gpu H100-NVL)]";  // the CLI's --gpu H100
  auto p = MakePlan(in);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  // PyNccl's and the logits all-gather's communicators are both created after 0.9.2's snapshot.
  EXPECT_NEAR(p->non_torch_bytes, 66.0 * kMiB + kCustomAllReduceBytes + 2 * (kNcclCommBytes + 576.0 * kMiB), 1.0);
  EXPECT_NEAR(static_cast<double>(p->kv_tokens), 178880.0, 0.05 * 178880.0);
  EXPECT_GE(static_cast<double>(p->kv_tokens), 178880.0);  // still the larger side: nothing fitted
}

// Model Runner V2 (Qwen3 dense from 0.22.0, every dense model from 0.25.0): its profiling samples without top-k/top-p
// and its graph estimate was 0 until an estimator landed; the plan keeps the legacy
// runner's figures and says the pool can be larger, for those models and versions only.
TEST(PlanModelTest, VllmModelRunnerV2IsAnUnknownForDenseModelsByVersion) {
  PlanInput in;
  in.framework = "vllm";
  in.total_bytes = 44.39 * kGiB;
  in.gpu_arch = "ada";
  in.gpu_interconnect = "pcie";
  in.model = SampleModel("qwen3-8b-awq");
  auto says = [&](const std::string& version) {
    in.version = version;
    auto p = MakePlan(in);
    EXPECT_TRUE(p.ok()) << p.status().ToString();
    for (const auto& u : p->unknowns) {
      if (u.find("Model Runner V2") != std::string::npos) return true;
    }
    return false;
  };
  EXPECT_FALSE(says("0.21.0"));
  EXPECT_TRUE(says("0.22.0"));  // Qwen3 dense: the oracle picks MRV2 from 0.22.0
  EXPECT_TRUE(says("0.28.0"));
  in.model = SampleModel("llama-3.1-8b-instruct");  // other dense models: from 0.25.0
  EXPECT_FALSE(says("0.24.0"));
  EXPECT_TRUE(says("0.25.0"));
  in.model = SampleModel("qwen3-30b-a3b");  // MoE: the legacy runner
  EXPECT_FALSE(says("0.28.0"));
}

// Qwen2.5-7B-Instruct-AWQ on one L4 at 0.60 with vLLM 0.28.0 and a 32k window: a logged
// launch of samples/models (123,664 tokens), a dense model on Model Runner V2 by default.
PlanInput Qwen25AwqOnL4Vllm028() {
  PlanInput in;
  in.framework = "vllm";
  in.version = "0.28.0";
  in.total_bytes = 22.05 * kGiB;
  in.gpu_arch = "ada";
  in.gpu_interconnect = "pcie";
  in.gpu_name = "L4 24GB";
  in.gpu_memory_utilization = 0.60;
  in.context_length = 32768;
  in.model = SampleModel("qwen2.5-7b-instruct-awq");
  return in;
}

// Model Runner V2 moves the pool both ways from the legacy runner's point (vllm_runner_v2.h):
// Qwen2.5-7B-Instruct-AWQ on an L4 at 0.60 with vLLM 0.28.0 logged 123,664 tokens, 8% under the
// legacy point, its profile peak 1.04 GiB against the legacy estimate's 0.52; vllm#50159 logged
// an MRV2 pool 0.89 GiB over MRv1's. The range line runs from the profile at twice the
// estimate to no graphs and the lighter sampler, and holds the point.
TEST(PlanModelTest, VllmModelRunnerV2RangeIsTwoSided) {
  PlanInput in = Qwen25AwqOnL4Vllm028();
  auto p = MakePlan(in);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  const Sensitivity* mrv2 = nullptr;
  for (const auto& s : p->sensitivity) {
    if (s.assumption.find("Model Runner V2") != std::string::npos) mrv2 = &s;
  }
  ASSERT_NE(mrv2, nullptr) << "no Model Runner V2 range line";
  const double a = p->figures["activation_peak_bytes"].get<double>();
  const double cell = static_cast<double>(p->cell_bytes);
  EXPECT_LT(mrv2->kv_tokens_low, p->kv_tokens);
  EXPECT_GT(mrv2->kv_tokens_high, p->kv_tokens);
  // The low end is the pool with the profile at twice the estimate and the weights at the
  // top of their +/-3% line (the profile's second half is not explained by MRV2's source).
  const double w = p->weights_bytes;
  EXPECT_NEAR(static_cast<double>(p->kv_tokens - mrv2->kv_tokens_low), (a + 0.03 * w) / cell, 64);
  // The logged launch at 0.60 (vLLM 0.28.0, 123,664 tokens; samples/models/evidence.json,
  // a known miss) lies inside it.
  EXPECT_LE(mrv2->kv_tokens_low, 123664);
  // A MoE model keeps the legacy runner: no such line.
  in.model = SampleModel("qwen3-30b-a3b");
  auto moe = MakePlan(in);
  ASSERT_TRUE(moe.ok()) << moe.status().ToString();
  for (const auto& s : moe->sensitivity) EXPECT_EQ(s.assumption.find("Model Runner V2"), std::string::npos);
}

// Model Runner V2 holds per-request sampling state on the GPU from load_model() on
// (penalties.py output_bin_counts and prompt_bin_mask, structured_outputs.py grammar_bitmask),
// which 0.27's memory_profiling charges (total_consumed) and 0.26's does not.
TEST(PlanModelTest, VllmModelRunnerV2SamplingStateChargedFrom027) {
  PlanInput in = Qwen25AwqOnL4Vllm028();
  auto p28 = MakePlan(in);
  in.version = "0.26.0";
  auto p26 = MakePlan(in);
  ASSERT_TRUE(p28.ok() && p26.ok());
  const double state = 4.0 * 256 * (152064 + 2 * 4752);  // 256 rows, vocab 152,064
  EXPECT_NEAR(p28->non_torch_bytes - p26->non_torch_bytes, state, 1.0);
  // The logged launch at 0.60 (123,664 tokens, samples/models) is now within 5%.
  EXPECT_LE(static_cast<double>(p28->kv_tokens), 1.05 * 123664);
  // The legacy runner (VLLM_USE_V2_MODEL_RUNNER=0 is not an input; a MoE model) holds none.
  in.version = "0.28.0";
  in.max_num_seqs = 256;
  EXPECT_NEAR(VllmRunnerV2PersistentBytes(in), state, 1.0);
  in.model = SampleModel("qwen3-30b-a3b");
  EXPECT_EQ(VllmRunnerV2PersistentBytes(in), 0.0);
}

// vLLM V1 compiles the model inside the memory profile that sizes the KV cache
// (vllm_cold_compile.h): a first start with a cold compile cache is charged the compiler's
// scratch and kernels, which no input sizes. The point stays a warm start's; a range line runs
// down to kVllmColdCompileHighBytes less a rank, and a start that its low end does not have
// is not vouched for. Without torch.compile (--enforce-eager, V0) there is no such line.
TEST(PlanModelTest, VllmColdCompileIsARangeNotAPoint) {
  PlanInput in = Qwen25AwqOnL4Vllm028();
  auto cold_line = [](const Plan& p) -> const Sensitivity* {
    for (const auto& s : p.sensitivity) {
      if (s.assumption.starts_with("compile cache")) return &s;
    }
    return nullptr;
  };
  auto p = MakePlan(in);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  const Sensitivity* cold = cold_line(*p);
  ASSERT_NE(cold, nullptr) << "no compile-cache range line";
  EXPECT_EQ(cold->kv_tokens_high, p->kv_tokens);
  EXPECT_NEAR(static_cast<double>(p->kv_tokens - cold->kv_tokens_low),
              kVllmColdCompileHighBytes / static_cast<double>(p->cell_bytes), 64);
  // The logged launch (vLLM 0.28.0 at 0.60 on an L4: 123,664 tokens, samples/models) lies in it.
  EXPECT_LE(cold->kv_tokens_low, 123664);
  bool said = false;
  for (const auto& u : p->unknowns) said = said || u.find("compiles the model inside the memory profile") != std::string::npos;
  EXPECT_TRUE(said);
  EXPECT_TRUE(p->fits);
  EXPECT_TRUE(p->outcome_certain);  // a cold start still holds a request of 32,768 tokens
  // Where only a warm start holds one request, the start is not vouched for (fits stays the point's).
  bool found = false;
  for (double u = 0.36; u < 0.60 && !found; u += 0.01) {
    in.gpu_memory_utilization = u;
    auto q = MakePlan(in);
    ASSERT_TRUE(q.ok()) << q.status().ToString();
    const Sensitivity* c = cold_line(*q);
    if (!q->fits || c == nullptr || c->fits_low) continue;
    found = true;
    EXPECT_FALSE(q->outcome_certain) << "at " << u;
  }
  EXPECT_TRUE(found) << "no utilisation where only a warm start holds one request";
  in.gpu_memory_utilization = 0.60;
  // No torch.compile: --enforce-eager, or the V0 engine.
  in.enforce_eager = true;
  auto eager = MakePlan(in);
  ASSERT_TRUE(eager.ok()) << eager.status().ToString();
  EXPECT_EQ(cold_line(*eager), nullptr);
  in.enforce_eager = false;
  in.version = "0.6.4.post1";
  auto v0 = MakePlan(in);
  ASSERT_TRUE(v0.ok()) << v0.status().ToString();
  EXPECT_EQ(cold_line(*v0), nullptr);
}

}  // namespace
}  // namespace tpt::memory
