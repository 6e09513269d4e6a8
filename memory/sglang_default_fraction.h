// sglang_default_fraction.h: the pieces of SGLang's _handle_gpu_memory_settings (0.5.3 on)
// that the default fraction (sglang_default_fraction.cc) and the value that serves
// (SglangServingFraction, sglang_model.cc) share.
#ifndef TPT_MEMORY_SGLANG_DEFAULT_FRACTION_H_
#define TPT_MEMORY_SGLANG_DEFAULT_FRACTION_H_

#include <string_view>
#include <utility>

#include "memory/memory_model.h"

namespace tpt::memory::internal {

// {chunked_prefill_size, decode cuda_graph_max_bs} by GPU capacity (MB; <= 0 unknown) and
// TP, as `version` sets them (under 35 GiB: 16 at tp < 4 in 0.5.3-0.5.4, 24 from
// 0.5.4.post1, 4096 / 48 from 0.5.20).
std::pair<int, int> SglangCapacityDefaults(std::string_view version, double gpu_mb, int tp);

// What the heuristic keeps back (MB) before any draft: 512 + max(cps, 2048) x 1.5 + bs x 2 +
// tp x pp / 8 GiB (+ DP attention's padding) + `graphs_mb`, at least 10 GiB above 60 GiB.
double SglangReserveMb(const SglangDefaultsInput& in, int cps, int bs, double gpu_mb, double graphs_mb);

}  // namespace tpt::memory::internal

#endif  // TPT_MEMORY_SGLANG_DEFAULT_FRACTION_H_
