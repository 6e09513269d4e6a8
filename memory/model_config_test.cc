// model_config_test.cc: config.json parsing, weights per rank under TP/PP/EP, KV dims,
// TP checks, on the samples in samples/models (public architecture numbers) and inline
// documents.
#include "memory/model_config.h"
#include "memory/vllm_fused_moe.h"

#include <gtest/gtest.h>

namespace tpt::memory {
namespace {

std::string Sample(const std::string& name) { return std::string(TPT_SOURCE_DIR) + "/samples/models/" + name; }

ModelConfig Load(const std::string& name) {
  auto m = LoadModel(Sample(name));
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  return m.ok() ? *m : ModelConfig();
}

double PerRank(const ModelConfig& m, int tp, int pp = 1, int ep = 1, const std::string& fw = "vllm",
               const std::string& version = "") {
  Sharding s;
  s.framework = fw;
  s.version = version;
  s.tp = tp;
  s.pp = pp;
  s.ep = ep;
  auto w = WeightsPerRank(m, s);
  EXPECT_TRUE(w.ok());
  return w.ok() ? w->per_rank_bytes : 0;
}

// Parameters the config describes (unsharded bytes / 2 for a 16-bit model).
double Params(const ModelConfig& m) {
  Sharding s;
  auto w = WeightsPerRank(m, s);
  return w.ok() ? w->config_total_bytes / m.dtype_bytes : 0;
}

// xai-org/grok-2's config.json, less its rope fields.
nlohmann::json Grok2Config() {
  return {{"architectures", {"Grok1ForCausalLM"}}, {"model_type", "git"},  {"vocab_size", 131072},
          {"hidden_size", 8192},                   {"intermediate_size", 32768},
          {"moe_intermediate_size", 16384},         {"residual_moe", true},
          {"num_local_experts", 8},                {"num_experts_per_tok", 2},
          {"num_hidden_layers", 64},               {"num_attention_heads", 64},
          {"num_key_value_heads", 8},              {"head_dim", 128},
          {"max_position_embeddings", 131072},     {"torch_dtype", "bfloat16"}};
}

// Grok-2 (residual_moe: true) runs a dense MLP of intermediate_size beside its 8 experts
// of moe_intermediate_size in every layer (SGLang grok.py Grok1DecoderLayer.mlp): 270B
// parameters, not the 218B of the experts and attention alone (launches14: a Grok-2 TP8
// launch logged 36.73 GiB a rank of fp8 weights; the plan said 25.77 and its pool +40.9%).
TEST(ModelConfigTest, GrokResidualMoeCountsTheDenseMlpBesideTheExperts) {
  nlohmann::json c = Grok2Config();
  auto m = ParseModelConfig(c, "grok-2/config.json");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->shared_experts, 1);
  EXPECT_EQ(m->shared_intermediate, 32768);
  EXPECT_NEAR(Params(*m) / 1e9, 269.5, 1.5);
  c["residual_moe"] = false;
  auto plain = ParseModelConfig(c, "grok-2/config.json");
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->shared_experts, 0);
  EXPECT_NEAR((Params(*m) - Params(*plain)) / 1e9, 64 * 3.0 * 8192 * 32768 / 1e9, 0.1);
}

// Grok-2's published config carries a top-level rope_type ("original", 8192 x 16 positions):
// SGLang's grok.py (0.5.1+) then builds a ScalingRotaryEmbedding in every attention layer,
// each with its own fp32 cos/sin cache on CUDA (rotary_embedding.py), 64 MiB a layer, 4 GiB a
// rank whatever the TP size. launches14's Grok-2 TP8 fp8 launch logged 36.73 GiB a rank of
// weights; the tensors alone are 31.8.
TEST(ModelConfigTest, GrokRopeTypeBuildsACosSinCachePerLayerOnSglang) {
  nlohmann::json c = Grok2Config();
  auto plain = ParseModelConfig(c, "grok-2/config.json");
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->layer_rope_positions, 0);
  c["rope_type"] = "original";
  c["original_max_position_embeddings"] = 8192;
  c["scaling_factor"] = 16.0;
  auto m = ParseModelConfig(c, "grok-2/config.json");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->layer_rope_positions, 131072);
  EXPECT_EQ(m->layer_rope_dim, 128);
  constexpr double kGiB = 1 << 30;
  EXPECT_NEAR((PerRank(*m, 8, 1, 1, "sglang") - PerRank(*plain, 8, 1, 1, "sglang")) / kGiB, 4.0, 1e-6);
  // Half the layers a rank, half the caches.
  EXPECT_NEAR((PerRank(*m, 8, 2, 1, "sglang") - PerRank(*plain, 8, 2, 1, "sglang")) / kGiB, 2.0, 1e-6);
  // Counted for SGLang only: its grok.py is the one read.
  EXPECT_NEAR(PerRank(*m, 8), PerRank(*plain, 8), 1.0);
  // A rope_type without the two numbers the cache needs: said, not counted.
  c.erase("scaling_factor");
  auto partial = ParseModelConfig(c, "grok-2/config.json");
  ASSERT_TRUE(partial.ok());
  EXPECT_EQ(partial->layer_rope_positions, 0);
}

