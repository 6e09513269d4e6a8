// turbomind_tuning.h: what LMDeploy's TurboMind allocates after its KV cache for the GEMM
// tuning pass it runs at start-up (v0.6.x), from the model's shapes. The cache takes
// cache_max_entry_count of the free memory; this pass must fit in the rest, or the launch
// ends with TurboMind's CUDA out-of-memory before it serves.
//
//   tpt::memory::TurbomindTuningInput in;
//   in.version = "0.6.2";
//   in.hidden = 5120; in.intermediate = 27648; in.heads = 40; in.kv_heads = 8; in.head_dim = 128;
//   in.vocab = 152064;
//   auto t = tpt::memory::TurbomindTuningPeak(in);   // t->bytes ~ 1.38 GiB over 8,320 tokens
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"

namespace tpt::memory {

struct TurbomindTuningInput {
  std::string version;               // lmdeploy version ("0.6.2")
  int tp = 1;
  int hidden = 0, intermediate = 0, heads = 0, kv_heads = 0, head_dim = 0;
  int64_t vocab = 0;
  int64_t max_prefill_token_num = 8192;  // TurbomindEngineConfig default (lmdeploy/messages.py)
  int64_t max_batch_size = 128;          // get_max_batch_size: 128 outside A100/A800 (256), H100/H800 (512)
  int64_t session_len = 0;               // 0: unknown (its buffers are then not counted)
  double act_bytes = 2;                  // the activations' element (fp16/bf16)
};

struct TurbomindTuning {
  bool runs = false;         // the version runs the pass and its buffers were read
  int64_t tokens = 0;        // the largest forward: max_prefill_token_num + max_batch_size
  double bytes = 0;          // what stays allocated after the cache once the pass ran
  std::string note;          // what was counted, with its source, for `assumed:`
};

// Errors name the missing shape. Versions without the pass (before 0.6.0) or whose buffers
// were not read (0.7.0 on) return runs = false with a note saying which.
StatusOr<TurbomindTuning> TurbomindTuningPeak(const TurbomindTuningInput& in);

// LMDeploy's default max_batch_size for a CUDA card by its name (lmdeploy/utils.py
// get_max_batch_size, v0.6.2): 256 for A100/A800, 512 for H100/H800, 128 for the rest.
int64_t LmdeployDefaultMaxBatchSize(std::string_view gpu_name);

}  // namespace tpt::memory
