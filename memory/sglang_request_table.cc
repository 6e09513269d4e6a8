// sglang_request_table.cc: SGLang's ReqToTokenPool table by version.
//
// Read in SGLang's released wheels (python/sglang/srt, pip download sglang==V) 0.1.18,
// 0.1.26, 0.2.0, 0.2.5, 0.2.9, 0.2.13, 0.2.15, 0.3.0, 0.3.1, 0.3.2, 0.3.4, 0.3.6, 0.4.0,
// 0.4.3.post4, 0.4.5.post3, 0.4.6, 0.4.6.post5, 0.4.7, 0.4.8, 0.4.9, 0.4.10, 0.5.1, 0.5.4,
// 0.5.6, 0.5.9, 0.5.10, 0.5.11, 0.5.12, 0.5.15, 0.5.18 and 0.5.23. In every one the table is
// `torch.zeros((size, max_context_len), dtype=torch.int32)` on the rank's GPU
// (mem_cache/memory_pool.py ReqToTokenPool.__init__; 0.1.x/0.2.x memory_pool.py,
// torch.empty), created in init_memory_pool (0.5.9: model_runner_kv_cache_mixin.py; 0.5.10 on
// _init_pools; 0.5.18 on mem_cache/kv_cache_configurator.py) after profile_max_num_token /
// the pool configurator sized the KV pool and right before the KV pool itself. No version
// counts it in the pool's budget: it is paid from the (1 - mem_fraction_static) x
// free_at_init slice, before the attention backend and the CUDA graphs take theirs.
//
//   <= 0.1.18: size = int(max_total_num_tokens / context_len x 256), columns context_len + 8
//     (managers/controller/model_runner.py). 0.1.19-0.1.25 not read: taken as 0.1.26.
//   0.1.26-0.2.5: size = max(int(tokens / context_len x 512), 2048), columns + 8; the
//     request flag does not size it. 0.2.6-0.2.8 not read: taken as 0.2.5.
//   0.2.9-0.3.0: max_num_reqs = --max-running-requests, else
//     min(max(int(tokens / context_len x 512), 2048), 5120); size = max_num_reqs, + 8.
//   0.3.1: the same with the cap 4096.
//   0.3.2-0.4.6.post5: size = max_num_reqs + 1, columns context_len + 4 (cap 4096).
//   0.4.7-0.5.9: size = max_num_reqs (the + 1 dropped), + 4 (+ speculative_num_draft_tokens
//     from 0.5.1, not modelled); a mamba hybrid's at most max_mamba_cache_size // (3 with the
//     radix cache, 1 without) from 0.5.4.
//   0.5.10 on: _resolve_max_num_reqs on the token capacity after --max-total-tokens:
//     estimated = max(min(int(tokens / context_len x 512), 4096), 2048); the flag //
//     dp-attention size, at most estimated (0.5.10-0.5.14) or tokens // 2 (0.5.15 on),
//     else min(estimated, tokens // 2). The table gets size + 1 rows from 0.5.11
//     (ReqToTokenPool allocates size + 1; 0.5.12 on `_alloc_size = size + 1`).
//
// Context length: model_config.context_len is --context-length or get_context_length(the
// text config) in every version read; none caps a Llama-4's 10,485,760 positions (0.5.23's
// only default cap is EmbeddingGemma2Model's 8192).
//
// Not a second table of this shape: the attention backends' CUDA-graph buffers are sized by
// cuda_graph_max_bs, not by the request slots (0.4.5.post3 flashinfer_backend.py
// cuda_graph_kv_indices max_bs x context_len; flashattention_backend.py page_table and
// page_table_draft_decode, max_bs x context_len each; 0.4.6 on also the chunked-attention
// local_block_table), allocated in init_cuda_graphs after the pools, from the same slice;
// the plan does not price them (--disable-cuda-graph has no plan flag).
#include "memory/sglang_request_table.h"

#include <algorithm>
#include <cstdio>
#include <vector>

#include "memory/memory_model.h"