TEST(ModelConfigTest, DenseGqaFields) {
  ModelConfig m = Load("qwen3-32b");
  EXPECT_EQ(m.architecture, "Qwen3ForCausalLM");
  EXPECT_EQ(m.layers, 64);
  EXPECT_EQ(m.hidden, 5120);
  EXPECT_EQ(m.heads, 64);
  EXPECT_EQ(m.kv_heads, 8);
  EXPECT_EQ(m.head_dim, 128);  // given, not hidden / heads (80)
  EXPECT_EQ(m.vocab, 151936);
  EXPECT_FALSE(m.tied_embeddings);
  EXPECT_EQ(m.max_position, 40960);
  EXPECT_FALSE(m.IsMoe());
  EXPECT_EQ(m.AttentionLayers(), 64);
  KvDims d = KvDimsOf(m, 2);
  EXPECT_EQ(d.layers, 32);  // one PP stage
  EXPECT_EQ(d.kv_heads, 8);
  EXPECT_EQ(d.head_dim, 128);
}

// vLLM's profiling peak at 1,024 dummy sequences is the sampler's sort of the float32
// logits: 38 bytes per logit element (model_weights.cc). A vLLM 0.14 V1 launch of
// Qwen3-32B on one H100 logged a peak activation of 5.64 GiB at max_num_seqs 1024 and
// 8,192 batched tokens, and one of Llama-3.1-8B 4.76 GiB; at TP 2 the same 5.64 (the
// logits are gathered before the sort, whose peak is the same on every rank).
TEST(ModelConfigTest, VllmSamplerPeakIsTheSortOfTheFloat32Logits) {
  constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
  ModelConfig qwen = Load("qwen3-32b");
  const double q1 = VllmActivationPeakBytes(qwen, 1, 8192, 1024, VllmLogitsProfile::kSampler);
  EXPECT_NEAR(q1 / kGiB / 5.64, 1.0, 0.03) << q1 / kGiB << " GiB";
  EXPECT_NEAR(VllmActivationPeakBytes(qwen, 2, 8192, 1024, VllmLogitsProfile::kSampler) / kGiB / 5.64, 1.0, 0.03);
  ModelConfig llama = Load("llama-3.1-8b-instruct");
  const double l1 = VllmActivationPeakBytes(llama, 1, 8192, 1024, VllmLogitsProfile::kSampler);
  EXPECT_NEAR(l1 / kGiB / 4.76, 1.0, 0.03) << l1 / kGiB << " GiB";
  // Never above the logged peak by more than the allocator's rounding: the sort is the peak.
  EXPECT_LE(q1 / kGiB, 5.64);
  EXPECT_LE(l1 / kGiB, 4.76);
}

// Fewer than 128 rows take PyTorch's other segmented sort (SortStable.cu
// segmented_sort_pairs_by_full_sort): about 50 bytes a logit element where 128 rows and
// more take 38 (an H100 replay of the dummy sampler chain, torch 2.11: 50.2-50.6 at 2, 64
// and 127 rows, 38.02 at 256 and 1,024). One row takes the large-segment path (38).
TEST(ModelConfigTest, VllmSamplerSortOfFewerThan128RowsHoldsMorePerLogit) {
  ModelConfig qwen = Load("qwen3-32b");
  auto per_logit = [&](int64_t rows, VllmLogitsProfile profile) {
    return VllmActivationPeakBytes(qwen, 1, rows, rows, profile) / (static_cast<double>(rows) * qwen.vocab);
  };
  for (int64_t rows : {2, 64, 127}) EXPECT_NEAR(per_logit(rows, VllmLogitsProfile::kSampler), 50.0, 1.0) << rows;
  for (int64_t rows : {1, 128, 256}) EXPECT_NEAR(per_logit(rows, VllmLogitsProfile::kSampler), 38.0, 1.0) << rows;
  // FlashInfer's sampler does not sort: no jump below 128 rows.
  EXPECT_NEAR(per_logit(64, VllmLogitsProfile::kFlashInferSampler), 14.0, 1.0);
  // V1 0.8.x with FlashInfer before 0.2.3: the float32 softmax's probabilities, no sort.
  for (int64_t rows : {64, 256}) EXPECT_NEAR(per_logit(rows, VllmLogitsProfile::kFlashInferProbs), 10.0, 1.0) << rows;
}

