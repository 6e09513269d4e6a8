// tgi_graph_capture_test.cc: TGI's decode CUDA graphs after the KV cache (tgi_graph_capture.h)
// and Gemma-3's image prefill in TGI v3.2.x (tgi_vlm_warmup.h).
#include "memory/tgi_graph_capture.h"

#include <gtest/gtest.h>

#include "memory/memory_model.h"
#include "memory/nccl_graph_capture.h"
#include "memory/tgi_vlm_warmup.h"

namespace tpt::memory {
namespace {

TEST(TgiGraphCaptureTest, SizesByVersionAndFlag) {
  const std::vector<int> def_desc = {32, 16, 8, 4, 2, 1};
  // launcher/src/main.rs: the default from v2.0.0, sorted largest first from v2.1.0 (globals.py).
  EXPECT_EQ(TgiCudaGraphSizes("2.2.0", std::nullopt, "").sizes, def_desc);
  EXPECT_EQ(TgiCudaGraphSizes("3.2.1", std::nullopt, "").sizes, def_desc);
  EXPECT_EQ(TgiCudaGraphSizes("2.0.4", std::nullopt, "").sizes, (std::vector<int>{1, 2, 4, 8, 16, 32}));
  // Before v2.0 the graphs are opt-in (--enable-cuda-graphs): none.
  EXPECT_TRUE(TgiCudaGraphSizes("1.4.5", std::nullopt, "").sizes.empty());
  // --cuda-graphs 0 turns them off from v2.0.2 (zeros filtered); v2.0.0-v2.0.1 take a given list
  // only with --quantize, so the default stays.
  EXPECT_TRUE(TgiCudaGraphSizes("2.2.0", std::vector<int>{0}, "").sizes.empty());
  EXPECT_EQ(TgiCudaGraphSizes("2.0.1", std::vector<int>{0}, "").sizes.size(), 6u);
  EXPECT_EQ(TgiCudaGraphSizes("3.0.1", std::vector<int>{1, 0, 4}, "").sizes, (std::vector<int>{4, 1}));
  // bitsandbytes turns the default off; from v2.3.0 the config's quantization counts.
  EXPECT_TRUE(TgiCudaGraphSizes("2.3.0", std::nullopt, "bitsandbytes").sizes.empty());
  EXPECT_EQ(TgiCudaGraphSizes("2.2.0", std::nullopt, "bitsandbytes").sizes.size(), 6u);
  EXPECT_EQ(TgiCudaGraphsFlag(def_desc), "1,2,4,8,16,32");
  EXPECT_EQ(TgiCudaGraphsFlag({}), "0");
}

TEST(TgiGraphCaptureTest, CollectivesAndPool) {
  const std::vector<int> s = {32, 16, 8, 4, 2, 1};
  // Two all-reduces a layer and the head's all-gather, per graph; none at TP 1.
  EXPECT_EQ(TgiCapturedCollectives(s, 126, 8), 6 * 253);
  EXPECT_EQ(TgiCapturedCollectives(s, 126, 1), 0);
  ModelConfig m;
  m.hidden = 16384;
  m.intermediate = 53248;
  m.vocab = 128256;
  m.layers = 126;
  m.dtype_bytes = 2;
  const double pool = TgiGraphPoolBytes("2.2.0", s, m, 8, 13107, 16);
  // The logits every graph keeps (63 rows of the full vocabulary) and the private pool's first
  // segments are in it; the pool stays small beside the collectives' high end.
  EXPECT_GT(pool, 63.0 * 128256 * 2 + 22.0 * 1024 * 1024);
  EXPECT_LT(pool, 0.1 * kGiB);
}

TEST(TgiGraphCaptureTest, NcclCollectivesMayNotFitTheWiggleRoom) {
  const std::vector<int> s = {32, 16, 8, 4, 2, 1};
  const int64_t n = 1518;  // Llama-3.1-405B at TP 8
  // tgi#2572 (2.2.0, 8 x H100): about 1.4 GiB left after the KV cache; 1518 collectives at the
  // most measured take 2.4 GiB: not a confident start.
  const TgiCaptureRisk tight = TgiNcclCaptureRisk("2.2.0", s, 8, n, 1.38 * kGiB, 0.05 * kGiB);
  EXPECT_TRUE(tight.may_fail);
  // The measured figure is the whole capture's (pool included): the larger of it and the pool.
  EXPECT_NEAR(tight.need_high_bytes, n * kNcclCaptureHighBytesPerCollective, 1);
  EXPECT_NE(tight.text.find("capture may fail"), std::string::npos) << tight.text;
  EXPECT_NE(tight.text.find("--cuda-graphs"), std::string::npos) << tight.text;
  // Room for the high end: a start.
  EXPECT_FALSE(TgiNcclCaptureRisk("2.2.0", s, 8, n, 3.0 * kGiB, 0.05 * kGiB).may_fail);
  // TP 1 captures no collectives: PyTorch's out-of-memory in the capture is caught, so a pool
  // that may not fit makes the start uncertain, not a failure.
  const TgiCaptureRisk one = TgiNcclCaptureRisk("2.2.0", s, 1, 0, 0.01 * kGiB, 0.05 * kGiB);
  EXPECT_FALSE(one.may_fail);
  EXPECT_TRUE(one.uncertain);
  EXPECT_FALSE(TgiNcclCaptureRisk("2.2.0", s, 1, 0, 1.0 * kGiB, 0.05 * kGiB).uncertain);
  // No graphs (--cuda-graphs 0): nothing to say.
  EXPECT_FALSE(TgiNcclCaptureRisk("2.2.0", {}, 8, 0, 0, 0).may_fail);
}

TEST(TgiGraphCaptureTest, VllmKeepsTheFlatMeasuredHighEnd) {
  // The shared bound (nccl_graph_capture.h): vLLM's high end is vllm#5517's 3.81 GiB.
  const NcclCaptureNeed need = NcclCaptureNeedOf(0.25 * kGiB, kNcclCaptureHighBytes, 1.38 * kGiB);
  EXPECT_NEAR(need.low_bytes, 1.63 * kGiB, 1e-6 * kGiB);
  EXPECT_NEAR(need.high_bytes, (3.8086 + 1.38) * kGiB, 1e-6 * kGiB);
  EXPECT_EQ(NcclCaptureNeedRange(need), "1.63-5.19 GiB");
}

ModelConfig Gemma3_27b() {
  ModelConfig m;
  m.model_type = "gemma3";
  m.heads = 32;
  m.kv_heads = 16;
  m.dtype_bytes = 2;
  m.top.vision_config = true;
  m.vision_heads = 16;
  m.vision_max_patches = 4096;
  return m;
}

TEST(TgiGraphCaptureTest, GemmaThreeImagePrefillThroughSdpaIsPricedAtV32) {
  // tgi#3130 (3.2.1, 4 x A100, 31000 prefill tokens: requests of 30000 and 1000, padded to
  // 30000): the held masks (9 B x L^2 a request) and SDPA's math kernel (8 B x 8 heads a rank x
  // L^2 a request), priced, not an unknown.
  const TgiVlmWarmup w = TgiVlmWarmupBytes("3.2.1", Gemma3_27b(), 4, 2, 30000);
  const double l2 = 30000.0 * 30000.0 * 2;
  EXPECT_NEAR(w.text_extra_bytes, 9 * l2 + 8 * 8 * l2, 1);
  EXPECT_TRUE(w.unknown.empty()) << w.unknown;
  EXPECT_EQ(w.unpriced_bytes, 0);
  EXPECT_NE(w.what.find("SDPA's math kernel"), std::string::npos) << w.what;
  // Without GQA the kernel is not sized: the masks are priced, the rest is a range.
  ModelConfig mha = Gemma3_27b();
  mha.kv_heads = 32;
  const TgiVlmWarmup u = TgiVlmWarmupBytes("3.2.1", mha, 4, 2, 30000);
  EXPECT_NEAR(u.text_extra_bytes, 9 * l2, 1);
  EXPECT_NEAR(u.unpriced_bytes, 8 * 8 * l2, 1);
  EXPECT_FALSE(u.unknown.empty());
  // v3.3.x: flashinfer with the masks beside the layer, as before.
  EXPECT_NEAR(TgiVlmWarmupBytes("3.3.4", Gemma3_27b(), 4, 2, 30000).text_extra_bytes, 10 * l2, 1);
}

}  // namespace
}  // namespace tpt::memory
