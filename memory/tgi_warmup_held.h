// tgi_warmup_held.h: what TGI's warm-up holds when it reads the free memory, from the two
// phases the plan prices (the prefill's forward, then the prefill logits) and what
// PyTorch's caching allocator does with their blocks, plus what TGI's process holds that
// no source sizes (measured on logged launches). Sources in tgi_warmup_held.cc.
#ifndef TPT_MEMORY_TGI_WARMUP_HELD_H_
#define TPT_MEMORY_TGI_WARMUP_HELD_H_

#include <string>

namespace tpt::memory {

struct TgiWarmupHeldInput {
  double room_bytes = 0;     // free after the weights, the warm-up's KV blocks and fixed buffers
  double forward_bytes = 0;  // the prefill forward's peak (eager layer, MoE, a VLM's larger phase)
  double logits_bytes = 0;   // the prefill logits' tensors (0 when the warm-up asks for none)
  bool estimated = true;     // false: the peak was given (--activation-peak), nothing is added to it
  std::string version;       // TGI's version: what its image imports at start (TgiUnexplainedHeldBytes)
};

struct TgiWarmupHeld {
  bool fits = false;
  bool released = false;          // the forward's cached blocks were given back for the logits
  double held_bytes = 0;          // the point's: held at the read, the unexplained bytes included
  double free_bytes = 0;          // the point's free memory at the read (0 when released)
  double least_held_bytes = 0;    // the least the read can see held: the larger phase alone
  double unexplained_bytes = 0;   // added to the point (TgiUnexplainedHeldBytes when estimated)
};

// What TGI's process holds at the read beyond what its source allocates, the most measured
// on the logged launches the plan is checked on, by what the version imports at start
// (tgi_warmup_held.cc): more at v2.2-v2.3, whose images install fbgemm_gpu's gen_ai kernels
// and import them (v2.2) or their package (v2.3's find_spec) at start.
//
//   TgiUnexplainedHeldBytes("2.2.0");  // 1.9 GiB
//   TgiUnexplainedHeldBytes("2.0.3");  // 1.05 GiB
double TgiUnexplainedHeldBytes(const std::string& version);

// Whether the version's server imports fbgemm_gpu at start (v2.2.x: gen_ai itself; v2.3.x: its
// package, through find_spec).
bool TgiImportsFbgemmAtStart(const std::string& version);

TgiWarmupHeld TgiHeldAtRead(const TgiWarmupHeldInput& in);

// What the plan says of it: the unexplained bytes the point holds and, when the phases did not
// fit together, the allocator's give-back (an assumption); what no source sizes (an unknown).
std::string TgiHeldAssumption(const TgiWarmupHeld& held, double forward_bytes, double logits_bytes);
std::string TgiUnexplainedUnknown(const std::string& version);

}  // namespace tpt::memory

#endif  // TPT_MEMORY_TGI_WARMUP_HELD_H_
