// sglang_request_table.h: SGLang's per-request token table (ReqToTokenPool.req_to_token), a
// rows x (context_len + extra) int32 tensor every rank allocates at start-up, by version.
// SGLang sizes its KV pool first (rest = avail - free_at_init x (1 - f)) and then allocates
// the table and the pool; the table is in no budget, so it comes out of the (1 - f) slice
// the fraction keeps back for activations and CUDA graphs. Sources (the released wheels
// named) in sglang_request_table.cc.
//
//   SglangRequestTableInput t{.version = "0.4.5.post3", .context_len = 10485760, .profiled_tokens = 1602275};
//   SglangRequestTable r = SglangRequestTableOf(t);   // 2,049 rows x 10,485,764 = 80.04 GiB
#ifndef TPT_MEMORY_SGLANG_REQUEST_TABLE_H_
#define TPT_MEMORY_SGLANG_REQUEST_TABLE_H_

#include <cstdint>
#include <optional>
#include <string>

namespace tpt::memory {

struct SglangRequestTableInput {
  std::string version;
  int64_t context_len = 0;                       // model_config.context_len (--context-length or derived)
  int64_t profiled_tokens = 0;   // profile_max_num_token's KV tokens (what versions before 0.5.10 estimate from)
  int64_t capacity_tokens = 0;   // after --max-total-tokens and page rounding (0.5.10 on)
  std::optional<int64_t> max_running_requests;   // --max-running-requests
  int dp_attention_size = 1;                     // --dp with --enable-dp-attention, else 1
  int64_t mamba_states = 0;                      // a hybrid's mamba state count (0: not hybrid)
  bool radix_cache_off = false;                  // as the version runs it (sglang_mamba_states.h)
};

struct SglangRequestTable {
  int64_t requests = 0;  // max_num_reqs, the request slots
  int64_t rows = 0;      // the table's rows (the slots, + 1 where the version adds a padding row)
  int64_t columns = 0;   // context_len + 4 (+ 8 before 0.3.2)
  double bytes = 0;      // rows x columns x 4 (int32)
  std::string rule;      // where rows and columns come from, for `assumed:` and the error
};

// rows x columns x 4 bytes by the version's rule; requests 0 and bytes 0 when context_len <= 0.
SglangRequestTable SglangRequestTableOf(const SglangRequestTableInput& in);

// The plan's error when the table outgrows the slice it is paid from: `reserved_bytes`
// (what --mem-fraction-static keeps back) and `avail_bytes` (what the weights leave).
std::string SglangRequestTableShort(const SglangRequestTable& t, double reserved_bytes, double avail_bytes,
                                    double fraction);

// The largest --max-running-requests (>= 1) whose table is at most `budget_bytes`, or
// nullopt when the version sizes the table without the flag (before 0.2.9) or even one
// request does not fit.
std::optional<int64_t> SglangLargestRunningRequests(SglangRequestTableInput in, double budget_bytes);

}  // namespace tpt::memory

#endif  // TPT_MEMORY_SGLANG_REQUEST_TABLE_H_
