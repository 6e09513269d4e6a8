// launch_plan_card_mod.cc: a GeForce card whose memory was enlarged after sale (a board
// modification: an RTX 2080 Ti with 22 GB, an RTX 4090 with 48 GB), named by the catalog's card
// with a --gpu-mem well above its total. The plan takes --gpu-mem at its word; no server's
// source sizes what such a card delivers, and the one launch on record that the arithmetic
// cannot explain ran on one (issue #31: never confidently wrong):
//
//   LMDeploy#1298 (holdout42): InternLM2-7B on a 22 GB RTX 2080 Ti, TurboMind 0.2.5, tp 1, out
//   of memory at --cache-max-entry-count 0.2 "and even 0.01". TurboMind 0.2.5 sizes its cache as
//   that ratio of the free memory after the weights (src/turbomind/models/llama/BlockManager.cc
//   v0.2.5 l.34-35 and GetBlockCount's cudaMemGetInfo, l.16-18), and what it allocates at start
//   beside it is small (LlamaBatch.cc v0.2.5 AllocateBuffer l.714-796: max_context_token_num x
//   hidden buffers, batch x vocab logits; the attention and FFN buffers are sized per forward by
//   the requests, unified_attention_layer.cc l.38-95); the export to TurboMind copies one tensor
//   at a time through torch (deploy/target_model/base.py v0.2.5 l.187-225). At 0.01 that leaves
//   about 7 GiB of the card's 22 unused, so the failure is not in the memory the source sizes.
//
// So a start that needs the memory the modification added (the same launch on the card's own
// total fails) is not vouched for: `unknown:` and "fits, not certain". A start that fits the
// card's own total rests on nothing the modification added and stays certain; a failure stays
// certain too (less memory than the card claims fails the same launch). Data-center cards
// (peer access over PCIe) are not modified this way; a --gpu-mem that corrects their total (an
// 80 GB A100 named "A100") is not a modification, so only GeForce cards are read this way.
#include "memory/launch_plan_internal.h"
#include "memory/numeric.h"

namespace tpt::memory::internal {

// More than this over the catalog's total is another memory fit to the board, not a driver's
// or host's different figure for the same card (those differ by a few percent: --gpu-mem's
// nvidia-smi figure, WDDM's whole card).
inline constexpr double kModifiedCardRatio = 1.25;

void SayModifiedCardUnvouched(const PlanInput& in, Plan& p) {
  if (!p.fits || !p.outcome_certain) return;
  const std::string card = in.gpu_name.substr(0, in.gpu_name.find(" ["));
  if (card.empty()) return;
  auto g = FindGpu(card);
  if (!g.ok() || g->pcie_peer_access || g->unified_memory || !(g->memory_bytes > 0)) return;
  if (!(in.total_bytes > kModifiedCardRatio * g->memory_bytes)) return;
  PlanInput own = in;  // the same launch on the card as sold
  own.total_bytes = g->memory_bytes;
  own.total_bytes_low = 0;
  if (own.free_at_init_bytes) *own.free_at_init_bytes -= in.total_bytes - g->memory_bytes;
  if (auto r = Run(own); r.ok() && r->fits) return;
  p.outcome_certain = false;
  p.unknowns.push_back(
      "a modified card: " + FormatGiB(in.total_bytes) + " (--gpu-mem) on a " + g->name + ", whose total is " +
      FormatGiB(g->memory_bytes) + ": the plan takes the larger memory at its word, but what a card enlarged after "
      "sale delivers to the server is not sized by any server's source (LMDeploy#1298: TurboMind 0.2.5 on a 22 GB "
      "RTX 2080 Ti ran out of memory at every --cache-max-entry-count down to 0.01, with about 7 GiB its source "
      "leaves unused); the same launch on the card's own total does not fit, so the start rests on the added memory");
}

}  // namespace tpt::memory::internal