// vLLM 0.16-0.21 masks top-k/top-p with its Triton kernel (vllm#33538,
// topk_topp_triton.py apply_top_k_top_p_triton) for 8 rows or more: no sort, the
// model-dtype logits, their float32 copy, the probabilities and random_sample's
// exponential draws (14 bytes a logit in bf16, 12 in float32, where the copy is the same
// tensor) and the kernel's float32 scratch of up to 128 rows. Fewer than 8 rows still sort.
// FlashInfer's sampler is the default only from 0.22 (vllm#40376).
TEST(ModelConfigTest, VllmTritonTopKTopPFrom016For8RowsOrMore) {
  EXPECT_EQ(VllmLogitsProfileFor("0.15.1", true), VllmLogitsProfile::kSampler);
  EXPECT_EQ(VllmLogitsProfileFor("0.16.0", true), VllmLogitsProfile::kTritonTopKTopP);
  EXPECT_EQ(VllmLogitsProfileFor("0.19.0", true), VllmLogitsProfile::kTritonTopKTopP);
  EXPECT_EQ(VllmLogitsProfileFor("0.21.1", true), VllmLogitsProfile::kTritonTopKTopP);
  EXPECT_EQ(VllmLogitsProfileFor("0.22.0", true), VllmLogitsProfile::kFlashInferSampler);
  ModelConfig qwen = Load("qwen3-32b");
  auto per_logit = [&](const ModelConfig& m, int64_t rows) {
    return VllmActivationPeakBytes(m, 1, rows, rows, VllmLogitsProfile::kTritonTopKTopP) /
           (static_cast<double>(rows) * m.vocab);
  };
  // 1,024 rows: 14 bytes and 128 scratch rows of 4 bytes (0.5 a logit).
  EXPECT_NEAR(per_logit(qwen, 1024), 14.5, 0.2);
  EXPECT_NEAR(per_logit(qwen, 8), 18.0, 0.2);      // 8 rows: 8 scratch rows, 4 bytes a logit more
  EXPECT_NEAR(per_logit(qwen, 7), 50.0, 1.0);      // 7 rows: PyTorch's sort of fewer than 128 rows
  ModelConfig fp32 = qwen;
  fp32.dtype_bytes = 4;
  EXPECT_NEAR(per_logit(fp32, 1024), 12.5, 0.2);  // float32 logits are their own float32 copy
  // The sort it replaced: 38 bytes a logit at 1,024 rows.
  EXPECT_GT(VllmActivationPeakBytes(qwen, 1, 8192, 1024, VllmLogitsProfile::kSampler),
            2.5 * VllmActivationPeakBytes(qwen, 1, 8192, 1024, VllmLogitsProfile::kTritonTopKTopP));
}

// vLLM's fused-MoE caches (fused_moe.py fused_experts_impl): three buffers in 0.7.3, cache1
// and cache3 sharing one of M x k x max(N, K) from 0.8 (vllm#13625), chunked at 64K tokens;
// fp8 experts add their quantized inputs. Only the experts that take that path share.
TEST(ModelConfigTest, VllmFusedMoeCachesByVersionAndExperts) {
  ModelConfig a3b = Load("qwen3-30b-a3b");  // hidden 2048, 128 experts of 768, top 8
  EXPECT_EQ(VllmMoeCachesFor("0.7.3", a3b), VllmMoeCaches::kSeparate);
  EXPECT_EQ(VllmMoeCachesFor("0.8.5", a3b), VllmMoeCaches::kShared13);
  // 8192 x 8 x (1536 + 2048 + 768) x 2 B, then 8192 x 8 x (max(1536, 2048) + 768) x 2 B.
  EXPECT_DOUBLE_EQ(VllmFusedMoeBytes(a3b, 1, 8192, VllmMoeCaches::kSeparate), 570425344.0);
  EXPECT_DOUBLE_EQ(VllmFusedMoeBytes(a3b, 1, 8192, VllmMoeCaches::kShared13), 369098752.0);
  EXPECT_DOUBLE_EQ(VllmFusedMoeBytes(a3b, 1, 100000, VllmMoeCaches::kShared13),
                   VllmFusedMoeBytes(a3b, 1, 65536, VllmMoeCaches::kShared13));
  // fp8 block, TP 4: N = 768, K = 4096: 8192 x 8 x (4096 + 384) x 2 B of caches, and
  // (8192 x 4096 + 8192 x 8 x 384) fp8 elements with a float32 scale per 128.
  ModelConfig fp8 = Load("qwen3-235b-a22b-fp8");
  EXPECT_EQ(VllmMoeCachesFor("0.9.2", fp8), VllmMoeCaches::kShared13);
  EXPECT_DOUBLE_EQ(VllmFusedMoeBytes(fp8, 4, 8192, VllmMoeCaches::kShared13), 587202560.0 + 58720256.0 * 1.03125);
  // gpt-oss's mxfp4 experts run other kernels: the generic estimate.
  EXPECT_EQ(VllmMoeCachesFor("0.11.0", Load("gpt-oss-120b")), VllmMoeCaches::kSeparate);
}

