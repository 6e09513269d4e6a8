// server_flags.cc: see server_flags.h.
#include "memory/server_flags.h"

#include <array>
#include <string_view>

namespace tpt::memory {

namespace {
constexpr std::array<std::string_view, 5> kServers = {"sglang", "vllm", "tgi", "trtllm", "lmdeploy"};
}  // namespace

ServerFlags FlagsOf(const std::string& framework) {
  ServerFlags f;
  if (framework == "sglang") {
    f = {"--mem-fraction-static", "--tp", "--context-length", "--kv-cache-dtype", "fp8_e4m3", "--quantization",
         "--disable-cuda-graph", ""};
  } else if (framework == "tgi") {
    // text-generation-launcher (launch_command.h): --cuda-memory-fraction takes up to 1.0;
    // --cuda-graphs lists the batch sizes to capture, "0" captures none.
    f = {"--cuda-memory-fraction", "--num-shard", "--max-total-tokens", "--kv-cache-dtype", "fp8_e4m3", "--quantize",
         "--cuda-graphs", "0"};
    f.max_fraction = 1.0;
  } else if (framework == "trtllm") {
    // trtllm-serve: the KV dtype only through --extra_llm_api_options; FP8 weights need a
    // quantized checkpoint (ModelOpt), no flag; CUDA graphs are an --extra_llm_api_options
    // setting too (off unless asked for).
    f = {"--kv_cache_free_gpu_memory_fraction", "--tp_size", "--max_seq_len", "--extra_llm_api_options",
         "kv_cache_fp8.yaml", "", "", ""};
  } else if (framework == "lmdeploy") {
    // lmdeploy serve api_server: --quant-policy 8 is its int8 KV cache; no FP8 weight flag;
    // --eager-mode (PyTorch engine) runs without CUDA graphs.
    f = {"--cache-max-entry-count", "--tp", "--session-len", "--quant-policy", "8", "", "--eager-mode", ""};
  } else {
    f = {"--gpu-memory-utilization", "--tensor-parallel-size", "--max-model-len", "--kv-cache-dtype", "fp8_e4m3",
         "--quantization", "--enforce-eager", ""};
  }
  return f;
}

namespace {
struct QuietFlag {
  const char* framework;  // "" any of the five
  const char* flag;
  bool takes_value;
};
constexpr QuietFlag kQuietFlags[] = {
    // vLLM (serve / api_server)
    {"vllm", "--port", true}, {"vllm", "--served-model-name", true}, {"vllm", "--trust-remote-code", false},
    {"vllm", "--api-key", true}, {"vllm", "--disable-log-requests", false}, {"vllm", "--disable-log-stats", false},
    {"vllm", "--seed", true}, {"vllm", "--chat-template", true}, {"vllm", "--download-dir", true},
    {"vllm", "--uvicorn-log-level", true}, {"vllm", "--enable-auto-tool-choice", false},
    {"vllm", "--tool-call-parser", true}, {"vllm", "--reasoning-parser", true}, {"vllm", "--revision", true},
    {"vllm", "--response-role", true}, {"vllm", "--ssl-keyfile", true}, {"vllm", "--ssl-certfile", true},
    {"vllm", "--allowed-origins", true}, {"vllm", "--tokenizer", true},
    // SGLang (python -m sglang.launch_server)
    {"sglang", "--port", true}, {"sglang", "--served-model-name", true}, {"sglang", "--trust-remote-code", false},
    {"sglang", "--api-key", true}, {"sglang", "--random-seed", true}, {"sglang", "--log-level", true},
    {"sglang", "--chat-template", true}, {"sglang", "--tokenizer-path", true}, {"sglang", "--download-dir", true},
    {"sglang", "--tool-call-parser", true}, {"sglang", "--reasoning-parser", true}, {"sglang", "--revision", true},
    {"sglang", "--log-requests", false}, {"sglang", "--enable-metrics", false},
    // TGI (text-generation-launcher)
    {"tgi", "--port", true}, {"tgi", "--hostname", true}, {"tgi", "--revision", true},
    {"tgi", "--trust-remote-code", false}, {"tgi", "--json-output", false}, {"tgi", "--otlp-endpoint", true},
    // trtllm-serve
    {"trtllm", "--port", true}, {"trtllm", "--log_level", true}, {"trtllm", "--trust_remote_code", false},
    {"trtllm", "--tokenizer", true},
    // LMDeploy (lmdeploy serve api_server)
    {"lmdeploy", "--server-port", true}, {"lmdeploy", "--server-name", true}, {"lmdeploy", "--log-level", true},
    {"lmdeploy", "--model-name", true}, {"lmdeploy", "--api-keys", true},
};
}  // namespace

bool NoMemoryEffectFlag(const std::string& framework, const std::string& flag, bool* takes_value) {
  for (const QuietFlag& q : kQuietFlags) {
    if (flag != q.flag || (!framework.empty() && framework != q.framework)) continue;
    if (takes_value) *takes_value = q.takes_value;
    return true;
  }
  return false;
}

bool IsKnownServer(const std::string& framework) {
  for (std::string_view s : kServers)
    if (framework == s) return true;
  return false;
}

Spelling SpellForServer(const std::string& framework, std::string* flag, std::string* value) {
  // A flag this server has under the same name with a meaning of its own: SGLang's
  // --max-total-tokens caps its KV pool, TGI's is a request's context.
  if (framework == "sglang" && *flag == "--max-total-tokens") return Spelling::kKept;
  // Which knob `flag` names: any server's spelling of it, and the aliases the servers
  // also take (SGLang --tp-size, vLLM -tp).
  enum Knob { kFraction, kTp, kContext, kKv8, kFp8, kEager, kNone } knob = kNone;
  auto is = [&](std::string_view f) { return !f.empty() && *flag == f; };
  if (is("--tp-size") || is("-tp")) knob = kTp;
  for (std::string_view s : kServers) {
    if (knob != kNone) break;
    const ServerFlags o = FlagsOf(std::string(s));
    if (is(o.fraction)) knob = kFraction;
    else if (is(o.tp)) knob = kTp;
    else if (is(o.context)) knob = kContext;
    else if (is(o.kv8_flag) && s != "trtllm") knob = kKv8;  // trtllm's is its options file
    else if (is(o.fp8_weights_flag)) knob = kFp8;
    else if (is(o.eager_flag)) knob = kEager;
  }
  if (knob == kNone) return Spelling::kKept;
  // A run whose server the log does not name (a bare CUDA or torch traceback, a
  // condensed one): a flag only one server spells so is that server's, maybe not
  // the one that ran (vLLM's --enforce-eager told to a TensorRT-LLM run); one that
  // several servers spell alike (--quantization: vLLM's and SGLang's) is kept.
  if (!IsKnownServer(framework)) {
    int spelled = 0;
    for (std::string_view s : kServers) {
      const ServerFlags o = FlagsOf(std::string(s));
      const std::string* theirs[] = {&o.fraction, &o.tp, &o.context, &o.kv8_flag, &o.fp8_weights_flag, &o.eager_flag};
      std::string_view want = *theirs[knob];
      if (!want.empty() && *flag == want) ++spelled;
    }
    return spelled >= 2 ? Spelling::kKept : Spelling::kNoSuchFlag;
  }
  const ServerFlags mine = FlagsOf(framework);
  std::string want, want_value = *value;
  switch (knob) {
    case kFraction:
      // Each server's memory knob measures a different thing (SGLang: of the card for
      // weights + pool; vLLM: of the card for everything; TRT-LLM: of what is free after the
      // weights; LMDeploy: of that, for the cache): the flag, never the value.
      want = mine.fraction;
      want_value.clear();
      break;
    case kTp: want = mine.tp; break;
    case kContext: want = mine.context; break;
    case kKv8: {
      if (framework == "trtllm") return Spelling::kNoSuchFlag;  // an options file, not a flag value
      // Only an 8-bit cache translates ('auto' is LMDeploy's --quant-policy 0, not 8). SGLang
      // takes fp8_e4m3/fp8_e5m2, not vLLM's bare 'fp8'.
      const bool fp8 = value->empty() || value->rfind("fp8", 0) == 0;
      if (!fp8) return mine.kv8_flag == *flag ? Spelling::kKept : Spelling::kNoSuchFlag;
      want = mine.kv8_flag;
      if (!value->empty() && (want != *flag || (framework == "sglang" && *value == "fp8"))) want_value = mine.kv8_value;
      break;
    }
    case kFp8: want = mine.fp8_weights_flag; break;
    case kEager:
      want = mine.eager_flag;
      want_value = mine.eager_value;
      break;
    case kNone: break;
  }
  if (want.empty()) return Spelling::kNoSuchFlag;
  if (want == *flag && want_value == *value) return Spelling::kKept;
  if (want == *flag && knob != kKv8) return Spelling::kKept;  // already this server's flag: its value is the rule's
  if (knob == kTp && framework == "sglang" && *flag == "--tp-size") return Spelling::kKept;  // SGLang takes both
  *flag = want;
  *value = want_value;
  return Spelling::kRespelled;
}

}  // namespace tpt::memory
