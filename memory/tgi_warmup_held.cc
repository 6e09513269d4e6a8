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
// the plan is checked on (samples/models, holdout26/tgi, holdout23; per launch, with what
// the source explains and what a replay puts in PyTorch's allocator: memory/README.md, "TGI's
// pool on every logged launch"), a rank, split by what the version's server imports at start:
// - v2.2.x imports fbgemm_gpu.experimental.gen_ai at module import (layers/fp8.py v2.2.0, l.17-25,
//   imported by flash_llama_modeling.py l.52 and layers/marlin.py; the image builds it from
//   server/Makefile-fbgemm for sm_80 and sm_90a: CUTLASS FP8 GEMMs, a large kernel library).
//   v2.3.x still installs it and looks it up at import (importlib.util.find_spec(
//   "fbgemm_gpu.experimental.gen_ai"), layers/fp8.py v2.3.0 l.22-31), which imports the parent
//   packages: fbgemm_gpu/__init__.py load_library's fbgemm_gpu_py.so when the build has it
//   (pytorch/FBGEMM, fbgemm_gpu/__init__.py of that era); no 2.3.x launch was read, so it takes
//   v2.2's figure. v2.1.x does not install it (server/Makefile install-cuda) and v2.4.0 on drop
//   it. The one 2.2.0 launch (Llama-3.1-8B, one A10G) held 1.87 GiB outside PyTorch's
//   allocator, still held after start (its nvidia-smi: 19,880 MiB used with a 2.33 GiB pool; a
//   torch replay of its warm-up held 2.84 GiB of allocator at the read). The point takes 1.9.
//   How much of it the library's kernel images are depends on the module-loading mode (eager
//   or lazy: TGI initializes CUDA at import through import_utils.py's
//   torch.cuda.is_available(), before torch sets CUDA_MODULE_LOADING=LAZY); not measured on a
//   GPU here (the library is not on the device machine).
// - every other tag: 1.03 GiB (3.3.4, Gemma-3-27B, 2 x RTX A6000) is the most measured, then
//   0.50 (2.0.3, Mistral-7B-v0.3 on an A10G with the JumpStart container's 8191/8191/8192
//   limits), 0.38 (3.0.1, Llama-3.3-70B AWQ, 2 x RTX 3090), 0.15 (1.4.0, Gemma-2B, L4), 0.12
//   (2.0.3, Swallow-7B, A10), -0.22 (2.4.0, Llama-3.1-70B, 2 x A100), -0.41 (2.0.4,
//   Mixtral-8x22B, 4 x H100); 2.0.0's 1.67 GiB (Mistral-7B, a 32k warm-up on an A100) is 1.58
//   GiB of PyTorch's allocator segments in a replay of its warm-up, 0.08 beyond. The point
//   takes 1.05 GiB, so as not to promise a pool the server may not have on the launches read;
//   1.0.0's 14.1 GiB (Llama-2-70B, 4 x A100, flags partly unstated) is outside both.
// The range runs from the most measured on any launch (1.9 GiB: a long warm-up's allocator
// segments reach what v2.2's import holds) to none of it.
#include "memory/tgi_warmup_held.h"

#include <algorithm>

#include "memory/memory_model.h"

namespace tpt::memory {

bool TgiImportsFbgemmAtStart(const std::string& version) {
  return !version.empty() && !VersionBefore(version, {2, 2, 0}) && VersionBefore(version, {2, 4, 0});
}

double TgiUnexplainedHeldBytes(const std::string& version) {
  // An unknown version may be v2.2-v2.3: the most measured of all.
  return (version.empty() || TgiImportsFbgemmAtStart(version) ? 1.9 : 1.05) * kGiB;
}

TgiWarmupHeld TgiHeldAtRead(const TgiWarmupHeldInput& in) {
  TgiWarmupHeld r;
  const double forward = std::max(0.0, in.forward_bytes), logits = std::max(0.0, in.logits_bytes);
  r.least_held_bytes = std::max(forward, logits);
  r.unexplained_bytes = in.estimated ? TgiUnexplainedHeldBytes(in.version) : 0.0;
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
        "measured on logged launches of a version that imports what this one does at start; unknown: below)";
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

std::string TgiUnexplainedUnknown(const std::string& version) {
  return "what TGI's process holds at its free-memory read beyond what its source allocates: -0.41 to 1.87 GiB a "
         "rank on the logged launches the plan is checked on (the CUDA context, the kernels and libraries the image "
         "loads, the allocator's segments): 1.87 on 2.2.0, whose server imports fbgemm_gpu's gen_ai kernels at start "
         "(layers/fp8.py; outside PyTorch's allocator, still held after start; v2.3.x imports the package too), "
         "1.66 on 2.0.0 with a 32k-token warm-up (1.58 of it PyTorch's allocator segments in a replay), at most 1.03 "
         "on the others; the point takes " +
         FormatGiB(TgiUnexplainedHeldBytes(version)) + " for " +
         (version.empty() ? std::string("an unknown version")
                          : TgiImportsFbgemmAtStart(version) ? std::string("v2.2-v2.3") : std::string("this version")) +
         ", the range runs from " + FormatGiB(TgiUnexplainedHeldBytes("")) +
         " to none of it; pass --activation-peak from a launch of the same model, card and image for a point without "
         "it";
}

}  // namespace tpt::memory
