// bench_table.cc: the nccl-tests-style table of --bench-allreduce (built
// everywhere; the benchmark itself needs CUDA).
#include <cstdio>
#include <sstream>

#include "repro/allreduce_bench.h"

namespace tpt::repro {

std::string RenderBenchTable(const BenchOptions& opt, const std::vector<BenchRow>& rows, const std::string& device) {
  std::ostringstream o;
  char line[512];
  o << "# tptriage all-reduce benchmark: bf16 sum, out-of-place, CUDA graphs (" << opt.ops_per_graph
    << " ops per graph, " << opt.replays << " timed replays after 1 warm-up)\n";
  o << "# device: " << device << "\n";
  o << "# CO-LOCATED: all ranks of the custom kernels share this one GPU (peers in local HBM, SMs shared):\n"
       "#   the figures are a floor for launch + 2 flag barriers + reduce, NOT NVLink figures.\n"
       "# NCCL column: a 1-rank communicator (a device copy; NCCL 2.28 refuses 2 ranks on one GPU), busbw 0 by definition.\n"
       "# busbw = algbw x 2(n-1)/n (nccl-tests); algbw = bytes / time; GB = 1e9 B\n";
  std::snprintf(line, sizeof line, "#%5s %10s %11s | %9s %7s %7s %6s | %9s %7s %7s %6s | %9s %7s\n", "ranks", "size",
                "count", "1shot(us)", "algbw", "busbw", "#wrong", "2shot(us)", "algbw", "busbw", "#wrong", "nccl1(us)",
                "algbw");
  o << line;
  for (const auto& r : rows) {
    auto nccl = [&](char* b, size_t n) {
      if (r.nccl.time_us > 0) {
        std::snprintf(b, n, "%9.2f %7.1f", r.nccl.time_us, r.nccl.algbw_gbs);
      } else {
        std::snprintf(b, n, "%9s %7s", "-", "-");
      }
    };
    char nc[64];
    nccl(nc, sizeof nc);
    std::snprintf(line, sizeof line, " %5d %10lld %11lld | %9.2f %7.1f %7.1f %6lld | %9.2f %7.1f %7.1f %6lld | %s\n",
                  r.ranks, static_cast<long long>(r.bytes), static_cast<long long>(r.bytes / 2), r.one_shot.time_us,
                  r.one_shot.algbw_gbs, r.one_shot.busbw_gbs, static_cast<long long>(r.one_shot.wrong),
                  r.two_shot.time_us, r.two_shot.algbw_gbs, r.two_shot.busbw_gbs,
                  static_cast<long long>(r.two_shot.wrong), nc);
    o << line;
  }
  return o.str();
}

}  // namespace tpt::repro
