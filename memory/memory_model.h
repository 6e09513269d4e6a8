// memory_model.h: the memory formulas of SGLang and vLLM, by version, in one place.
//
// Both the rules engine (rules/) and the GPU reproduction (repro/) call these
// functions; nothing here reads a log, links the parser or includes rules/ (only
// base/status.h and the LedgerRow of memory/ledger.h). Inputs are
// plain numbers in BYTES (SGLang prints GiB as "GB": convert with kGiB).
// Sources are cited per function as "sglang-source.md §1.2(c)" etc. (the team's
// knowledge notes, which quote the servers' code at named commits).
//
//   using namespace tpt::memory;
//   SglangKvInput in;
//   in.era = *SglangEraForVersion("0.4.3.post4");
//   in.free_at_init_bytes = 94 * kGiB;           // "Load weight begin. avail mem=" (min over ranks)
//   in.avail_after_weights_bytes = 21.7 * kGiB;  // "Load weight end. avail mem="  (min over ranks)
//   in.mem_fraction_static = 0.50;
//   in.cell_bytes = 65536;
//   StatusOr<SglangKvResult> r = SglangKvPool(in);
//   // r->rest_bytes = -25.3 GiB, r->fails = true, r->min_viable_mem_fraction_static = 0.77
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "memory/ledger.h"

