// launch_plan_servers.cc: `plan` for TGI, TensorRT-LLM and LMDeploy: a plan's input
// (weights, KV bytes a token, context, the server's knob) through the start-up formulas
// analyze and repro use (tgi_model.cc, trtllm_model.cc, lmdeploy_model.cc; sources cited
// there). Outcomes in the taxonomy's ids, as for SGLang and vLLM: weights_oom, warmup_oom,
// kv_pool_no_room, kv_pool_too_small.
#include <algorithm>
#include <cmath>

#include "memory/launch_plan_internal.h"
#include "memory/tgi_gptq_kernels.h"
#include "memory/tgi_launcher.h"
#include "memory/tgi_vlm_warmup.h"
#include "memory/tgi_warmup_held.h"
#include "memory/trtllm_engine_build.h"
#include "memory/trtllm_engine_tokens.h"

namespace tpt::memory::internal {
namespace {

// The forward pass a server runs before it sizes its cache (TGI's warm-up prefill,
// TensorRT-LLM's estimation pass): --activation-peak, or vLLM's estimate of the same
// forward with one row of logits per request (no sampler), or 0 said.
double ForwardPeak(const PlanInput& in, int64_t tokens, int64_t requests, const std::string& what, Plan& p) {
  if (in.activation_peak_bytes) return *in.activation_peak_bytes;
  if (!in.model) {
    p.assumptions.push_back("activation peak of " + what + " not given: 0 assumed; pass --activation-peak");
    return 0;
  }
  const double peak = VllmActivationPeakBytes(*in.model, in.tp, tokens, std::max<int64_t>(requests, 1),
                                              VllmLogitsProfile::kPerSequence);
  p.assumptions.push_back("activation peak " + FormatGiB(peak) + " estimated for " + what + " (" +
                          std::to_string(tokens) + " tokens, " + std::to_string(std::max<int64_t>(requests, 1)) +
                          " request(s), the same estimate as vLLM's profiling forward); pass --activation-peak");
  return peak;
}

// TGI's warm-up prefill (server/text_generation_server/models/flash_causal_lm.py
// warmup, generate_token; huggingface/text-generation-inference): the router's warm-up
// requests ask for the log-probabilities of every prefill token (`prefill_logprobs: true`,
// router/client/src/client.rs v1.0.0-v2.0.4, router/client/src/v3/client.rs v2.2.0,
// backends/v3/src/client/grpc_client.rs v2.4.0-v3.3.6), so no lm_head index is applied
// and the head computes logits for all T prefill tokens (T x vocab in the model dtype;
// at TP > 1 TensorParallelHead's gathered buffer plus the rank's slice, layers/
// tensor_parallel.py); before v2.4.0 `torch.log_softmax(out, -1)` makes a second T x vocab
// tensor beside it (in place from v2.4.0, #2661, "prefer inplace softmax to avoid copy").
// At TP > 1, when the vocabulary divides by the shards (else each rank holds the whole
// head and nothing is gathered), one more T x vocab: the unquantized head's
// all_gather_into_tensor fills a vocab-major buffer and returns `world_out.T`, which
// log_softmax copies to a contiguous tensor first (host_softmax's `input_.contiguous()`,
// pytorch aten/src/ATen/native/cuda/SoftMax.cu); a quantized head's all_gather list is
// concatenated into a new tensor (torch.cat) instead: the same count either way
// (utils/layers.py v0.9.3-v2.0.0, layers/tensor_parallel.py v2.2.0-v3.0.1).
// From v3.0.0 the server drops the requests' flag unless launched with
// --enable-prefill-logprobs (TgiPrefillLogprobsByDefault, tgi_model.cc): no T x vocab logits.
// The free memory is then read with torch.cuda.mem_get_info and no empty_cache in between,
// so what the caching allocator holds stays counted: the forward's blocks, which cannot
// serve the larger logits, plus the logits. Returns 0 when the model is unknown.
double TgiPrefillLogitsBytes(const PlanInput& in, int64_t tokens) {
  if (!in.model || in.model->vocab <= 0 || tokens <= 0) return 0;
  const double e = in.model->dtype_bytes > 0 ? in.model->dtype_bytes : 2;
  const int tp = std::max(in.tp, 1);
  const double head = tp > 1 && in.model->vocab % tp == 0 ? 2.0 + 1.0 / tp : 1.0;
  const double copies = VersionBefore(in.version, {2, 4, 0}) ? head + 1.0 : head;
  return static_cast<double>(tokens) * static_cast<double>(in.model->vocab) * e * copies;
}

// The KV cache dtype a server takes when none is asked for. TensorRT-LLM's PyTorch backend
// (kv_cache_dtype "auto") uses the checkpoint's KV quantization: KvCacheCreator.
// _get_cache_size_per_token prices 1 byte an element when the model's quant_config has an
// FP8 KV cache (hf_quant_config.json kv_cache_quant_algo FP8), and _create_kv_cache_manager
// allocates the cache in FP8 (tensorrt_llm/_torch/pyexecutor/_util.py, 0.20-era KvCacheCreator;
// the log says 'KV cache quantization set to "auto". Using checkpoint KV quantization.').
// TGI and LMDeploy keep the model dtype unless their own flag asks for 8 bits.
std::string CheckpointKvDtype(const PlanInput& in, Plan& p) {
  const bool asked = !(in.kv_cache_dtype.empty() || in.kv_cache_dtype == "auto");
  if (asked || in.framework != "trtllm" || !in.model || in.model->quant.kv_bytes != 1) return in.kv_cache_dtype;
  p.assumptions.push_back("KV cache fp8 from the checkpoint (kv_cache_quant_algo FP8): TensorRT-LLM's kv_cache_dtype "
                          "'auto' uses the checkpoint's KV quantization");
  return "fp8_e4m3";
}

StatusOr<int64_t> KvBytesPerToken(const PlanInput& in, Plan& p) {
  if (in.cell_bytes) return *in.cell_bytes;
  if (!(in.dims.layers > 0 && (in.dims.IsMla() || (in.dims.kv_heads > 0 && in.dims.head_dim > 0)))) {
    return InvalidArgumentError("the KV size per token is unknown: give --model, or --layers with --kv-heads and "
                                "--head-dim, or --cell-bytes");
  }
  KvDims d = in.dims;
  const std::string model_dtype = in.weight_dtype == "fp32" || in.weight_dtype == "fp16" ? in.weight_dtype : "bf16";
  auto elem = KvDtypeBytes(CheckpointKvDtype(in, p), model_dtype);
  if (!elem.ok()) return InvalidArgumentError("--kv-cache-dtype: " + elem.status().message());
  d.dtype_bytes = *elem;
  // layers x 2 x KV heads a rank (replicated below tp) x head size x dtype: the same
  // arithmetic as vLLM's AttentionSpec (TGI total_cache_size, TensorRT-LLM "kv size",
  // LMDeploy's block size over its block tokens).
  return VllmBytesPerToken(d, in.tp);
}

Status NeedWeights(const PlanInput& in) {
  if (in.avail_after_weights_bytes) {
    return InvalidArgumentError("--avail-after-weights is an SGLang figure; give --weights-per-rank");
  }
  if (!in.weights_bytes) return InvalidArgumentError("the weights are unknown: give --model, --weights-per-rank or --params");
  return OkStatus();
}

void Ledger(const PlanInput& in, Plan& p, double reserved, double kv_bytes) {
  RankMemory m;
  m.total_bytes = in.total_bytes;
  m.free_at_init_bytes = p.free_at_init_bytes;
  m.weights_bytes = p.weights_bytes;
  m.reserved_bytes = std::max(reserved, 0.0);
  m.kv_pool_bytes = std::max(kv_bytes, 0.0);
  m.graphs_inside_reserved = true;
  p.row = BuildLedgerRow(m);
}

bool WeightsOom(Plan& p) {
  if (p.weights_bytes <= p.free_at_init_bytes) return false;
  p.fits = false;
  p.failure = "weights_oom";
  p.error = "the weights (" + FormatGiB(p.weights_bytes) + " per rank) do not fit in the free memory (" +
            FormatGiB(p.free_at_init_bytes) + "): CUDA out of memory while loading";
  return true;
}

// A pool that cannot hold one request of the context: each server's own message, a
// failure; Run turns it into a warning where the server shortens the context itself and
// nobody asked for it.
void TooSmall(Plan& p, const PlanInput& in, const std::string& error) {
  p.fits = false;
  p.failure = "kv_pool_too_small";
  p.error = error.empty() ? "the KV pool holds " + WithCommas(p.kv_tokens) + " tokens, less than one request of " +
                                WithCommas(*in.context_length)
                          : error;
}

// TGI's --max-batch-total-tokens (launcher/src/main.rs, router/src/main.rs at v0.9.3, v0.9.4,
// v1.4.5, v2.0.4; backends/v3/src/lib.rs v3.3.6). Before v0.9.4 it is the KV cache: the
// launcher's default 16000, checked against the prefill budget and max_total_tokens before
// anything loads. From v0.9.4 flash models infer it from the free memory and ignore an asked
// value ("`--max-batch-total-tokens` is deprecated for Flash Attention models"); the asked
// value is still checked against max_total_tokens (and, before v3, the prefill budget).
// Returns the total the warm-up allocates (0 from v0.9.4: inferred).
StatusOr<int64_t> TgiAskedBatchTotal(const PlanInput& in, int64_t prefill, int64_t max_total_tokens, bool asked_total,
                                     Plan& p) {
  const bool given = in.max_batch_total_tokens.has_value();
  const int64_t total = in.max_batch_total_tokens.value_or(16000);
  if (!given && !asked_total) return 0;
  const bool v3 = !VersionBefore(in.version, {3, 0, 0});
  if (!v3 && prefill > total) {
    return InvalidArgumentError("`max_batch_prefill_tokens` must be <= `max_batch_total_tokens`. Given: " +
                                std::to_string(prefill) + " and " + std::to_string(total) +
                                " (TGI's launcher refuses it; lower --max-batch-prefill-tokens or raise "
                                "--max-batch-total-tokens)");
  }
  if (max_total_tokens > total) {
    return InvalidArgumentError("`max_total_tokens` must be <= `max_batch_total_tokens`. Given: " +
                                std::to_string(max_total_tokens) + " and " + std::to_string(total) +
                                " (TGI's launcher refuses it; lower the context length or raise "
                                "--max-batch-total-tokens)");
  }
  if (!asked_total) {
    p.assumptions.push_back("--max-batch-total-tokens " + std::to_string(total) +
                            " is ignored from TGI v0.9.4 for flash models: the warm-up infers the total from the "
                            "free memory (\"`--max-batch-total-tokens` is deprecated for Flash Attention models\")");
    return 0;
  }
  if (!given) p.assumptions.push_back("--max-batch-total-tokens 16000 (TGI's default before v0.9.4)");
  return total;
}

// TGI before v0.9.4 (flash_causal_lm.py warmup, v0.9.0-v0.9.3): a CacheManager of
// ceil(max_batch_total_tokens / 16) + 10 blocks, then the warm-up batch's prefill beside it;
// any failure there is "Not enough memory to handle {total} total tokens with {n} prefill
// tokens". No free memory is read: the pool is the asked total.
StatusOr<Plan> TgiAskedWarmup(const PlanInput& in, Plan p, int64_t total, int64_t prefill, double act) {
  const int64_t blocks = (total + 15) / 16 + 10;
  const double cache = static_cast<double>(blocks) * 16 * p.cell_bytes;
  const double after_weights = p.free_at_init_bytes - p.weights_bytes;
  p.figures["warmup_prefill_tokens"] = prefill;
  p.figures["warmup_blocks"] = blocks;
  p.figures["activation_peak_bytes"] = act;
  p.figures["num_blocks"] = blocks;
  p.figures["max_batch_total_tokens"] = total;
  if (after_weights - cache - act < 0) {
    p.fits = false;
    p.failure = "warmup_oom";
    p.error = "Not enough memory to handle " + std::to_string(total) + " total tokens with " + std::to_string(prefill) +
              " prefill tokens. You need to decrease `--max-batch-total-tokens` or `--max-batch-prefill-tokens`";
    p.kv_tokens = 0;
    Ledger(in, p, act, cache);
    return p;
  }
  p.kv_tokens = total;
  Ledger(in, p, act, cache);
  return p;
}

// Both TensorRT-LLM backends: the fraction of what is available, blocks of 32 tokens
// (trtllm_model.cc), and one sequence of max_seq_len.
StatusOr<Plan> TrtllmPool(const PlanInput& in, Plan p, double available) {
  TrtllmKvInput kv;
  kv.available_bytes = available;
  kv.free_gpu_memory_fraction = p.fraction;
  kv.bytes_per_token = p.cell_bytes;
  kv.tokens_per_block = 32;
  auto r = TrtllmKvBlocks(kv);
  if (!r.ok()) return r.status();
  p.kv_tokens = r->kv_tokens;
  p.figures["num_blocks"] = r->num_blocks;
  Ledger(in, p, p.free_at_init_bytes - p.weights_bytes - r->kv_bytes, r->kv_bytes);
  if (r->num_blocks <= 0) {
    p.fits = false;
    p.failure = "kv_pool_no_room";
    p.error = "no KV blocks: " + FormatGiB(r->usable_bytes) + " is less than one block of 32 tokens";
  } else if (in.context_length && p.kv_tokens < *in.context_length) {
    TooSmall(p, in, "maxTokensInPagedKvCache (" + std::to_string(p.kv_tokens) +
                        ") must be large enough to process at least 1 sequence of max_seq_len " +
                        std::to_string(*in.context_length));
  }
  return p;
}

// A TensorRT engine under the C++ executor (trtllm_model.cc cites the constructor's order): the KV cache gets the
// fraction of what the engine's weights, its execution context (activations for max_num_tokens tokens and max_batch_size
// rows of logits), the runtime buffers and the decoder leave; 32-token blocks. Its build first (trtllm_engine_build.cc).
StatusOr<Plan> PlanTrtllmEngine(const PlanInput& in, Plan p) {
  p.era = "TensorRT engine (C++ executor: fraction of the free memory after the engine and its buffers)";
  const auto lim = TrtllmEngineBuildLimits(in.version, in.max_num_seqs, in.max_num_batched_tokens, in.context_length);
  const int64_t batch = lim.max_batch_size, tokens = lim.max_num_tokens;  // trtllm_engine_tokens.h cites build.py
  for (const auto* a : {&lim.batch_assumption, &lim.tokens_assumption}) if (!a->empty()) p.assumptions.push_back(*a);
  p.assumptions.push_back("KV blocks of 32 tokens (trtllm-build's tokens_per_block)");
  if (TrtllmEngineBuildFails(in, p) || WeightsOom(p)) {  // the build before the runtime (trtllm_engine_build.cc)
    Ledger(in, p, 0, 0);
    return p;
  }
  // The execution context: TensorRT's activation memory "close to max number of input tokens x some
  // constant factor" (docs/source/reference/memory.md), priced as the other servers' forward estimate,
  // plus the lm_head's output for max_batch_size rows in the model dtype (before the float32 cast).
  double act = 0;
  if (in.activation_peak_bytes) {
    act = *in.activation_peak_bytes;
  } else {
    act = ForwardPeak(in, tokens, 1, "the engine's execution context", p) -
          TrtllmEngineFreedBeforeThePeak(in.model ? &*in.model : nullptr, tokens, p.assumptions);
    if (in.model && in.model->vocab > 0) {
      const double e = in.model->dtype_bytes > 0 ? in.model->dtype_bytes : 2;
      const double head = static_cast<double>(batch) * static_cast<double>(in.model->vocab) * e;
      act += head;
      p.assumptions.push_back("lm_head output " + FormatGiB(head) + " on top: " + std::to_string(batch) +
                              " rows of vocab " + std::to_string(in.model->vocab) +
                              " in the model dtype (the engine's logits profile runs to max_batch_size)");
    }
  }
  double buffers = 0;
  if (in.runtime_buffers_bytes) {
    buffers = *in.runtime_buffers_bytes;
  } else if (in.model && in.model->vocab > 0) {
    TrtllmEngineBuffersInput bi;
    bi.max_batch_size = batch;
    bi.vocab = in.model->vocab;
    bi.tp = std::max(in.tp, 1);
    bi.max_seq_len = in.context_length.value_or(0);
    auto b = TrtllmEngineBufferBytes(bi);
    if (!b.ok()) return b.status();
    buffers = b->total_bytes;
    p.figures["engine_buffer_plane_bytes"] = b->plane_bytes;
    p.figures["sampling_workspace_bytes"] = b->sampling_bytes;
    p.figures["sampling_workspace_rest_bytes"] = b->sampling_rest_bytes;
    const double seq = p.figures["engine_sequence_buffer_bytes"] = b->runtime_sequence_bytes + b->decoder_sequence_bytes;
    p.assumptions.push_back(
        "runtime and decoder buffers " + FormatGiB(buffers) + ": " + std::to_string(batch) + " x vocab " +
        std::to_string(in.model->vocab) + " float32 planes of " + FormatGiB(b->plane_bytes) +
        ": the runtime's logits, the penalty layer's logits and occurrence counts, top-P's sorted probabilities "
        "and ids" + (seq > 0 ? "; and " + FormatGiB(seq) + " of ten " + std::to_string(batch) + " x max_seq_len " +
        std::to_string(bi.max_seq_len) + " four-byte buffers (cache indirections, output ids, log-probabilities)" : "") +
        "; pass --runtime-buffers from a log ('Allocated X GPU memory for runtime buffers' + '... for decoder')");
    p.unknowns.push_back(
        "a TensorRT engine's activation memory (sized by TensorRT at build time; the log's 'Allocated X for execution "
        "context memory') and its decoder's sampling workspace (top-P's id values and cub's sort storage, up to " +
        FormatGiB(b->sampling_rest_bytes) + " more; all of top-P's workspace, " +
        FormatGiB(b->sampling_bytes + b->sampling_rest_bytes) +
        ", did not fit the one logged engine launch) are estimates; the range below takes the activations x0.5-x1.5 "
        "and the sampling workspace from none to all of it");
  } else {
    p.assumptions.push_back("vocabulary unknown without --model: the engine's runtime and decoder buffers are taken "
                            "as 0; pass --runtime-buffers");
  }
  const double available = p.free_at_init_bytes - p.weights_bytes - act - buffers;
  p.figures["activation_peak_bytes"] = act;
  p.figures["runtime_buffers_bytes"] = buffers;
  p.figures["available_bytes"] = available;
  if (available <= 0) {
    p.fits = false;
    p.failure = "kv_pool_no_room";
    p.error = "CUDA out of memory creating the executor: the engine's activations and buffers (" +
              FormatGiB(act + buffers) + ") do not fit beside the weights; lower --max_batch_size, --max_num_tokens or "
              "--max_seq_len at trtllm-build";
    Ledger(in, p, act + buffers, 0);
    return p;
  }
  if (in.unified_memory) {
    // unified_memory.cc: on a GB10 or a Jetson calculateFreeMemBytes' cudaMemGetInfo leaves out
    // the page cache of the engine file just read (about the weights); the kernel reclaims it
    // only under pressure, so the point takes it (down to nothing left) and the range does not.
    const double left = std::max(0.0, available - p.weights_bytes);
    p.figures["unified_host_use_bytes"] = available - left;
    p.figures["available_bytes"] = left;
    return TrtllmPool(in, std::move(p), left);
  }
  return TrtllmPool(in, std::move(p), available);
}

}  // namespace

StatusOr<Plan> PlanTgi(const PlanInput& in, Plan p) {
  TPT_RETURN_IF_ERROR(NeedWeights(in));
  if (in.pp > 1 || in.dp > 1) return InvalidArgumentError("TGI shards by tensor parallelism only (--num-shard); plan one replica");
  p.weights_bytes = *in.weights_bytes;
  auto cell = KvBytesPerToken(in, p);
  if (!cell.ok()) return cell.status();
  p.cell_bytes = *cell;
  const bool v3 = !VersionBefore(in.version, {3, 0, 0});
  const bool v1 = VersionBefore(in.version, {2, 0, 0});
  // Before v0.9.4 the warm-up takes --max-batch-total-tokens as given (no free-memory read).
  const bool asked_total = VersionBefore(in.version, {0, 9, 4});
  p.era = asked_total ? "v0.9 warm-up of --max-batch-total-tokens"
                      : std::string(v3 ? "v3" : "v1-v2") + " warm-up, TGI_WIGGLE_ROOM " +
                            Fixed2(TgiDefaultWiggleRoom(in.version));
  p.fraction_flag = "--cuda-memory-fraction";
  p.fraction = in.memory_fraction.value_or(1.0);
  p.fraction_source = in.memory_fraction ? "flag" : "default: 1.0 (CUDA_MEMORY_FRACTION, TGI's default)";
  if (asked_total && in.memory_fraction) {
    return InvalidArgumentError("--cuda-memory-fraction came with TGI v0.9.4; before it the KV cache is "
                                "--max-batch-total-tokens tokens");
  }
  if (asked_total) p.fraction_source = "not in TGI before v0.9.4: the KV cache is --max-batch-total-tokens";
  if (in.tgi_cuda_graphs && v1) {
    return InvalidArgumentError("--cuda-graphs came with TGI v2.0.0 (launcher/src/main.rs); before it CUDA graphs are "
                                "off unless --enable-cuda-graphs (v1.4.1-v1.4.5)");
  }
  if (in.tgi_prefill_logprobs && !v3) {
    return InvalidArgumentError("--enable-prefill-logprobs came with TGI v3.0.0; before it the prefill log-probabilities "
                                "are always computed (drop the flag)");
  }
  // BLOCK_SIZE (models/globals.py): from v2.3.0 the launcher picks flashinfer (1 token a
  // block) unless the head dim or the model needs its fallback: flashdecoding (256) or,
  // below sm 8.0, paged (16) (TgiLauncherAttention, tgi_launcher.cc); before v2.3.0 paged
  // attention (16).
  const ModelConfig* model = in.model ? &*in.model : nullptr;
  // The catalog's card (cmd_plan appends " [assumed: ...]" to an ambiguous name).
  const std::string card = in.gpu_name.substr(0, in.gpu_name.find(" ["));
  int sm = 0;
  if (!card.empty()) {
    if (auto g = FindGpu(card); g.ok()) sm = g->sm;
  }
  const std::string attention = TgiLauncherAttention(in.version, model, sm);
  if (!VersionBefore(in.version, {2, 4, 1}) && !v3) {
    // Read but not modelled: v2.4.1 leaves max_input_tokens / max_total_tokens to the
    // server's warm-up (flash_causal_lm.py v2.4.1 warmup l.1559-1575: the pool or the
    // warm-up's tokens) with a prefill budget of min(4096, the capped max_position_embeddings)
    // (main.rs v2.4.1 l.1735).
    p.unknowns.push_back("TGI " + in.version + " takes the launcher's limits as v2.4.0 does; v2.4.1 lets the server "
                         "set them after its warm-up and budgets 4096 prefill tokens: the outcome can be off by "
                         "the limits");
  }
  const int block = TgiBlockSize(attention);
  // The launcher's --max-total-tokens default: 2048 before v2.0 (launcher/src/main.rs
  // v0.9.3-v1.4.5), the model's context from v2.0 (derived).
  const int64_t total_tokens = in.context_length.value_or(v1 ? 2048 : 4096);
  if (!in.context_length) {
    p.assumptions.push_back(v1 ? "--max-total-tokens 2048 (TGI's default before v2.0)"
                               : "--max-total-tokens 4096 assumed (no context length or model)");
  }
  // v3 without --max-total-tokens (the context is the model's, nobody asked for it): the
  // router's warm-up sends the prefill budget as requests of max_new_tokens 1, each as long
  // as what is left of the budget (one request), and the server sets max_total_tokens from
  // the pool afterwards (backends/v3/src/client/grpc_client.rs warmup, flash_causal_lm.py
  // warmup, v3.0.1): the warm-up blocks cover the prefill, not max_position_embeddings.
  const bool v3_unbounded = v3 && (!in.context_length || in.context_from_model);
  // Without prefill chunking (paged attention, a VLM) v3 sets max_total_tokens to the
  // warm-up's tokens, not the pool (TgiV3SupportsChunking; flash_causal_lm.py warmup).
  const bool v3_chunking = v3 && TgiV3SupportsChunking(in.version, model, attention);
  // max_input_tokens: the user's --max-input-tokens / --max-input-length, else the launcher's
  // default (TgiLauncherMaxInput, tgi_launcher.cc); from v2.4.1 the server's, one below the
  // total as before.
  auto input = TgiLauncherMaxInput(in.version, model, in.tgi_max_input_tokens, in.tgi_max_input_length);
  if (!input.ok()) return input.status();
  const int64_t input_tokens = input->tokens > 0 ? input->tokens : std::max<int64_t>(1, total_tokens - 1);
  if (!input->why.empty()) p.assumptions.push_back(input->why);
  if (input->tokens > 0) p.figures["max_input_tokens"] = input_tokens;
  const bool input_given = in.tgi_max_input_tokens || in.tgi_max_input_length;
  const std::string input_name = v1 ? "max_input_length" : "max_input_tokens";
  const bool launcher_both = VersionBefore(in.version, {2, 4, 1});  // the launcher holds both values
  if ((launcher_both || (input_given && in.context_length && !in.context_from_model)) && input_tokens >= total_tokens) {
    // launcher/src/main.rs: "`max_input_length` must be < `max_total_tokens`" (v0.9.3-v1.4.5),
    // "`max_input_tokens must be < `max_total_tokens`" (v2.0.0-v2.4.0, the backquote as
    // written), "`max_input_tokens`({}) must be < `max_total_tokens`({})" (v2.4.1-v3.3.7).
    const std::string msg = v1 ? "`max_input_length` must be < `max_total_tokens`"
                            : VersionBefore(in.version, {2, 4, 1})
                                ? "`max_input_tokens must be < `max_total_tokens`"
                                : "`max_input_tokens`(" + std::to_string(input_tokens) + ") must be < `max_total_tokens`(" +
                                      std::to_string(total_tokens) + ")";
    return InvalidArgumentError(msg + " (TGI's launcher refuses " + std::to_string(input_tokens) + " input and " +
                                std::to_string(total_tokens) + " total tokens" +
                                (input_given ? std::string("") : " (the input is its default)") +
                                "; give --max-input-tokens below --max-total-tokens)");
  }
  // --max-batch-prefill-tokens: v3's launcher default by card, model FLOPs and VRAM
  // (TgiV3DefaultPrefill, tgi_launcher.cc; without a model config its 4096, capped by the
  // context as before); v2: max_input_tokens + 50, or --max-batch-size x max_input_tokens
  // (launcher/src/main.rs v2.0.0-v2.4.0); before v2.0 4096 (v0.9.3-v1.4.5).
  TgiPrefillDefault v3_default;
  if (v3) {
    v3_default = TgiV3DefaultPrefill(in.version, model, card, std::max(in.tp, 1), in.total_bytes,
                                     in.memory_fraction.value_or(1.0));
    if (!model) v3_default.tokens = std::min<int64_t>(v3_default.tokens, total_tokens);
  }
  const bool by_batch = !v3 && !v1 && in.max_num_seqs.has_value();
  int64_t prefill = in.max_num_batched_tokens.value_or(v3         ? v3_default.tokens
                                                       : v1       ? 4096
                                                       : by_batch ? *in.max_num_seqs * input_tokens
                                                                  : input_tokens + 50);
  if (!v3 && prefill < input_tokens) {
    // launcher/src/main.rs (v0.9.3-v2.4.0) refuses to start.
    return InvalidArgumentError("`max_batch_prefill_tokens` must be >= `" + input_name + "`. Given: " +
                                std::to_string(prefill) + " and " + std::to_string(input_tokens) +
                                " (TGI before v3; raise --max-batch-prefill-tokens or lower --" +
                                (v1 ? "max-input-length" : "max-input-tokens") + ")");
  }
  if (v3 && !v3_unbounded && !v3_chunking && prefill < input_tokens) {
    // backends/v3/src/main.rs (v3.0.0-v3.3.6) refuses it after the warm-up when the server
    // does not chunk prefills (`max_input_tokens as u32 > max_batch_prefill_tokens &&
    // !support_chunking`): a VLM, or paged attention.
    return InvalidArgumentError("`max_batch_prefill_tokens` must be >= `max_input_tokens`. Given: " +
                                std::to_string(prefill) + " and " + std::to_string(input_tokens) + " (TGI " +
                                in.version + " without prefill chunking for this model (" +
                                (attention == "paged" ? "paged attention" : "a VLM") +
                                "); raise --max-batch-prefill-tokens or lower the context length)");
  }
  if (!in.max_num_batched_tokens) {
    p.assumptions.push_back("--max-batch-prefill-tokens " + std::to_string(prefill) +
                            (v3         ? " (" + v3_default.why + ")"
                             : v1       ? " (TGI's default before v2.0)"
                             : by_batch ? " (TGI's default with --max-batch-size: max-batch-size x max-input-tokens)"
                                        : " (TGI's default: max-input-tokens + 50)"));
  }
  auto total = TgiAskedBatchTotal(in, prefill, total_tokens, asked_total, p);
  if (!total.ok()) return total.status();
  p.assumptions.push_back("KV blocks of " + std::to_string(block) + " token(s) (" +
                          (VersionBefore(in.version, {2, 3, 0}) ? std::string("paged attention")
                           : attention == "flashinfer"
                               ? std::string("flashinfer, the launcher's default attention from v2.3.0")
                               : attention + ", the launcher's fallback: the head dim or the model rules out flashinfer" +
                                     (attention == "paged" ? ", and the card is below sm 8.0" : "") +
                                     " (launcher/src/main.rs resolve_attention)") +
                          ")");
  if (WeightsOom(p)) {
    Ledger(in, p, 0, 0);
    return p;
  }
  // The warm-up: the router's batch of max_input_tokens requests up to the prefill
  // budget allocates its blocks, then one prefill runs; its peak stays reserved.
  const int64_t requests = v3_unbounded ? 1 : (prefill + input_tokens - 1) / input_tokens;
  const int64_t cap =
      in.model ? TgiWarmupBlockCap(in.version, in.model->model_type, in.model->sliding_window) : 0;
  if (cap > 0) {
    p.assumptions.push_back("warm-up requests of at most " + std::to_string(cap) +
                            " blocks each: the sliding window's (flash_mistral.py v1.1.0-v2.0.4)");
  }
  const int64_t warm_blocks = v3_unbounded ? TgiWarmupBlocks(prefill, prefill, prefill + 1, block)
                                           : TgiWarmupBlocks(prefill, input_tokens, total_tokens, block, cap);
  if (v3_unbounded) {
    p.assumptions.push_back("warm-up of one " + std::to_string(prefill) +
                            "-token request with max_new_tokens 1 (TGI v3 without --max-total-tokens; the server "
                            "then sets max_total_tokens" +
                            (v3_chunking ? std::string(" from the pool)") : std::string(", below)")));
  }
  const double warm_kv = static_cast<double>(warm_blocks) * block * p.cell_bytes;
  double act = ForwardPeak(in, prefill, requests, "TGI's warm-up prefill", p);
  double logits = 0;  // the prefill logits, the warm-up's second phase (after the forward)
  if (!in.activation_peak_bytes && in.model) {
    const ModelConfig& m = *in.model;
    const double e = m.dtype_bytes > 0 ? m.dtype_bytes : 2;
    if (m.intermediate > 0 && !m.IsMoe()) {
      const double inter = static_cast<double>(m.intermediate) / std::max(in.tp, 1);
      const bool awq = m.quant.method == "awq" && TgiAwqSplitKGemm(in.version);
      const double layer = awq ? TgiAwqLayerPeakBytes(prefill, m.hidden, inter, e)
                               : TgiDenseLayerPeakBytes(prefill, m.hidden, inter, e);
      if (layer > act) {
        act = layer;
        p.assumptions.push_back(
            "TGI's eager decoder layer holds more than that: " + FormatGiB(layer) +
            (awq ? " at the AWQ gate_up GEMM (llm-awq's gemm_forward_cuda with split_k 8 before v2.2.0: eight partial "
                   "outputs of tokens x 2 x intermediate per shard and their sum beside the layer's "
                 : " at the MLP's product (") +
            (m.hidden > 8192 ? "5" : "7") + " x tokens x hidden" +
            (awq ? "; Marlin from v2.2.0; tgi_model.cc)"
                 : " kept by the layer and its norms, gate_up, act(gate) and the product unfused: 4 x tokens x "
                   "intermediate per shard; flash_llama_modeling.py)"));
      }
    }
    // A VLM's warm-up: one image through the vision tower before the text model, and (Gemma-3)
    // dense masks beside the layer; the caching allocator keeps the larger of the two phases.
    if (v3) {
      const int64_t per_request = v3_unbounded ? prefill : std::min(prefill, input_tokens);
      const TgiVlmWarmup vlm = TgiVlmWarmupBytes(in.version, m, in.tp, requests, per_request);
      if (!vlm.what.empty()) {
        act = std::max(act + vlm.text_extra_bytes, vlm.vision_peak_bytes);
        p.assumptions.push_back(vlm.what);
      }
      if (!vlm.unknown.empty()) p.unknowns.push_back(vlm.unknown);
      if (vlm.unpriced_bytes > 0) p.figures["tgi_vlm_unpriced_bytes"] = vlm.unpriced_bytes;  // the range runs to it
    }
    const bool logprobs = TgiPrefillLogprobsByDefault(in.version) || in.tgi_prefill_logprobs;
    logits = logprobs ? TgiPrefillLogitsBytes(in, prefill) : 0;
    if (logits > 0) {
      p.assumptions.push_back(
          "warm-up logits " + FormatGiB(logits) + " on top: TGI's warm-up asks for the log-probabilities of all " +
          std::to_string(prefill) + " prefill tokens (x vocab " + std::to_string(in.model->vocab) +
          (VersionBefore(in.version, {2, 4, 0}) ? ", and log_softmax's copy before v2.4.0" : "") +
          "), made after the forward's tensors are freed; the caching allocator keeps both phases' blocks at "
          "the read when they fit");
    } else if (!logprobs) {
      p.assumptions.push_back("no prefill logits in the warm-up: TGI v3 turns the prefill log-probabilities off unless "
                              "launched with --enable-prefill-logprobs, so its lm_head runs on one token a request");
    }
  }
  if (!in.activation_peak_bytes) p.unknowns.push_back(TgiUnexplainedUnknown(in.version));
  if (TgiWarmupReportsEveryError(in.version)) {
    p.unknowns.push_back(
        "TGI before v1.1.1 reports any exception in its warm-up as \"Not enough memory to handle ...\" (flash_causal_lm.py "
        "warmup catches Exception, v0.9.3-v1.1.0): a failure that is not memory (a CUDA or NCCL error at the first host "
        "sync, a tokenizer error) reads the same and is not predicted; its \"N prefill tokens\" counts the batch's "
        "input_ids when it failed: the prefill's tokens before the forward, one a request after it");
  }
  if (in.model) SayTgiGptqWarmupUnvouched(in.version, *in.model, &p.unknowns, &p.outcome_certain);
  if (*total > 0) return TgiAskedWarmup(in, std::move(p), *total, prefill, act + logits);
  // v3's flashinfer buffers, allocated with the model, held at the read.
  const double workspace = attention == "flashinfer" ? TgiAttentionWorkspaceBytes(in.version) : 0;
  if (workspace > 0) {
    p.assumptions.push_back("flashinfer buffers " + FormatGiB(workspace) +
                            " held at the warm-up's read (a 128 MiB workspace and three 8 MiB ones, the default "
                            "attention; layers/attention/flashinfer.py)");
  }
  // What the read sees held: both phases, or the larger one when the allocator must give the
  // forward's cached blocks back for the logits, and what no source sizes (tgi_warmup_held.cc).
  const double room = p.free_at_init_bytes - p.weights_bytes - warm_kv - workspace;
  const TgiWarmupHeld held = TgiHeldAtRead({room, act, logits, !in.activation_peak_bytes, in.version});
  const double free_after_warmup = held.free_bytes;
  p.figures["warmup_prefill_tokens"] = prefill;
  p.figures["warmup_blocks"] = warm_blocks;
  p.figures["activation_peak_bytes"] = held.held_bytes;
  p.figures["tgi_least_held_bytes"] = held.least_held_bytes;
  // The range's low end: what the most measured on any launch (TgiUnexplainedHeldBytes of an
  // unknown version) would hold beyond this version's, as far as the room left goes.
  if (held.fits && !held.released && held.unexplained_bytes > 0) {
    p.figures["tgi_more_held_bytes"] =
        std::min(held.free_bytes, std::max(0.0, TgiUnexplainedHeldBytes("") - held.unexplained_bytes));
  }
  if (held.unexplained_bytes > 0 || held.released) p.assumptions.push_back(TgiHeldAssumption(held, act, logits));
  if (!held.fits) {
    p.fits = false;
    p.failure = "warmup_oom";
    p.error = "Not enough memory to handle " + std::to_string(prefill) +
              " prefill tokens. You need to decrease `--max-batch-prefill-tokens`";
    p.kv_tokens = 0;
    Ledger(in, p, warm_kv + held.held_bytes, 0);
    return p;
  }
  TgiKvInput kv;
  kv.version = in.version, kv.total_bytes = in.total_bytes;
  kv.free_after_warmup_bytes = free_after_warmup;
  kv.cuda_memory_fraction = p.fraction;
  kv.bytes_per_token = p.cell_bytes;
  kv.block_size = block;
  kv.warmup_blocks = warm_blocks;
  kv.max_total_tokens = v3_unbounded && !v3_chunking ? prefill : total_tokens;
  if (v3_unbounded && !v3_chunking) {
    p.assumptions.push_back("--max-total-tokens " + std::to_string(prefill) +
                            ": TGI v3 sets it to the warm-up's tokens when the model runs without prefill chunking (" +
                            (attention == "paged" ? std::string("paged attention") : "a VLM") +
                            "; flash_causal_lm.py warmup), and --max-input-tokens one less");
  }
  auto r = TgiKvBlocks(kv);
  if (!r.ok()) return r.status();
  p.kv_tokens = r->kv_tokens;
  p.figures["usable_bytes"] = r->usable_bytes;
  p.figures["num_blocks"] = r->num_blocks;
  Ledger(in, p, p.free_at_init_bytes - p.weights_bytes - r->kv_bytes, r->kv_bytes);
  if (r->num_blocks <= 0) {
    p.fits = false;
    p.failure = "kv_pool_no_room";
    p.error = "no KV blocks after the warm-up: " + FormatGiB(free_after_warmup) + " free, less than the " +
              Fixed2(1 - p.fraction * TgiDefaultWiggleRoom(in.version)) + " of the card TGI keeps back";
  } else if (r->fails) {
    TooSmall(p, in, r->error);
  }
  // What the KV sizing leaves the decode CUDA graphs captured after it, less what the process
  // holds outside PyTorch's allocator (tgi_graph_capture.h; SayTgiCaptureAfterPool, once the
  // context is settled). v2's graphs run over the warm-up batch's blocks, v3's max_total_tokens.
  p.figures["tgi_graph_room_bytes"] = p.free_at_init_bytes - p.weights_bytes - r->kv_bytes - workspace - held.unexplained_bytes;
  p.figures["tgi_graph_tokens"] = kv.max_total_tokens;
  p.figures["tgi_block_size"] = block;
  return p;
}

StatusOr<Plan> PlanTrtllm(const PlanInput& in, Plan p) {
  TPT_RETURN_IF_ERROR(NeedWeights(in));
  if (in.dp > 1) return InvalidArgumentError("trtllm-serve: attention DP is not modelled; plan one replica");
  const std::string backend = in.trtllm_backend.empty() ? TrtllmDefaultBackend(in.version) : in.trtllm_backend;
  if (backend != "tensorrt" && backend != "pytorch") {
    return InvalidArgumentError("--backend '" + backend + "' is not TensorRT-LLM's; use tensorrt (an engine) or pytorch");
  }
  if ((in.runtime_buffers_bytes || !in.trtllm_engine_build.empty()) && backend != "tensorrt") {
    return InvalidArgumentError("--runtime-buffers and --engine-build are a TensorRT engine's; the PyTorch backend "
                                "builds none and measures its estimation pass (--activation-peak)");
  }
  p.weights_bytes = *in.weights_bytes;
  auto cell = KvBytesPerToken(in, p);
  if (!cell.ok()) return cell.status();
  p.cell_bytes = *cell;
  p.fraction_flag = "--kv_cache_free_gpu_memory_fraction";
  p.fraction = in.memory_fraction.value_or(kTrtllmDefaultFreeGpuMemoryFraction);
  p.fraction_source = in.memory_fraction ? "flag" : "default: 0.9 (KvCacheConfig.free_gpu_memory_fraction)";
  if (!(p.fraction < 1)) return InvalidArgumentError("--kv_cache_free_gpu_memory_fraction must be < 1 (TensorRT-LLM refuses 1.0)");
  if (in.trtllm_backend.empty()) {
    p.assumptions.push_back(backend == "tensorrt"
                                ? "backend: a TensorRT engine (trtllm-build; TensorRT-LLM's default before 1.0); pass "
                                  "--backend pytorch for the PyTorch backend"
                                : "backend: PyTorch (TensorRT-LLM's default from 1.0); pass --backend tensorrt for a "
                                  "trtllm-build engine");
  }
  if (backend == "tensorrt") return PlanTrtllmEngine(in, std::move(p));
  p.era = "PyTorch backend (KvCacheCreator: fraction of total - peak)";
  const int64_t tokens = in.max_num_batched_tokens.value_or(8192);
  if (!in.max_num_batched_tokens) p.assumptions.push_back("--max_num_tokens 8192 (BuildConfig's default)");
  p.assumptions.push_back("KV blocks of 32 tokens (the LLM API's tokens_per_block)");
  if (WeightsOom(p)) {
    Ledger(in, p, 0, 0);
    return p;
  }
  // _util.py KvCacheCreator: the estimation pass runs max_num_tokens as dummy context
  // requests of min(max_num_tokens, max_seq_len - 1) tokens each, one generated token apiece
  // (_create_dummy_context_requests); what is left after its peak (torch + non-torch) is what
  // the fraction is taken of.
  const int64_t request_len =
      std::max<int64_t>(1, std::min<int64_t>(tokens, in.context_length ? *in.context_length - 1 : tokens));
  const int64_t requests = (tokens + request_len - 1) / request_len;
  const double act = ForwardPeak(in, tokens, requests, "TensorRT-LLM's estimation pass", p);
  if (!in.activation_peak_bytes && in.model) {
    // _util.py estimate_max_tokens (0.20-era KvCacheCreator): peak = torch peak + what is held
    // outside torch at the end of the dummy requests, taken after the executor's warm-up.
    p.unknowns.push_back(
        "TensorRT-LLM's estimation-pass peak (torch + non-torch: CUDA graphs, autotuner, sampler, NCCL) is vLLM's "
        "forward estimate; a logged launch (Llama-3.1-8B FP8, H100, 0.20.0) held 1.9 GiB more, so the range below "
        "adds up to 2 GiB; pass --activation-peak from a log: its 'Peak memory during memory usage profiling' less "
        "the weights and the CUDA context");
  }
  double available = p.free_at_init_bytes - p.weights_bytes - act;
  p.figures["activation_peak_bytes"] = act;
  p.figures["warmup_prefill_tokens"] = tokens;
  if (in.unified_memory && !in.peak_from_log && available > 0) {
    // A logged peak (--activation-peak) already holds the host's use (extra_cost). Otherwise,
    // unified_memory.cc: on a GB10 or a Jetson KvCacheCreator's "memory used outside torch"
    // (total - free - torch's) holds the checkpoint's page cache (about the weights a rank)
    // as long as the kernel keeps it. The pass's allocations make the kernel reclaim it, never
    // the pass's own KV cache, which the formula adds back (`+ kv_stats.max_allocated_bytes`,
    // _util.py _cal_max_tokens): requests of request_len + 1 tokens in blocks of 32, logged as
    // the estimation's max_tokens (8,224 for one 8,192-token request).
    const double est_kv = static_cast<double>(requests * ((request_len + 1 + 31) / 32) * 32) *
                          static_cast<double>(p.cell_bytes);
    const double left = std::max(available - p.weights_bytes, std::min(est_kv, available));
    p.figures["unified_host_use_bytes"] = available - left;
    available = left;
  }
  p.figures["available_bytes"] = available;
  if (available <= 0) {
    p.fits = false;
    p.failure = "warmup_oom";
    p.error = "CUDA out of memory in the estimation pass of " + std::to_string(tokens) + " tokens (max_num_tokens)";
    Ledger(in, p, act, 0);
    return p;
  }
  return TrtllmPool(in, std::move(p), available);
}

StatusOr<Plan> PlanLmdeploy(const PlanInput& in, Plan p) {
  TPT_RETURN_IF_ERROR(NeedWeights(in));
  if (in.pp > 1) return InvalidArgumentError("lmdeploy serve api_server has no pipeline parallelism; use --tp");
  const std::string backend = in.lmdeploy_backend.empty() ? "turbomind" : in.lmdeploy_backend;
  if (backend != "turbomind" && backend != "pytorch") {
    return InvalidArgumentError("--backend '" + backend + "' is not LMDeploy's; use turbomind or pytorch");
  }
  const bool tm = backend == "turbomind";
  p.weights_bytes = *in.weights_bytes;
  auto cell = KvBytesPerToken(in, p);
  if (!cell.ok()) return cell.status();
  p.cell_bytes = *cell;
  p.era = tm ? (LmdeployFractionOfTotal(in.version) ? "TurboMind, ratio of the card's total (v0.1.0-0.2.1)"
                                                    : "TurboMind, ratio of the free memory after the weights")
             : "PyTorch engine, ratio after the runtime reserve";
  p.fraction_flag = "--cache-max-entry-count";
  // cache_max_entry_count: 0.5 of the card's TOTAL in v0.1.0-0.2.1 (lmdeploy_model.cc), later 0.8 of the free.
  const bool of_total = tm && LmdeployFractionOfTotal(in.version);
  p.fraction = in.memory_fraction.value_or(of_total ? 0.5 : 0.8);
  p.fraction_source = in.memory_fraction ? "flag"
                      : of_total         ? "default: 0.5 (of the card's total memory, v0.1.0-0.2.1)"
                                         : "default: 0.8 (of the free memory after the weights)";
  if (!(p.fraction < 1)) return InvalidArgumentError("--cache-max-entry-count of 1 or more is a block count; give a ratio below 1");
  // TurboMind's cache_block_seq_len: 128 tokens before v0.3.0 (deploy/target_model/base.py
  // v0.2.0-v0.2.6), 64 from v0.3.0; the PyTorch engine's block_size is 64.
  const int block_tokens = tm && VersionBefore(in.version, {0, 3, 0}) ? 128 : 64;
  p.assumptions.push_back("KV blocks of " + std::to_string(block_tokens) + " tokens (" +
                          (tm ? "TurboMind's cache_block_seq_len" : "the PyTorch engine's block_size") + ")");
  // What TurboMind holds between its weights and LlamaBatch's cudaMemGetInfo, by version
  // (launch_plan_turbomind.cc, turbomind_startup.cc); needs the model's shapes.
  const double held = tm ? TurbomindHeldForPlan(in, p) : 0;
  if (tm) {
    // What the source does not size: the caching allocator's fragmentation, cuBLAS/cuBLASLt
    // handles, a VLM's tower in torch beyond its weights, the pool's reuse across layers.
    p.unknowns.push_back(
        "TurboMind's allocations before its free-memory read beyond those sized (" + FormatGiB(held) +
        ": LlamaV2's buffers, torch's cache of the weight export, the weights' pool) are not logged; the range "
        "below takes up to 2 GiB more");
  }
  // What TurboMind allocates after the cache: the start-up GEMM tuning pass's buffers where the
  // version's were read (launch_plan_turbomind.cc, turbomind_tuning.cc); else nothing, said.
  const double runtime = tm ? TurbomindAfterCacheForPlan(in, p) : 0;
  if (tm && !(runtime > 0)) {
    p.assumptions.push_back("TurboMind's run-time buffers come after the cache from what it leaves (" +
                            (of_total ? std::string("the free memory less ") + Fixed2(p.fraction) + " of the card"
                                      : Fixed2(1 - p.fraction) + " of the free memory") +
                            "); the log never sizes them, so the plan does not check them");
  }
  if (WeightsOom(p)) {
    Ledger(in, p, 0, 0);
    return p;
  }
  LmdeployKvInput kv;
  kv.engine = tm ? LmdeployEngine::kTurbomind : LmdeployEngine::kPytorch;
  kv.version = in.version, kv.total_bytes = in.total_bytes;
  const double after_weights = p.free_at_init_bytes - p.weights_bytes;
  kv.free_after_weights_bytes = std::max(0.0, after_weights - held);
  kv.cache_max_entry_count = p.fraction;
  kv.block_tokens = block_tokens;
  kv.block_bytes = static_cast<double>(p.cell_bytes) * kv.block_tokens;
  kv.vocab_size = in.model ? in.model->vocab : 0;
  if (in.max_num_batched_tokens) kv.max_prefill_token_num = *in.max_num_batched_tokens;
  if (in.max_num_seqs) kv.max_batches = *in.max_num_seqs;
  kv.runtime_bytes = runtime;
  if (!tm && !in.model) p.assumptions.push_back("vocabulary unknown without --model: the runtime reserve is taken as 0");
  auto r = LmdeployKvBlocks(kv);
  if (!r.ok()) return r.status();
  p.kv_tokens = r->fails ? 0 : r->kv_tokens;
  if (!r->note.empty()) p.warnings.push_back(r->note);
  p.figures["num_blocks"] = r->num_blocks;
  if (r->pool_is_cap) p.figures["kv_pool_is_cap"] = true;  // the ledger's pool is a cap (lmdeploy_model.cc)
  p.figures["runtime_reserve_bytes"] = r->runtime_reserve_bytes;
  Ledger(in, p, after_weights - r->kv_bytes, r->kv_bytes);
  if (r->runtime_oom) {
    p.fits = false;
    p.failure = "warmup_oom";
    p.error = r->error + ": the start-up GEMM tuning pass needs " + FormatGiB(runtime) + " after the cache, which left " +
              FormatGiB(r->left_after_cache_bytes);
  } else if (r->fails || r->num_blocks <= 0) {
    p.fits = false;
    p.failure = "kv_pool_no_room";
    p.error = r->error.empty() ? "no KV blocks" : r->error;
  } else if (in.context_length && p.kv_tokens < *in.context_length) {
    TooSmall(p, in, "No enough blocks for `session_len` (" + std::to_string(*in.context_length) + ")");
  }
  return p;
}

// When nobody asked for the context (it came from the model), the server shortens it
// to its pool instead of failing: said as a warning.
std::string ShortensContext(const std::string& framework, const std::string& version, int64_t pool, int64_t context) {
  const std::string held = WithCommas(pool) + " tokens, less than the model's context length " + WithCommas(context);
  if (framework == "tgi") {
    if (VersionBefore(version, {3, 0, 0})) return "";
    return "the KV pool holds " + held + ": TGI v3 sets --max-total-tokens to min(the pool, max_position_embeddings) "
           "when it is not given (launcher/src/main.rs v3.3.6); pass --context-length " + std::to_string(pool) +
           " to say so";
  }
  if (framework == "lmdeploy") {
    return "the KV pool holds " + held + ": LMDeploy truncates session_len to it (\"No enough blocks for `session_len`"
           " ..., `session_len` truncated to ...\", LlamaBatch.cc); pass --context-length " + std::to_string(pool);
  }
  if (framework == "trtllm") {
    return "the KV pool holds " + held + ": TensorRT-LLM cuts max_seq_len to it (\"maxAttentionWindow and "
           "maxSequenceLen are too large for at least one sequence to fit in kvCache\"); pass --context-length " +
           std::to_string(pool);
  }
  return "";
}

}  // namespace tpt::memory::internal