TEST(ModelConfigTest, PublishedParameterCounts) {
  // Totals the model cards publish (main model, without MTP layers or rotary caches).
  EXPECT_NEAR(Params(Load("llama-3.1-70b-instruct")) / 1e9, 70.6, 70.6 * 0.01);
  EXPECT_NEAR(Params(Load("mixtral-8x7b")) / 1e9, 46.7, 46.7 * 0.01);
  EXPECT_NEAR(Params(Load("qwen3-30b-a3b")) / 1e9, 30.5, 30.5 * 0.01);
  EXPECT_NEAR(Params(Load("deepseek-r1-bf16")) / 1e9, 671, 671 * 0.01);
  EXPECT_NEAR(Params(Load("gemma-3-27b")) / 1e9, 27.4, 27.4 * 0.02);
  EXPECT_NEAR(Params(Load("qwen3-next-80b-a3b")) / 1e9, 80, 80 * 0.02);
}

TEST(ModelConfigTest, IndexTotalIsTheTruthAndRotaryCacheIsAdded) {
  ModelConfig m = Load("llama-3.1-8b-instruct");
  ASSERT_TRUE(m.index_total_bytes);
  EXPECT_DOUBLE_EQ(*m.index_total_bytes, 16060522496.0);
  EXPECT_TRUE(m.tied_known);
  Sharding s;
  auto w = WeightsPerRank(m, s);
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(w->source, "config + index total");
  // vLLM logs "Model loading took 14.9888 GiB" for this model on one GPU.
  EXPECT_NEAR(w->per_rank_bytes / kGiB, 14.9888, 0.0005);
  // An index that disagrees with the config wins, and says so.
  ModelConfig big = m;
  big.index_total_bytes = 2 * *m.index_total_bytes;
  auto w2 = WeightsPerRank(big, s);
  ASSERT_TRUE(w2.ok());
  EXPECT_NEAR(w2->per_rank_bytes / w->per_rank_bytes, 2.0, 0.01);
  bool warned = false;
  for (const auto& n : w2->notes) warned = warned || n.find("disagree") != std::string::npos;
  EXPECT_TRUE(warned);
}

// vLLM's MRotaryEmbedding sizes its cos/sin cache for 4 x max_position_embeddings
// (rotary_embedding.py 0.7.3, rotary_embedding/mrope.py 0.10.1.1-0.21.0); 0.7.0's and
// SGLang's are priced at max_position. Qwen2.5-VL-7B: 128,000 x 4 x 128 x 2 B, on every rank.
TEST(ModelConfigTest, VllmMropeCacheIsFourTimesMaxPosition) {
  ModelConfig m = Load("qwen2.5-vl-7b-instruct");
  EXPECT_TRUE(m.mrope);  // the architecture's checkpoints carry rope_scaling.mrope_section
  bool noted = false;
  for (const auto& n : m.notes) noted = noted || n.find("M-RoPE taken for Qwen2_5_VL") != std::string::npos;
  EXPECT_TRUE(noted);
  auto at = [&](const std::string& version, int tp) { return PerRank(m, tp, 1, 1, "vllm", version); };
  const double cache = 128000.0 * 128 * 2;
  EXPECT_NEAR(at("0.11.0", 1) - at("0.7.0", 1), 3 * cache, 1);
  EXPECT_NEAR(at("0.7.3", 4) - at("0.7.0", 4), 3 * cache, 1);  // whole on every rank
  EXPECT_NEAR(at("0.21.0", 1) - at("0.7.0", 1), 3 * cache, 1);
  // A language model without M-RoPE keeps max_position's cache.
  ModelConfig text = Load("qwen3-32b");
  EXPECT_FALSE(text.mrope);
  EXPECT_DOUBLE_EQ(PerRank(text, 1, 1, 1, "vllm", "0.11.0"), PerRank(text, 1, 1, 1, "vllm", "0.7.0"));
  // rope_scaling.mrope_section names it whatever the architecture.
  auto j = nlohmann::json::parse(R"({"architectures": ["SomeVLForCausalLM"], "model_type": "qwen2",
      "hidden_size": 1024, "intermediate_size": 2816, "num_hidden_layers": 2, "num_attention_heads": 8,
      "num_key_value_heads": 8, "vocab_size": 1000, "max_position_embeddings": 4096,
      "rope_scaling": {"type": "mrope", "mrope_section": [16, 24, 24]}})");
  auto parsed = ParseModelConfig(j, "mrope.json");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_TRUE(parsed->mrope);
}