namespace tpt::memory {

inline constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
inline constexpr double kMiB = 1024.0 * 1024.0;

// ---------------------------------------------------------------------------
// Versions.

// "0.4.3.post4", "v0.5.2rc1", "0.10.1.1" -> {0,4,3}, {0,5,2}, {0,10,1,1}.
// Suffixes (post, rc, dev, +cu124, -rocm) are ignored. Error when no number.
StatusOr<std::vector<int>> ParseVersion(std::string_view text);
// <0, 0, >0 like strcmp; missing trailing parts count as 0.
int CompareVersions(const std::vector<int>& a, const std::vector<int>& b);
// True when `version` reads and is below `at`; an unreadable or empty version counts
// as the newest (false).
bool VersionBefore(std::string_view version, const std::vector<int>& at);
// A version with its .postN as a fourth number, for servers whose behaviour changes
// between post releases (SGLang): 0.4.4 < 0.4.4.post2 < 0.4.4.post4 < 0.4.5. An
// unreadable version gives {0, 0, 0, 0}.
std::vector<int> VersionWithPost(std::string_view version);

// ---------------------------------------------------------------------------
// KV cache element size.

// "auto" (needs model_dtype), "bf16"/"bfloat16", "fp16"/"half"/"float16",
// "fp32"/"float32", "fp8"/"fp8_e4m3"/"fp8_e5m2"/"float8_e4m3fnuz" -> 1,
// "fp4"/"fp4_e2m1"/"nvfp4" -> 0.5 (packed, scales are added by the cell-size
// functions). Error names the value and lists the accepted ones.
StatusOr<double> KvDtypeBytes(std::string_view kv_cache_dtype, std::string_view model_dtype = "bf16");

// Model dimensions that decide the bytes one token takes in the KV cache.
// Either MHA/GQA (kv_heads, head_dim) or MLA (kv_lora_rank, qk_rope_head_dim).
struct KvDims {
  int layers = 0;            // attention layers on this PP stage
  // MHA / GQA
  int kv_heads = 0;          // TOTAL key/value heads of the model (not per rank)
  int head_dim = 0;
  int v_head_dim = 0;        // 0 = same as head_dim (SGLang v0.5+ supports K != V)
  // MLA (DeepSeek V2/V3/R1, Kimi K2...): the latent is replicated on every rank
  int kv_lora_rank = 0;
  int qk_rope_head_dim = 0;
  double dtype_bytes = 2;    // KV element: 2 bf16/fp16, 1 fp8, 0.5 fp4
  bool IsMla() const { return kv_lora_rank > 0; }
};

// KV heads stored on one attention-TP rank: max(1, kv_heads / tp), i.e.
// replicated when kv_heads < tp (sglang-source.md §1.2(b), vllm-source.md §1.5).
int KvHeadsPerRank(int kv_heads, int attn_tp);

// ---------------------------------------------------------------------------
// SGLang.

// Eras of profile_max_num_token (sglang-source.md §1.2 (a)-(e)).
enum class SglangEra {
  kV01,      // early 2024, <= v0.1.16: fp16 only, heads = kv_heads // tp (no
             // replication), rest in bytes, error "Not enought memory"
  kV0117,    // June 2024, v0.1.17..v0.1.x: get_num_kv_heads (replication), fp16 only
  kV02,      // Aug 2024 - mid 2025, v0.2..v0.4.x: MLA, --kv-cache-dtype, attention TP
  kV05,      // late 2025, v0.5.0..v0.5.6: v_head_dim, FP4 scales, page-size rounding
  kY2026,    // 2026, >= v0.5.7 (inference from corpus dates): ValueError pre-check
             // "Loaded weights leave no GPU memory ..." when rest <= 0
};
const char* SglangEraName(SglangEra era);
// Maps a version string ("0.4.3.post4", "v0.5.16") to its era; error naming
// the text when it has no version number.
StatusOr<SglangEra> SglangEraForVersion(std::string_view version);

// Bytes per token per rank of the SGLang KV pool (sglang-source.md §1.2(a)-(e)):
//   MHA/GQA: KvHeadsPerRank(kv_heads, attn_tp) x (head_dim + v_head_dim) x layers x elem
//            (kV01: kv_heads / tp without replication; kV01/kV0117: elem fixed 2 B)
//   MLA:     (kv_lora_rank + qk_rope_head_dim) x layers x elem, NOT divided by TP
//            (not before kV02; MLA needs the kV02+ formula)
//   FP4 (elem 0.5, kV05+): packed half + one 1-byte scale per 16 elements.
// Errors: zero layers/heads/head_dim, MLA before kV02, kV01 with kv_heads < tp.
StatusOr<int64_t> SglangCellBytes(const KvDims& dims, int attn_tp, SglangEra era);

struct SglangKvInput {
  SglangEra era = SglangEra::kV05;
  double free_at_init_bytes = 0;         // min over ranks, after distributed init, before weights
  double avail_after_weights_bytes = 0;  // min over ranks, after weights (what profiling sees)
  double mem_fraction_static = 0;        // 0 < f <= 1
  int64_t cell_bytes = 0;                // bytes per token per rank (SglangCellBytes)
  int page_size = 1;                     // kV05+: tokens rounded down to a multiple
  std::optional<int64_t> max_total_tokens;  // --max-total-tokens (caps the pool)
  std::optional<int64_t> context_length;    // for the one-request check and remedy
  // Hybrid sliding-window pool (SWAKVPool; model_runner_kv_cache_mixin.py
  // set_num_tokens_hybrid_swa): cell_bytes covers full + swa layers alike; the tokens
  // over all layers are split so that swa tokens = ratio x full tokens. 0: not hybrid.
  int full_layers = 0, swa_layers = 0;
  double swa_full_tokens_ratio = 0.8;       // --swa-full-tokens-ratio
  // Mamba/linear-attention hybrids (handle_max_mamba_cache): cell_bytes covers the full
  // attention layers only; the request states are taken from rest first. 0: none.
  double mamba_bytes_per_request = 0;       // mamba_cache_per_req (all linear layers, one rank)
  std::optional<int64_t> max_mamba_cache_size;  // --max-mamba-cache-size (else the ratio rule)
  double mamba_full_memory_ratio = 0.9;     // --mamba-full-memory-ratio
};

struct SglangKvResult {
  double reserved_bytes = 0;   // free_at_init x (1 - f): activations, graphs, NCCL...
  double rest_bytes = 0;       // avail - reserved (negative = shortfall)
  int64_t profiled_tokens = 0; // int(rest) // cell (negative when rest < 0, as logged in
                               // "larger than the profiled value -561981")
  int64_t max_total_num_tokens = 0;  // after --max-total-tokens cap and page rounding
  double kv_pool_bytes = 0;    // max_total_num_tokens x cell (0 when it fails)
  bool fails = false;          // the server refuses to start
  std::string error;           // the message the era raises ("" when it fits)
  // Smallest f (2 decimals, rounded up) with rest > 0: 1 - avail/free_at_init.
  double min_viable_mem_fraction_static = 0;
  // Smallest f (2 decimals) whose pool holds one request of context_length
  // tokens; absent without context_length. > 1 means it cannot fit at all.
  std::optional<double> mem_fraction_for_context;
  bool holds_one_context = true;  // pool >= context_length tokens (true if unknown)
  // Hybrid pools: the full-attention and sliding-window token counts ("Use sliding
  // window memory pool. full_layer_tokens=..., swa_layer_tokens=..."; the pool's size,
  // max_total_num_tokens, is the full count) and the mamba state pool ("Mamba Cache is
  // allocated. max_mamba_cache_size: ...").
  int64_t full_tokens = 0, swa_tokens = 0;
  int64_t max_mamba_cache_size = 0;
  double mamba_bytes = 0;
};

// rest = avail - free_at_init x (1 - f); tokens = int(rest x 2^30 ...) // cell per era
// (sglang-source.md §1.1, §1.2). Error when an input is out of range (the
// message names the field).
StatusOr<SglangKvResult> SglangKvPool(const SglangKvInput& in);

// Remedy: smallest mem_fraction_static (rounded UP to 2 decimals) that leaves
// a KV pool of at least `tokens` tokens (tokens = 0: any positive rest).
double SglangMinMemFraction(double free_at_init_bytes, double avail_after_weights_bytes,
                            int64_t cell_bytes = 0, int64_t tokens = 0);

// Default --mem-fraction-static by release (post releases count: 0.4.6.post2, 0.4.7.post1
// and 0.5.4.post1 changed it), GPU capacity and parallelism; sglang_default_fraction.cc,
// the table in memory/README.md.
struct SglangDefaultsInput {
  std::string version;           // decides the table/heuristic
  double gpu_capacity_bytes = 0; // device total (get_device_memory_capacity); 0 = unknown
  int tp = 1, pp = 1, dp = 1;
  bool enable_dp_attention = false;
  std::optional<int> chunked_prefill_size;  // unset: the capacity-based default
  std::optional<int> cuda_graph_max_bs;     // unset: the capacity-based default
  std::string speculative_algorithm;        // "", "EAGLE", "EAGLE3", "STANDALONE", "NGRAM"
  // From 0.5.10 the piecewise prefill graphs' reserve: 1.5 GiB for an MLA model, else 8 MB
  // a captured size (up to the chunked prefill, capped by the context length from 0.5.13);
  // none for a multimodal model (SGLang turns them off for it).
  bool mla = false;
  bool multimodal = false;
  std::optional<int64_t> context_length;
  std::optional<int64_t> max_running_requests;  // 0.5.22 on: caps the default cuda_graph_max_bs
};
struct SglangDefaults {
  double mem_fraction_static = 0;
  int chunked_prefill_size = 0;   // 0 when the era has no capacity table
  int cuda_graph_max_bs = 0;
  double reserved_mb = 0;         // post-#7054 heuristic: what it keeps back (MB)
  std::string rule;               // which table/heuristic applied, for explanations
};
StatusOr<SglangDefaults> SglangDefaultMemFraction(const SglangDefaultsInput& in);

// The --mem-fraction-static that serves (the Fix of a KV pool with no room):
// the largest value that still leaves SGLang's own headroom for activations,
// CUDA graphs and metadata out of the free memory at init (the post-#7054
// reserve of §1.4: 512 MB + 1.5 x max(chunked prefill, 2048) + 2 x
// cuda_graph_max_bs + tp x pp / 8 GiB, at least 10 GiB above 60 GiB, + the
// draft's), rounded down to 0.01; with a KV cell size and a context length,
// at least the value that holds one request of that length. Never below the
// floor (the smallest value with a positive pool): when the floor is above
// the headroom value the weights leave less than SGLang's own headroom
// (`short_of_headroom`). `in.gpu_capacity_bytes` 0: the free memory at init
// stands for the card when choosing the capacity defaults.
struct SglangServing {
  double mem_fraction_static = 0;  // the value that serves
  double floor = 0;                // the smallest value with a positive pool
  double headroom_bytes = 0;       // the reserve it keeps for activations and graphs
  double kv_pool_bytes = 0;        // the pool a rank gets at that value
  double bytes_per_step = 0;       // what +0.01 adds to the pool, a rank
  bool short_of_headroom = false;  // even the floor eats into SGLang's headroom
  bool for_context = false;        // the context length, not the headroom, decided it
};
StatusOr<SglangServing> SglangServingFraction(double free_at_init_bytes, double avail_after_weights_bytes,
                                              const SglangDefaultsInput& in, int64_t cell_bytes = 0,
                                              int64_t context_length = 0);

// ---------------------------------------------------------------------------
// vLLM.

// Eras of the KV budget (vllm-source.md §1.2, §1.3).
enum class VllmEra {
  kV0PeakWholeGpu,  // V0 < 0.3.1: peak = total - free (other processes charged)
  kV0InstancePeak,  // V0 0.3.1..0.6.3: peak = init_free - free (this instance only)
  kV0NonTorchWholeGpu,  // V0 0.6.4..0.6.5, V1 < 0.9.1: non-torch = whole-GPU used - torch
  kV0Profiling,     // V0 >= 0.6.6 (memory_profiling(): instance increases only)
  kV1StartupCheck,  // V1 0.9.1..0.20.x: + startup check free < util x total; graphs OUTSIDE budget
  kV1GraphsInBudget,  // V1 >= 0.21: CUDA-graph estimate subtracted from the budget
};
const char* VllmEraName(VllmEra era);
// engine: "v0", "v1" or "" (= V1 from 0.8.0 when it became default, V0 before;
// V0 does not exist from 0.11.0).
StatusOr<VllmEra> VllmEraForVersion(std::string_view version, std::string_view engine = "");

// Bytes per token per GPU (vllm-source.md §1.5):
//   GQA/MHA: layers x 2 x KvHeadsPerRank(kv_heads, tp) x head_dim x elem
//   MLA:     layers x (kv_lora_rank + qk_rope_head_dim) x elem (independent of TP)
//   FP4:     packed half + one 1-byte scale per 16 elements.
StatusOr<int64_t> VllmBytesPerToken(const KvDims& dims, int tp);

struct VllmKvInput {
  VllmEra era = VllmEra::kV1StartupCheck;
  double total_bytes = 0;          // cudaMemGetInfo total (the card's, not the H200's)
  double free_at_init_bytes = 0;   // free when the worker starts (startup check; other tenants)
  double gpu_memory_utilization = 0.9;
  double weights_bytes = 0;        // "Model loading took X GiB"
  double activation_peak_bytes = 0;  // torch peak increase during profile_run
  double non_torch_bytes = 0;      // NCCL, cuBLAS, custom-AR buffers, context growth
  double cuda_graph_bytes = 0;     // captured graph pool (estimate or "took X GiB")
  // V0 before 0.2.5 (vllm PR #2031): the profile charged torch's allocated peak alone against
  // the device's total (VllmTorchPeakOnly), neither non-torch memory nor what was in use at init.
  bool torch_peak_only = false;
  int64_t bytes_per_token = 0;     // VllmBytesPerToken
  int block_size = 16;
  int pp = 1;
  std::optional<int64_t> max_model_len;
  // V1 hybrid KV cache groups (>= 0.10, v1/core/kv_cache_utils.py): layers by kind on
  // this rank. All 0: every layer is full attention (bytes_per_token covers them).
  // Otherwise bytes_per_token covers the full + sliding layers, each alike.
  int full_layers = 0, sliding_layers = 0, mamba_layers = 0;
  int sliding_window = 0;
  // Sliding layers hold window - 1 + this per request: max_num_batched_tokens, from 0.26
  // max_in_flight_tokens (VllmSlidingReserveTokens).
  int64_t max_num_batched_tokens = 0;
  // The logged "GPU KV cache size": int(max_concurrency x max_model_len) from 0.20.1
  // (VllmKvSizeFromConcurrency), num_blocks // groups x block before.
  bool kv_size_from_concurrency = false;
  // V1 from 0.8.0 (gpu_worker.py compile_or_warm_up_model, vllm#13776; read at 0.9.2 and
  // 0.11.0): after the KV cache and the graphs, a dummy run of min(max_num_seqs,
  // max_num_batched_tokens) requests and the sampler over them ("to avoid memory
  // fragmentation"), from what is left. Its peak (0 = not checked) and its requests.
  double sampler_warmup_bytes = 0;
  int64_t sampler_warmup_requests = 0;
  // More than sampler_warmup_bytes where the warm-up may take what the profile did not hold
  // (0.8.x FlashInfer's fallback, vllm_sampler_warmup.h); 0 or equal otherwise.
  double sampler_warmup_high_bytes = 0;
  double mamba_bytes_per_request = 0;   // all mamba layers of this rank, one request
};

struct VllmKvResult {
  double requested_bytes = 0;      // util x total (ceil in 2026)
  double non_kv_bytes = 0;         // what the era charges against the budget
  double graphs_in_budget_bytes = 0;  // graphs subtracted from the budget (>= 0.21)
  double kv_bytes = 0;             // requested - non_kv - graphs_in_budget (may be < 0)
  int64_t num_blocks = 0;          // >= 0
  int64_t kv_tokens = 0;           // the logged "GPU KV cache size" (kv_size_from_concurrency)
  int64_t pool_tokens = 0;         // num_blocks // groups x block: the pool read as full attention
  bool startup_check_fails = false;  // V1 >= 0.9.1: free_at_init < requested
  bool no_cache_blocks = false;      // "No available memory for the cache blocks"
  bool max_len_too_long = false;     // one max_model_len request does not fit
  int64_t estimated_max_model_len = 0;  // what the pool would hold
  // Physically, in the free memory at init (what another process or the context leaves): the
  // profiling run (weights + non-torch + its peak) and then the KV cache the budget sized
  // (weights + non-torch + KV) must fit; only the budget's own share is checked by the eras
  // whose budget counts this instance alone (V0 0.3.1 on, V1 without its startup check).
  bool profile_oom = false;          // the memory profiling run runs out of memory
  bool kv_alloc_oom = false;         // allocating the sized KV cache runs out of memory
  double max_util_physical = 1;      // largest util whose KV cache fits in the free memory
  bool graphs_overflow = false;      // graphs outside budget exceed the margin (capture OOM risk)
  double left_for_graphs_bytes = 0;  // what the KV cache leaves the graphs outside the budget
  bool sampler_warmup_fails = false; // the sampler warm-up after the cache and graphs does not fit
  bool sampler_warmup_may_fail = false;  // it fits, but not at sampler_warmup_high_bytes
  double left_for_sampler_bytes = 0; // what the cache and graphs leave it
  bool fails = false;
  std::string error;                 // first error the era raises
  // Remedies (2 decimals, rounded up; max_gpu_memory_utilization rounded down).
  double min_util_one_block = 0;                // smallest util leaving >= 1 block
  std::optional<double> min_util_max_model_len; // smallest util holding max_model_len
  double max_util_startup = 1;                  // largest util passing the startup check
  // Hybrid groups: pool_tokens = num_blocks // groups x block (the logged "GPU KV cache
  // size" before 0.20.1).
  int kv_cache_groups = 1, group_size = 0, hybrid_block_size = 0;
  // max_model_len requests the pool holds at once (get_max_concurrency_for_kv_cache_config:
  // num_blocks / the blocks one request needs over the groups); 0 without max_model_len.
  double max_concurrency = 0;
};
StatusOr<VllmKvResult> VllmKvPool(const VllmKvInput& in);
// V1 from 0.20.1 (vllm#41069, v1/core/kv_cache_utils.py _report_kv_cache_config) logs
// "GPU KV cache size" as int(max_concurrency x max_model_len); before, as num_blocks //
// len(kv_cache_groups) x the smallest block size. Versions it cannot parse: false.
bool VllmKvSizeFromConcurrency(std::string_view version);
// What a sliding-window layer reserves per request beyond its window (SlidingWindowSpec
// max_admission_blocks_per_request): max_num_batched_tokens, from 0.26 the engine's
// max_in_flight_tokens, max_concurrent_batches (2 under async scheduling, on by default
// from 0.14 at PP 1, the only case the plan's hybrid groups take) x max_num_batched_tokens.
int64_t VllmSlidingReserveTokens(std::string_view version, int64_t max_num_batched_tokens);

// ---------------------------------------------------------------------------
// TGI (text-generation-inference), LMDeploy, TensorRT-LLM: their start-up KV
// arithmetic (memory/tgi_model.cc, lmdeploy_model.cc, trtllm_model.cc; the
// sources, file and version, are cited there and in memory/README.md). Each
// gives the KV figures, the server's failure and message, and the value of
// its knob that serves (with the floor), in the shape of SGLang's and vLLM's.

// What each of them computes at start-up, in one shape.
struct ServerKv {
  double usable_bytes = 0;   // what the formula hands the KV cache (after fraction / wiggle)
  int64_t num_blocks = 0;    // >= 0
  int64_t kv_tokens = 0;     // num_blocks x block tokens
  double kv_bytes = 0;       // num_blocks x block bytes
  bool fails = false;
  std::string error;         // the server's own message when it fails
};

// TGI: server/text_generation_server/models/flash_causal_lm.py warmup() and the
// router's / v3 backend's max_batch_total_tokens check.
// TGI_WIGGLE_ROOM by version: 1.0 (none) before v1.4.1, 0.95 v1.4.1..v3.0.x,
// 0.93 v3.1..v3.2, 0.90 from v3.3; "" = the newest.
double TgiDefaultWiggleRoom(std::string_view version);
struct TgiKvInput {
  std::string version;                // decides the wiggle and where it applies ("" = newest)
  double total_bytes = 0;             // torch total_memory
  double free_after_warmup_bytes = 0; // mem_get_info free after the warm-up prefill (its peak still reserved)
  double cuda_memory_fraction = 1.0;  // CUDA_MEMORY_FRACTION / --cuda-memory-fraction
  double wiggle_room = 0;             // TGI_WIGGLE_ROOM; 0 = the version's default
  int64_t bytes_per_token = 0;        // layers x 2 x kv_heads/shard x head_size x dtype
  int block_size = 16;                // BLOCK_SIZE: paged 16, flashdecoding 256, flashinfer 1
  int64_t warmup_blocks = 0;          // the warm-up batch's blocks, added back (TgiWarmupBlocks)
  int64_t max_total_tokens = 0;       // --max-total-tokens (0: not set, nothing to check)
};
StatusOr<ServerKv> TgiKvBlocks(const TgiKvInput& in);
// Blocks of the router's warm-up batch: requests of max_input_tokens (the last
// shorter) until max_batch_prefill_tokens, each holding
// ceil((max_total_tokens - 1) / block) blocks at most (router/client warmup, from_pb),
// and no more than `max_blocks_per_request` when > 0 (TgiWarmupBlockCap).
int64_t TgiWarmupBlocks(int64_t prefill_tokens, int64_t max_input_tokens, int64_t max_total_tokens, int block_size,
                        int64_t max_blocks_per_request = 0);
// v1.1.0..v2.0.x: BaseFlashMistral's batches (Mistral, Mixtral, Starcoder2, Qwen2 with a
// config sliding_window) hold at most ceil(sliding_window / 16) blocks a request; 0 = no cap.
int64_t TgiWarmupBlockCap(std::string_view version, std::string_view model_type, int sliding_window);
// The warm-up prefill's activations grow with its tokens: the largest
// --max-batch-prefill-tokens whose warm-up fits `free_bytes`, given that
// `prefill_tokens` asked `asked_bytes` (the OOM line's figures), rounded down to a
// multiple of 1024 (of 16 below 1024). 0 when nothing fits.
int64_t TgiPrefillThatFits(int64_t prefill_tokens, double asked_bytes, double free_bytes);
// What TGI's warm-up holds when it reads the free memory, beyond vLLM's forward estimate
// (tgi_model.cc cites each from TGI's source by tag):
// - one eager decoder layer of a dense model at its MLP's product (flash_llama_modeling.py,
//   flash_mistral_modeling.py): the add-RMSNorm returns new tensors and the layer's locals
//   stay alive, 7 x tokens x hidden (5 when hidden > 8192, whose norm adds in place), beside
//   gate_up (2 x intermediate), act(gate) and the product (1 each): 4 x tokens x intermediate.
double TgiDenseLayerPeakBytes(int64_t tokens, int64_t hidden, double intermediate_per_rank, double elem_bytes);
// - a 4-bit AWQ checkpoint on TGI v1.1.0-v2.1.x (llm-awq's GEMM; Marlin from v2.2.0): each
//   linear writes 8 split-k partial outputs, then their sum, so the layer's peak is at gate_up:
//   7 (5) x tokens x hidden beside 18 x tokens x intermediate (tgi_model.cc).
bool TgiAwqSplitKGemm(std::string_view version);
double TgiAwqLayerPeakBytes(int64_t tokens, int64_t hidden, double intermediate_per_rank, double elem_bytes);
// - the prefill's log-probabilities: asked by every warm-up request (router client), and
//   computed unless the server turns them off, which it does by default from v3.0.0
//   (REQUEST_LOGPROBS, launcher --enable-prefill-logprobs); "" = the newest.
bool TgiPrefillLogprobsByDefault(std::string_view version);
// - the attention backend's buffers, allocated when the model is built (after the
//   weights): flashinfer's workspace (128 MiB shared) and its three wrappers' 8 MiB
//   integer workspaces (flashinfer, the default from v2.3.0); 0 before v2.3.0.
double TgiAttentionWorkspaceBytes(std::string_view version);
// Before v1.1.1 the warm-up reports ANY exception as "Not enough memory to handle ...": a
// failure that is not memory reads the same (except Exception, flash_causal_lm.py v0.9.3-v1.1.0).
bool TgiWarmupReportsEveryError(std::string_view version);

// LMDeploy: TurboMind (src/turbomind/models/llama/BlockManager.cc, LlamaBatch.cc) and
// the PyTorch engine (lmdeploy/pytorch/engine/model_agent.py, later executor/base.py).
enum class LmdeployEngine { kTurbomind, kPytorch };
// TurboMind's cache_max_entry_count: a block count (>= 1) always; below 1 a fraction
// of the card's total in v0.2.0..v0.2.1 and of the free memory after the weights
// from v0.2.2 (docs/en/llm/pipeline.md); "" = newest.
bool LmdeployFractionOfTotal(std::string_view version);
// Before v0.1.0 TurboMind sizes no KV pool at start (sequences as requests come): an error.
Status LmdeployVersionPlannable(std::string_view version);
struct LmdeployKvInput {
  LmdeployEngine engine = LmdeployEngine::kTurbomind;
  std::string version;
  double total_bytes = 0;                // the card (TurboMind v0.1.0-0.2.1 only)
  double free_after_weights_bytes = 0;   // min over ranks (GetSyncFreeMemSize / get_gpu_memory)
  double cache_max_entry_count = 0.8;
  double block_bytes = 0;                // "[BlockManager] block_size = X MB" or cache block size
  int block_tokens = 64;                 // cache_block_seq_len (TurboMind) / block_size (PyTorch)
  // PyTorch engine: the runtime reserve taken before the fraction.
  int64_t vocab_size = 0;
  int64_t max_prefill_token_num = 8192;
  int64_t max_batches = 128;
  // What TurboMind allocates after the cache (context/decoder buffers, logits): the
  // log never prints it; 0 = unknown (then nothing to check).
  double runtime_bytes = 0;
  int64_t session_len = 0;               // one session must fit (0 = unknown)
};
struct LmdeployKv : ServerKv {
  double runtime_reserve_bytes = 0;      // PyTorch: reserved before the fraction
  int64_t max_prefill_token_num = 0;     // PyTorch: as halved until >= 16 blocks fit
  double left_after_cache_bytes = 0;     // free after the cache (TurboMind's run-time buffers go here)
  bool runtime_oom = false;              // failed on the run-time buffers after the cache
  // TurboMind v0.1.x: the pool grows a block at a time as requests come (cache_chunk_size 1):
  // what the free memory holds of it when that is less than its cap ("" otherwise).
  std::string note;
  bool pool_is_cap = false;              // v0.1.x TurboMind: kv_bytes is a cap, not allocated at start
};
StatusOr<LmdeployKv> LmdeployKvBlocks(const LmdeployKvInput& in);
// The cache_max_entry_count that serves after an out-of-memory right after the
// cache was sized (TurboMind's buffers did not fit in what it left): the one that
// leaves twice the room that failed, free x (1 - 2 x (1 - f)), rounded down to 0.01,
// kept at or above the floor that holds one session (session_len tokens) when
// known. `bytes_per_step`: the cache (and so the room) each 0.01 moves.
struct LmdeployServing {
  double cache_max_entry_count = 0;
  double floor = 0;                // the smallest that holds one session (0 unknown; >= 1: none does)
  double free_after_weights_bytes = 0;
  double left_bytes = 0;           // what the failed value left for the buffers
  double left_at_serving_bytes = 0;
  int64_t tokens_at_serving = 0;
  double bytes_per_step = 0;
};
StatusOr<LmdeployServing> LmdeployServingFraction(double free_after_weights_bytes, double cache_max_entry_count,
                                                  double block_bytes, int block_tokens, int64_t session_len);

// TensorRT-LLM: KvCacheConfig.free_gpu_memory_fraction (default 0.9) of what is
// free for the cache: the C++ runtime's free + pool free after the engine and
// its buffers (trtKvCacheManager / BaseKVCacheManager::calculateFreeMemBytes,
// "Memory usage when calculating max tokens in paged kv cache"), the PyTorch
// backend's total - peak + temporary KV of the estimation pass (_util.py
// KvCacheCreator, "Peak memory during memory usage profiling").
inline constexpr double kTrtllmDefaultFreeGpuMemoryFraction = 0.9;
struct TrtllmKvInput {
  double available_bytes = 0;        // what the fraction is taken of (see above)
  double free_gpu_memory_fraction = kTrtllmDefaultFreeGpuMemoryFraction;
  int64_t bytes_per_token = 0;       // KV bytes a token, this rank ("kv size is N")
  int tokens_per_block = 64;
  std::optional<int64_t> max_tokens; // kv_cache_config.max_tokens (the smaller wins)
  double free_at_creation_bytes = 0; // PyTorch: free when the final cache is created (0 = not known)
  int64_t tokens_one_sequence = 0;   // beam x tokensPerBlock x maxBlocksPerSeq (<= v0.9: an error below it)
};
struct TrtllmKv : ServerKv {
  bool creation_fails = false;       // the cache asked more than was free at its creation
};
StatusOr<TrtllmKv> TrtllmKvBlocks(const TrtllmKvInput& in);
// The free_gpu_memory_fraction that serves after the final KV cache did not fit:
// keep the room the fraction meant to leave, (1 - f) x available, out of what was
// free at creation: f' = (free_at_creation - (1 - f) x available) / available,
// rounded down to 0.01; 0 when even f' <= 0 (then max_num_tokens / TP, not the fraction).
struct TrtllmServing {
  double fraction = 0;
  double kv_bytes = 0;          // f' x available
  double headroom_bytes = 0;    // (1 - f) x available
  int64_t kv_tokens = 0;
  double bytes_per_step = 0;    // 0.01 x available
};
StatusOr<TrtllmServing> TrtllmServingFraction(double available_bytes, double fraction, double free_at_creation_bytes,
                                              int64_t bytes_per_token);

// TensorRT-LLM with a TensorRT engine (trtllm-build; the C++ executor): the buffers
// TrtGptModelInflightBatching allocates before it reads the free memory for the KV cache
// (the engine and its execution context, then createBuffers, then createDecoder, then
// calculateFreeMemBytes). Most are planes of max_batch_size x max_beam_width x vocab
// (padded to the TP size) elements of the engine's logits dtype (float32 by default).
// trtllm_model.cc cites each.
struct TrtllmEngineBuffersInput {
  int64_t max_batch_size = 2048;  // trtllm-build --max_batch_size (BuildConfig's default 2048)
  int max_beam_width = 1;         // trtllm-build --max_beam_width
  int64_t vocab = 0;              // config.json vocab_size
  int tp = 1;                     // the vocabulary is padded to a multiple of it
  int logits_bytes = 4;           // PretrainedConfig logits_dtype 'float32'
  int64_t max_seq_len = 0;        // trtllm-build --max_seq_len (0: none priced)
  int64_t max_attention_window = 0;  // the executor's max_attention_window (0: max_seq_len)
};
struct TrtllmEngineBuffers {
  double plane_bytes = 0;           // max_batch_size x beam x vocab padded x logits bytes
  double runtime_logits_bytes = 0;  // RuntimeBuffers' logits (one plane)
  double penalty_bytes = 0;         // PenaltyLayer: its runtime logits + the occurrence-penalty counts
  double sampling_bytes = 0;        // the sampling workspace priced: top-P's sorted probabilities and ids
  double sampling_rest_bytes = 0;   // the rest of the top-P workspace (id values, cub's sort storage): unknown
  // Buffers of max_batch_size x beam x max_seq_len (or the attention window) int32/float32
  // elements: the runtime side's cache indirections and slot outputs, the decoder's ids,
  // parent ids and log-probabilities (trtllm_model.cc).
  double runtime_sequence_bytes = 0;
  double decoder_sequence_bytes = 0;
  double total_bytes = 0;  // runtime logits + penalty + sampling + both sequence parts
};
StatusOr<TrtllmEngineBuffers> TrtllmEngineBufferBytes(const TrtllmEngineBuffersInput& in);
// TensorRT-LLM's backend when none is asked: the TensorRT engine before 1.0, the PyTorch
// backend from 1.0 (release notes 1.0: "Promote PyTorch to be the default LLM backend",
// "Change default backend to PyTorch in trtllm-serve").
std::string TrtllmDefaultBackend(std::string_view version);

// ---------------------------------------------------------------------------
// Per-rank ledger (rows of memory/ledger.h LedgerRow).

struct RankMemory {
  int rank = -1;
  std::string role = "target";   // "target" | "draft"
  double total_bytes = 0, free_at_init_bytes = 0, weights_bytes = 0, reserved_bytes = 0,
         kv_pool_bytes = 0, graphs_bytes = 0;
  // Persistent memory outside the columns of LedgerRow (vLLM's non-torch: NCCL,
  // cuBLAS, custom all-reduce); only subtracted from left.
  double other_bytes = 0;
  // SGLang captures CUDA graphs inside its reserved slice (and vLLM < 0.21
  // inside the margin outside its budget): graphs then only count where they
  // exceed `reserved`. false: graphs are a separate consumer.
  bool graphs_inside_reserved = true;
  // Allocated from that slice before the graphs (SGLang's request table,
  // sglang_request_table.h): with the graphs, only what outgrows `reserved` counts.
  double reserved_use_bytes = 0;
};
// left = free_at_init - weights - other - kv_pool - (inside ? max(reserved, graphs + use)
//                                                          : reserved + graphs + use)
// Negative left = shortfall (SGLang: left == rest when the pool is 0).
LedgerRow BuildLedgerRow(const RankMemory& m);
std::vector<LedgerRow> BuildLedger(const std::vector<RankMemory>& ranks);

// ---------------------------------------------------------------------------
// CUDA-graph batch size remedy.

// One measured point: graphs captured up to batch size `max_bs` took `bytes`
// ("Capture cuda graph end ... mem usage=X GB" with "Capture cuda graph bs [..]").
struct GraphMemPoint {
  int max_bs = 0;
  double bytes = 0;
};
// Linear model bytes(bs) = intercept + slope x bs (least squares; one point:
// intercept 0). Returns the largest bs in [1, max_candidate] whose predicted
// memory fits `budget_bytes`; if `candidates` is not empty, the largest
// candidate that fits. 0 when none fits. Error on no points / bad values.
StatusOr<int> LargestGraphBatchSize(const std::vector<GraphMemPoint>& points, double budget_bytes,
                                    int max_candidate = 1024, const std::vector<int>& candidates = {});

// ---------------------------------------------------------------------------
// GPU catalog (memory/gpu_catalog.json, embedded at build time).

struct GpuInfo {
  std::string name;                 // canonical, e.g. "H100 SXM 80GB"
  std::vector<std::string> aliases; // lower-case names users and logs use
  double memory_bytes = 0;          // cudaMemGetInfo total (what servers see)
  std::string arch;                 // "hopper", "ampere", ...
  int sm = 0;                       // 90, 80, 120...
  std::string interconnect;         // "nvlink" | "pcie"
  bool unified_memory = false;      // no memory of its own: the system's (GB10, Jetson; unified_memory.h)
  bool pcie_peer_access = true;     // false: no CUDA peer access over PCIe (GeForce cards; init_overhead.cc)
  // nvidia-smi's "MiB" total of the card where a public log cites it (0: not cited): above
  // memory_bytes on Linux, where the driver keeps part of the card out of CUDA's total.
  int64_t nvidia_smi_mib = 0;
  // The total CUDA reports for the card on Windows and WSL2, in MiB, where a public log cites
  // it (0: not cited): WDDM counts the whole card, the Linux driver keeps part out.
  int64_t wddm_mib = 0;
  // A lower CUDA total the same card reports on some hosts (ECC on, a newer driver's
  // reserve), and when (0 / "": one total): the plan's range runs down to it.
  double memory_bytes_low = 0;
  std::string memory_low_when;
};
// The catalog's CUDA total for a size that is exactly one card's nvidia-smi total on Linux
// (`--gpu-mem 16311MiB` is an RTX 5060 Ti's nvidia-smi figure, CUDA's 15.48 GiB), with that card;
// nullptr when no entry, or entries that disagree, have it.
const GpuInfo* GpuByNvidiaSmiTotal(double bytes);
// The embedded catalog, parsed once, with the user's catalog file merged over it
// (LoadGpuCatalogFile). Never fails: a broken embedded file yields an empty catalog
// here and fails gpu_catalog_test (which parses EmbeddedGpuCatalogJson()).
const std::vector<GpuInfo>& GpuCatalog();
// A catalog file users keep for their own cards, in gpu_catalog.json's shape
// ({"gpus": [{"name", "aliases", "memory_gib", "arch", "sm", "interconnect"}]}),
// merged over the built-in catalog: an entry whose name or an alias names a built-in
// entry replaces it (a corrected memory figure), any other is added. Errors name the
// file and the entry (`FILE: /gpus/2/memory_gib: ...`); nothing is merged then.
Status LoadGpuCatalogFile(const std::string& path);
// The merge itself: `user` over `base` as above; `source` names the user's file in errors.
StatusOr<std::vector<GpuInfo>> MergeGpuCatalog(const std::vector<GpuInfo>& base, const std::vector<GpuInfo>& user,
                                               std::string_view source);
// The catalog file read when no --gpu-catalog is given: $TPTRIAGE_GPU_CATALOG when
// set, else $XDG_CONFIG_HOME/tptriage/gpus.json (~/.config/tptriage/gpus.json) when
// that file exists; "" when there is none.
std::string DefaultGpuCatalogPath();
// --gpu-catalog FILE, or the default file when `flag` is empty: loads it (once).
Status LoadUserGpuCatalog(const std::string& flag);
std::string_view EmbeddedGpuCatalogJson();
// Parses a catalog document; `source` names it in errors (file + JSON path + hint).
StatusOr<std::vector<GpuInfo>> ParseGpuCatalog(std::string_view json_text, std::string_view source);
// Case-insensitive lookup by name or alias; ignores spaces, '-' and '_'
// ("h100-sxm", "NVIDIA H100 80GB HBM3"). Error lists close names.
StatusOr<GpuInfo> FindGpu(std::string_view name);
// Non-empty when `name` covers parts with different memory (A100 40/80 GB, GB200...):
// the part assumed and how to name the others.
std::string GpuAmbiguity(std::string_view name);
// Non-empty when `name` is an A100 (SXM4 in the catalog) that does not say SXM or PCIe: the
// PCIe card has the same memory, and the NCCL channels of an NVSwitch board
// (vllm_nccl_connect.h) are then not priced. The CLI appends it as "[assumed: ...]"; the text
// starts with kGpuFormFactorOpen.
std::string GpuFormFactorOpen(std::string_view name);
inline constexpr std::string_view kGpuFormFactorOpen = "form factor not named";

// ---------------------------------------------------------------------------
// Weights and start-up overhead (for `tptriage plan` without a log).

// Bytes per weight element: "bf16"/"fp16" 2, "fp32" 4, "fp8"/"int8" 1,
// "fp4"/"nvfp4"/"int4"/"awq"/"gptq" 0.5. Error names the value.
StatusOr<double> WeightDtypeBytes(std::string_view dtype);
// params x bytes / tp (dense estimate: embeddings and norms are split too).
double WeightsPerRankBytes(double params, double dtype_bytes, int tp);

// What a server sees free right after distributed init on an otherwise empty
// card: total - CUDA/torch context (620.8 MiB, lazy loading) - NCCL communicator
// (558 MiB when tp > 1) - custom all-reduce buffers (24 MiB when tp in 2,4,6,8).
// Measured on H200 (anchors-allreduce.md §4.1, §1; sglang-source.md §3).
inline constexpr double kTorchContextBytes = 620.8 * kMiB;
inline constexpr double kNcclCommBytes = 558.0 * kMiB;
inline constexpr double kCustomAllReduceBytes = 24.0 * kMiB;
double DefaultFreeAtInit(double total_bytes, int tp);

// ---------------------------------------------------------------------------
// Sizes.

// Sizes ("96GiB", "9.3G"): base/units.h ParseSize, the one grammar of every input.
// "70B", "7.6b", "405B", "1.5T", "350M" -> parameter count.
StatusOr<double> ParseParamCount(std::string_view text);
// bytes -> "21.70 GiB" (negative keeps its sign).
std::string FormatGiB(double bytes);

}  // namespace tpt::memory