namespace tpt::memory {
namespace {

bool Before(const std::vector<int>& v, std::vector<int> bound) {
  bound.resize(4, 0);
  return CompareVersions(v, bound) < 0;
}

std::string Num(int64_t n) {
  std::string s = std::to_string(n), out;
  const int lead = static_cast<int>(s.size()) % 3;
  for (size_t i = 0; i < s.size(); ++i) {
    if (i > 0 && (static_cast<int>(i) - lead) % 3 == 0 && s[0] != '-') out += ',';
    out += s[i];
  }
  return out;
}

// int(tokens / context_len * k): Python's float division, truncated.
int64_t PerContext(int64_t tokens, int64_t context_len, double k) {
  return static_cast<int64_t>(static_cast<double>(tokens) / static_cast<double>(context_len) * k);
}

}  // namespace

SglangRequestTable SglangRequestTableOf(const SglangRequestTableInput& in) {
  SglangRequestTable t;
  if (in.context_len <= 0) return t;
  const std::vector<int> v = VersionWithPost(in.version);
  const int64_t ctx = in.context_len;
  const int64_t T = std::max<int64_t>(Before(v, {0, 5, 10}) ? in.profiled_tokens : in.capacity_tokens, 0);
  const int dp = std::max(in.dp_attention_size, 1);
  const std::optional<int64_t> flag =
      in.max_running_requests && *in.max_running_requests > 0 ? in.max_running_requests : std::nullopt;
  const std::string est = "int(" + Num(T) + " / " + Num(ctx) + " x 512)";
  std::string how;
  int extra_row = 0;
  if (Before(v, {0, 1, 19})) {
    t.requests = PerContext(T, ctx, 256);
    t.columns = ctx + 8;
    how = "int(" + Num(T) + " / " + Num(ctx) + " x 256) = " + Num(t.requests) + " rows";
  } else if (Before(v, {0, 2, 9})) {
    t.requests = std::max<int64_t>(PerContext(T, ctx, 512), 2048);
    t.columns = ctx + 8;
    how = "max(" + est + ", 2048) = " + Num(t.requests) + " rows";
  } else if (Before(v, {0, 5, 10})) {
    const int64_t cap = Before(v, {0, 3, 1}) ? 5120 : 4096;
    t.requests = flag ? *flag : std::min<int64_t>(std::max<int64_t>(PerContext(T, ctx, 512), 2048), cap);
    extra_row = !Before(v, {0, 3, 2}) && Before(v, {0, 4, 7}) ? 1 : 0;
    t.columns = ctx + (Before(v, {0, 3, 2}) ? 8 : 4);
    how = "max_num_reqs = " + (flag ? "--max-running-requests " + Num(*flag)
                                    : "min(max(" + est + ", 2048), " + std::to_string(cap) + ") = " + Num(t.requests));
  } else {
    const int64_t estimated = std::max<int64_t>(std::min<int64_t>(PerContext(T, ctx, 512), 4096), 2048);
    const bool half = !Before(v, {0, 5, 15});
    if (flag) {
      const int64_t per = std::max<int64_t>(*flag / dp, 1);
      t.requests = std::min(per, half ? T / 2 : estimated);
      how = "max_num_reqs = min(--max-running-requests " + Num(*flag) + (dp > 1 ? " // " + std::to_string(dp) : "") +
            ", " + (half ? "tokens // 2" : "the estimate " + Num(estimated)) + ") = " + Num(t.requests);
    } else {
      t.requests = std::min(estimated, T / 2);
      how = "max_num_reqs = min(max(min(" + est + ", 4096), 2048), " + Num(T) + " // 2) = " + Num(t.requests);
    }
    extra_row = Before(v, {0, 5, 11}) ? 0 : 1;
    t.columns = ctx + 4;
  }
  if (in.mamba_states > 0 && !Before(v, {0, 5, 4})) {
    const int64_t ratio = in.radix_cache_off ? 1 : 3;
    if (in.mamba_states / ratio < t.requests) {
      t.requests = std::max<int64_t>(in.mamba_states / ratio, 1);
      how += ", at most the mamba states " + Num(in.mamba_states) + " // " + std::to_string(ratio) + " = " +
             Num(t.requests);
    }
  }
  t.rows = t.requests + extra_row;
  t.bytes = static_cast<double>(t.rows) * static_cast<double>(t.columns) * 4.0;
  t.rule = "SGLang " + in.version + "'s request table (ReqToTokenPool): " + Num(t.rows) + " x " + Num(t.columns) +
           " int32 = " + (extra_row ? "(max_num_reqs + 1)" : Before(v, {0, 2, 9}) ? "size" : "max_num_reqs") +
           " x (context_len + " + std::to_string(t.columns - ctx) + ") x 4 B, " + how;
  return t;
}

std::string SglangRequestTableShort(const SglangRequestTable& t, double reserved_bytes, double avail_bytes,
                                    double fraction) {
  char f[16];
  std::snprintf(f, sizeof f, "%.2f", fraction);
  // Allocated before the KV pool: torch names the table when it exceeds what the weights
  // leave, else the pool's buffers allocated after it run out.
  const std::string where = t.bytes > avail_bytes
                                ? "torch.OutOfMemoryError 'Tried to allocate " + FormatGiB(t.bytes) +
                                      "', more than the " + FormatGiB(avail_bytes) + " the weights leave"
                                : "CUDA out of memory allocating the KV pool right after it";
  return "SGLang allocates its request table (ReqToTokenPool, " + Num(t.rows) + " x " + Num(t.columns) +
         " int32) of " + FormatGiB(t.bytes) + " a rank at start-up, outside the KV pool's budget: the " +
         FormatGiB(reserved_bytes) + " that mem_fraction_static " + f + " keeps back cannot hold it (" + where + ")";
}

std::optional<int64_t> SglangLargestRunningRequests(SglangRequestTableInput in, double budget_bytes) {
  if (Before(VersionWithPost(in.version), {0, 2, 9}) || in.context_len <= 0) return std::nullopt;
  const int dp = std::max(in.dp_attention_size, 1);
  auto bytes = [&](int64_t n) {
    in.max_running_requests = n;
    return SglangRequestTableOf(in).bytes;
  };
  int64_t lo = dp;  // one request a DP-attention rank
  if (bytes(lo) > budget_bytes) return std::nullopt;
  int64_t hi = static_cast<int64_t>(8192) * dp;
  if (bytes(hi) <= budget_bytes) return hi;
  while (hi - lo > 1) {  // bytes(lo) <= budget < bytes(hi)
    const int64_t mid = lo + (hi - lo) / 2;
    (bytes(mid) <= budget_bytes ? lo : hi) = mid;
  }
  return lo;
}

}  // namespace tpt::memory
