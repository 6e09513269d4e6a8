// startup_servers.h: the start-up replay of TGI, LMDeploy and TensorRT-LLM (and
// the warm-up OOM of any server whose OOM line gives its ask): a plan's figures
// from what these logs print, and their KV formulas (memory/tgi_model.cc,
// lmdeploy_model.cc, trtllm_model.cc) on the replay's measured numbers.
//
// Where each fails, and what the replay allocates there:
//   TGI        warmup     the warm-up prefill's ask ("Tried to allocate") on the OOM
//                         line's free memory; then its KV blocks on what is left
//   LMDeploy   warmup     TurboMind sizes its cache (ratio x free after the weights),
//                         then its run-time buffers do not fit in what it left
//   TRT-LLM    kv_pool    the final cache (fraction x the estimate's available) is
//                         created on the free memory the component report names
//
//   CompleteStartupFigures(&plan);              // inside CompleteFigures
//   KvFigures k = ComputeStartupKv(plan, free_now);
#pragma once

#include <string>

#include "repro/repro_plan.h"
#include "repro/runner.h"

namespace tpt::repro {

bool IsStartupServer(const std::string& framework);  // tgi, lmdeploy, trtllm
// The formula line of the dry run ("TGI 3.x: blocks = (free - (1 - 1.00 x 0.90) x total) // block + ...").
std::string StartupFormula(const Plan& p);
// Once the card is known (CompleteFigures), before the free memory at init and
// the weights are assumed: the failing step, the server's defaults, the warm-up
// bytes, and weights that bring the free memory to the log's figure at the
// failing point. Each figure's source lands in p->sources.
void CompleteStartupFigures(Plan* p);
// Last (once the weights are known or assumed): a warm-up whose ask the log does
// not print gets the least that fails, asked for by --warmup-bytes.
void AssumeWarmupAsk(Plan* p);
// The server's KV formula on the measured free memory (after the weights; TGI:
// after the warm-up, its peak still held). pool_bytes is what the replay allocates.
KvFigures ComputeStartupKv(const Plan& p, double free_now);

}  // namespace tpt::repro
