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

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "repro/backend.h"

namespace tpt::repro {

struct BenchOptions {
  std::vector<int> ranks = {2, 4, 8};
  int64_t min_bytes = 8 << 10;
  int64_t max_bytes = 64 << 20;
  int ops_per_graph = 20;  // all-reduces captured back to back in one graph
  int replays = 5;         // timed graph launches (after one warm-up)
  double deadline_s = 60;
  std::string mode = "colocated";  // or "processes"
  bool shared_gpu = false;         // processes mode: ranks' processes share GPUs
};

struct BenchCell {
  double time_us = 0;
  double algbw_gbs = 0, busbw_gbs = 0;
  int64_t wrong = -1;  // elements that differ from the reference; -1 not run
};

struct BenchRow {
  int ranks = 0;
  int64_t bytes = 0;
  BenchCell one_shot, two_shot, nccl;  // nccl.time_us == 0: not measured
};

// Co-located: every rank count of opt.ranks in this process on GPU 0.
StatusOr<std::vector<BenchRow>> RunAllreduceBench(const BenchOptions& opt);
// Processes: this process's part as rank layout.rank of layout.world; every
// rank returns the same rows (times max over ranks, #wrong summed).
StatusOr<std::vector<BenchRow>> RunAllreduceBenchRank(const BenchOptions& opt, const RankLayout& layout);

// Per rank count: where two-shot overtakes one-shot and NCCL the best custom
// kernel (the smallest size from which it is faster at every larger size;
// -1: nowhere), and one-shot/NCCL time over 8-256 KiB.
struct BenchSummary {
  int ranks = 0;
  int64_t two_shot_from = -1;
  bool nccl_measured = false;
  int64_t nccl_from = -1;
  double small_ratio_min = 0, small_ratio_max = 0;  // one-shot / NCCL, 8-256 KiB rows
  int small_rows = 0;
  int64_t wrong = 0;  // all cells
};
std::vector<BenchSummary> SummarizeBench(const std::vector<BenchRow>& rows);

std::string RenderBenchTable(const BenchOptions& opt, const std::vector<BenchRow>& rows, const std::string& device);

// Rows through a file between a rank and the process that started it.
nlohmann::json BenchRowsToJson(const std::vector<BenchRow>& rows);
StatusOr<std::vector<BenchRow>> BenchRowsFromJson(const nlohmann::json& j);

}  // namespace tpt::repro
