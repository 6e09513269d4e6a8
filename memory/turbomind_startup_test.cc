// turbomind_startup_test.cc: what TurboMind holds before its free-memory read, by version
// (turbomind_startup.cc): the export's torch cache only in 0.6.2-0.8.x, the weights' pool
// from 0.8.0, LlamaV2's buffers from 0.6.0.
#include "memory/turbomind_startup.h"

#include <gtest/gtest.h>

namespace tpt::memory {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

TurbomindStartupInput Shapes(const std::string& version, int layers, int intermediate, int64_t vocab) {
  TurbomindStartupInput in;
  in.version = version;
  in.layers = layers;
  in.hidden = 4096;
  in.intermediate = intermediate;
  in.heads = 32;
  in.kv_heads = 8;
  in.head_dim = 128;
  in.vocab = vocab;
  return in;
}

// InternLM2.5-7B's language model (InternVL2.5-8B's), bf16.
TurbomindStartupInput Internlm2(const std::string& version) { return Shapes(version, 32, 14336, 92553); }

TEST(TurbomindStartupTest, BuffersBeforeTheReadAreTheGemmWorkspaceAndTheSplitKPartials) {
  auto h = TurbomindHeldBeforeRead(Internlm2("0.7.2"));
  ASSERT_TRUE(h.ok()) << h.status().message();
  // 33 MiB + 4096 x 32 x (128 + 2) x 4 + 4096 x 32 x 4 + 4096 x 4.
  EXPECT_DOUBLE_EQ(h->engine_buffers_bytes, 33 * kMiB + 4096.0 * 32 * 130 * 4 + 4096.0 * 32 * 4 + 4096.0 * 4);
  auto t2 = Internlm2("0.7.2");
  t2.tp = 2;
  auto h2 = TurbomindHeldBeforeRead(t2);
  ASSERT_TRUE(h2.ok());
  EXPECT_LT(h2->engine_buffers_bytes, h->engine_buffers_bytes);  // the partials are per local head
  auto old = TurbomindHeldBeforeRead(Internlm2("0.5.3"));
  ASSERT_TRUE(old.ok());
  EXPECT_EQ(old->engine_buffers_bytes, 0);  // no GEMM workspace before 0.6.0: not read, said
  EXPECT_FALSE(old->notes.empty());
}

// v0.6.2 brought the module.py/loader.py export whose staging 0.7.0 keeps unchanged
// (export_weight's param.cuda(), Ffn._export's zero-pad clones, read at v0.6.2): torch's
// cache holds the same layer and embedding there. 0.6.0-0.6.1's exporter.py is not read:
// nothing counted, said. lmdeploy#2731: a 4-bit Qwen2.5-32B that started on 0.5 runs out
// of memory at start-up on 0.6 on an RTX 3090.
TEST(TurbomindStartupTest, TorchKeepsTheExportsStagingFrom062) {
  auto h062 = TurbomindHeldBeforeRead(Internlm2("0.6.2"));
  auto h072 = TurbomindHeldBeforeRead(Internlm2("0.7.2"));
  ASSERT_TRUE(h062.ok() && h072.ok());
  EXPECT_GT(h062->export_cache_bytes, 0);
  EXPECT_DOUBLE_EQ(h062->export_cache_bytes, h072->export_cache_bytes);
  auto h061 = TurbomindHeldBeforeRead(Internlm2("0.6.1"));
  ASSERT_TRUE(h061.ok());
  EXPECT_EQ(h061->export_cache_bytes, 0);
  bool said = false;
  for (const auto& n : h061->notes) said = said || n.find("exporter.py") != std::string::npos;
  EXPECT_TRUE(said) << "0.6.0-0.6.1's export is not read and the plan says so";
}

TEST(TurbomindStartupTest, TorchKeepsTheExportsStagingUntil090) {
  auto h = TurbomindHeldBeforeRead(Internlm2("0.7.2"));
  ASSERT_TRUE(h.ok());
  // A layer's attention (q, k, v, o and the merged qkv), its MLP staged whole (w1, w2, w3),
  // their zero pads' clones and one contiguous split, and the embedding.
  const double attn = 4096.0 * (2 * 4096 + 2 * 1024 + 4096 + 2 * 1024) * 2;
  const double mlp = 7.0 * 4096 * 14336 * 2, emb = 92553.0 * 4096 * 2;
  EXPECT_DOUBLE_EQ(h->export_cache_bytes, attn + mlp + emb);
  EXPECT_EQ(h->conversion_pool_bytes, 0);  // 0.7.x's workspace came from the default pool, released
  auto h080 = TurbomindHeldBeforeRead(Internlm2("0.8.0"));
  ASSERT_TRUE(h080.ok());
  EXPECT_DOUBLE_EQ(h080->export_cache_bytes, attn + mlp + emb);
  // lmdeploy#3570 (0.9.0): empty_cache after the conversion.
  auto h090 = TurbomindHeldBeforeRead(Internlm2("0.9.0"));
  ASSERT_TRUE(h090.ok());
  EXPECT_EQ(h090->export_cache_bytes, 0);
  // At tp 2 the MLP's contiguous split and the embedding's staged slice halve.
  auto t2 = Internlm2("0.7.2");
  t2.tp = 2;
  auto h2 = TurbomindHeldBeforeRead(t2);
  ASSERT_TRUE(h2.ok());
  EXPECT_DOUBLE_EQ(h2->export_cache_bytes, attn + 6.5 * 4096 * 14336 * 2 + emb / 2);
}

TEST(TurbomindStartupTest, WeightPoolKeepsTheFusedGateUpFrom080) {
  // Qwen3-8B AWQ (4-bit, group 128) at 0.9.2: one layer's fused gate/up with its scales and
  // zeros, and the 4-bit conversion's temporaries (4 x hidden x intermediate bytes).
  TurbomindStartupInput in = Shapes("0.9.2", 36, 12288, 151936);
  in.int4 = true;
  auto h = TurbomindHeldBeforeRead(in);
  ASSERT_TRUE(h.ok());
  const double fused = 2.0 * 4096 * 12288 * (0.5 + 4.0 / 128);
  EXPECT_DOUBLE_EQ(h->conversion_pool_bytes, fused + 4.0 * 4096 * 12288);
  EXPECT_DOUBLE_EQ(h->conversion_pool_upper_bytes, 36 * fused + 4.0 * 4096 * 12288);
  EXPECT_EQ(h->export_cache_bytes, 0);
  // A 16-bit checkpoint needs no temporaries (convert_fp returns outside fused MoE).
  in.int4 = false;
  auto f = TurbomindHeldBeforeRead(in);
  ASSERT_TRUE(f.ok());
  EXPECT_DOUBLE_EQ(f->conversion_pool_bytes, 2.0 * 4096 * 12288 * 2);
  EXPECT_GT(f->upper_bytes(), f->total_bytes());
  // Before 0.8.0 there is no such pool.
  in.version = "0.7.3";
  auto g = TurbomindHeldBeforeRead(in);
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g->conversion_pool_bytes, 0);
}

TEST(TurbomindStartupTest, MoeExpertsAreSaidNotGuessed) {
  TurbomindStartupInput in = Internlm2("0.7.2");
  in.moe = true;
  auto h = TurbomindHeldBeforeRead(in);
  ASSERT_TRUE(h.ok());
  EXPECT_GT(h->engine_buffers_bytes, 0);
  EXPECT_EQ(h->export_cache_bytes, 0);
  EXPECT_EQ(h->conversion_pool_bytes, 0);
  EXPECT_NE(h->notes.back().find("experts"), std::string::npos);
}

TEST(TurbomindStartupTest, MissingShapesAreAnErrorNamingThem) {
  TurbomindStartupInput in = Internlm2("0.9.2");
  in.intermediate = 0;
  auto h = TurbomindHeldBeforeRead(in);
  ASSERT_FALSE(h.ok());
  EXPECT_NE(h.status().message().find("MLP width"), std::string::npos);
  in = Internlm2("0.9.2");
  in.tp = 3;
  EXPECT_FALSE(TurbomindHeldBeforeRead(in).ok());
}

}  // namespace
}  // namespace tpt::memory
