// tgi_warmup_held.cc: what TGI's warm-up holds at its free-memory read.
//
// TGI's warm-up (flash_causal_lm.py warmup, v1.4.0-v3.3.6) runs one prefill
// (generate_token) and reads torch.cuda.mem_get_info with nothing given back in between
// (the only empty_cache is before the prefill; init_kv_cache's comes after the read). The
// prefill has two phases: the forward (its peak: the eager decoder layer, a MoE layer's
// buffers) and, while the warm-up asks for prefill log-probabilities (before v3.0.0, or
// with --enable-prefill-logprobs), the T x vocab logits with log_softmax's copies. The
// forward's tensors are freed before the logits are made, so the caching allocator either
// keeps their blocks cached beside the logits (both phases held at the read) or hands
// them to the logits: PyTorch's CUDACachingAllocator::malloc (c10/cuda/
// CUDACachingAllocator.cpp, torch 2.0-2.7), when cudaMalloc fails, calls
// release_available_cached_blocks, which returns false at the default max_split_size,
// then release_cached_blocks, which gives every cached segment not in use back to the
// driver, and retries. So the warm-up fails only when the larger phase does not fit, and
// when both do not, the read sees what the logits took of the room: the point then
// leaves nothing free (TGI's pool is its warm-up batch's blocks); how much the release
// left over depends on the segments' sizes, which no config sizes.
//
// TgiUnexplainedHeldBytes: what the read sees held beyond that on the logged launches
// the plan is checked on (samples/models and the fit half of holdout26/tgi, 2026-12-06),
// a rank: 1.87 GiB (2.2.0, Llama-3.1-8B, one A10G: outside PyTorch's allocator, and still
// held after start: the launch's nvidia-smi shows 19,880 MiB used with its 2.33 GiB pool,
// and a torch replay of its warm-up held 2.84 GiB of allocator at the read), 1.67 GiB (2.0.0,
// Mistral-7B, a 32k warm-up on an A100: the replay's allocator segments), 1.03 GiB (3.3.4,
// Gemma-3-27B, 2 x RTX A6000), 0.38 GiB (3.0.1, Llama-3.3-70B AWQ, 2 x RTX 3090), 0.15 GiB
// (1.4.0, Gemma-2B, L4). Nothing in TGI's source at those tags allocates it (the CUDA
// context and the kernels and libraries each image loads, the allocator's segments); it
// follows no version, card, TP, model size or logits size. The point takes the most
// measured, rounded up, so that it never promises a pool the server may not have; the
// range runs to none of it. The aside half: 1.64 GiB (2.0.3, Mistral-7B-v0.3, A10G),
// -0.22 GiB (2.4.0, Llama-3.1-70B, 2 x A100, with flashinfer's buffers and v2.4's 0.90
// wiggle room), 0.12 GiB (2.0.3, Swallow-7B, A10), inside; 14.1 GiB (1.0.0, Llama-2-70B,
// 4 x A100, flags partly unstated) outside. Per launch, with what the source explains and
// what a replay puts in PyTorch's allocator: memory/README.md, "TGI's pool on every logged
// launch" (task tgi3). Not in TGI's source, not settled: TGI initializes CUDA at import
// (import_utils.py's torch.cuda.is_available()) before torch sets CUDA_MODULE_LOADING=LAZY,
// so the host driver's default may decide whether every kernel image loads eagerly.
#include "memory/tgi_warmup_held.h"

#include <algorithm>

#include "memory/memory_model.h"

namespace tpt::memory {

double TgiUnexplainedHeldBytes() { return 1.9 * kGiB; }

TgiWarmupHeld TgiHeldAtRead(const TgiWarmupHeldInput& in) {
  TgiWarmupHeld r;
  const double forward = std::max(0.0, in.forward_bytes), logits = std::max(0.0, in.logits_bytes);
  r.least_held_bytes = std::max(forward, logits);
  r.unexplained_bytes = in.estimated ? TgiUnexplainedHeldBytes() : 0.0;
  const double room = in.room_bytes - r.unexplained_bytes;
  if (room >= forward + logits) {
    r.fits = true;
    r.held_bytes = forward + logits + r.unexplained_bytes;
    r.free_bytes = room - forward - logits;
  } else if (room >= r.least_held_bytes) {
    r.fits = true;
    r.released = true;
    r.held_bytes = in.room_bytes;
    r.free_bytes = 0;
  } else {
    r.held_bytes = forward + logits + r.unexplained_bytes;
  }
  return r;
}

std::string TgiHeldAssumption(const TgiWarmupHeld& held, double forward_bytes, double logits_bytes) {
  std::string s;
  if (held.unexplained_bytes > 0) {
    s = FormatGiB(held.unexplained_bytes) + " held at the warm-up's read beyond what TGI's source allocates (the most "
        "measured on logged launches; unknown: below)";
  }
  if (held.released) {
    s += std::string(s.empty() ? "" : "; ") + "the warm-up's two phases (forward " + FormatGiB(forward_bytes) +
         ", logits " + FormatGiB(logits_bytes) +
         ") do not fit together: when cudaMalloc fails for the logits, PyTorch's caching allocator gives the "
         "forward's cached blocks back and retries (release_cached_blocks, CUDACachingAllocator.cpp), so the warm-up "
         "passes and the point leaves nothing free at the read: TGI's pool is then its warm-up batch's blocks (what "
         "the release left over depends on the blocks' sizes: the range)";
  }
  return s;
}

std::string TgiUnexplainedUnknown() {
  return "what TGI's process holds at its free-memory read beyond what its source allocates: 0.15 to 1.87 GiB a rank "
         "on the logged launches the plan is checked on (1.87 on 2.2.0 with an A10G, outside PyTorch's allocator and "
         "still held after start; the CUDA context, the kernels and libraries the image loads, the allocator's "
         "segments), following no version, card or model size; the point takes " +
         FormatGiB(TgiUnexplainedHeldBytes()) +
         " of it so as not to promise a pool the server may not have, the range runs to none of it; pass "
         "--activation-peak from a launch of the same model, card and image for a point without it";
}

}  // namespace tpt::memory
