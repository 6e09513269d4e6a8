// bench_table.cc: the nccl-tests-style table of --bench-allreduce, its
// crossovers and its rows as JSON (built everywhere; the benchmark itself
// needs CUDA).
#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>

#include "repro/allreduce_bench.h"

namespace tpt::repro {
namespace {

std::string Size(int64_t b) {
  char s[32];
  if (b >= (1 << 20) && b % (1 << 20) == 0) {
    std::snprintf(s, sizeof s, "%lld MiB", static_cast<long long>(b >> 20));
  } else if (b >= 1024 && b % 1024 == 0) {
    std::snprintf(s, sizeof s, "%lld KiB", static_cast<long long>(b >> 10));
  } else {
    std::snprintf(s, sizeof s, "%lld B", static_cast<long long>(b));
  }
  return s;
}

// The smallest size from which `wins(row)` holds at every larger size.
template <typename Pred>
int64_t WinsFrom(const std::vector<const BenchRow*>& rows, Pred wins) {
  int64_t from = -1;
  for (auto it = rows.rbegin(); it != rows.rend(); ++it) {
    if (!wins(**it)) break;
    from = (*it)->bytes;
  }
  return from;
}

}  // namespace

std::vector<BenchSummary> SummarizeBench(const std::vector<BenchRow>& rows) {
  std::map<int, std::vector<const BenchRow*>> by_ranks;
  for (const auto& r : rows) by_ranks[r.ranks].push_back(&r);
  std::vector<BenchSummary> out;
  for (auto& [n, list] : by_ranks) {
    std::sort(list.begin(), list.end(), [](const BenchRow* a, const BenchRow* b) { return a->bytes < b->bytes; });
    BenchSummary s;
    s.ranks = n;
    s.two_shot_from = WinsFrom(list, [](const BenchRow& r) { return r.two_shot.time_us < r.one_shot.time_us; });
    s.nccl_measured = std::all_of(list.begin(), list.end(), [](const BenchRow* r) { return r->nccl.time_us > 0; });
    if (s.nccl_measured) {
      s.nccl_from = WinsFrom(list, [](const BenchRow& r) {
        return r.nccl.time_us < std::min(r.one_shot.time_us, r.two_shot.time_us);
      });
      for (const BenchRow* r : list) {
        if (r->bytes < (8 << 10) || r->bytes > (256 << 10)) continue;
        const double ratio = r->one_shot.time_us / r->nccl.time_us;
        s.small_ratio_min = s.small_rows == 0 ? ratio : std::min(s.small_ratio_min, ratio);
        s.small_ratio_max = s.small_rows == 0 ? ratio : std::max(s.small_ratio_max, ratio);
        ++s.small_rows;
      }
    }
    for (const BenchRow* r : list) {
      for (const BenchCell* c : {&r->one_shot, &r->two_shot, &r->nccl}) s.wrong += std::max<int64_t>(c->wrong, 0);
    }
    out.push_back(s);
  }
  return out;
}

std::string RenderBenchTable(const BenchOptions& opt, const std::vector<BenchRow>& rows, const std::string& device) {
  std::ostringstream o;
  char line[512];
  const bool procs = opt.mode == "processes";
  o << "# tptriage all-reduce benchmark: bf16 sum, out-of-place, CUDA graphs (" << opt.ops_per_graph
    << " ops per graph, " << opt.replays << " timed replays after 1 warm-up)\n";
  o << "# device: " << device << "\n";
  if (procs && !opt.shared_gpu) {
    o << "# ONE PROCESS PER RANK, one GPU each: custom kernels read the peers' buffers through CUDA IPC\n"
         "#   (registered graph buffers); NCCL: a communicator of all ranks (NCCL_NVLS_ENABLE=0).\n"
         "#   time: the slowest rank's; #wrong: summed over ranks.\n";
  } else if (procs) {
    o << "# ONE PROCESS PER RANK, SHARING GPUS (fewer GPUs than ranks): custom kernels through CUDA IPC between\n"
         "#   processes, but their kernels time-slice: a functional and correctness check, NOT a timing.\n"
         "# NCCL: NOT MEASURED (NCCL refuses two ranks of one communicator on one GPU; it needs a GPU per rank).\n";
  } else {
    o << "# CO-LOCATED: all ranks of the custom kernels share this one GPU (peers in local HBM, SMs shared):\n"
         "#   the figures are a floor for launch + 2 flag barriers + reduce, NOT NVLink figures.\n"
         "# NCCL column: a 1-rank communicator (a device copy; NCCL 2.28 refuses 2 ranks on one GPU).\n";
  }
  o << "# busbw = algbw x 2(n-1)/n (nccl-tests); algbw = bytes / time; GB = 1e9 B\n";
  std::snprintf(line, sizeof line, "#%5s %10s %11s | %9s %7s %7s %6s | %9s %7s %7s %6s | %9s %7s %7s %6s | %9s\n",
                "ranks", "size", "count", "1shot(us)", "algbw", "busbw", "#wrong", "2shot(us)", "algbw", "busbw",
                "#wrong", procs ? "nccl(us)" : "nccl1(us)", "algbw", "busbw", "#wrong", "1shot/nccl");
  o << line;
  for (const auto& r : rows) {
    char nc[96], ratio[32];
    if (r.nccl.time_us > 0) {
      std::snprintf(nc, sizeof nc, "%9.2f %7.1f %7.1f %6s", r.nccl.time_us, r.nccl.algbw_gbs,
                    procs ? r.nccl.busbw_gbs : 0.0,
                    r.nccl.wrong < 0 ? "-" : std::to_string(r.nccl.wrong).c_str());
      if (procs) {
        std::snprintf(ratio, sizeof ratio, "%9.2fx", r.one_shot.time_us / r.nccl.time_us);
      } else {  // a 1-rank copy is no all-reduce to compare with
        std::snprintf(ratio, sizeof ratio, "%10s", "-");
      }
    } else {
      std::snprintf(nc, sizeof nc, "%9s %7s %7s %6s", "n/m", "-", "-", "-");
      std::snprintf(ratio, sizeof ratio, "%10s", "-");
    }
    std::snprintf(line, sizeof line, " %5d %10lld %11lld | %9.2f %7.1f %7.1f %6lld | %9.2f %7.1f %7.1f %6lld | %s | %s\n",
                  r.ranks, static_cast<long long>(r.bytes), static_cast<long long>(r.bytes / 2), r.one_shot.time_us,
                  r.one_shot.algbw_gbs, r.one_shot.busbw_gbs, static_cast<long long>(r.one_shot.wrong),
                  r.two_shot.time_us, r.two_shot.algbw_gbs, r.two_shot.busbw_gbs,
                  static_cast<long long>(r.two_shot.wrong), nc, ratio);
    o << line;
  }
  for (const BenchSummary& s : SummarizeBench(rows)) {
    o << "# " << s.ranks << " ranks: two-shot "
      << (s.two_shot_from < 0 ? "never overtakes one-shot" : "faster than one-shot from " + Size(s.two_shot_from));
    if (!s.nccl_measured) {
      o << "; NCCL not measured";
    } else if (!procs) {
      o << "; NCCL column is a 1-rank copy: no crossover";
    } else {
      o << "; NCCL " << (s.nccl_from < 0 ? "slower than the best custom kernel at the largest size"
                                         : "faster than the best custom kernel from " + Size(s.nccl_from));
      if (s.small_rows > 0) {
        std::snprintf(line, sizeof line, "; one-shot/NCCL at 8-256 KiB %.2f-%.2fx (goal <= 0.60: %s)", s.small_ratio_min,
                      s.small_ratio_max, s.small_ratio_max <= 0.6 ? "met" : "NOT met");
        o << line;
      }
    }
    o << "; #wrong " << s.wrong << "\n";
  }
  return o.str();
}

nlohmann::json BenchRowsToJson(const std::vector<BenchRow>& rows) {
  auto cell = [](const BenchCell& c) {
    return nlohmann::json{{"time_us", c.time_us}, {"algbw_gbs", c.algbw_gbs}, {"busbw_gbs", c.busbw_gbs}, {"wrong", c.wrong}};
  };
  nlohmann::json a = nlohmann::json::array();
  for (const auto& r : rows) {
    a.push_back({{"ranks", r.ranks},
                 {"bytes", r.bytes},
                 {"one_shot", cell(r.one_shot)},
                 {"two_shot", cell(r.two_shot)},
                 {"nccl", cell(r.nccl)}});
  }
  return a;
}

StatusOr<std::vector<BenchRow>> BenchRowsFromJson(const nlohmann::json& j) {
  if (!j.is_array()) return InvalidArgumentError("benchmark rows: expected a JSON array");
  std::vector<BenchRow> rows;
  try {
    auto cell = [](const nlohmann::json& c) {
      BenchCell x;
      x.time_us = c.at("time_us").get<double>();
      x.algbw_gbs = c.at("algbw_gbs").get<double>();
      x.busbw_gbs = c.at("busbw_gbs").get<double>();
      x.wrong = c.at("wrong").get<int64_t>();
      return x;
    };
    for (const auto& r : j) {
      BenchRow row;
      row.ranks = r.at("ranks").get<int>();
      row.bytes = r.at("bytes").get<int64_t>();
      row.one_shot = cell(r.at("one_shot"));
      row.two_shot = cell(r.at("two_shot"));
      row.nccl = cell(r.at("nccl"));
      rows.push_back(row);
    }
  } catch (const nlohmann::json::exception& e) {
    return InvalidArgumentError(std::string("benchmark rows: ") + e.what());
  }
  return rows;
}

}  // namespace tpt::repro
