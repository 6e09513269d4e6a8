// allreduce_bench.h: `tptriage repro --bench-allreduce`: the custom one-shot
// and two-shot all-reduce against NCCL, inside CUDA graphs, from 8 KiB to
// 64 MiB, as an nccl-tests-style table (time, algbw, busbw = algbw x
// 2(n-1)/n, #wrong). On one GPU the custom kernels run co-located (all ranks
// on the device: not NVLink figures) and NCCL runs one rank (a copy: NCCL
// refuses two ranks of one communicator on one GPU); the table says so.
//
//   BenchOptions o; o.ranks = {2, 4, 8};
//   auto rows = tpt::repro::RunAllreduceBench(o);
//   std::fputs(tpt::repro::RenderBenchTable(o, *rows).c_str(), stdout);
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"

namespace tpt::repro {

struct BenchOptions {
  std::vector<int> ranks = {2, 4, 8};
  int64_t min_bytes = 8 << 10;
  int64_t max_bytes = 64 << 20;
  int ops_per_graph = 20;  // all-reduces captured back to back in one graph
  int replays = 5;         // timed graph launches (after one warm-up)
  double deadline_s = 60;
};

struct BenchCell {
  double time_us = 0;
  double algbw_gbs = 0, busbw_gbs = 0;
  int64_t wrong = -1;  // elements that differ from the reference; -1 not run
};

struct BenchRow {
  int ranks = 0;
  int64_t bytes = 0;
  BenchCell one_shot, two_shot, nccl;
};

StatusOr<std::vector<BenchRow>> RunAllreduceBench(const BenchOptions& opt);
std::string RenderBenchTable(const BenchOptions& opt, const std::vector<BenchRow>& rows, const std::string& device);

}  // namespace tpt::repro
