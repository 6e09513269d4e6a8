// sglang_default_fraction.cc: SGLang's default --mem-fraction-static (server_args.py,
// set when the flag is absent), by release. Read in the released wheels of
// sgl-project/sglang, python/sglang/srt/server_args.py (0.5.19 on:
// sglang/srt/arg_groups/memory_hook.py); the table with file:line per release is in
// memory/README.md ("SGLang's default --mem-fraction-static by release"). Post releases
// matter: 0.4.6.post2, 0.4.7.post1 and 0.5.4.post1 changed the rule.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "memory/memory_model.h"
#include "memory/sglang_default_fraction.h"

namespace tpt::memory {
namespace {

using V = std::vector<int>;

bool AtLeast(const V& v, const V& at) { return CompareVersions(v, at) >= 0; }

// The tp table of 0.1.14-0.4.6.post5 (0.4.6.post2 on keys on tp x pp).
double TpTable(int n, double eight) {
  if (n >= 16) return 0.79;
  if (n >= 8) return eight;
  if (n >= 4) return 0.85;
  if (n >= 2) return 0.87;
  return 0.88;
}

// 0.4.6.post2-0.4.7: the tp table up to 80 GiB, 0.88 above; then on cards above 96 GiB
// min(f + 48 GiB x (1 - f) / gpu, (gpu - reserve) / gpu).
double Big96(double f, double gpu_mb, double reserve_mb) {
  return std::min(f + 48 * 1024 * (1 - f) / gpu_mb, (gpu_mb - reserve_mb) / gpu_mb);
}

// 0.4.7.post1-0.5.2: reserve by capacity bucket (GiB), +2 GiB a draft (6 for STANDALONE
// from 0.5.2), +4 GiB with DP attention; rounded to 3 decimals.
double BucketReserveMb(const V& v, const SglangDefaultsInput& in, double gpu_mb) {
  const double ps = in.tp * in.pp;
  double gib;
  if (gpu_mb < 35 * 1024) gib = 2.8 + ps / 10;
  else if (gpu_mb < 90 * 1024) gib = 9.5 + ps / 2;
  else if (gpu_mb < 160 * 1024) gib = 12 + ps / 2;
  else gib = 32;
  double mb = gib * 1024;
  if (!in.speculative_algorithm.empty()) {
    mb += (in.speculative_algorithm == "STANDALONE" && AtLeast(v, {0, 5, 2, 0})) ? 6 * 1024 : 2 * 1024;
  }
  if (in.enable_dp_attention) mb += 4 * 1024;
  return mb;
}

// _generate_piecewise_cuda_graph_tokens (0.5.10; _generate_prefill_cuda_graph_batch_sizes
// from 0.5.14): how many token counts are captured up to `max_tokens`.
int PiecewiseSizes(int64_t max_tokens) {
  int n = 0;
  auto range = [&](int64_t a, int64_t b, int64_t step) {
    for (int64_t s = a; s < b; s += step) n += s <= max_tokens;
  };
  range(4, 33, 4);
  range(48, 257, 16);
  range(288, 513, 32);
  range(576, 1025, 64);
  range(1280, 4097, 256);
  range(4608, max_tokens + 1, 512);
  return n;
}

// From 0.5.10 the piecewise (prefill) CUDA graphs are on unless turned off: MB reserved.
// Off here for DP attention, pp > 1, a multimodal model, and (0.5.10 only) a draft; the
// other switches (LoRA, MoE all-to-all, GGUF, torch.compile, the architecture list) are not
// inputs of the plan.
double PiecewiseMb(const V& v, const SglangDefaultsInput& in, int cps) {
  if (!AtLeast(v, {0, 5, 10, 0})) return 0;
  if (in.enable_dp_attention || in.pp > 1 || in.multimodal) return 0;
  if (!in.speculative_algorithm.empty() && !AtLeast(v, {0, 5, 11, 0})) return 0;
  if (in.mla) return 1.5 * 1024;
  int64_t max_tokens = cps;
  if (in.context_length && *in.context_length > 0 && AtLeast(v, {0, 5, 13, 0})) {
    max_tokens = std::min<int64_t>(max_tokens, *in.context_length);
  }
  return PiecewiseSizes(max_tokens) * 8.0;
}

// The draft's reserve after the 10 GiB floor: 0.5.3-0.5.9 +2 GiB, 0.5.10-0.5.13 +4 GiB
// (STANDALONE +6, NGRAM nothing); from 0.5.14 the default keeps none for it.
double DraftMb(const V& v, const std::string& algo) {
  if (algo.empty() || algo == "NGRAM" || AtLeast(v, {0, 5, 14, 0})) return 0;
  if (algo == "STANDALONE") return 6 * 1024;
  return AtLeast(v, {0, 5, 10, 0}) ? 4 * 1024 : 2 * 1024;
}

}  // namespace

namespace internal {

std::pair<int, int> SglangCapacityDefaults(std::string_view version, double gpu_mb, int tp) {
  const V v = VersionWithPost(version);
  if (!(gpu_mb > 0)) return {4096, 160};
  if (gpu_mb < 20 * 1024) return {2048, 8};
  if (gpu_mb < 35 * 1024) {
    if (AtLeast(v, {0, 5, 20, 0})) return {4096, tp < 4 ? 48 : 160};
    // 0.5.3-0.5.4: 16 at tp < 4; 24 from 0.5.4.post1 (and the serving headroom of older ones).
    const bool sixteen = AtLeast(v, {0, 5, 3, 0}) && !AtLeast(v, {0, 5, 4, 1});
    return {2048, tp < 4 ? (sixteen ? 16 : 24) : 80};
  }
  if (gpu_mb < 60 * 1024) return {4096, tp < 4 ? 32 : 160};
  if (gpu_mb < 160 * 1024) return {8192, tp < 4 ? 256 : 512};
  return {16384, 512};
}

double SglangReserveMb(const SglangDefaultsInput& in, int cps, int bs, double gpu_mb, double graphs_mb) {
  double reserved = 512;                              // constant metadata
  // Activations; chunked prefill off (<= 0): max_prefill_tokens, 16384 by default.
  reserved += (cps > 0 ? std::max(cps, 2048) : 16384) * 1.5;
  reserved += bs * 2.0;                               // cuda graphs
  reserved += in.tp * in.pp / 8.0 * 1024;             // large parallel sizes
  if (in.enable_dp_attention) {
    reserved += bs * in.dp * 3.0;
    if (bs > 300) reserved += bs * in.dp * 1.5;
  }
  reserved += graphs_mb;                              // piecewise graphs (0.5.10 on)
  if (gpu_mb > 60 * 1024) reserved = std::max(reserved, 10.0 * 1024);
  return reserved;
}

}  // namespace internal

StatusOr<SglangDefaults> SglangDefaultMemFraction(const SglangDefaultsInput& in) {
  auto parsed = ParseVersion(in.version);
  if (!parsed.ok()) return parsed.status();
  if (in.tp <= 0 || in.pp <= 0 || in.dp <= 0) return InvalidArgumentError("SGLang defaults: tp, pp and dp must be > 0");
  const V v = VersionWithPost(in.version);
  const double gpu_mb = in.gpu_capacity_bytes / kMiB;
  const bool known = gpu_mb > 0;
  SglangDefaults out;
  // §1.4, first rows: <= v0.1.13 a flat 0.9 (issue #322).
  if (!AtLeast(v, {0, 1, 14, 0})) {
    out.mem_fraction_static = 0.9;
    out.rule = "v0.1.13 and older: fixed 0.9";
    return out;
  }
  // The tp table: tp>=8 0.83 up to 0.3.5.postN, 0.82 in 0.3.6.postN, 0.81 from 0.4.0.
  if (!AtLeast(v, {0, 4, 6, 0})) {
    const double eight = AtLeast(v, {0, 4, 0, 0}) ? 0.81 : AtLeast(v, {0, 3, 6, 0}) ? 0.82 : 0.83;
    out.mem_fraction_static = TpTable(in.tp, eight);
    char b[128];
    std::snprintf(b, sizeof b, "tp table (to 0.4.5.postN): tp>=16 0.79, >=8 %.2f, >=4 0.85, >=2 0.87, else 0.88", eight);
    out.rule = b;
    return out;
  }
  // 0.4.6, 0.4.6.post1: the table up to 80 GiB, (gpu - 13 GiB) / gpu above (not rounded).
  if (!AtLeast(v, {0, 4, 6, 2})) {
    out.mem_fraction_static = known && gpu_mb > 81920 ? (gpu_mb - 13 * 1024) / gpu_mb : TpTable(in.tp, 0.81);
    out.rule = "0.4.6-0.4.6.post1: tp table up to 80 GiB, (gpu_mem - 13 GiB) / gpu_mem above";
    return out;
  }
  // 0.4.6.post2-0.4.7: tp x pp table up to 80 GiB, else 0.88; above 96 GiB Big96.
  if (!AtLeast(v, {0, 4, 7, 1})) {
    double f = known && gpu_mb <= 81920 ? TpTable(in.tp * in.pp, 0.81) : 0.88;
    const bool v047 = AtLeast(v, {0, 4, 7, 0});
    const bool draft = !in.speculative_algorithm.empty();
    if (v047 && known && gpu_mb > 180 * 1000) f = 0.79;
    else if (known && gpu_mb > 96 * 1024) f = Big96(f, gpu_mb, v047 && draft ? 20 * 1024 : 18 * 1024);
    else if (v047 && draft) f *= 0.95;
    out.mem_fraction_static = f;
    out.rule = "0.4.6.post2-0.4.7: tp x pp table up to 80 GiB (else 0.88); above 96 GiB "
               "min(f + 48 GiB x (1 - f) / gpu_mem, (gpu_mem - 18 GiB) / gpu_mem)";
    return out;
  }
  if (!known) {
    const bool v0520 = AtLeast(v, {0, 5, 20, 0});
    out.mem_fraction_static = v0520 ? 0.95 : 0.88;
    out.rule = v0520 ? "SGLang's default from 0.5.20 without a known GPU capacity: 0.95"
                     : "SGLang's default (0.4.7.post1-0.5.19) without a known GPU capacity: 0.88";
    return out;
  }
  // 0.4.7.post1-0.5.2: reserve by capacity bucket.
  if (!AtLeast(v, {0, 5, 3, 0})) {
    out.reserved_mb = BucketReserveMb(v, in, gpu_mb);
    out.mem_fraction_static = std::round((gpu_mb - out.reserved_mb) / gpu_mb * 1000.0) / 1000.0;
    out.rule = "0.4.7.post1-0.5.2: (gpu_mem - reserved) / gpu_mem, reserved (2.8 + tp x pp / 10) GiB under 35 GiB, "
               "(9.5 + tp x pp / 2) under 90, (12 + tp x pp / 2) under 160, 32 above; +2 GiB a draft, +4 DP attention";
    return out;
  }
  // 0.5.3 on: _handle_gpu_memory_settings.
  auto [cps, bs] = internal::SglangCapacityDefaults(in.version, gpu_mb, in.tp);
  const bool bs_default = !in.cuda_graph_max_bs;
  if (in.chunked_prefill_size) cps = *in.chunked_prefill_size;
  if (in.cuda_graph_max_bs) bs = *in.cuda_graph_max_bs;
  // 0.5.22: a default decode max_bs above --max-running-requests is cut to it.
  if (bs_default && in.max_running_requests && *in.max_running_requests > 0 && AtLeast(v, {0, 5, 22, 0})) {
    bs = static_cast<int>(std::min<int64_t>(bs, *in.max_running_requests));
  }
  out.chunked_prefill_size = cps;
  out.cuda_graph_max_bs = bs;
  const double graphs = PiecewiseMb(v, in, cps);
  out.reserved_mb = internal::SglangReserveMb(in, cps, bs, gpu_mb, graphs) + DraftMb(v, in.speculative_algorithm);
  out.mem_fraction_static = std::round((gpu_mb - out.reserved_mb) / gpu_mb * 1000.0) / 1000.0;
  out.rule = "SGLang's default (0.5.3 on): (gpu_mem - reserved) / gpu_mem, reserved = 512 + max(chunked_prefill,2048)x1.5 "
             "+ cuda_graph_max_bs x2 + tp x pp/8 x 1024 MB";
  if (graphs > 0) out.rule += " + piecewise graphs (0.5.10 on)";
  out.rule += " (>= 10 GiB above 60 GiB)";
  return out;
}

}  // namespace tpt::memory
