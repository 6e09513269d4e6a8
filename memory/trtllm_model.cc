// trtllm_model.cc: TensorRT-LLM's KV cache at start-up: free_gpu_memory_fraction
// (KvCacheConfig, default 0.9) of what is free for it, blocks of tokens_per_block,
// the one-sequence check, and the fraction that serves after the final cache did
// not fit.
//
// Sources (NVIDIA/TensorRT-LLM):
//   cpp/tensorrt_llm/batch_manager/kvCacheManager.cpp (BaseKVCacheManager::
//     calculateFreeMemBytes / calculateMaxNumBlocks): freePrimaryMemBytes =
//     (freeMem + bufferManager.memoryPoolFree()) x freeMemFraction, logged as "Memory
//     usage when calculating max tokens in paged kv cache: total: %0.2f GiB, available:
//     %0.2f GiB" (the available is before the fraction); blocks = free / (tokens per
//     block x cache size per token x dtype); a user max_tokens caps it ("Both
//     freeGpuMemoryFraction ... and maxTokens ... The smaller value will be used.").
//   v0.8 (Triton backend, trtGptModelInflightBatching.cpp): "maxTokensInPagedKvCache
//     (%d) must be large enough to process at least 1 sequence to completion (i.e. must
//     be larger than beam_width (%d) * tokensPerBlock (%d) * maxBlocksPerSeq (%d))"; later
//     versions warn and cut maxSequenceLen instead ("maxAttentionWindow and maxSequenceLen
//     are too large for at least one sequence to fit in kvCache").
//   tensorrt_llm/_torch/pyexecutor/_util.py (PyTorch backend, 0.20-1.x) KvCacheCreator
//     _cal_max_tokens: available_kv_mem = (total - peak + tmp kv) x fraction, logged as
//     "Peak memory during memory usage profiling (torch + non-torch): %.2f GiB, available
//     KV cache memory when calculating max tokens: %.2f GiB, fraction is set %s, kv size
//     is %d"; the final cache is created after the estimation pass, and when it does not
//     fit: "Executor creation failed due to insufficient GPU memory. The following
//     component could not be created: KV cache" with "Free GPU memory before component
//     creation attempt (GiB)".
//   The TensorRT engine's executor (cpp/tensorrt_llm/batch_manager/trtGptModelInflightBatching.cpp,
//     read at a 2025 main copy, 00825c4e): its constructor creates the TllmRuntime (the
//     engine's weights, then the execution context's activation memory, "[MemUsageChange]
//     Allocated X for execution context memory"), then createBuffers ("... GPU memory for
//     runtime buffers"), then createDecoder ("... GPU memory for decoder"), and only then
//     calculateFreeMemBytes for the KV cache; so everything below comes out before the
//     fraction is taken.
//     - RuntimeBuffers (runtimeBuffers.cpp): setMaxBufferSizes pre-allocates the logits for
//       every sequence in generation, numLogits = maxBatchSize x max(1 + draft tokens,
//       maxBeamWidth) rows of vocabSizePadded in the engine's logits dtype (PretrainedConfig
//       logits_dtype 'float32', tensorrt_llm/models/modeling_utils.py).
//     - The decoder (GptDecoderBatched over DynamicDecodeLayer, in the logits dtype, for
//       maxNumSequences): PenaltyLayer (layers/penaltyLayer.cpp) allocates its runtime
//       logits, batch x beam x vocabSizePadded of T, and, with the occurrence penalties of
//       DecodingMode::TopKTopP, an int32 count a token, batch x beam x vocabSize;
//       the top-P sampling workspace (kernels/samplingTopPKernels.cu getTopPWorkspaceSizes)
//       holds the sorted probabilities (T) and sorted ids (int32), the id values (int32)
//       and cub's segmented radix sort storage, each batch x vocabSizePadded.
//     Priced in full (eight float32 planes: logits, penalty 2, top-P 5) they do not fit the
//     one logged engine launch (TensorRT-LLM#4275, 0.19.0, RTX 5090, max_batch_size 2048:
//     4.9 GiB held beside the weights and the context, about five planes): the plan prices
//     top-P's sorted probabilities and ids and leaves its id values and cub's storage to
//     the range (TrtllmEngineBuffers::sampling_rest_bytes). TopPSamplingLayer::allocateBuffer
//     sizes either that sort workspace or, with mIsAirTopP, AIR top-P's
//     (getAirTopPWorkspaceSizes: four batch x bufLen buffers, a fraction of a plane); which one
//     SamplingLayer builds in 0.19 by default was not read, so the two priced planes stand
//     between the two and the range runs from none to the sort's five.
//     - Beside the planes, buffers of max_batch_size x beam x max_seq_len (trtllm-build's
//       default max_seq_len is max_position_embeddings, commands/build.py) of four-byte
//       elements, allocated whatever the requests. The runtime side (createBuffers, logged
//       as "runtime buffers"; TrtGptModelInflightBatching builds one RuntimeBuffers with
//       context-generation fusion, mNumBuffers = (mCtxGenFusion ? 1 : 2) x micro-batches):
//       TransformerBuffers' cacheIndirection [B, beam, window] int32 (batch_manager/
//       transformerBuffers.cpp), DecoderBuffers' cacheIndirectionInput and Output [B, beam,
//       window] int32 and logProbs [B, beam, seq] float (decoderBuffers.cpp), and one
//       SlotDecoderBuffers a sequence slot, outputIds [beam, seq] int32 and logProbs [beam,
//       seq] float: 3 x window + 3 x seq. The decoder (GptDecoderBatched::setup,
//       cpp/tensorrt_llm/runtime/gptDecoderBatched.cpp at v0.14.0, b0880169, the commit
//       tensorrtllm_backend v0.14.0 pins; DecoderState::setup later): ids, parentIds [B,
//       beam, seq] int32, logProbs [B, beam, seq] and logProbsTiled [seq, B, beam] float,
//       unconditional (gatheredIds aliases ids at beam 1): 4 x seq. Until the batch manager's
//       source was published the runtime side shipped only as
//       libtensorrt_llm_batch_manager_static.a; the files read are the first published ones
//       (the constructor with GptDecoderBatched's 0.14 signature) and 2025's, which agree.
//       The check: a 0.14 engine at its defaults (TensorRT-LLM#1188, Qwen2.5-Coder-0.5B, vocab
//       151,936, max_batch_size 2048, max_seq_len 32,768) logged 2.66 GB for runtime buffers,
//       one plane (1.159 GiB) and 6 x 2048 x 32768 x 4 B (1.5 GiB), and 5.76 GB for the
//       decoder, 4 x 2048 x 32768 x 4 B (1.0 GiB) and 4.1 planes: the five planes above
//       hold at 0.14 as at 0.19 once the sequence buffers are apart. At 0.19's launch
//       (max_seq_len 2048) they are 160 MiB.
#include <algorithm>
#include <cmath>