TEST(ModelConfigTest, TensorParallelShardingKeepsReplicatedParts) {
  ModelConfig m = Load("llama-3.1-70b-instruct");
  const double one = PerRank(m, 1), eight = PerRank(m, 8);
  // Norms and the rotary cache stay whole on every rank: a little more than 1/8.
  EXPECT_GT(eight, one / 8);
  EXPECT_LT(eight, one / 8 * 1.01);
  // KV heads 8 < tp 16: K/V projections are replicated, so tp 16 saves less than half.
  const double sixteen = PerRank(m, 16);
  EXPECT_GT(sixteen, eight / 2);
  // PP 2: the larger stage holds half the layers plus one of embedding / LM head.
  const double pp2 = PerRank(m, 1, 2);
  EXPECT_NEAR(pp2 / one, 0.5, 0.02);
}

// vLLM's InternVL keeps the projector mlp1 (nn.Linear) whole on every rank, and the ViT's
// attention too when its heads do not divide by TP (intern_vit.py _init_attn, 0.6.6: 25
// heads of InternViT-6B at TP 8 fall back to InternSdpaAttention). InternVL3-78B at TP 8
// with vLLM 0.6.6.post1 logged 21.67 GiB a rank; split like the language model the plan
// said 18.23.
TEST(ModelConfigTest, VllmInternVlKeepsProjectorAndIndivisibleViTAttentionWhole) {
  const int h = 320, text = 512, layers = 4;
  nlohmann::json j = {
      {"architectures", {"InternVLChatModel"}},
      {"downsample_ratio", 0.5},
      {"llm_config",
       {{"architectures", {"Qwen2ForCausalLM"}}, {"num_hidden_layers", 2}, {"hidden_size", text},
        {"intermediate_size", 1024}, {"num_attention_heads", 8}, {"num_key_value_heads", 8}, {"vocab_size", 1000}}},
      {"vision_config",
       {{"architectures", {"InternVisionModel"}}, {"hidden_size", h}, {"num_hidden_layers", layers},
        {"num_attention_heads", 5}, {"intermediate_size", 1280}, {"qkv_bias", false}, {"qk_normalization", true},
        {"patch_size", 14}, {"image_size", 448}}}};
  auto parsed = ParseModelConfig(j, "internvl.json");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  const ModelConfig& m = *parsed;
  const double in = 4.0 * h;  // pixel shuffle at 0.5: 4 x the ViT width
  const double mlp1 = 2 * in + in * text + text + 1.0 * text * text + text;
  EXPECT_DOUBLE_EQ(m.vision_whole_params, mlp1);
  EXPECT_DOUBLE_EQ(m.vision_attn_params, layers * (4.0 * h * h + h + 2.0 * h));
  const double split = m.vision_params - m.vision_whole_params - m.vision_attn_params;
  // TP 5 divides the 5 heads: only mlp1 stays whole. TP 2 does not: the attention does too.
  ModelConfig text_only = m;
  text_only.vision_params = text_only.vision_whole_params = text_only.vision_attn_params = 0;
  EXPECT_NEAR(PerRank(m, 5) - PerRank(text_only, 5), ((split + m.vision_attn_params) / 5 + mlp1) * 2, 1);
  EXPECT_NEAR(PerRank(m, 2) - PerRank(text_only, 2), (split / 2 + m.vision_attn_params + mlp1) * 2, 1);
  // SGLang's tower is not this code: split by TP as before.
  EXPECT_NEAR(PerRank(m, 2, 1, 1, "sglang") - PerRank(text_only, 2, 1, 1, "sglang"), m.vision_params / 2 * 2,
              0.01 * m.vision_params);
}

TEST(ModelConfigTest, MlaMoeAndFp8Blocks) {
  ModelConfig m = Load("deepseek-v3");
  EXPECT_TRUE(m.IsMla());
  EXPECT_EQ(m.kv_lora_rank, 512);
  EXPECT_EQ(m.qk_rope_head_dim, 64);
  EXPECT_EQ(m.experts, 256);
  EXPECT_EQ(m.shared_experts, 1);
  EXPECT_EQ(m.mtp_layers, 1);
  int moe_layers = 0;
  for (bool b : m.moe_layer) moe_layers += b;
  EXPECT_EQ(moe_layers, 58);  // first_k_dense_replace 3
  EXPECT_EQ(m.quant.method, "fp8");
  EXPECT_NEAR(m.quant.linear_bytes, 1.0 + 4.0 / 16384, 1e-12);
  // 671B main-model parameters, FP8 linears + bf16 embeddings/norms/routers: ~627 GiB
  // (the published checkpoint is 688.6 GB with the 14B MTP module).
  Sharding s;
  auto w = WeightsPerRank(m, s);
  ASSERT_TRUE(w.ok());
  EXPECT_NEAR(w->config_total_bytes / kGiB, 627, 627 * 0.02);
  // MLA KV: the latent, the same on every rank.
  KvDims d = KvDimsOf(m, 1);
  EXPECT_EQ(d.kv_lora_rank, 512);
  EXPECT_EQ(d.layers, 61);
  // SGLang EP splits experts over ep and each by tp/ep: the same bytes as TP alone.
  EXPECT_NEAR(PerRank(m, 8, 1, 8, "sglang") / PerRank(m, 8, 1, 1, "sglang"), 1.0, 1e-9);
  // vLLM EP over tp x dp = 16 ranks: each rank holds 16 whole experts, half of TP 8's share.
  EXPECT_LT(PerRank(m, 8, 1, 16), PerRank(m, 8));
}

