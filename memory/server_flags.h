// server_flags.h: each server's own spelling of the flags a remedy changes.
//
// The servers name the same knob differently (tensor parallelism is SGLang's
// --tp-size, vLLM's --tensor-parallel-size, TGI's --num-shard, trtllm-serve's
// --tp_size, LMDeploy's --tp), and some have no flag for it at all
// (trtllm-serve and LMDeploy take FP8 weights only as a quantized checkpoint).
// `plan` words its remedies with FlagsOf; `analyze` words a rule's remedy for
// the run's server with SpellForServer, so a TGI log is never told to pass a
// flag only vLLM knows. The spellings are those of memory/launch_command.cc
// (each server's launcher, cited there).
#pragma once

#include <string>

namespace tpt::memory {

// Each server's flags for what the remedies change (its memory knob and the
// range it takes, TP, the context, an 8-bit KV cache, FP8 weights, running
// without CUDA graphs): "" where it has none.
struct ServerFlags {
  std::string fraction, tp, context, kv8_flag, kv8_value, fp8_weights_flag;
  std::string eager_flag, eager_value;  // no CUDA graphs
  double max_fraction = 0.99;
};
ServerFlags FlagsOf(const std::string& framework);

// True for the five servers FlagsOf knows (sglang, vllm, tgi, trtllm, lmdeploy).
bool IsKnownServer(const std::string& framework);

// A remedy's flag and value as `framework` spells them. A flag any server
// spells for one of the knobs above (TP, context, 8-bit KV cache, FP8 weights,
// no CUDA graphs) is rewritten to this server's spelling; a memory fraction to
// this server's fraction flag without the value (the fractions measure
// different things); kNoSuchFlag when this server has no flag for that knob
// (the remedy cannot be copied there). Flags of no knob above and a flag the
// server has under that name with its own meaning are kept as they are. For a
// run of an unknown server (a bare CUDA or torch traceback), a knob's flag is
// kept only when two servers or more spell it so (--quantization,
// --kv-cache-dtype); one server's own (--enforce-eager) is kNoSuchFlag.
enum class Spelling { kKept, kRespelled, kNoSuchFlag };
Spelling SpellForServer(const std::string& framework, std::string* flag, std::string* value);

// A flag of `framework`'s own launcher that does not change its memory (where it
// listens, names, logging, keys, templates, the seed, trusting remote code), so a
// launch line pasted whole can be planned: `plan` takes them and says so. With no
// framework, a flag any of the five servers has. `takes_value`: it is followed by
// a value (`--port 8000`). The servers' bind address `--host` is not listed:
// plan's own --host names the OS (cli/cmd_plan.cc tells them apart by value).
// Flags from each launcher's argument parser: vLLM vllm/entrypoints/openai/cli_args.py
// and engine/arg_utils.py; SGLang srt/server_args.py; TGI launcher/src/main.rs;
// trtllm-serve tensorrt_llm/commands/serve.py; LMDeploy lmdeploy/cli/serve.py.
bool NoMemoryEffectFlag(const std::string& framework, const std::string& flag, bool* takes_value);

}  // namespace tpt::memory
