// vllm_v0_reserved.h: what PyTorch's caching allocator keeps reserved after vLLM V0's
// profiling run, for the versions that read the peak as init_free - free (before 0.6.4).
//
// V0 before 0.6.4 (worker.py determine_num_available_blocks, 0.4.3 and 0.5.1 read:
// `torch.cuda.empty_cache()`, `profile_run()`, then `peak_memory = self.init_gpu_memory -
// free_gpu_memory` from cudaMemGetInfo, nothing emptied in between) charges the segments
// the allocator reserved during the forward, not the tensors alive at its peak. Those
// segments outgrow the allocated peak when the forward's tensors change size from one
// layer to the next: a freed block is reused for a later tensor only where one fits,
// otherwise a new segment is cudaMalloc'ed beside it.
//
// The replay: PyTorch's CUDACachingAllocator large pool (c10/cuda/CUDACachingAllocator.cpp,
// torch 2.1-2.4, the versions vLLM 0.3-0.6 pin): every request above 1 MiB takes the
// smallest cached free block that holds it (get_free_block: lower_bound on the pool's
// size order), split when more than 1 MiB (kSmallSize) is left (should_split); none ->
// a new segment of the request rounded up to 2 MiB (kRoundLarge); a freed block merges
// with free neighbours of its own segment. The requests are the profiling forward's
// tensors in the order the model code makes and drops them (the .cc says which code).
#pragma once

#include <cstdint>
#include <string_view>

#include "memory/model_config.h"

namespace tpt::memory {

struct VllmV0Reserve {
  double allocated_peak = 0;  // bytes alive at once in the replayed forward
  double reserved_peak = 0;   // segments the allocator holds at its largest
  bool modelled = false;      // the model's layers have a replayed sequence
};

// The profiling forward of `tokens` tokens at TP `tp` (vLLM `version`'s layers) replayed
// through the allocator. Modelled for decoder-only models with Llama-style attention and
// MLPs, DeepSeek-V2/V3 before MLA (0.7.1: q/k/v padded to 256, deepseek_v2.py), and their
// fused-MoE layers (the caches over the version's chunk, VllmFusedMoeChunkTokens).
VllmV0Reserve VllmV0ReservedPeak(const ModelConfig& m, int tp, int64_t tokens, std::string_view version);

// The tokens fused_experts runs its caches over at once, by version (fused_moe.py): all of
// them before 0.5.1; 65,536 from vllm#6029 (2024-07-02, envs.py VLLM_FUSED_MOE_CHUNK_SIZE
// "65536", 0.5.1 read at abad574) to vllm#7995 (2024-08-30, "32768"; 0.6.0 on).
int64_t VllmFusedMoeChunkTokens(std::string_view version, int64_t tokens);

}  // namespace tpt::memory
