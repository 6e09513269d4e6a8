// vLLM's eager profiling forward: what Python's references keep alive at the MLP and at a
// tensor-parallel all-reduce.
//
// Where the forward runs eagerly (V0, which does not compile, and V1 under --enforce-eager:
// config/__init__.py 0.11 L336-347 sets CompilationLevel.NO_COMPILATION for either) a tensor
// lives while a Python name refers to it. Read in the vLLM 0.11 tree of the Yuran-7/vllm-0.11
// fork, whose history is vLLM's (git log -S dates each line below):
// - The model loop `for layer in ...: hidden_states, residual = layer(positions, hidden_states,
//   residual)` (qwen2.py, seed_oss.py L343-345, llama.py 0.4.3 L286-294) keeps naming the layer's input X while
//   the layer runs. The decoder layer rebinds its own `hidden_states` to the attention's output
//   Y, normed in place with the residual R (fused_add_rms_norm), and runs the MLP on Y. So at
//   the MLP X, R and Y are alive: the plan's 3 x T x hidden. Up to the activation that is all
//   the plan counted; at down_proj its output joins them.
// - The MLP: `gate_up, _ = self.gate_up_proj(x); x = self.act_fn(gate_up); x, _ =
//   self.down_proj(x)` (Qwen2MLP since 2024-01-23, which Qwen3 imports; seed_oss.py; gemma*.py;
//   internlm2.py; ... VllmMlpKeepsGateUp) names gate_up until it returns, so at down_proj the
//   activation, gate_up and down_proj's output are alive beside X, R, Y. Llama's MLP rebinds
//   `x` (llama.py since b2e0ad3b5, 2024-11-14), freeing gate_up after the activation.
// - From vllm#10121 (2024-11-26, first released in 0.6.5) every tensor-parallel all-reduce is
//   out of place (GroupCoordinator.all_reduce: "PyTorch custom ops do not support mutation ...
//   So we always make the all-reduce operation out-of-place"; PyNcclCommunicator.all_reduce
//   `out_tensor = torch.empty_like(in_tensor)`, pynccl.py 0.11 L157-158; the custom
//   all-reduce's eager `torch.empty_like(inp)`; cuda_communicator.py 0.11 L121-159; before it
//   the NCCL path reduced in place, communication_op.py 0.4.3): RowParallelLinear's
//   `tensor_model_parallel_all_reduce(output_parallel)` adds a T x hidden copy beside
//   down_proj's (or o_proj's) output while the caller's tensors are named.
// The plan applies this where it reads torch's allocated peak (0.6.4 on: V0 0.6.4+, V1 eager);
// before 0.6.4 V0 charges the allocator's reserve (1.2x or the replay, vllm_v0_reserved.h),
// fitted with these tensors inside it. Under torch.compile (V1 without --enforce-eager)
// Inductor frees each buffer at its last use, so none of this holds.
#pragma once

#include <string_view>

#include "memory/model_config.h"

namespace tpt::memory {

// The eager forward's flags for `m` under this vLLM (version, engine, --enforce-eager, TP).
VllmEagerForward VllmEagerForwardFor(const ModelConfig& m, std::string_view version, bool v1, bool enforce_eager,
                                     int tp);

// True for the architectures whose MLP keeps gate_up named through down_proj (vLLM 0.11's
// model files, listed in the .cc).
bool VllmMlpKeepsGateUp(std::string_view architecture);

}  // namespace tpt::memory
