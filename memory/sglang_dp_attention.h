// sglang_dp_attention.h: what SGLang's --enable-dp-attention does to the DP size and to the
// DeepSeek models' vocabulary matrices, by release.
//
// DP size (python/sglang/srt/server_args.py, __post_init__, read in the released wheels):
// - 0.3.6 - 0.4.4: `if self.enable_dp_attention: self.dp_size = self.tp_size` (0.3.6:189-190,
//   0.4.0:201-202, 0.4.1.post4:239-240, 0.4.2:247-248, 0.4.3.post4:262-263, 0.4.4:264-265):
//   every rank is its own attention DP group (attention TP 1), whatever --dp says.
// - 0.4.4.post1 on (PR #4390, "Now you need to explicitly specify --dp"): --dp is the launch's,
//   `assert self.dp_size > 1, "Please set a dp-size > 1..."` and tp % dp == 0 (0.4.4.post1:
//   264-269, 0.4.5:298-302, 0.4.7:350-353; attention TP = tp / dp): without --dp the server
//   refuses to start.
//
// The vocabulary of DeepSeek-V2/V3 (models/deepseek_v2.py, DeepseekV2Model / ForCausalLM) under
// DP attention:
// - embed_tokens: VocabParallelEmbedding(..., enable_tp=not enable_dp_attention), whole on
//   every rank (0.3.6:698, 0.4.0:692, 0.4.1.post4:794, 0.4.2:795, 0.4.3.post4:1013,
//   0.4.4:1015, 0.4.4.post1:1001, 0.4.5:1275, 0.4.6:1377, 0.4.7:1592, 0.4.8:1662,
//   0.4.10:1978, 0.5.1:1981, 0.5.2:2177, 0.5.3:2595, 0.5.5:2817); 0.4.9 alone builds it with
//   use_attn_tp_group=True (0.4.9:1933), split over the attention-TP group: whole when that
//   group is one rank (dp = tp).
// - lm_head: ReplicatedLinear(hidden, vocab), whole on every rank, through 0.4.4 (0.3.6:744,
//   0.4.0:736, 0.4.1.post4:838, 0.4.2:839, 0.4.3.post4:1061, 0.4.4:1063); ParallelLMHead
//   split by TP from 0.4.4.post1 (0.4.4.post1:1063, 0.4.6:1446, 0.5.2:2378).
// Other architectures' files are not read here (their vocabulary stays split by TP).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "memory/model_config.h"

namespace tpt::memory {

struct SglangDpAttention {
  int dp = 1;                    // the DP-attention size the server runs
  bool dp_from_tp = false;       // the release sets it to the TP size (the flag's value is not used)
  bool embedding_whole = false;  // DeepSeek's embed_tokens whole on every rank
  bool lm_head_whole = false;    // DeepSeek's lm_head whole on every rank
  std::string note;              // what the release does, for the plan's assumptions
};

// For a launch with --enable-dp-attention: `dp` as the launch gives it (1 when --dp is not
// passed). Errors where the release refuses the launch (0.4.4.post1 on without --dp > 1, or a
// TP size the DP size does not divide). Empty or unparsable version: the newest rule.
StatusOr<SglangDpAttention> ResolveSglangDpAttention(std::string_view version, int tp, int dp,
                                                     const ModelConfig* model);

}  // namespace tpt::memory
