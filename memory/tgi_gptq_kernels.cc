// TGI's GPTQ kernels before v1.3.4 (huggingface/text-generation-inference, read at the tags):
//
// - exllama (v1) act-order buffer: utils/gptq/exllama.py create_exllama_buffers (v1.0.0-v1.3.3,
//   l.40-53) sizes temp_state at a dummy 2048 rows whenever an act-order layer loaded ("TODO:
//   this should be set to rust side max_total_tokens"), and q4_matmul.cu (l.187, l.238)
//   remaps x_height rows of the input into it with no bound check: a warm-up prefill of more
//   than 2048 tokens (the default --max-batch-prefill-tokens is 4096) writes past it.
// - group size -1 ("no group size" checkpoints, the main branch of many Llama-2 GPTQ repos):
//   weights.py get_multi_weights_row shards qzeros/scales and g_idx for exllama with
//   i // groupsize on a groupsize of -1 (v1.0.0 l.140-205); #1358 (commit d077150e, first
//   in v1.3.4) fixed both, sizing the buffer from max_prefill_tokens at the warm-up
//   (server.py Warmup) and keeping the full scales/zeros for group size -1.
// - which kernel a layer gets turns on what the plan does not see: exllama for row layers
//   only in v1.0.x (column layers go to the Triton kernel), never with act-order when
//   sharded (weights.py l.148-163), only on sm >= 8.0 from v1.1.0 (layers.py CAN_EXLLAMA),
//   and the DISABLE_EXLLAMA environment variable turns it off.
//
// Whatever fails, flash_causal_lm.py warmup (v0.9.3-v1.1.0) catches Exception and reports
// "Not enough memory to handle N prefill tokens", so the logged message does not say
// memory. The plan cannot tell these launches' outcome from the memory ledger: it still
// prices them, but does not vouch for the outcome.
#include "memory/tgi_gptq_kernels.h"

#include "memory/memory_model.h"

namespace tpt::memory {

std::optional<std::string> TgiGptqWarmupUnvouched(const std::string& version, const ModelConfig& m) {
  if (m.quant.method != "gptq") return std::nullopt;
  if (!VersionBefore(version, {1, 3, 4})) return std::nullopt;
  return "TGI before v1.3.4 runs GPTQ checkpoints on kernels whose warm-up can fail whatever the memory "
         "(exllama's act-order buffer fixed at 2048 rows against a 4096-token default prefill, group size -1 "
         "scales sharded as if grouped; fixed together in v1.3.4, #1358), and reports any warm-up exception "
         "as \"Not enough memory to handle N prefill tokens\"; which kernel a layer gets turns on the GPU, the "
         "sharding, act-order and DISABLE_EXLLAMA, which the plan does not see";
}

void SayTgiGptqWarmupUnvouched(const std::string& version, const ModelConfig& m, std::vector<std::string>* unknowns,
                               bool* outcome_certain) {
  if (auto why = TgiGptqWarmupUnvouched(version, m)) {
    unknowns->push_back(*why);
    *outcome_certain = false;
  }
}

}  // namespace tpt::memory
