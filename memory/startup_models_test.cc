// startup_models_test.cc: TGI's, LMDeploy's and TensorRT-LLM's start-up KV
// arithmetic (tgi_model.cc, lmdeploy_model.cc, trtllm_model.cc), each figure
// worked by hand from the servers' formulas quoted there.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "memory/launch_plan.h"
#include "memory/memory_model.h"

namespace tpt::memory {
namespace {

constexpr double kMiBd = 1024.0 * 1024.0;

TEST(TgiModel, WiggleRoomByVersion) {
  EXPECT_DOUBLE_EQ(TgiDefaultWiggleRoom("1.0.0"), 1.0);
  EXPECT_DOUBLE_EQ(TgiDefaultWiggleRoom("2.0.4"), 0.95);
  EXPECT_DOUBLE_EQ(TgiDefaultWiggleRoom("2.3.1"), 0.95);
  // models/globals.py v2.4.0, v2.4.1: os.getenv("TGI_WIGGLE_ROOM", "0.90"), back to 0.95 at v3.0.0.
  EXPECT_DOUBLE_EQ(TgiDefaultWiggleRoom("2.4.0"), 0.90);
  EXPECT_DOUBLE_EQ(TgiDefaultWiggleRoom("2.4.1"), 0.90);
  EXPECT_DOUBLE_EQ(TgiDefaultWiggleRoom("3.0.0"), 0.95);
  EXPECT_DOUBLE_EQ(TgiDefaultWiggleRoom("3.0.1"), 0.95);
  EXPECT_DOUBLE_EQ(TgiDefaultWiggleRoom("3.2.0"), 0.93);
  EXPECT_DOUBLE_EQ(TgiDefaultWiggleRoom("3.3.6"), 0.90);
  EXPECT_DOUBLE_EQ(TgiDefaultWiggleRoom(""), 0.90);
}

TEST(TgiModel, V3FoldsTheWiggleIntoTheFractionAndChecksMaxTotalTokens) {
  TgiKvInput in;
  in.version = "3.3.6";
  in.total_bytes = 80 * kGiB;
  in.free_after_warmup_bytes = 20 * kGiB;
  in.bytes_per_token = 131072;  // 2 MiB blocks of 16
  in.warmup_blocks = 256;
  in.max_total_tokens = 200000;
  auto r = TgiKvBlocks(in);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_DOUBLE_EQ(r->usable_bytes, 12 * kGiB);  // 20 - (1 - 1 x 0.9) x 80
  EXPECT_EQ(r->num_blocks, 6144 + 256);
  EXPECT_EQ(r->kv_tokens, 6400 * 16);
  EXPECT_TRUE(r->fails);
  EXPECT_EQ(r->error, "Not enough memory to handle `max_total_tokens=200000`");
  in.max_total_tokens = 102400;
  EXPECT_FALSE(TgiKvBlocks(in)->fails);
}

TEST(TgiModel, V2TakesTheWiggleAfterTheFraction) {
  TgiKvInput in;
  in.version = "2.0.4";
  in.total_bytes = 80 * kGiB;
  in.free_after_warmup_bytes = 20 * kGiB;
  in.bytes_per_token = 131072;
  in.cuda_memory_fraction = 0.9;
  in.max_total_tokens = 100000;
  auto r = TgiKvBlocks(in);
  ASSERT_TRUE(r.ok());
  EXPECT_NEAR(r->usable_bytes, 11.4 * kGiB, 1);  // (20 - 0.1 x 80) x 0.95
  EXPECT_EQ(r->num_blocks, 5836);
  EXPECT_TRUE(r->fails);
  EXPECT_EQ(r->error, "`max_total_tokens` must be <= `max_batch_total_tokens`. Given: 100000 and 93376");
  in.version = "1.0.0";  // no wiggle room yet
  in.cuda_memory_fraction = 1.0;
  EXPECT_EQ(TgiKvBlocks(in)->num_blocks, 10240);
}

TEST(TgiModel, WarmupBatchAndThePrefillThatFits) {
  // 32768 prefill tokens in requests of 4095: 8 full + 1 of 8 tokens, 256 blocks each.
  EXPECT_EQ(TgiWarmupBlocks(32768, 4095, 4096, 16), 9 * 256);
  // The tgi sample: 32768 tokens asked 4.00 GiB with 2.91 GiB free -> 23838.7 -> 23552.
  EXPECT_EQ(TgiPrefillThatFits(32768, 4.0 * kGiB, 2.91 * kGiB), 23552);
  EXPECT_EQ(TgiPrefillThatFits(256, 4.0 * kGiB, 2.91 * kGiB), 176);  // below 1024: multiples of 16
  EXPECT_EQ(TgiPrefillThatFits(4096, 1.0 * kGiB, 8.0 * kGiB), 4096);  // never above what was logged
  EXPECT_EQ(TgiPrefillThatFits(4096, 0, 1), 0);
  TgiKvInput bad;
  EXPECT_FALSE(TgiKvBlocks(bad).ok());
}

// BaseFlashMistral caps a request's blocks at the sliding window's (v1.1.0..v2.0.x).
TEST(TgiModel, SlidingWindowCapsTheWarmupBlocksBeforeV21) {
  EXPECT_EQ(TgiWarmupBlockCap("2.0.0", "mistral", 4096), 256);
  EXPECT_EQ(TgiWarmupBlockCap("2.0.4", "qwen2", 32768), 2048);
  EXPECT_EQ(TgiWarmupBlockCap("2.1.0", "mistral", 4096), 0);
  EXPECT_EQ(TgiWarmupBlockCap("1.0.3", "mistral", 4096), 0);
  EXPECT_EQ(TgiWarmupBlockCap("2.0.0", "llama", 4096), 0);
  EXPECT_EQ(TgiWarmupBlockCap("2.0.0", "mistral", 0), 0);
  // 32,768 prefill tokens in requests of 8,511 (4 of them), each 532 blocks, or 256 capped.
  EXPECT_EQ(TgiWarmupBlocks(32768, 8511, 8512, 16), 4 * 532);
  EXPECT_EQ(TgiWarmupBlocks(32768, 8511, 8512, 16, 256), 4 * 256);
}

// What the warm-up holds at its free-memory read, by version (tgi_model.cc).
TEST(TgiModel, WarmupHoldsTheEagerLayerTheLogitsByVersionAndFlashinfer) {
  // Llama-3.1-8B, 4,145 tokens, bf16: 7 x hidden kept, 4 x intermediate in the MLP.
  EXPECT_DOUBLE_EQ(TgiDenseLayerPeakBytes(4145, 4096, 14336, 2), 4145.0 * 2 * (7 * 4096 + 4 * 14336));
  // Above hidden 8192 the norm adds in place: two of the seven are the inputs themselves.
  EXPECT_DOUBLE_EQ(TgiDenseLayerPeakBytes(100, 12288, 1000, 2), 100.0 * 2 * (5 * 12288 + 4 * 1000));
  EXPECT_DOUBLE_EQ(TgiDenseLayerPeakBytes(0, 4096, 14336, 2), 0);
  EXPECT_TRUE(TgiPrefillLogprobsByDefault("2.4.1"));
  EXPECT_FALSE(TgiPrefillLogprobsByDefault("3.0.0"));
  EXPECT_FALSE(TgiPrefillLogprobsByDefault(""));
  EXPECT_DOUBLE_EQ(TgiAttentionWorkspaceBytes("2.2.0"), 0);
  EXPECT_DOUBLE_EQ(TgiAttentionWorkspaceBytes("3.0.1"), 152 * kMiBd);
  EXPECT_TRUE(TgiWarmupReportsEveryError("0.9.3"));
  EXPECT_TRUE(TgiWarmupReportsEveryError("1.1.0"));
  EXPECT_FALSE(TgiWarmupReportsEveryError("1.1.1"));
}

TEST(TgiModel, AwqSplitKGemmHoldsEightPartialOutputsBeforeV22) {
  // llm-awq's GEMM from v1.1.0 (no AWQ before), Marlin from v2.2.0; "" = the newest.
  const std::vector<std::pair<std::string, bool>> split_k_by_version = {
      {"1.0.3", false}, {"1.1.0", true}, {"2.1.1", true}, {"2.2.0", false}, {"", false}};
  for (const auto& [version, split_k] : split_k_by_version) EXPECT_EQ(TgiAwqSplitKGemm(version), split_k) << version;
  // gemm_forward_cuda(x, ..., 8): eight partial outputs of T x 2I and their sum beside 7 x T x hidden;
  // a narrow MLP peaks at the down projection instead (eight partials of T x hidden).
  const double gate_up = 4096.0 * 2 * (7 * 4096 + 18 * 14336), down = 10.0 * 2 * (16 * 4096 + 3 * 2048);
  EXPECT_DOUBLE_EQ(TgiAwqLayerPeakBytes(4096, 4096, 14336, 2), gate_up);
  EXPECT_DOUBLE_EQ(TgiAwqLayerPeakBytes(10, 4096, 2048, 2), down);
  EXPECT_DOUBLE_EQ(TgiAwqLayerPeakBytes(0, 4096, 14336, 2), 0);
  // The plan (TGI#1856's second launch, a Llama-3-8B AWQ on an RTX 3090 at 1.4.x, logged 104,384
  // tokens): the warm-up holds the split-k outputs, so the pool is smaller than for the same
  // 4-bit checkpoint on a kernel without them.
  auto m = LoadModel(std::string(TPT_SOURCE_DIR) + "/samples/models/qwen2.5-7b-instruct-awq");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  PlanInput in;
  in.framework = "tgi";
  in.version = "1.4.5";
  in.total_bytes = 23.69 * kGiB;
  in.model = *m;
  PlanInput other = in;
  other.model->quant.method = "gptq";
  auto awq = MakePlan(in), gptq = MakePlan(other);
  ASSERT_TRUE(awq.ok() && gptq.ok());
  const double tokens = awq->figures.at("warmup_prefill_tokens").get<double>();
  EXPECT_NEAR(awq->figures.at("activation_peak_bytes").get<double>() -
                  gptq->figures.at("activation_peak_bytes").get<double>(),
              tokens * 2 * 14 * 18944, 1);
  EXPECT_LT(awq->kv_tokens, gptq->kv_tokens);
  in.version = other.version = "2.2.0";
  awq = MakePlan(in), gptq = MakePlan(other);
  ASSERT_TRUE(awq.ok() && gptq.ok());
  EXPECT_EQ(awq->kv_tokens, gptq->kv_tokens);
}

TEST(LmdeployModel, TurbomindRatioOfFreeMemoryAndItsBuffersAfterIt) {
  LmdeployKvInput in;
  in.free_after_weights_bytes = 9.4 * kGiB;
  in.block_bytes = 1.5 * kMiBd;
  in.runtime_bytes = 2 * kGiB;
  auto r = LmdeployKvBlocks(in);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->num_blocks, 5133);  // size_t(9.4 GiB x 0.8) / 1.5 MiB
  EXPECT_EQ(r->kv_tokens, 5133 * 64);
  EXPECT_NEAR(r->left_after_cache_bytes, 9.4 * kGiB - 5133 * 1.5 * kMiBd, 1);
  EXPECT_TRUE(r->fails);  // 2 GiB of buffers, 1.88 GiB left
  in.runtime_bytes = 1 * kGiB;
  EXPECT_FALSE(LmdeployKvBlocks(in)->fails);
  // v0.2.0-0.2.1: a ratio of the total.
  EXPECT_TRUE(LmdeployFractionOfTotal("0.2.1"));
  EXPECT_FALSE(LmdeployFractionOfTotal("0.2.2"));
  in.version = "0.2.1";
  in.cache_max_entry_count = 0.5;
  EXPECT_FALSE(LmdeployKvBlocks(in).ok());  // the total is needed
  in.total_bytes = 24 * kGiB;
  EXPECT_EQ(LmdeployKvBlocks(in)->num_blocks, 8192);  // 12 GiB / 1.5 MiB
  in.cache_max_entry_count = 1000;  // >= 1: a block count
  EXPECT_EQ(LmdeployKvBlocks(in)->num_blocks, 1000);
}

TEST(LmdeployModel, PytorchEngineReservesRuntimeThenTheFraction) {
  LmdeployKvInput in;
  in.engine = LmdeployEngine::kPytorch;
  in.version = "0.6.0";
  in.free_after_weights_bytes = 10 * kGiB;
  in.block_bytes = 4 * kMiBd;
  in.vocab_size = 32000;
  auto r = LmdeployKvBlocks(in);
  ASSERT_TRUE(r.ok());
  EXPECT_DOUBLE_EQ(r->runtime_reserve_bytes, 8192.0 * 32000 * 7);
  EXPECT_EQ(r->num_blocks, 1698);  // (10 GiB - 1,835,008,000) x 0.8 / 4 MiB
  EXPECT_FALSE(r->fails);
  // A 1 GiB card with a 152k vocabulary: the prefill budget halves to 512.
  in.free_after_weights_bytes = 1 * kGiB;
  in.vocab_size = 152064;
  r = LmdeployKvBlocks(in);
  EXPECT_EQ(r->max_prefill_token_num, 512);
  EXPECT_EQ(r->num_blocks, 100);
  in.free_after_weights_bytes = 60 * kMiBd;  // even 1 prefill token leaves 11 blocks
  r = LmdeployKvBlocks(in);
  EXPECT_TRUE(r->fails);
  EXPECT_EQ(r->error, "No enough gpu memory for runtime.");
  // v0.10: (prefill + 2 x batches) x vocab x 2.
  in.version = "0.10.0";
  in.free_after_weights_bytes = 10 * kGiB;
  in.vocab_size = 32000;
  EXPECT_DOUBLE_EQ(LmdeployKvBlocks(in)->runtime_reserve_bytes, (8192.0 + 256) * 32000 * 2);
}

TEST(LmdeployModel, ServingValueLeavesTwiceTheRoomThatFailed) {
  // The lmdeploy sample: 5120 blocks of 1.50 MiB at 0.8 -> 9.375 GiB free after the weights.
  auto s = LmdeployServingFraction(9.375 * kGiB, 0.8, 1.5 * kMiBd, 64, 32768);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_DOUBLE_EQ(s->cache_max_entry_count, 0.6);
  EXPECT_DOUBLE_EQ(s->floor, 0.08);  // 512 blocks x 1.5 MiB of 9.375 GiB
  EXPECT_NEAR(s->left_bytes, 1.875 * kGiB, 1);
  EXPECT_NEAR(s->left_at_serving_bytes, 3.75 * kGiB, 1);
  EXPECT_EQ(s->tokens_at_serving, 3840 * 64);
  EXPECT_NEAR(s->bytes_per_step, 96 * kMiBd, 1);
  // A fraction of 0.5 or less: halved, never below the one-session floor.
  EXPECT_DOUBLE_EQ(LmdeployServingFraction(10 * kGiB, 0.4, 1.5 * kMiBd, 64, 0)->cache_max_entry_count, 0.2);
  EXPECT_DOUBLE_EQ(LmdeployServingFraction(10 * kGiB, 0.4, 1.5 * kMiBd, 64, 131072)->cache_max_entry_count, 0.3);
  // No fraction holds one session: the floor says so (> 1), the value stays the halved one.
  s = LmdeployServingFraction(1 * kGiB, 0.4, 1.5 * kMiBd, 64, 131072);
  EXPECT_DOUBLE_EQ(s->floor, 3);
  EXPECT_DOUBLE_EQ(s->cache_max_entry_count, 0.2);
  EXPECT_FALSE(LmdeployServingFraction(0, 0.8, 1, 64, 0).ok());
}

TEST(TrtllmModel, FractionOfAvailableBlocksAndTheCreationCheck) {
  TrtllmKvInput in;
  in.available_bytes = 100 * kGiB;
  in.bytes_per_token = 65536;  // 4 MiB blocks of 64
  in.free_at_creation_bytes = 85 * kGiB;
  auto r = TrtllmKvBlocks(in);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->num_blocks, 23040);  // 90 GiB / 4 MiB
  EXPECT_EQ(r->kv_tokens, 23040 * 64);
  EXPECT_TRUE(r->creation_fails);
  in.max_tokens = 100000;  // the smaller wins
  r = TrtllmKvBlocks(in);
  EXPECT_EQ(r->num_blocks, 1563);
  EXPECT_FALSE(r->fails);
  // v0.8's one-sequence check.
  TrtllmKvInput old;
  old.available_bytes = 1 * kGiB;
  old.bytes_per_token = 32768;
  old.tokens_per_block = 128;
  old.tokens_one_sequence = 34816;
  r = TrtllmKvBlocks(old);
  EXPECT_EQ(r->kv_tokens, 230 * 128);
  EXPECT_TRUE(r->fails);
  EXPECT_NE(r->error.find("maxTokensInPagedKvCache (29440)"), std::string::npos);
  old.free_gpu_memory_fraction = 1.0;
  EXPECT_FALSE(TrtllmKvBlocks(old).ok());
}