TEST(ModelConfigTest, QuantizedCheckpoints) {
  ModelConfig gptq = Load("mistral-7b-instruct-v0.2-gptq");
  EXPECT_EQ(gptq.quant.method, "gptq");
  EXPECT_NEAR(gptq.quant.linear_bytes, 0.5 + 2.5 / 128, 1e-12);
  ModelConfig oss = Load("gpt-oss-120b");
  EXPECT_EQ(oss.quant.method, "mxfp4");
  EXPECT_TRUE(oss.quant.experts_only);
  // Published MXFP4 checkpoint: about 60.8 GiB; attention, router and embeddings stay bf16.
  EXPECT_NEAR(PerRank(oss, 1) / kGiB, 60.8, 60.8 * 0.02);
  ModelConfig awq = Load("qwen2.5-vl-7b-instruct-awq");
  EXPECT_EQ(awq.quant.method, "awq");
  EXPECT_GT(awq.vision_params, 0.6e9);
  EXPECT_LT(awq.vision_params, 0.75e9);
  ASSERT_EQ(awq.quant.skip.size(), 1u);  // "visual" stays fp16

  nlohmann::json nvfp4 = {{"architectures", {"LlamaForCausalLM"}}, {"num_hidden_layers", 2}, {"hidden_size", 64},
                          {"intermediate_size", 128}, {"num_attention_heads", 4}, {"vocab_size", 100},
                          {"quantization_config",
                           {{"quant_method", "compressed-tensors"},
                            {"config_groups", {{"group_0", {{"weights", {{"num_bits", 4}, {"type", "float"},
                                                                         {"group_size", 16}}}}}}},
                            {"ignore", {"lm_head"}},
                            {"kv_cache_scheme", {{"num_bits", 8}, {"type", "float"}}}}}};
  auto m = ParseModelConfig(nvfp4, "inline");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_NEAR(m->quant.linear_bytes, 0.5 + 1.0 / 16, 1e-12);
  EXPECT_EQ(m->quant.kv_bytes, 1);
  nlohmann::json bnb = nvfp4;
  bnb["quantization_config"] = {{"load_in_4bit", true}, {"bnb_4bit_use_double_quant", false}};
  m = ParseModelConfig(bnb, "inline");
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->quant.method, "bitsandbytes");
  EXPECT_NEAR(m->quant.linear_bytes, 0.5 + 4.0 / 64, 1e-12);
}

// vLLM keeps one rotary cache per distinct rope: Gemma-3's global layers scale linearly by
// 8 (131,072 x 8 positions x 128 x 2 B = 256 MiB) and its sliding layers have their own
// unscaled one (32 MiB); SGLang's loads hold the one cache (its Gemma-3-4B launch logs
// 8.13 GiB, a 4B model with the 512 MiB scaled cache would load 8.6).
TEST(ModelConfigTest, VllmRotaryCachesOfGemma3) {
  // What a rank loads beyond the checkpoint's tensors at TP 1 (TGI: its one cache).
  auto beyond = [](const ModelConfig& m, const std::string& fw) {
    Sharding s;
    s.framework = fw;
    auto w = WeightsPerRank(m, s);
    EXPECT_TRUE(w.ok());
    return w.ok() ? w->per_rank_bytes - w->config_total_bytes : 0;
  };
  const double mib = 1024.0 * 1024;
  ModelConfig gemma = Load("gemma-3-27b");
  EXPECT_DOUBLE_EQ(gemma.rope_linear_factor, 8.0);
  EXPECT_NEAR(beyond(gemma, "vllm"), 288 * mib, 1.0);
  EXPECT_NEAR(beyond(gemma, "tgi"), 32 * mib, 1.0);
  ModelConfig qwen = Load("qwen3-32b");  // no linear scaling, no sliding layers: one cache
  EXPECT_DOUBLE_EQ(qwen.rope_linear_factor, 1.0);
  EXPECT_NEAR(beyond(qwen, "vllm"), 40960.0 * 128 * 2, 1.0);
}

