// vLLM's KV layout for DeepSeek-V2/V3 before MLA (vLLM < 0.7.1).
//
// Before vllm#12601 (MLA, first released in 0.7.1) vLLM ran DeepSeek-V2/V3 attention as
// plain multi-head attention: DeepseekV2Attention / DeepseekV3Attention build
// `Attention(self.num_local_heads, 256, self.scaling, num_kv_heads=self.num_local_heads)`
// ("TODO, support head_size 192"), padding q/k (192) and v (128) to 256 per head. The paged
// cache then holds K and V of every local head at 256 elements: 2 x heads/tp x 256 per
// layer and token, not the 576-element compressed latent. Read in the wheels:
// vllm/model_executor/models/deepseek_v2.py 0.5.1:277-283, 0.5.2:249-255,
// 0.6.6.post1:265-272, deepseek_v3.py 0.6.6.post1:274-276; 0.7.1's deepseek_v2.py builds
// DeepseekV2MLAAttention (use_mla=True, :428-436) when ModelConfig.use_mla (config.py
// 0.7.1:972-1000), and its non-MLA fallback uses head size qk_head_dim (:265-271).
#pragma once

#include <string>
#include <string_view>

#include "memory/memory_model.h"
#include "memory/model_config.h"

namespace tpt::memory {

// True when `version` of vLLM keeps an MLA model's KV as padded MHA (DeepSeek-V2/V3
// architectures before 0.7.1); then `*dims` is rewritten to that layout and `*why` says so.
bool VllmDeepseekKvAsMha(const ModelConfig& m, std::string_view version, KvDims* dims, std::string* why);

}  // namespace tpt::memory