TEST(TrtllmModel, ServingFractionKeepsTheHeadroomTheFractionMeant) {
  auto s = TrtllmServingFraction(100 * kGiB, 0.9, 85 * kGiB, 65536);
  ASSERT_TRUE(s.ok());
  EXPECT_DOUBLE_EQ(s->fraction, 0.75);  // (85 - 10) / 100
  EXPECT_NEAR(s->headroom_bytes, 10 * kGiB, 1);
  EXPECT_EQ(s->kv_tokens, 1228800);
  EXPECT_NEAR(s->bytes_per_step, 1 * kGiB, 1);
  EXPECT_DOUBLE_EQ(TrtllmServingFraction(100 * kGiB, 0.9, 9 * kGiB, 65536)->fraction, 0);  // not the fraction's to fix
  EXPECT_DOUBLE_EQ(TrtllmServingFraction(100 * kGiB, 0.9, 200 * kGiB, 65536)->fraction, 0.89);  // always below
}

// A TensorRT engine's buffers before the KV read: float32 planes of max_batch_size x beam x
// the vocabulary padded to the TP size (runtime logits; penalty logits + int32 counts of the
// unpadded vocabulary; top-P's sorted probabilities and ids priced, its id values and cub's
// storage left to the range).
TEST(TrtllmModel, EngineBuffersArePlanesOfBatchByVocab) {
  TrtllmEngineBuffersInput in;
  in.max_batch_size = 2048;
  in.vocab = 128256;
  auto b = TrtllmEngineBufferBytes(in);
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  const double plane = 2048.0 * 128256 * 4;
  EXPECT_DOUBLE_EQ(b->plane_bytes, plane);
  EXPECT_DOUBLE_EQ(b->penalty_bytes, 2 * plane);
  EXPECT_DOUBLE_EQ(b->sampling_bytes, 2 * plane);
  EXPECT_DOUBLE_EQ(b->sampling_rest_bytes, 3 * plane);
  EXPECT_DOUBLE_EQ(b->total_bytes, 5 * plane);
  in.vocab = 32001;  // padded to 32,004 at TP 4 for the logits, not for the penalty counts
  in.tp = 4;
  in.max_batch_size = 1;
  b = TrtllmEngineBufferBytes(in);
  EXPECT_DOUBLE_EQ(b->runtime_logits_bytes, 32004.0 * 4);
  EXPECT_DOUBLE_EQ(b->penalty_bytes, 32004.0 * 4 + 32001.0 * 4);
  in.max_beam_width = 0;
  EXPECT_FALSE(TrtllmEngineBufferBytes(in).ok());
  EXPECT_EQ(TrtllmDefaultBackend("0.19.0"), "tensorrt");
  EXPECT_EQ(TrtllmDefaultBackend("0.21.0"), "tensorrt");
  EXPECT_EQ(TrtllmDefaultBackend("1.0.0"), "pytorch");
}