TEST(ModelConfigTest, SlidingAndHybridLayers) {
  ModelConfig gemma = Load("gemma-3-27b");
  EXPECT_EQ(gemma.layers, 62);  // from text_config
  EXPECT_EQ(gemma.SlidingLayers(), 52);
  EXPECT_EQ(gemma.FullAttentionLayers(), 10);
  EXPECT_TRUE(gemma.tied_embeddings);  // Gemma's class default
  EXPECT_GT(gemma.vision_params, 0.3e9);
  ModelConfig oss = Load("gpt-oss-120b");
  EXPECT_EQ(oss.SlidingLayers(), 18);
  EXPECT_EQ(oss.sliding_window, 128);
  ModelConfig next = Load("qwen3-next-80b-a3b");
  EXPECT_EQ(next.FullAttentionLayers(), 12);
  EXPECT_EQ(next.LinearLayers(), 36);
  EXPECT_EQ(KvDimsOf(next, 1).layers, 12);  // only full-attention layers take KV per token
  ModelConfig mistral = Load("mistral-7b-v0.1");
  EXPECT_EQ(mistral.SlidingLayers(), 32);  // sliding_window 4096 on every layer
  // SGLang's SWA pool: gpt-oss yes; Gemma-3 and Mistral price every layer as full.
  int full = 0, swa = 0;
  EXPECT_TRUE(SglangHybridSwa(oss, &full, &swa));
  EXPECT_EQ(full, 18);
  EXPECT_EQ(swa, 18);
  EXPECT_FALSE(SglangHybridSwa(gemma, &full, &swa));
  EXPECT_FALSE(SglangHybridSwa(mistral, &full, &swa));
  // Qwen3-Next's gated delta net state per request: conv (2 x 128 x 16 + 128 x 32) / tp
  // x 3 x 2 B + temporal 32 / tp x 128 x 128 x 4 B, over 36 layers.
  EXPECT_EQ(next.mamba_kind, "gdn");
  EXPECT_DOUBLE_EQ(MambaStateBytesPerRequest(next, 4, 4), 36 * (8192.0 / 4 * 3 * 2 + 8.0 * 128 * 128 * 4));
  EXPECT_DOUBLE_EQ(MambaStateBytesPerRequest(gemma, 1, 4), 0);
}

// A Qwen3.5-397B-A17B launch at TP 2 (an SGLang-based server's log, ktransformers#1870):
// "Mamba Cache is allocated. max_mamba_cache_size: 82, conv_state size: 0.13GB,
// ssm_state size: 7.29GB" and "KV Cache is allocated. #tokens: 580364, K size: 4.15 GB".
// The pool holds size + 1 states (slot 0 is the padding slot); 45 gated-delta-net layers
// of 64 value heads x 128 x 128 in float32 and the conv of (2 x 16 + 64) x 128 channels.
TEST(ModelConfigTest, MambaStateMatchesALoggedPool) {
  nlohmann::json c = {{"architectures", {"Qwen3_5MoeForConditionalGeneration"}},
                      {"model_type", "qwen3_5_moe"},
                      {"num_hidden_layers", 60},
                      {"hidden_size", 4096},
                      {"num_attention_heads", 32},
                      {"num_key_value_heads", 2},
                      {"head_dim", 256},
                      {"vocab_size", 248320},
                      {"full_attention_interval", 4},
                      {"linear_num_value_heads", 64},
                      {"linear_num_key_heads", 16},
                      {"linear_key_head_dim", 128},
                      {"linear_value_head_dim", 128},
                      {"linear_conv_kernel_dim", 4},
                      // every layer routes to experts (their widths do not enter the state)
                      {"num_experts", 512},
                      {"moe_intermediate_size", 1024}};
  auto m = ParseModelConfig(c, "inline");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->LinearLayers(), 45);
  EXPECT_EQ(m->FullAttentionLayers(), 15);
  const double per_req = MambaStateBytesPerRequest(*m, 2, 4);
  const double ssm = 45.0 * 32 * 128 * 128 * 4, conv = 45.0 * (12288 / 2) * 3 * 2;
  EXPECT_DOUBLE_EQ(per_req, ssm + conv);
  EXPECT_NEAR(83 * ssm / kGiB, 7.29, 0.005);
  EXPECT_NEAR(83 * conv / kGiB, 0.13, 0.005);
  // The KV cell of the 15 full layers (1 KV head x 256 per rank): K size 4.15 GB.
  EXPECT_NEAR(580364.0 * 15 * 256 * 2 / kGiB, 4.15, 0.005);
  // handle_max_mamba_cache's ratio rule gives those 82 states from the rest they share.
  SglangKvInput kv;
  kv.era = SglangEra::kV05;
  kv.cell_bytes = 15 * 2 * 256 * 2;
  kv.mamba_bytes_per_request = per_req;
  kv.free_at_init_bytes = 22.84 * kGiB;
  kv.mem_fraction_static = 1.0;
  kv.avail_after_weights_bytes = 580364.0 * kv.cell_bytes + 82 * per_req + kv.cell_bytes / 2.0;
  auto r = SglangKvPool(kv);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->max_mamba_cache_size, 82);
  EXPECT_EQ(r->max_total_num_tokens, 580364);
}

