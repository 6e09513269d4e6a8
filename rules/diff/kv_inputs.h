// kv_inputs.h: the inputs of a run's KV-pool arithmetic, and counterfactuals.
//
// GatherKvInputs() reads from RunFacts what the memory model needs (free memory
// at init and after weights per rank, mem_fraction_static or
// gpu_memory_utilization, version, ...), borrowing what a run did not print
// from the other run of the pair when both ran the same model, TP and GPU.
// EvaluateKv() runs the memory model (memory/memory_model.h) of the
// run's framework and version on them. Attribution edits a copy of the inputs
// (one difference reverted to the good run's value) and evaluates again.
//
//   KvInputs in = GatherKvInputs(bad, &good);
//   KvArithmetic now = EvaluateKv(in);
//   in.mem_fraction_static = 0.88;            // the good run's value
//   KvArithmetic then = EvaluateKv(in);       // would it have fit?
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "rules/diff/diff.h"
#include "rules/diff/run_facts.h"

namespace tpt::diff {

struct KvInputs {
  std::string framework, version;
  std::map<int, RankMemory> ranks;
  std::optional<double> mem_fraction_static;     // SGLang
  std::optional<double> gpu_memory_utilization;  // vLLM
  std::optional<double> total_bytes;             // vLLM: the card's cudaMemGetInfo total
  double activation_peak_bytes = 0;              // vLLM (printed, borrowed or inferred)
  double non_torch_bytes = 0;                    // vLLM
  double cuda_graph_bytes = 0;                   // vLLM
  int64_t cell_bytes = 0;                        // bytes per token per rank; 0 = unknown
  std::optional<int64_t> max_model_len;          // vLLM max_model_len / SGLang context_length
  // TensorRT-LLM: the KV its estimate sized (after the fraction), the fraction, and the
  // free memory when the final cache was created (memory/trtllm_model.cc).
  double trtllm_kv_bytes = 0, trtllm_free_at_creation_bytes = 0;
  std::optional<double> free_gpu_memory_fraction;
  // LMDeploy TurboMind: its blocks, their size and the ratio (memory/lmdeploy_model.cc).
  double lmdeploy_blocks = 0, lmdeploy_block_bytes = 0;
  std::optional<double> cache_max_entry_count;
  std::vector<std::string> notes;                // what was borrowed or inferred
};

KvInputs GatherKvInputs(const RunFacts& run, const RunFacts* other);
KvArithmetic EvaluateKv(const KvInputs& in);

// Reverts one memory quantity of the bad run to the good run's value on `rank`
// (-1: every rank), moving the free memory measured after it by the same
// amount, as it would have been without the difference.
void RevertMemory(KvInputs& in, const std::string& quantity, int rank, const RunFacts& good, const RunFacts& bad);
// Frees `bytes` taken at distributed init on every rank (custom all-reduce buffers).
void ReleaseAtDistInit(KvInputs& in, double bytes);

}  // namespace tpt::diff
