// turbomind_startup.h: what LMDeploy's TurboMind holds on a card between its weights and
// the cudaMemGetInfo its BlockManager turns into KV blocks, by version, from the model's
// shapes; plan subtracts it from the free memory after the weights.
//
//   tpt::memory::TurbomindStartupInput in;
//   in.version = "0.7.2";
//   in.hidden = 4096; in.intermediate = 14336; in.vocab = 92553;
//   in.layers = 32; in.heads = 32; in.kv_heads = 8; in.head_dim = 128;
//   auto held = tpt::memory::TurbomindHeldBeforeRead(in);   // held->total_bytes() ~ 1.74 GiB
#pragma once

#include <string>
#include <vector>

#include "base/status.h"

namespace tpt::memory {

struct TurbomindStartupInput {
  std::string version;               // lmdeploy version ("0.7.2")
  int tp = 1;
  int layers = 0, hidden = 0, intermediate = 0, heads = 0, kv_heads = 0, head_dim = 0;
  int64_t vocab = 0;
  double elem_bytes = 2;             // the checkpoint's 16-bit element (bf16/fp16)
  bool int4 = false;                 // AWQ/GPTQ 4-bit linear weights (TurboMind's weight_type int4)
  int group_size = 128;              // their quantization group
  bool moe = false;                  // routed experts: their staging and conversion are not sized (said)
};

struct TurbomindHeld {
  // LlamaV2's buffers made before the read: the GEMM workspace (LlamaLinear: Gemm::
  // kBarriersSize + kPartialsSize) and the attention layer's split-k partials
  // (UnifiedAttentionLayer: kMaxWorkspaceTokens rows).
  double engine_buffers_bytes = 0;
  // torch's caching allocator after the export staged each weight on the first GPU and no
  // empty_cache ran (v0.6.2-0.8.x): a layer's attention and MLP staging plus the embedding's.
  double export_cache_bytes = 0;
  // The weights' own CUDA memory pool, never released (v0.8.0 on): the high-water of
  // LlamaWeight::prepare's conversion, one layer's fused gate/up and its temporaries.
  double conversion_pool_bytes = 0;
  // The same pool when it reuses none of the unfused gate/up it freed: every layer's (the
  // pool's reuse across layers is not in the source; the plan's range takes it).
  double conversion_pool_upper_bytes = 0;
  std::vector<std::string> notes;    // what was counted, with its source, for `assumed:`

  double total_bytes() const { return engine_buffers_bytes + export_cache_bytes + conversion_pool_bytes; }
  double upper_bytes() const { return engine_buffers_bytes + export_cache_bytes + conversion_pool_upper_bytes; }
};

// Errors name the missing shape. Versions before 0.7.0 get the engine buffers only where
// they exist (from 0.6.0) and say the rest is not read.
StatusOr<TurbomindHeld> TurbomindHeldBeforeRead(const TurbomindStartupInput& in);

}  // namespace tpt::memory
