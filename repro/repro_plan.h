// repro_plan.h: what `tptriage repro` runs: the parameters of one server launch,
// taken from a diagnosis (analyze's JSON, Diagnosis::repro) and overridden by
// flags. Field names are the JSON keys (repro/README.md lists them).
//
//   auto plan = tpt::repro::PlanFromJson(analysis_json, "diagnosis.json");
//   if (!plan.ok()) Die(plan.status());
//   TPT_RETURN_IF_ERROR(tpt::repro::ApplyOverrides(overrides, &*plan));
//   std::string text = tpt::repro::DescribePlan(*plan);   // --dry-run
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "base/units.h"

namespace tpt::repro {

inline constexpr int64_t kMiB = int64_t(1) << 20;
inline constexpr int64_t kGiB = int64_t(1) << 30;

// Steps of one rank, in the server's order (SGLang ModelRunner; vLLM v1
// worker: weights, profile, KV cache, graphs).
inline constexpr const char* kStepContext = "context";
inline constexpr const char* kStepComm = "nccl_comm";
inline constexpr const char* kStepCustomAr = "custom_ar";
inline constexpr const char* kStepBallast = "ballast";
inline constexpr const char* kStepFreeAtInit = "free_at_init";
inline constexpr const char* kStepWeights = "weights";
inline constexpr const char* kStepWarmup = "warmup";  // TGI/vLLM/SGLang: the warm-up forward before the KV
                                                      // formula; LMDeploy TurboMind: its buffers after the cache
inline constexpr const char* kStepKvFormula = "kv_formula";
inline constexpr const char* kStepKvPool = "kv_pool";
inline constexpr const char* kStepGraphs = "cuda_graphs";

// Where a figure of a plan came from (a repro plan says so for each).
inline constexpr const char* kFromLog = "log";
inline constexpr const char* kFromEnvDump = "environment dump";
inline constexpr const char* kFromCatalog = "GPU catalogue";
inline constexpr const char* kFromDefault = "default";
inline constexpr const char* kFromAssumed = "assumed";
inline constexpr const char* kFromFlag = "flag";

struct PlanFigure {
  std::string name;
  std::string value;
  std::string source;  // kFrom*, with detail after ": " ("GPU catalogue: 'H100' named in the log")
};

struct Plan {
  std::string source;      // where it came from (file name, "flags")
  std::string framework;   // "sglang" | "vllm"
  std::string version;     // server version from the log ("" unknown)
  std::string root_cause;  // taxonomy id the diagnosis names
  std::string gpu;         // the original card's name

  int tp = 1, pp = 1;

  // The original card and what each rank saw (bytes). Vectors are per rank
  // (size tp*pp) or empty when the log gave one figure for all.
  int64_t card_total_bytes = 0;     // the original card's total (formulas use this, never ours)
  bool card_total_assumed = false;  // not in the log nor the GPU catalog: free at init used (SGLang only)
  int64_t free_at_init_bytes = 0;   // free memory at init (after context + NCCL)
  std::vector<int64_t> free_at_init_per_rank;
  int64_t weights_bytes = 0;        // per rank
  std::vector<int64_t> weights_per_rank;

  // Server knobs.
  double mem_fraction_static = 0;     // SGLang
  double gpu_memory_utilization = 0;  // vLLM
  int64_t kv_bytes_per_token = 0;
  bool kv_bytes_per_token_assumed = false;  // the log gave none: kAssumedKvBytesPerToken
  int64_t max_total_tokens = 0;       // SGLang --max-total-tokens (0 = unset)
  int64_t context_length = 0;         // longest request (SGLang context_length, vLLM max_model_len; 0 = unknown):
                                      // a fix must leave a pool that holds one
  bool custom_allreduce = true;
  int64_t custom_allreduce_max_bytes = 8 * kMiB;
  std::vector<int> cuda_graph_bs;     // batch sizes captured (empty: graphs disabled)
  int hidden_size = 8192;             // decode-like step: all-reduce of bs x hidden bf16
  int num_layers = 80;                // one all-reduce per layer per step (attention + MLP: 2 in the server)