// The buffers sized by max_seq_len (trtllm_model.cc): the runtime side's three cache
// indirections of the attention window and three slot outputs of the sequence, the decoder's
// four. A 0.14 engine at trtllm-build's defaults (TensorRT-LLM#1188: Qwen2.5-Coder-0.5B, vocab
// 151,936, max_batch_size 2048, max_seq_len 32,768) logged 2.66 GB for runtime buffers (one
// plane and six of these) and 5.76 GB for the decoder: priced, 8.3 of the logged 8.42 GiB.
TEST(TrtllmModel, EngineSequenceBuffersFollowMaxSeqLen) {
  TrtllmEngineBuffersInput in;
  in.max_batch_size = 2048;
  in.vocab = 151936;
  const double plane = 2048.0 * 151936 * 4;
  auto none = TrtllmEngineBufferBytes(in);
  ASSERT_TRUE(none.ok());
  EXPECT_DOUBLE_EQ(none->total_bytes, 5 * plane);  // no max_seq_len given: the planes alone
  in.max_seq_len = 32768;
  auto b = TrtllmEngineBufferBytes(in);
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_DOUBLE_EQ(b->runtime_sequence_bytes, 6 * 2048.0 * 32768 * 4);
  EXPECT_DOUBLE_EQ(b->decoder_sequence_bytes, 4 * 2048.0 * 32768 * 4);
  EXPECT_NEAR((b->runtime_logits_bytes + b->runtime_sequence_bytes) / kGiB, 2.66, 0.005);
  EXPECT_NEAR(b->total_bytes / kGiB, 8.42, 0.2);
  // A sliding window shortens the cache indirections only.
  in.max_attention_window = 4096;
  auto w = TrtllmEngineBufferBytes(in);
  EXPECT_DOUBLE_EQ(w->runtime_sequence_bytes, 2048.0 * 4 * (3 * 4096 + 3 * 32768));
  EXPECT_DOUBLE_EQ(w->decoder_sequence_bytes, b->decoder_sequence_bytes);
}

}  // namespace
}  // namespace tpt::memory
