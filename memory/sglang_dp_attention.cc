// SGLang's --enable-dp-attention by release: the DP size it runs and DeepSeek's vocabulary
// placement (sglang_dp_attention.h cites the wheels and lines read).
#include "memory/sglang_dp_attention.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "memory/memory_model.h"

namespace tpt::memory {
namespace {

bool DeepseekFile(const ModelConfig* m) {
  return m && (m->architecture == "DeepseekV2ForCausalLM" || m->architecture == "DeepseekV3ForCausalLM");
}

// The release as {major, minor, patch, post}; nullopt when it does not read.
std::optional<std::vector<int>> Release(std::string_view version) {
  if (version.empty() || !ParseVersion(version).ok()) return std::nullopt;
  return VersionWithPost(version);
}

bool Is049(std::string_view version) {
  auto r = Release(version);
  return r && CompareVersions(*r, {0, 4, 9}) >= 0 && CompareVersions(*r, {0, 4, 10}) < 0;
}

}  // namespace

StatusOr<SglangDpAttention> ResolveSglangDpAttention(std::string_view version, int tp, int dp,
                                                     const ModelConfig* model) {
  SglangDpAttention r;
  const std::string v = version.empty() ? std::string("the newest release") : "SGLang " + std::string(version);
  // 0.3.6 - 0.4.4 (0.4.4.post1 is the first with the flag's --dp): dp_size = tp_size.
  const auto release = Release(version);
  const bool forced = release && CompareVersions(*release, {0, 4, 4, 1}) < 0;
  if (forced) {
    r.dp = tp;
    r.dp_from_tp = true;
    r.note = v + " sets the DP size to the TP size under --enable-dp-attention (server_args.py: dp_size = tp_size" +
             (dp > 1 && dp != tp ? "; the --dp " + std::to_string(dp) + " given is overwritten" : std::string()) +
             "): DP attention " + std::to_string(tp) + ", attention TP 1";
  } else {
    if (dp <= 1) {
      return InvalidArgumentError(v + " refuses --enable-dp-attention without --dp > 1 (server_args.py asserts "
                                      "dp_size > 1 from 0.4.4.post1: 1 < dp <= tp); give --dp");
    }
    if (tp % dp != 0) {
      return InvalidArgumentError(v + " refuses --dp " + std::to_string(dp) + " with --tp " + std::to_string(tp) +
                                  " under --enable-dp-attention (server_args.py asserts tp_size % dp_size == 0)");
    }
    r.dp = dp;
  }
  if (DeepseekFile(model) && tp > 1) {
    const int attn_tp = std::max(1, tp / r.dp);
    r.embedding_whole = Is049(version) ? attn_tp == 1 : true;
    r.lm_head_whole = forced;
    if (r.embedding_whole || r.lm_head_whole) {
      if (!r.note.empty()) r.note += "; ";
      r.note += std::string("DeepSeek's ") +
                (r.embedding_whole && r.lm_head_whole ? "embedding and LM head are"
                 : r.embedding_whole                  ? "embedding is"
                                                      : "LM head is") +
                " whole on every rank under DP attention (models/deepseek_v2.py: " +
                (r.embedding_whole ? "embed_tokens enable_tp=False" : "") +
                (r.embedding_whole && r.lm_head_whole ? ", " : "") +
                (r.lm_head_whole ? "lm_head ReplicatedLinear through 0.4.4" : "") + ")";
    }
  }
  return r;
}

}  // namespace tpt::memory