#include "memory/memory_model.h"
#include "memory/numeric.h"

namespace tpt::memory {

StatusOr<TrtllmKv> TrtllmKvBlocks(const TrtllmKvInput& in) {
  if (!(in.available_bytes >= 0)) return InvalidArgumentError("TensorRT-LLM KV: the available memory must be >= 0");
  if (!(in.free_gpu_memory_fraction > 0 && in.free_gpu_memory_fraction < 1)) {
    return InvalidArgumentError("TensorRT-LLM KV: free_gpu_memory_fraction must be in (0, 1) (TensorRT-LLM refuses 1.0)");
  }
  if (in.bytes_per_token <= 0 || in.tokens_per_block < 1) {
    return InvalidArgumentError("TensorRT-LLM KV: KV bytes per token and tokens per block must be > 0");
  }
  TrtllmKv r;
  r.usable_bytes = in.available_bytes * in.free_gpu_memory_fraction;
  const double block_bytes = static_cast<double>(in.bytes_per_token) * in.tokens_per_block;
  r.num_blocks = static_cast<int64_t>(std::floor(r.usable_bytes / block_bytes));
  if (in.max_tokens && *in.max_tokens > 0 && *in.max_tokens < r.num_blocks * in.tokens_per_block) {
    r.num_blocks = (*in.max_tokens + in.tokens_per_block - 1) / in.tokens_per_block;
  }
  r.kv_tokens = r.num_blocks * in.tokens_per_block;
  r.kv_bytes = static_cast<double>(r.num_blocks) * block_bytes;
  if (in.free_at_creation_bytes > 0 && r.kv_bytes > in.free_at_creation_bytes) {
    r.fails = r.creation_fails = true;
    r.error = "Executor creation failed due to insufficient GPU memory. The following component could not be created: "
              "KV cache";
  } else if (in.tokens_one_sequence > 0 && r.kv_tokens < in.tokens_one_sequence) {
    r.fails = true;
    r.error = "maxTokensInPagedKvCache (" + std::to_string(r.kv_tokens) +
              ") must be large enough to process at least 1 sequence to completion (" +
              std::to_string(in.tokens_one_sequence) + " tokens)";
  }
  return r;
}

StatusOr<TrtllmServing> TrtllmServingFraction(double available_bytes, double fraction, double free_at_creation_bytes,
                                              int64_t bytes_per_token) {
  if (!(available_bytes > 0) || !(fraction > 0 && fraction < 1) || !(free_at_creation_bytes >= 0)) {
    return InvalidArgumentError("TensorRT-LLM serving value: needs the available memory, a fraction in (0, 1) and the "
                                "free memory at the cache's creation");
  }
  TrtllmServing s;
  s.headroom_bytes = (1 - fraction) * available_bytes;
  s.bytes_per_step = 0.01 * available_bytes;
  s.fraction = std::max(0.0, internal::FloorHundredths((free_at_creation_bytes - s.headroom_bytes) / available_bytes));
  s.fraction = std::min(s.fraction, internal::FloorHundredths(fraction - 0.01));
  s.kv_bytes = s.fraction * available_bytes;
  if (bytes_per_token > 0) s.kv_tokens = static_cast<int64_t>(s.kv_bytes / static_cast<double>(bytes_per_token));
  return s;
}

StatusOr<TrtllmEngineBuffers> TrtllmEngineBufferBytes(const TrtllmEngineBuffersInput& in) {
  if (in.max_batch_size < 1 || in.max_beam_width < 1 || in.vocab < 1 || in.tp < 1 || in.logits_bytes < 1) {
    return InvalidArgumentError("TensorRT-LLM engine buffers: max_batch_size, max_beam_width, the vocabulary, the TP "
                                "size and the logits dtype's bytes must be >= 1");
  }
  // ModelConfig::getVocabSizePadded(worldSize): the vocabulary rounded up to the TP size.
  const int64_t padded = (in.vocab + in.tp - 1) / in.tp * in.tp;
  const double rows = static_cast<double>(in.max_batch_size) * in.max_beam_width;
  TrtllmEngineBuffers b;
  b.plane_bytes = rows * static_cast<double>(padded) * in.logits_bytes;
  b.runtime_logits_bytes = b.plane_bytes;
  b.penalty_bytes = b.plane_bytes + rows * static_cast<double>(in.vocab) * 4;  // runtime logits + int32 counts
  b.sampling_bytes = static_cast<double>(in.max_batch_size) * static_cast<double>(padded) * (in.logits_bytes + 4);
  b.sampling_rest_bytes = static_cast<double>(in.max_batch_size) * static_cast<double>(padded) *
                          (4 + in.logits_bytes + 4);  // id values + cub's alternate keys and values
  // The buffers sized by the sequence (int32 ids and cache indirections, float32
  // log-probabilities: four bytes each), per sequence slot and beam.
  const double window = static_cast<double>(in.max_attention_window > 0 ? in.max_attention_window : in.max_seq_len);
  const double seq = static_cast<double>(std::max<int64_t>(in.max_seq_len, 0));
  if (seq > 0) {
    b.runtime_sequence_bytes = rows * 4 * (3 * window + 3 * seq);
    b.decoder_sequence_bytes = rows * 4 * 4 * seq;
  }
  b.total_bytes = b.runtime_logits_bytes + b.penalty_bytes + b.sampling_bytes + b.runtime_sequence_bytes +
                  b.decoder_sequence_bytes;
  return b;
}

std::string TrtllmDefaultBackend(std::string_view version) {
  return VersionBefore(version, {1, 0, 0}) ? "tensorrt" : "pytorch";
}

}  // namespace tpt::memory