  // Warm-up and KV of TGI, LMDeploy and TensorRT-LLM (startup_servers.h). Logged figures:
  int64_t warmup_asked_bytes = 0;   // the OOM line's "Tried to allocate" (the warm-up's failing ask)
  int64_t warmup_free_bytes = 0;    // the OOM line's free memory when it asked
  int64_t prefill_tokens = 0;       // TGI --max-batch-prefill-tokens the warm-up ran with
  int64_t max_input_tokens = 0;     // TGI (its warm-up batch's requests)
  int64_t kv_blocks = 0;            // LMDeploy's logged max_block_count
  int64_t kv_block_bytes = 0;       // LMDeploy's logged block size
  int64_t kv_estimate_bytes = 0;    // TensorRT-LLM: the KV the estimation pass gave (after the fraction)
  int64_t free_at_creation_bytes = 0;  // TensorRT-LLM: free when the final cache was created
  std::string oom_source;           // "turbomind" when TurboMind's allocator ran out
  // The replay's own figures (derived by startup_servers.cc, or flags):
  int64_t warmup_bytes = 0;         // what the warm-up (TGI) or the buffers after the cache (TurboMind) allocate
  double cuda_memory_fraction = 0;  // TGI (1.0)
  double cache_max_entry_count = 0; // LMDeploy (0.8)
  double free_gpu_memory_fraction = 0;  // TensorRT-LLM (0.9)
  int64_t kv_available_bytes = 0;   // TensorRT-LLM: what the fraction is of
  int block_tokens = 0;             // tokens a KV block (the server's default when 0)

  // What the log says happened (for the verdict).
  std::string failed_step;        // one of kStep*, "" when the run was healthy
  std::string failure_message;    // the server's error text
  std::map<std::string, int64_t> logged_free_after;  // step -> free bytes the log printed after it

  // The remedy to check: parameter name -> value (e.g. mem_fraction_static -> 0.77).
  std::map<std::string, double> fix;

  // Where each figure came from: JSON key -> kFrom* with detail ("GPU
  // catalogue: 'H100' named in the log"); and the figures no input gave,
  // each as the flag that sets it with the value assumed (plan_figures.h).
  std::map<std::string, std::string> sources;
  std::vector<std::string> asked;
};

// KV cell assumed when neither the log nor a flag gives one: 64 KiB a token
// per rank (a 70B-class GQA model in bf16 at TP=4 is 80 KiB, at TP=8 40 KiB).
inline constexpr int64_t kAssumedKvBytesPerToken = 64 * 1024;

// Builds a plan from analyze's JSON (whole Analysis: its primary diagnosis'
// `repro`, completed from run/ledger/remedy) or from a bare plan object.
// `name` is used in error messages.
StatusOr<Plan> PlanFromJson(const nlohmann::json& j, const std::string& name);

// Reads and parses a JSON file (plan or Analysis).
StatusOr<Plan> LoadPlanFile(const std::string& path);

// Flag overrides (already validated types); unset fields leave the plan alone.
struct Overrides {
  std::optional<int> tp, pp, num_layers, hidden_size;
  std::optional<double> mem_fraction_static, gpu_memory_utilization;
  std::optional<int64_t> card_total_bytes, free_at_init_bytes, weights_bytes, kv_bytes_per_token,
      custom_allreduce_max_bytes;
  std::optional<bool> custom_allreduce;
  std::optional<std::vector<int>> cuda_graph_bs;
  std::optional<std::string> framework;
  std::optional<double> fix_value;  // overrides the value of the plan's fix parameter
  std::optional<int64_t> warmup_bytes;  // --warmup-bytes
};
Status ApplyOverrides(const Overrides& o, Plan* plan);

// Checks that the plan can run: sizes positive, fractions in (0,1], tp in
// 1..64, free_at_init <= card total, ... Names the field and what to pass.
Status ValidatePlan(const Plan& plan);

// Whether memory/ has the server's KV formula (sglang, vllm, tgi, lmdeploy,
// trtllm); other servers (torch) are replayed up to their weights only.
bool HasKvFormula(const std::string& framework);

// The plan with its fix applied (mem_fraction_static := fix value, ...).
Plan WithFix(const Plan& plan);

// Per-rank figure (falls back to the all-ranks figure).
int64_t FreeAtInit(const Plan& p, int rank);
int64_t Weights(const Plan& p, int rank);

// "96GiB", "94G", "512MiB", "1.5 GB" -> bytes through base/units.h (the one size
// grammar: K/M/G/T binary, like the servers' "GB"), checked to fit an int64. With
// kNeedsUnit a bare number is refused (--free-at-init 94 is not 94 bytes).
StatusOr<int64_t> ParseSize(const std::string& text, BareNumber bare = BareNumber::kBytes);
// "1,2,4,8" or "1-4,8,16" -> {1,2,3,4,8,16}.
StatusOr<std::vector<int>> ParseIntList(const std::string& text);
std::string FormatBytes(int64_t bytes);  // "94.00 GiB", "512.0 MiB", "-25.30 GiB"

nlohmann::json PlanToJson(const Plan& p);
std::string DescribePlan(const Plan& p);  // human summary for --dry-run

}  // namespace tpt::repro