// vLLM's mxfp4 MoE pads the experts for its kernels (Marlin on GPUs without FP4).
TEST(ModelConfigTest, VllmMxfp4ExpertPadding) {
  ModelConfig oss = Load("gpt-oss-120b");
  Sharding s;
  s.framework = "vllm";
  auto plain = WeightsPerRank(oss, s);
  s.version = "0.10.1";
  s.gpu_arch = "hopper";
  auto marlin = WeightsPerRank(oss, s);
  s.version = "0.14.1";
  auto triton = WeightsPerRank(oss, s);
  ASSERT_TRUE(plain.ok() && marlin.ok() && triton.ok());
  EXPECT_GT(marlin->per_rank_bytes, triton->per_rank_bytes);
  EXPECT_GT(triton->per_rank_bytes, plain->per_rank_bytes);
  // "Model loading took 65.9651 GiB" (vllm#23278, 0.10.1, H100) and 64.38 GiB (vllm#33155, 0.14.1).
  EXPECT_NEAR(marlin->per_rank_bytes / kGiB / 65.9651, 1.0, 0.02);
  EXPECT_NEAR(triton->per_rank_bytes / kGiB / 64.38, 1.0, 0.02);
  EXPECT_DOUBLE_EQ(marlin->config_total_bytes, plain->config_total_bytes);  // the checkpoint is not padded
}

TEST(ModelConfigTest, TensorParallelChecks) {
  ModelConfig m = Load("codellama-13b-instruct");
  EXPECT_TRUE(CheckTensorParallel(m, 8, "vllm").ok());
  Status s = CheckTensorParallel(m, 6, "vllm");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("40 attention heads"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("TP sizes that work: 1, 2, 4, 8"), std::string::npos) << s.message();
  s = CheckTensorParallel(m, 5, "vllm");  // 40 heads split, the 13824-wide MLP does not
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("13824"), std::string::npos) << s.message();
  ModelConfig q = Load("qwen3-32b");  // 8 KV heads: tp 16 replicates, tp 12 cannot
  EXPECT_TRUE(CheckTensorParallel(q, 16, "sglang").ok());
  EXPECT_FALSE(CheckTensorParallel(q, 12, "sglang").ok());
}

TEST(ModelConfigTest, BadInputsNameTheFile) {
  auto missing = LoadModel("/nonexistent/model");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("nothing is downloaded"), std::string::npos);
  auto bad = ParseModelConfig(nlohmann::json::array(), "x.json");
  ASSERT_FALSE(bad.ok());
  auto partial = ParseModelConfig(nlohmann::json{{"hidden_size", 64}}, "y.json");
  ASSERT_FALSE(partial.ok());
  EXPECT_NE(partial.status().message().find("num_hidden_layers"), std::string::npos);
  EXPECT_NE(partial.status().message().find("y.json"), std::string::npos);
}

}  // namespace
}  // namespace tpt::memory

namespace tpt::memory {
namespace {

// Falcon's pre-transformers config spellings (model_type "RefinedWeb" for 40B/180B,
// "RefinedWebModel" for 7B), written here with the published shapes: the MLP is
// dense_h_to_4h (4 x hidden, not gated), n_head_kv counts the KV heads, and 7B's
// multi_query means one KV head (TGI v1.0.2 flash_rw_modeling.py RWConfig).
TEST(ModelConfigTest, FalconRefinedWebConfigsReadTheirOwnFields) {
  nlohmann::json f40 = {{"architectures", {"RWForCausalLM"}}, {"model_type", "RefinedWeb"}, {"hidden_size", 8192},
                        {"n_head", 128}, {"n_head_kv", 8}, {"n_layer", 60}, {"vocab_size", 65024},
                        {"torch_dtype", "bfloat16"}};
  auto m40 = ParseModelConfig(f40, "falcon-40b/config.json");
  ASSERT_TRUE(m40.ok()) << m40.status().ToString();
  EXPECT_EQ(m40->intermediate, 4 * 8192);
  EXPECT_EQ(m40->kv_heads, 8);
  // 41.8B parameters: embeddings and lm_head 2 x 65024 x 8192, 60 layers of QKV
  // 8192 x (128 + 16) x 64, dense 8192^2 and a plain 2 x 8192 x 32768 MLP.
  EXPECT_NEAR(Params(*m40) / 1e9, 41.8, 0.6);

  nlohmann::json f7 = {{"architectures", {"RWForCausalLM"}}, {"model_type", "RefinedWebModel"}, {"hidden_size", 4544},
                       {"n_head", 71}, {"n_layer", 32}, {"multi_query", true}, {"vocab_size", 65024},
                       {"torch_dtype", "bfloat16"}};
  auto m7 = ParseModelConfig(f7, "falcon-7b/config.json");
  ASSERT_TRUE(m7.ok()) << m7.status().ToString();
  EXPECT_EQ(m7->kv_heads, 1);
  EXPECT_EQ(m7->intermediate, 4 * 4544);
  EXPECT_NEAR(Params(*m7) / 1e9, 7.2, 0.35);
}

}  // namespace
}  // namespace tpt::memory
